#include "serve/acceptance_history.h"

namespace specd::serve {

void AcceptanceHistory::finished(const std::string& method, Acceptance estimate, double evidence) {
  if (!(evidence > 0)) return;
  Tally& t = methods_[method];
  t = Tally{kForget * t.weight + evidence, kForget * t.first + evidence * estimate.first, kForget * t.next + evidence * estimate.next};
}

std::optional<Acceptance> AcceptanceHistory::start(const std::string& method) const {
  const auto it = methods_.find(method);
  if (it == methods_.end()) return std::nullopt;
  const Tally& t = it->second;
  return Acceptance{t.first / t.weight, t.next / t.weight};
}

}  // namespace specd::serve
