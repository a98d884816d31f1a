#pragma once
// specd serve's HTTP front: OpenAI's routes on cpp-httplib (Debian's libcpp-httplib, the library
// llama.cpp's server is built on: threads per connection, chunked responses for server-sent
// events, no event loop to write). Handlers parse and plan a request, queue it on the scheduler
// and wait for its text; the decoding itself is the scheduler's thread.
#include <cstdint>
#include <memory>
#include <string>

#include "serve/deployment.h"

namespace httplib {
class Server;
}

namespace specd::serve {

class StepLog;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  int parallel = 4;         // requests decoded at once
  int queue = 16;           // requests waiting beyond those; more are answered 429
  int64_t prefill_chunk = 64;  // prompt rows a request prefills per step (0: the whole prompt)
  bool drafting_guard = true;  // serve/drafting_guard.h; off: the planner and budgets alone decide
  std::string step_log;     // "" for none; else a file each batched step is recorded in (serve/step_log.h)
  std::string api_key;      // "" for none; else every route but /health needs "Authorization: Bearer KEY"
  int64_t max_body = 1 << 20;  // bytes of a request body
};

// Blocks SIGTERM and SIGINT in the calling thread and so in every thread it starts afterwards
// (the CPU kernels' pool included), so that HttpServer::serve's own thread takes them. Call it before
// loading the models.
void block_shutdown_signals();

// The listening socket is bound first, the routes once the deployment is loaded: a port in use
// is refused in one line before the models load.
class HttpServer {
 public:
  // Binds host:port (port 0: any free one) and opens the step log. InputError naming
  // --host/--port or --step-log when it cannot.
  explicit HttpServer(const ServerOptions& options);
  ~HttpServer();
  int port() const { return port_; }  // the bound port (--port 0 picks one)
  // Serves until SIGTERM or SIGINT, then stops taking requests, finishes those in flight and
  // returns.
  void serve(const Deployment& deployment);

 private:
  ServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<StepLog> step_log_;
  int port_ = 0;
};

}  // namespace specd::serve
