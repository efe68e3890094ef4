#pragma once
// The composite search's results (search.composite) as the "composite" object of `search --json` and as
// the text section after the plain results (docs/composite-strategies.md).
#include "search/composite_search.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

nlohmann::json composite_outcome_to_json(const CompositeOutcome& o);
std::string composite_outcome_to_text(const CompositeOutcome& o);

} // namespace parallax
