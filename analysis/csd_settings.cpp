#include "analysis/csd_settings.h"

#include <cstdio>

#include "speculative/csd_acceptor.h"
#include "util/utf8.h"
#include "util/format.h"

namespace specd::report {

CsdDeployed csd_deployed(const Artifact& artifact) {
  // As deploy_params resolves them (speculative/method_params.cpp, which links libtorch): the
  // artifact's thresholds row for the csd family, else the acceptor's default.
  const CsdOptions defaults;
  CsdDeployed deployed{static_cast<double>(defaults.lambda), defaults.tau, "default", "default"};
  for (const Threshold& t : artifact.thresholds) {
    if (t.policy != kCsdPolicy) continue;
    const std::string source = "artifact" + (t.source.empty() ? std::string() : ": " + t.source);
    if (t.name == "lambda") deployed.lambda = t.value, deployed.lambda_source = source;
    if (t.name == "tau") deployed.tau = t.value, deployed.tau_source = source;
  }
  return deployed;
}

std::string number_text(double value) { return strprintf("%g", value); }

Paragraph csd_not_calibrated() {
  return {"not calibrated: run specd calibrate csd --target T --draft D --out DIR (this artifact holds no csd calibration)",
          Tone::NotCalibrated};
}

std::string visible_token_text(const ReportInputs& in, int32_t id) {
  if (!in.token_text) return "";
  const std::string text = in.token_text(id);
  std::string out;
  const auto hex = [&out](unsigned char c) { out += strprintf("\\x%02x", c); };
  // A byte-level token may hold part of a character: such bytes show as \xNN (JSON needs UTF-8).
  for (size_t pos = 0; pos < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    const size_t length = utf8_sequence_length(c);
    if (c == ' ') out += "\u2423";
    else if (c == '\n') out += "\u21b5";
    else if (c == '\t') out += "\u21e5";
    else if (c < 0x20 || c == 0x7f) hex(c);
    else if (c < 0x80) out += static_cast<char>(c);
    else if (length > 1 && pos + length <= text.size() && is_valid_utf8(std::string_view(text).substr(pos, length))) {
      out.append(text, pos, length);
      pos += length;
      continue;
    } else hex(c);
    ++pos;
  }
  return out;
}

std::string pair_label(const ReportInputs& in, int32_t draft_token, int32_t target_token) {
  const std::string ids = std::to_string(draft_token) + " \u2192 " + std::to_string(target_token);
  if (!in.token_text) return ids;
  return "'" + visible_token_text(in, draft_token) + "' \u2192 '" + visible_token_text(in, target_token) + "' (" + ids + ")";
}

}  // namespace specd::report
