// The server's /metrics text: the machine the models run on as an info gauge, its label values
// escaped as Prometheus' text format requires.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "serve/server_metrics.h"

using specd::serve::ServerMetrics;

TEST_CASE("/metrics names the machine the models run on, escaping its labels", "[serve]") {
  ServerMetrics metrics;
  CHECK(metrics.prometheus_text().find("specd:machine_info") == std::string::npos);  // not known yet

  const nlohmann::json machine = {{"cpu", "Intel(R) Xeon(R) \"Gold\" \\ 6\nX"}, {"features", {"avx2"}}, {"cache_level", 3},
                                  {"cache_bytes", 314572800}, {"threads", 2}, {"device", "cpu"}};
  metrics.set_machine(machine);
  const std::string text = metrics.prometheus_text();
  CHECK(text.find("# TYPE specd:machine_info gauge\n") != std::string::npos);
  CHECK(text.find("specd:machine_info{cpu=\"Intel(R) Xeon(R) \\\"Gold\\\" \\\\ 6\\nX\",cache_level=\"3\",cache_bytes=\"314572800\","
                  "threads=\"2\",device=\"cpu\"} 1\n") != std::string::npos);

  // An unknown cache (null) is left out, not printed as "null".
  nlohmann::json unknown = machine;
  unknown["cpu"] = "EPYC";
  unknown["cache_level"] = nullptr;
  unknown["cache_bytes"] = nullptr;
  metrics.set_machine(unknown);
  CHECK(metrics.prometheus_text().find("specd:machine_info{cpu=\"EPYC\",threads=\"2\",device=\"cpu\"} 1\n") != std::string::npos);
}
