// The decoding thread: requests planned against the demo target decode, interleaved step by step,
// to exactly what one-request decoding gives; the queue's bound is a 429.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "serve/scheduler.h"
#include "serve_fixtures.h"
#include "test_helpers.h"
#include "util/error.h"

using namespace specd;
using namespace specd::serve;
using namespace specd::test;

TEST_CASE("requests decoded side by side give what each gives alone", "[serve]") {
  const Deployment d = demo_deployment();
  ServerMetrics metrics;
  // sd's chain and sam's fallback tree draft with one draft model: their rounds share its forwards.
  // Prompts prefilled two tokens a step: a newcomer's chunks ride beside the others' drafts (the
  // whole-prompt prefill is the next test's, and the OpenAI-client test's with short prompts).
  Scheduler scheduler(d, 4, 8, 2, metrics);
  const std::vector<std::string> prompts{"The history of", "def main():", "In the beginning"};
  const std::vector<std::string> methods{"sd", "pld", "sam"};
  std::vector<std::shared_ptr<Job>> jobs;
  for (size_t i = 0; i < 9; ++i) jobs.push_back(scheduler.submit(plan_request(d, greedy(prompts[i % 3], methods[i / 3], 20))));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job::Progress p = wait(*jobs[i]);
    INFO(i);
    CHECK(p.error_status == 0);
    CHECK(p.text == ar_text(d, prompts[i % 3], 20));
    CHECK(p.finish_reason == "length");
    CHECK(p.completion_tokens == 20);
    CHECK(p.metrics.method == methods[i / 3]);
    CHECK(p.metrics.steps >= 1);
  }
  scheduler.drain();
  CHECK(scheduler.running() == 0);
  CHECK(scheduler.waiting() == 0);
}

TEST_CASE("a step log records every batched step: its rows, each request's part and the tokens committed", "[serve]") {
  Deployment d = demo_deployment();
  // Cost curves as `specd serve` measures them at start-up: the batch planner sizes sd's chains
  // from the first step, and the log carries its expectations.
  d.target_cost = specd::CostCurve({{1, 1.0}, {2, 1.05}, {4, 1.2}, {8, 1.6}, {16, 2.6}});
  d.draft_cost = specd::CostCurve({{1, 0.3}, {2, 0.32}, {4, 0.4}, {8, 0.6}, {16, 1.0}});
  ServerMetrics metrics;
  ScopedTempDir dir("step-log");
  const std::string path = dir.file("steps.tsv");
  std::vector<int64_t> completions;
  {
    StepLog log(path);
    Scheduler scheduler(d, 2, 4, 0, metrics, true, &log);
    std::vector<std::shared_ptr<Job>> jobs;
    for (const std::string method : {"sd", "sam", "ar"}) jobs.push_back(scheduler.submit(plan_request(d, greedy("The history of", method, 12))));
    for (auto& job : jobs) completions.push_back(wait(*job).completion_tokens);
    scheduler.drain();
  }
  std::ifstream in(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line.rfind("time_s\tmix\tarm\trows", 0) == 0);
  int64_t tokens = 0, prefills = 0, steps = 0, predicted = 0;
  while (std::getline(in, line)) {
    ++steps;
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    REQUIRE(fields.size() == 14);
    CHECK((fields[2] == "planned" || fields[2] == "without-model" || fields[2] == "plain"));
    // The forward's rows are its requests' rows.
    int64_t rows = 0;
    std::stringstream requests(fields[9]);
    for (std::string request; requests >> request;) {
      const size_t first = request.find(':'), second = request.find(':', first + 1);
      rows += std::stoll(request.substr(first + 1, second - first - 1));
    }
    CHECK(rows == std::stoll(fields[3]));
    tokens += std::stoll(fields[5]);
    prefills += fields[4] == "1" ? 1 : 0;
    // The planner's expectation, where it planned the step: as planned, then undrafted.
    const double predicted_ms = std::stod(fields[11]), plain_ms = std::stod(fields[13]);
    CHECK(((predicted_ms > 0 && plain_ms > 0) || (predicted_ms == 0 && plain_ms == 0)));
    predicted += predicted_ms > 0 ? 1 : 0;
  }
  CHECK(steps > 3);
  CHECK(predicted > 0);
  CHECK(prefills >= 2);  // three prompts; two admitted together prefill in one step
  // Every token but each request's first (its prefill's) is committed by a logged decoding step.
  CHECK(tokens == (completions[0] - 1) + (completions[1] - 1) + (completions[2] - 1));
  CHECK_THROWS_AS(StepLog(dir.file("no-such-dir/steps.tsv")), InputError);
  CHECK_THROWS_WITH(StepLog(dir.file("no-such-dir/steps.tsv")), Catch::Contains("--step-log"));
}

TEST_CASE("a full queue refuses with 429 and a draining scheduler with 503", "[serve]") {
  const Deployment d = demo_deployment();
  ServerMetrics metrics;
  Scheduler scheduler(d, 1, 0, 0, metrics);
  std::shared_ptr<Job> first = scheduler.submit(plan_request(d, greedy("The history of", "ar", 200)));
  try {
    scheduler.submit(plan_request(d, greedy("The history of", "ar", 4)));
    // The first may have finished already on a fast machine; then the second was taken.
    CHECK(wait(*first).done);
  } catch (const RequestError& e) {
    CHECK(e.status == 429);
  }
  scheduler.drain();
  try {
    scheduler.submit(plan_request(d, greedy("x", "ar", 4)));
    FAIL("a draining scheduler took a request");
  } catch (const RequestError& e) {
    CHECK(e.status == 503);
  }
}

TEST_CASE("a request's plan refuses what the deployment cannot serve, naming the field", "[serve]") {
  const Deployment d = demo_deployment();
  const auto status_of = [&](const CompletionRequest& r) {
    try {
      plan_request(d, r);
    } catch (const RequestError& e) {
      return std::make_pair(e.status, e.param);
    }
    return std::make_pair(0, std::string());
  };
  CHECK(status_of(greedy("x", "csd", 4)) == std::make_pair(400, std::string("speculative.method")));
  CHECK(status_of(greedy("x", "sd", d.max_tokens + 1)) == std::make_pair(400, std::string("max_tokens")));
  CompletionRequest other_model = greedy("x", "sd", 4);
  other_model.model = "gpt-4";
  CHECK(status_of(other_model).first == 404);
  CompletionRequest long_prompt = greedy("", "ar", 4);
  long_prompt.prompt_tokens.assign(static_cast<size_t>(d.target->context_length()), 5);
  CHECK(status_of(long_prompt) == std::make_pair(400, std::string("prompt")));
  CompletionRequest bad_id = greedy("", "ar", 4);
  bad_id.prompt_tokens = {1, 1 << 30};
  CHECK(status_of(bad_id) == std::make_pair(400, std::string("prompt")));
}

// The drafting guard's arms as the scheduler applies them (drafting_guard.h): sam, which retrieves
// and falls back to the draft model, has both off arms (without the draft model, then plain), and
// runs each in its first looks; sd alone has only the plain one. Whatever the arms, greedy output
// is AR's.
TEST_CASE("the guard's arms: sam looks at both off arms, sd at the plain one only, and both still decode AR's text", "[serve]") {
  const Deployment d = demo_deployment();
  ServerMetrics metrics;
  ScopedTempDir dir("guard-arms");
  const std::string path = dir.file("steps.tsv");
  const std::string prompt = "The history of";
  {
    StepLog log(path);
    Scheduler scheduler(d, 1, 4, 0, metrics, true, &log);
    // First looks: 24 planned steps, at most 32 recovering, then for sam 48 without the model, then
    // plain (sam's from its 105th decoding step at the latest, sd's from its 57th). One drafted token a step at most,
    // so that the prefill's token and 2 a step take sam's 240 tokens over 120 steps or more and
    // sd's 120 over 60 or more. (Few tokens: under ASan each costs ~50 ms.)
    for (const auto& [method, tokens] : {std::make_pair(std::string("sam"), 240), std::make_pair(std::string("sd"), 120)}) {
      CompletionRequest request = greedy(prompt, method, tokens);
      request.speculative.max_draft = 1;
      const Job::Progress p = wait(*scheduler.submit(plan_request(d, request)));
      INFO(method);
      CHECK(p.error_status == 0);
      CHECK(p.text == ar_text(d, prompt, tokens));
    }
    scheduler.drain();
  }
  std::ifstream in(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  std::map<std::string, std::set<std::string>> arms;  // method -> arms its decoding steps ran
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    REQUIRE(fields.size() == 14);
    if (fields[4] == "0") arms[fields[1]].insert(fields[2]);
  }
  CHECK(arms["sam"] == std::set<std::string>{"planned", "without-model", "plain"});
  CHECK(arms["sd"] == std::set<std::string>{"planned", "plain"});
}
