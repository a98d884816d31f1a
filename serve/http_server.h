#pragma once
// specd serve's HTTP front: OpenAI's routes on cpp-httplib (Debian's libcpp-httplib, the library
// llama.cpp's server is built on: threads per connection, chunked responses for server-sent
// events, no event loop to write). Handlers parse and plan a request, queue it on the scheduler
// and wait for its text; the decoding itself is the scheduler's thread.
#include <cstdint>
#include <functional>
#include <string>

#include "serve/deployment.h"

namespace specd::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  int parallel = 4;         // requests decoded at once
  int queue = 16;           // requests waiting beyond those; more are answered 429
  std::string api_key;      // "" for none; else every route but /health needs "Authorization: Bearer KEY"
  int64_t max_body = 1 << 20;  // bytes of a request body
  // Called once the port is bound, with the port (useful with --port 0).
  std::function<void(int port)> on_listening;
};

// Blocks SIGTERM and SIGINT in the calling thread and so in every thread it starts afterwards
// (the CPU kernels' pool included), so that serve_http's own thread takes them. Call it before
// loading the models.
void block_shutdown_signals();

// Serves until SIGTERM or SIGINT, then stops taking requests, finishes those in flight and
// returns. InputError when the address cannot be bound.
void serve_http(const Deployment& deployment, const ServerOptions& options);

}  // namespace specd::serve
