// The table of tunable parameters: every entry reads and writes its own field, names and flags are
// unique where they must be, values parse as a user types them, and deployment takes a typed flag
// over the artifact's swept threshold over the default, saying which it used.
#include "catch_torch.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "artifact/artifact.h"
#include "speculative/method_params.h"
#include "util/error.h"

using namespace specd;

TEST_CASE("every parameter reads back what it writes and leaves the other parameters alone", "[params]") {
  for (const MethodParam& p : method_params()) {
    CAPTURE(p.name, p.flag);
    MethodOptions options;
    std::map<std::string, double> before;
    for (const MethodParam& q : method_params()) before[q.flag] = q.get(options);
    const double value = !p.choices.empty() ? static_cast<double>(p.choices.size() - 1) - p.get(options) : p.get(options) + 2;
    REQUIRE(value != p.get(options));
    p.set(options, value);
    CHECK(p.get(options) == value);
    for (const MethodParam& q : method_params())
      if (q.flag != p.flag) CHECK(q.get(options) == before[q.flag]);
  }
}

TEST_CASE("parameter names are unique within a family and flags across the table", "[params]") {
  std::set<std::string> flags;
  for (const MethodParam& p : method_params()) CHECK(flags.insert(p.flag).second);
  for (const MethodInfo& m : method_registry()) {
    if (m.name == "ar") continue;
    std::set<std::string> names;
    for (const MethodParam* p : params_of(method_family(m.name))) CHECK(names.insert(p->name).second);
    CHECK(!params_of(method_family(m.name)).empty());  // every speculative method has at least the draft budget
  }
  CHECK(params_of("ar").empty());
}

TEST_CASE("values parse as typed and bad ones are refused naming where they came from", "[params]") {
  const MethodParam* tokens = find_param("pld", "tokens");
  const MethodParam* match = find_param("pld", "match");
  const MethodParam* tau = find_param("csd", "tau");
  REQUIRE(tokens);
  REQUIRE(match);
  REQUIRE(tau);
  CHECK(parse_param_value(*tokens, "12", "--grid") == 12);
  CHECK(parse_param_value(*match, "latest", "--grid") == 1);
  CHECK(parse_param_value(*tau, "0.05", "--grid") == 0.05);
  CHECK(param_value_text(*match, 1) == "latest");
  CHECK(param_value_text(*tokens, 12) == "12");
  CHECK(param_value_text(*tau, 0.05) == "0.05");
  CHECK_THROWS_WITH(parse_param_value(*tokens, "1.5", "--grid"), "--grid: tokens must be a whole number (got '1.5')");
  CHECK_THROWS_WITH(parse_param_value(*tokens, "10x", "--grid"), "--grid: tokens: '10x' is not a number");
  CHECK_THROWS_WITH(parse_param_value(*tau, "nan", "--grid"), "--grid: tau: 'nan' is not a number");
  CHECK_THROWS_WITH(parse_param_value(*match, "first", "--grid"), "--grid: match must be one of earliest, latest (got 'first')");
  CHECK(find_param("pld", "theta_entropy") == nullptr);
}

TEST_CASE("deployment: a typed flag wins over the artifact's threshold, which wins over the default", "[params]") {
  Artifact artifact;
  artifact.thresholds = {{"pld", "tokens", 6, "sweep run 2 of 4"}, {"pld", "match", 1, "sweep run 2 of 4"}, {"sam", "len_bias", 2, ""}};
  MethodOptions options;
  std::vector<ParamSetting> used = deploy_params(options, "pld", &artifact, {});
  CHECK(options.pld.num_pred_tokens == 6);
  CHECK(options.pld.match == PldMatch::Latest);
  CHECK(options.sam.len_bias == 5);  // another family's threshold stays out
  std::map<std::string, ParamSetting> by_name;
  for (const ParamSetting& s : used) by_name[s.name] = s;
  CHECK(by_name.at("tokens").source == "artifact (sweep run 2 of 4)");
  CHECK(by_name.at("match").text == "latest");
  CHECK(by_name.at("max_ngram").source == "default");

  MethodOptions typed;
  typed.pld.num_pred_tokens = 9;
  used = deploy_params(typed, "pld", &artifact, {"pld-tokens"});
  CHECK(typed.pld.num_pred_tokens == 9);
  CHECK(typed.pld.match == PldMatch::Latest);
  for (const ParamSetting& s : used)
    if (s.name == "tokens") CHECK(s.source == "option --pld-tokens");
  CHECK(settings_text(used).find("tokens=9 (option --pld-tokens)") != std::string::npos);

  MethodOptions plain;  // no artifact: every value is the default
  for (const ParamSetting& s : deploy_params(plain, "pld", nullptr, {})) CHECK(s.source == "default");
  CHECK(plain.pld.num_pred_tokens == MethodOptions().pld.num_pred_tokens);
}

TEST_CASE("an ablation deploys its family's thresholds", "[params]") {
  Artifact artifact;
  artifact.thresholds = {{"arc", "theta", 0.5, "sweep"}};
  for (const char* method : {"arc", "arc-lts-only"}) {
    MethodOptions options;
    deploy_params(options, method, &artifact, {});
    CHECK(options.arc_theta == 0.5);
  }
}

TEST_CASE("each parameter's range is checked wherever a value comes from: flag, grid, artifact, code", "[params]") {
  const MethodParam* tau = find_param("csd", "tau");
  const MethodParam* lambda = find_param("csd", "lambda");
  const MethodParam* gamma = find_param("sd", "gamma");
  REQUIRE(tau);
  REQUIRE(lambda);
  REQUIRE(gamma);
  CHECK(tau->range_text() == "(0, 1]");
  CHECK(lambda->range_text() == ">= 1");
  CHECK(parse_param_value(*tau, "1", "--csd-tau") == 1);  // closed end
  CHECK_THROWS_WITH(parse_param_value(*tau, "0", "--csd-tau"), "--csd-tau: tau must be in (0, 1] (got 0)");  // open end
  CHECK_THROWS_WITH(parse_param_value(*lambda, "0", "--csd-lambda"), "--csd-lambda: lambda must be at least 1 (got 0)");
  CHECK_THROWS_WITH(parse_param_value(*gamma, "1025", "--gamma"), "--gamma: gamma must be in [1, 1024] (got 1025)");
  // An integer that passes its declared range but not its field's type is refused, not wrapped.
  CHECK_THROWS_WITH(parse_param_value(*lambda, "1e30", "--csd-lambda"), Catch::StartsWith("--csd-lambda: lambda does not fit its field"));
  const MethodParam* branches = find_param("adapld", "branches");
  REQUIRE(branches);
  CHECK_THROWS_WITH(parse_param_value(*branches, "3000000000", "--grid"), Catch::StartsWith("--grid: branches does not fit its field"));

  Artifact artifact;
  artifact.thresholds = {{"csd", "tau", 1.5, "hand-edited"}};
  MethodOptions options;
  CHECK_THROWS_WITH(deploy_params(options, "csd", &artifact, {}), "artifact threshold csd.tau: tau must be in (0, 1] (got 1.5)");
  CHECK_NOTHROW(deploy_params(options, "csd", &artifact, {"csd-tau"}));  // a typed flag replaces it unread

  MethodOptions built;  // options made in code, as a library user would
  built.respec.alpha = 0;
  CHECK_THROWS_WITH(check_params(built, "respec", "method respec"), "method respec: alpha must be in (0, 1] (got 0)");
  CHECK_NOTHROW(check_params(built, "pld", "method pld"));  // another family's value is not its concern
  for (const MethodParam& p : method_params()) {  // every default is in its own range
    CAPTURE(p.name);
    CHECK_NOTHROW(p.check(p.get(MethodOptions{}), "default"));
  }
}

TEST_CASE("docs/methods.md holds the parameter table as the declarations make it", "[params][docs]") {
  std::ifstream in(std::string(SPECD_SOURCE_DIR) + "/docs/methods.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- specd methods --markdown: begin -->\n", end = "<!-- specd methods --markdown: end -->";
  const size_t from = doc.find(begin), to = doc.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  // On a difference: build/cli/specd methods --markdown prints the table to paste between the markers.
  CHECK(doc.substr(from + begin.size(), to - from - begin.size()) == params_markdown());
}

TEST_CASE("deploy: a lossy family whose sweep met no drift contract is refused unless its thresholds are typed", "[methods]") {
  Artifact artifact;
  SweepCalibration sweep;
  sweep.family = "csd";
  sweep.lossless = false;
  sweep.confidence = 0.95;
  sweep.grid = {{"lambda", {6, 24}, {"6", "24"}}, {"tau", {0.01}, {"0.01"}}};
  sweep.choice = "no run of 3 stays within the bounds (NLL/token at most 0.05 nats over AR)";
  artifact.sweeps.push_back(sweep);
  MethodOptions options;
  CHECK_THROWS_WITH(deploy_params(options, "csd", &artifact, {}),
                    "method csd: the artifact's csd sweep found no thresholds within its drift contract (no run of 3 stays within the bounds "
                    "(NLL/token at most 0.05 nats over AR)): deploy another method, widen the sweep's grid, or type the thresholds");
  CHECK_NOTHROW(deploy_params(options, "csd", &artifact, {"csd-lambda"}));  // the user's own threshold
  CHECK_NOTHROW(deploy_params(options, "sd", &artifact, {}));               // another family
  artifact.sweeps[0].chosen = 1;
  CHECK_NOTHROW(deploy_params(options, "csd", &artifact, {}));
  artifact.sweeps[0].chosen.reset();
  artifact.sweeps[0].confidence = 0;  // a version-3 sweep: deployed as it was then
  CHECK_NOTHROW(deploy_params(options, "csd", &artifact, {}));
}
