// specd serve's threads together in one process, for ThreadSanitizer: HTTP handlers on
// cpp-httplib's pool queueing on the decoding thread, clients streaming and not, one that leaves
// mid-stream, /metrics and /health read all the while, then SIGTERM draining the server.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "serve/http_server.h"
#include "serve_fixtures.h"

using namespace specd;
using namespace specd::serve;
using namespace specd::test;
using nlohmann::json;

namespace {

// choices[0].text of a whole answer, or of every server-sent event before [DONE] joined; `ended`:
// the answer was whole, or the stream reached [DONE]. No Catch2 assertion here: the client threads
// call it, and Catch2's are not thread-safe.
std::string completion_text(const std::string& body, bool streamed, bool& ended) {
  ended = !streamed;
  if (!streamed) return json::parse(body).at("choices").at(0).at("text").get<std::string>();
  std::string text;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    const std::string data = body.substr(at + 6, end - at - 6);
    at = end;
    if (data == "[DONE]") {
      ended = true;
      break;
    }
    const json chunk = json::parse(data);
    if (!chunk.at("choices").empty()) text += chunk.at("choices").at(0).at("text").get<std::string>();
  }
  return text;
}

// serve() on its own thread until stop() (or the end of scope) sends the SIGTERM it drains on.
class Serving {
 public:
  Serving(HttpServer& server, const Deployment& d) : thread_([&server, &d] { server.serve(d); }) {}
  ~Serving() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    kill(getpid(), SIGTERM);
    thread_.join();
  }

 private:
  std::thread thread_;
};

}  // namespace

TEST_CASE("clients at once, one leaving mid-stream, metrics read meanwhile, then SIGTERM drains", "[serve]") {
  // Blocked here, before any thread starts, so that every thread has it blocked and only the
  // server's own waiter takes the SIGTERM this test sends (as `specd serve` does in main).
  block_shutdown_signals();
  const Deployment d = demo_deployment();
  ServerOptions options;
  options.port = 0;
  options.parallel = 2;  // four clients: two wait in the queue
  options.queue = 8;
  options.prefill_chunk = 2;
  HttpServer server(options);
  Serving serving(server, d);
  httplib::Client probe("127.0.0.1", server.port());
  for (int i = 0; i < 600; ++i) {
    if (auto res = probe.Get("/health"); res && res->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  const std::vector<std::string> prompts{"The history of", "def main():", "In the beginning", "The history of"};
  const std::vector<std::string> methods{"sd", "pld", "sam", "ar"};
  const int64_t tokens = 12;
  std::vector<std::string> texts(prompts.size());
  std::vector<int> statuses(prompts.size(), 0);
  std::vector<char> ended(prompts.size(), 0);
  std::atomic<bool> clients_done{false};
  std::atomic<int> polls{0}, bad_polls{0};
  std::thread poller([&] {
    httplib::Client client("127.0.0.1", server.port());
    while (!clients_done) {
      auto metrics = client.Get("/metrics");
      auto health = client.Get("/health");
      if (!metrics || metrics->status != 200 || !health || health->status != 200) ++bad_polls;
      ++polls;
    }
  });
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      const bool streamed = i % 2 == 1;
      const json body{{"prompt", prompts[i]},  {"max_tokens", tokens}, {"temperature", 0},
                      {"stream", streamed},    {"speculative", {{"method", methods[i]}}}};
      httplib::Client client("127.0.0.1", server.port());
      client.set_read_timeout(300);
      if (auto res = client.Post("/v1/completions", body.dump(), "application/json")) {
        statuses[i] = res->status;
        bool whole = false;
        try {
          if (res->status == 200) texts[i] = completion_text(res->body, streamed, whole);
        } catch (const std::exception& e) {  // malformed JSON: reported by the checks below
          texts[i] = std::string("unparsable answer: ") + e.what();
        }
        ended[i] = whole;
      }
    });
  }
  // A stream its client drops after the first event: the server cancels it and frees its slot.
  std::thread leaver([&] {
    httplib::Client client("127.0.0.1", server.port());
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = json{{"prompt", "Once upon"}, {"max_tokens", 400}, {"temperature", 0}, {"stream", true}}.dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [](const char*, size_t, uint64_t, uint64_t) { return false; };
    client.send(req);
  });
  for (std::thread& c : clients) c.join();
  leaver.join();
  clients_done = true;
  poller.join();

  for (size_t i = 0; i < prompts.size(); ++i) {
    INFO(methods[i] << " on '" << prompts[i] << "'");
    CHECK(statuses[i] == 200);
    CHECK(ended[i]);
    CHECK(texts[i] == ar_text(d, prompts[i], tokens));
  }
  CHECK(polls > 0);
  CHECK(bad_polls == 0);
  // The dropped stream ends as cancelled (at the decoding thread's next step after the drop).
  bool cancelled = false;
  for (int i = 0; i < 600 && !cancelled; ++i) {
    auto res = probe.Get("/metrics");
    cancelled = res && res->body.find("finished_reason=\"cancelled\"} 1") != std::string::npos;
    if (!cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(cancelled);

  serving.stop();
  CHECK_FALSE(probe.Get("/health"));  // stopped listening
}
