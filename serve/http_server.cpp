#include "serve/http_server.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <thread>

#include <httplib.h>

#include "serve/connection_watch.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"
#include "serve/request_plan.h"
#include "serve/scheduler.h"
#include "serve/server_metrics.h"
#include "util/error.h"

namespace specd::serve {
namespace {

using nlohmann::json;

// Text the model wrote may hold bytes that are not UTF-8 at its very end: replaced, never thrown.
std::string dump(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace); }

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

void reply_error(httplib::Response& res, const RequestError& error) { reply(res, error.status, error_body(error)); }

// Compares without stopping at the first difference, so the time taken says nothing about the key.
bool same_key(const std::string& given, const std::string& key) {
  unsigned diff = given.size() != key.size();
  for (size_t i = 0; i < given.size(); ++i) diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(key[i % key.size()]);
  return diff == 0;
}

const char* status_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

// What the client asked for, answered as a whole or as server-sent events.
class CompletionHandler {
 public:
  CompletionHandler(const Deployment& deployment, Scheduler& scheduler, ServerMetrics& metrics, bool chat)
      : deployment_(deployment), scheduler_(scheduler), metrics_(metrics), chat_(chat) {}

  void operator()(const httplib::Request& req, httplib::Response& res) const {
    CompletionRequest request;
    std::shared_ptr<Job> job;
    try {
      request = parse_completion_request(req.body, chat_);
      job = scheduler_.submit(plan_request(deployment_, request));
    } catch (const RequestError& e) {
      metrics_.refused(e.status);
      reply_error(res, e);
      return;
    }
    const ResponseHeader header = new_response_header(deployment_.model_id, chat_);
    if (!request.stream) {
      whole(req, res, job, header);
      return;
    }
    job->wait_started();
    Job::Progress first = job->take(std::chrono::milliseconds(0));
    if (first.error_status) {
      reply_error(res, RequestError(first.error_status, "", first.error, status_type(first.error_status)));
      return;
    }
    stream(res, job, header, std::move(first), request.include_usage);
  }

 private:
  // Waits for the whole answer, looking at the connection between waits: a client that went away
  // cancels its request, which frees its slot (or its place in the queue) at the next step.
  void whole(const httplib::Request& req, httplib::Response& res, const std::shared_ptr<Job>& job,
             const ResponseHeader& header) const {
    constexpr auto kLook = std::chrono::milliseconds(200);
    ConnectionWatch client({req.local_addr, req.local_port, req.remote_addr, req.remote_port});
    std::string text;
    Job::Progress p;
    auto next_look = Job::Clock::now() + kLook;
    while (!p.done) {
      p = job->take(kLook);  // returns as text arrives, each step: look at the socket only every kLook
      text += p.text;
      if (p.done || Job::Clock::now() < next_look) continue;
      if (client.peer_gone()) {
        job->cancel();
        return;  // nobody to answer
      }
      next_look = Job::Clock::now() + kLook;
    }
    if (p.error_status) {
      reply_error(res, RequestError(p.error_status, "", p.error, status_type(p.error_status)));
      return;
    }
    reply(res, 200, completion_body(header, text, p.finish_reason, p.prompt_tokens, p.completion_tokens, p.metrics));
  }

  void stream(httplib::Response& res, const std::shared_ptr<Job>& job, const ResponseHeader& header, Job::Progress first,
              bool include_usage) const {
    struct State {
      Job::Progress next;
      bool have_next = true, first_chunk = true;
    };
    auto state = std::make_shared<State>();
    state->next = std::move(first);
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [job, header, state, include_usage](size_t, httplib::DataSink& sink) {
          const auto send = [&](const std::string& data) {
            const std::string event = "data: " + data + "\n\n";
            return sink.write(event.data(), event.size());
          };
          if (!sink.is_writable()) {
            job->cancel();
            return false;
          }
          Job::Progress p = state->have_next ? std::move(state->next) : job->take(std::chrono::milliseconds(100));
          state->have_next = false;
          if (p.error_status) {  // failed after the stream started: an error event, then the end
            send(dump(error_body(RequestError(p.error_status, "", p.error, status_type(p.error_status)))));
            send("[DONE]");
            sink.done();
            return true;
          }
          if (!p.text.empty() || state->first_chunk) {
            if (!send(dump(stream_chunk(header, p.text, state->first_chunk, nullptr)))) {
              job->cancel();
              return false;
            }
            state->first_chunk = false;
          }
          if (p.done) {
            const ChunkEnd end{p.finish_reason, p.prompt_tokens, p.completion_tokens, p.metrics};
            bool ok = send(dump(stream_chunk(header, "", false, &end)));
            if (ok && include_usage) ok = send(dump(usage_chunk(header, end)));
            if (ok) ok = send("[DONE]");
            if (!ok) return false;
            sink.done();
          }
          return true;
        },
        [job](bool success) {
          if (!success) job->cancel();
        });
  }

  const Deployment& deployment_;
  Scheduler& scheduler_;
  ServerMetrics& metrics_;
  bool chat_;
};

}  // namespace

static sigset_t shutdown_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

void block_shutdown_signals() {
  const sigset_t signals = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

HttpServer::HttpServer(const ServerOptions& options) : options_(options), server_(std::make_unique<httplib::Server>()) {
  const int threads = options.parallel + options.queue + 8;  // room to answer 429 beyond the queue
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  // SO_REUSEADDR only: a restart may bind while old connections linger, but not beside a live
  // server (httplib's default adds SO_REUSEPORT, which lets a second server share the port).
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server_->set_payload_max_length(static_cast<size_t>(options.max_body));
  if (!options.step_log.empty()) step_log_ = std::make_unique<StepLog>(options.step_log);
  server_->set_read_timeout(30);
  server_->set_write_timeout(30);
  port_ = options.port == 0 ? server_->bind_to_any_port(options.host) : (server_->bind_to_port(options.host, options.port) ? options.port : -1);
  if (port_ < 0) input_error("--host/--port", "cannot listen on " + options.host + ":" + std::to_string(options.port) + " (" + std::strerror(errno) + ")");
}

HttpServer::~HttpServer() = default;

void HttpServer::serve(const Deployment& deployment) {
  // SIGTERM and SIGINT are taken by one thread (sigwait), which drains; every other thread has
  // them blocked. A client that goes away must not kill the process.
  block_shutdown_signals();
  const sigset_t signals = shutdown_signals();
  signal(SIGPIPE, SIG_IGN);

  const ServerOptions& options = options_;
  httplib::Server& server = *server_;
  ServerMetrics metrics;
  metrics.set_machine(deployment.machine);
  Scheduler scheduler(deployment, options.parallel, options.queue, options.prefill_chunk, metrics, options.drafting_guard, step_log_.get());
  std::atomic<bool> draining{false};
  server.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (options.api_key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    const std::string bearer = "Bearer ";
    if (auth.compare(0, bearer.size(), bearer) == 0 && same_key(auth.substr(bearer.size()), options.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    metrics.refused(401);
    reply_error(res, RequestError(401, "", "a valid API key is needed: Authorization: Bearer <key>", "authentication_error"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own refusals (no such route, a body past --max-body, a malformed request line) as
  // OpenAI error objects.
  server.set_error_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message = req.method + " " + req.path + ": ";
    if (res.status == 404) message += "no such route (POST /v1/completions, POST /v1/chat/completions, GET /v1/models, /health, /metrics)";
    else if (res.status == 413) message += "the body is past specd serve --max-body, " + std::to_string(options.max_body) + " bytes";
    else message += "refused with HTTP status " + std::to_string(res.status);
    metrics.refused(res.status);
    reply(res, res.status, error_body(RequestError(res.status, "", message, status_type(res.status))));
  });
  server.set_exception_handler([&](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what += std::string(": ") + x.what();
    } catch (...) {
    }
    metrics.refused(500);
    reply(res, 500, error_body(RequestError(500, "", what, "server_error")));
  });

  const int64_t started = static_cast<int64_t>(std::time(nullptr));
  server.Get("/health", [&](const httplib::Request&, httplib::Response& res) {
    if (draining) reply(res, 503, {{"status", "draining"}});
    else reply(res, 200, {{"status", "ok"}, {"running", scheduler.running()}, {"waiting", scheduler.waiting()}});
  });
  server.Get("/v1/models", [&](const httplib::Request&, httplib::Response& res) { reply(res, 200, models_body(deployment.model_id, started)); });
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.prometheus_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Post("/v1/completions", CompletionHandler(deployment, scheduler, metrics, false));
  server.Post("/v1/chat/completions", CompletionHandler(deployment, scheduler, metrics, true));


  std::thread waiter([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    draining = true;
    std::fprintf(stderr, "specd serve: %s: finishing %lld running and %lld waiting requests, then stopping\n",
                 signal_number == SIGINT ? "SIGINT" : "SIGTERM", static_cast<long long>(scheduler.running()),
                 static_cast<long long>(scheduler.waiting()));
    scheduler.drain();
    server.stop();
  });
  const bool listened = server.listen_after_bind();
  const bool by_signal = draining;
  if (!by_signal) kill(getpid(), SIGTERM);  // listening ended by itself: let the waiter finish
  waiter.join();
  if (!listened && !by_signal) throw std::runtime_error("specd serve: the server stopped listening");
}

}  // namespace specd::serve
