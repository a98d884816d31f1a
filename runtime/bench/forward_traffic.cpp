#include "bench/forward_traffic.h"

#include <stdexcept>

namespace specd {

int64_t kv_read_bytes_per_row(int64_t kv_bytes_of_16_rows, bool key_tiles) {
  // Stored per row: keys, values and (key_tiles) keys again; read: keys and values.
  return kv_bytes_of_16_rows / 16 * 2 / (key_tiles ? 3 : 2);
}

ForwardTraffic forward_traffic(const ModelConfig& cfg, const ModelByteSizes& sizes, int64_t n, int64_t past,
                               int64_t logit_rows) {
  if (n < 1 || past < 0 || logit_rows < 0 || logit_rows > n) throw std::logic_error("forward_traffic: bad forward shape");
  const double hidden = static_cast<double>(cfg.hidden_size), inter = static_cast<double>(cfg.intermediate_size);
  const double vocab = static_cast<double>(cfg.vocab_size), layers = static_cast<double>(cfg.num_hidden_layers);
  const double q_width = static_cast<double>(cfg.num_attention_heads * cfg.head_dim);
  const double kv_width = static_cast<double>(cfg.num_key_value_heads * cfg.head_dim);
  const double rows = static_cast<double>(n), cached = static_cast<double>(past);
  const double table_bytes = vocab * hidden * sizes.weight_element_bytes;

  ForwardTraffic t;
  t.bytes = static_cast<double>(sizes.weight_bytes) - table_bytes + rows * hidden * sizes.weight_element_bytes;
  if (logit_rows == 0) t.bytes -= table_bytes;  // lm_head, the same shape, is not read either
  t.bytes += (cached + rows) * static_cast<double>(sizes.kv_read_bytes_per_row);

  const double projection_macs = hidden * (q_width + 2 * kv_width) + q_width * hidden + hidden * 2 * inter + inter * hidden;
  const double rows_seen = rows * cached + rows * (rows + 1) / 2;  // token i sees past + i + 1 rows
  const double attention_macs = 2 * q_width * rows_seen;           // q . k and p * v per head dimension
  t.flops = 2 * layers * (rows * projection_macs + attention_macs) + 2 * hidden * vocab * static_cast<double>(logit_rows);
  return t;
}

ForwardTraffic decode_traffic(const ModelConfig& cfg, const ModelByteSizes& sizes, const std::vector<int64_t>& prompt_lengths,
                              int64_t new_tokens) {
  ForwardTraffic mean;
  int64_t steps = 0;
  for (int64_t prompt : prompt_lengths)
    for (int64_t past = prompt; past < prompt + new_tokens - 1; ++past, ++steps) {
      const ForwardTraffic step = forward_traffic(cfg, sizes, 1, past, 1);
      mean.bytes += step.bytes;
      mean.flops += step.flops;
    }
  if (steps == 0) throw std::logic_error("decode_traffic: no decoded steps");
  mean.bytes /= static_cast<double>(steps);
  mean.flops /= static_cast<double>(steps);
  return mean;
}

}  // namespace specd
