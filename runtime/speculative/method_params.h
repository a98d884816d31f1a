#pragma once
// The tunable parameters of the decoding methods, declared once: name, flag, type, default,
// allowed values, help and the methods that use it. Everything else is derived from this table:
// the command-line flags and their --help (cli/method_options.cpp), the range checks of flags,
// sweep grids, artifact thresholds and options built in code (make_policy), what `specd calibrate
// sweep --grid NAME=v1,v2` may vary and what an artifact's thresholds table deploys (its policy is
// the family that was swept, its name the parameter's), the stats line's sources, and the table
// in docs/methods.md (`specd methods --markdown`, checked by a test). Every parameter is
// sweepable and deployable from an artifact; a typed flag wins over both.
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "speculative/method_catalog.h"
#include "speculative/method_options.h"

namespace specd {

struct Artifact;

// From low to high, an end excluded where open.
struct ParamRange {
  double low = -std::numeric_limits<double>::infinity(), high = std::numeric_limits<double>::infinity();
  bool low_open = false, high_open = false;
};

struct MethodParam {
  std::string name;                   // "theta_entropy": the grid's and the thresholds table's name
  std::string flag;                   // "respec-theta-entropy": the command-line option, without dashes
  std::vector<std::string> families;  // the method families that use it ("*": every speculative one)
  std::string help;
  bool integer = false;               // whole numbers only
  std::vector<std::string> choices;   // a named choice (pld match: earliest, latest): the value is the index
  // Allowed values. Integers are also bounded by their field's type (type_low, type_high), so
  // that no value overflows the field.
  ParamRange range;
  double type_low = -std::numeric_limits<double>::infinity(), type_high = std::numeric_limits<double>::infinity();
  std::function<double(const MethodOptions&)> get;
  std::function<void(MethodOptions&, double)> set;

  bool used_by(const std::string& family) const;
  // "[1, 1024]", "(0, 1]", ">= 0", "any finite number", "earliest, latest".
  std::string range_text() const;
  // "sd, csd"; "every speculative method" for "*".
  std::string families_text() const;
  // The default as a user types it (MethodOptions' own default).
  std::string default_text() const;
  // InputError "where: name must be in [1, 1024] (got 0)" for a value outside the range.
  void check(double value, const std::string& where) const;
};

// Every parameter, in display order.
const std::vector<MethodParam>& method_params();
// The parameters a family uses, in display order.
std::vector<const MethodParam*> params_of(const std::string& family);
// The family's parameter of that name, or null.
const MethodParam* find_param(const std::string& family, const std::string& name);
// The parameter whose flag (without dashes) that is, or null.
const MethodParam* find_flag(const std::string& flag);
// "respec" for respec-no-ema; the registry's family of a method (its own name for most).
std::string method_family(const std::string& method);
// The method a bench label names: "sd" for the variant "sd:gamma=8" (specd bench --methods
// METHOD:NAME=VALUE...), the label itself for a plain method.
std::string label_method(const std::string& label);

// A value as typed (a number, or one of the choices): InputError naming `where` when it is not
// one, is not whole for an integer parameter, is not finite or is outside the parameter's range.
double parse_param_value(const MethodParam& param, const std::string& text, const std::string& where);
// The value as a user reads it: the choice's name, an integer without decimals, else %g.
std::string param_value_text(const MethodParam& param, double value);
// Every parameter the family uses, checked against its range (InputError naming `where` and the
// parameter): for options built in code rather than parsed.
void check_params(const MethodOptions& options, const std::string& family, const std::string& where);
// The parameter table of docs/methods.md: one Markdown row per parameter.
std::string params_markdown();

// Where a deployed value came from.
struct ParamSetting {
  std::string name;
  double value = 0;
  std::string text;    // param_value_text
  std::string source;  // "default", "option --respec-tau", "artifact (sweep ...)"
};

// The values a method runs with: its family's parameters from `options`, replaced by the
// artifact's thresholds for the family (when an artifact is given, each checked against its
// range) except for the parameters named in `explicit_flags` (flags given on the command line,
// which win). Returns every parameter of the family with its value and source, in display order.
// InputError naming the method when the artifact holds a sweep of this lossy family whose drift
// contract no run met (calibrate/sweep_choice.h) and none of its grid's flags was typed.
std::vector<ParamSetting> deploy_params(MethodOptions& options, const std::string& method, const Artifact* artifact,
                                        const std::set<std::string>& explicit_flags);
// The thresholds no family's parameter is (another policy or name) or that lie outside their
// parameter's range: one line "calibration.sqlite: thresholds (FAMILY, NAME) ..." each. What
// `specd artifact verify` and every deploy of an artifact check (artifact/value_domains.h has
// the values' own domains).
std::vector<std::string> threshold_problems(const Artifact& artifact);
// "theta_entropy=1.2 (artifact: sweep ...), tau=2 (default), ..." for the stats line and traces.
std::string settings_text(const std::vector<ParamSetting>& settings);
// The same as a JSON object, {"theta": {"value": 0.3, "source": "artifact ..."}, ...}: what a
// trace run records as "deployed", so readers learn each value and its source without parsing.
nlohmann::json settings_json(const std::vector<ParamSetting>& settings);

}  // namespace specd
