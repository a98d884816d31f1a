#pragma once
// The tunable parameters of the decoding methods, by name: what `specd calibrate sweep --grid
// NAME=v1,v2` varies, what an artifact's thresholds table deploys (its policy is the family that
// was swept, its name the parameter's), and the command-line flag that overrides both. One entry
// per MethodOptions field a sweep may vary.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "speculative/method_registry.h"

namespace specd {

struct Artifact;

struct MethodParam {
  std::string name;                   // "theta_entropy": the grid's and the thresholds table's name
  std::string flag;                   // "respec-theta-entropy": the command-line option, without dashes
  std::vector<std::string> families;  // the method families that use it ("*": every speculative one)
  std::string help;
  bool integer = false;               // whole numbers only
  std::vector<std::string> choices;   // a named choice (pld match: earliest, latest): the value is the index
  // True for the parameters whose flag add_method_options declares from this table (the others
  // have hand-written options there).
  bool table_flag = false;
  std::function<double(const MethodOptions&)> get;
  std::function<void(MethodOptions&, double)> set;
  bool used_by(const std::string& family) const;
};

// Every parameter, in display order.
const std::vector<MethodParam>& method_params();
// The parameters a family uses, in display order.
std::vector<const MethodParam*> params_of(const std::string& family);
// The family's parameter of that name, or null.
const MethodParam* find_param(const std::string& family, const std::string& name);
// "respec" for respec-no-ema; the registry's family of a method (its own name for most).
std::string method_family(const std::string& method);

// A value as typed (a number, or one of the choices): InputError naming `where` when it is not
// one, is not whole for an integer parameter, or is not finite.
double parse_param_value(const MethodParam& param, const std::string& text, const std::string& where);
// The value as a user reads it: the choice's name, an integer without decimals, else %g.
std::string param_value_text(const MethodParam& param, double value);

// Where a deployed value came from.
struct ParamSetting {
  std::string name;
  double value = 0;
  std::string text;    // param_value_text
  std::string source;  // "default", "option --respec-tau", "artifact (sweep ...)"
};

// The values a method runs with: its family's parameters from `options`, replaced by the
// artifact's thresholds for the family (when an artifact is given) except for the parameters
// named in `explicit_flags` (flags given on the command line, which win). Returns every parameter
// of the family with its value and source, in display order.
std::vector<ParamSetting> deploy_params(MethodOptions& options, const std::string& method, const Artifact* artifact,
                                        const std::set<std::string>& explicit_flags);
// "theta_entropy=1.2 (artifact: sweep ...), tau=2 (default), ..." for the stats line and traces.
std::string settings_text(const std::vector<ParamSetting>& settings);

}  // namespace specd
