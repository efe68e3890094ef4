#pragma once
// A closed-loop serving measurement states its concurrency, but the load generator and the frontend stand
// between it and the engine: a client's connection limit or failing requests can leave most of the loop
// waiting before the engine, and the row then measures a smaller load than it names. Such rows are told by
// their own latencies and their siblings' (the same deployment at the same lengths), not by any prediction.
#include "io/serving_runs.hpp"

#include <vector>

namespace parallax {

// Moves to `skipped` (with the numbers that show it) every closed-loop row whose measured latencies put
// under a quarter of its concurrency past the first token while it decodes faster than the same deployment
// measured at a lower concurrency.
void skip_loads_that_missed_the_engine(std::vector<ServingRun>& runs, std::vector<ServingSkip>& skipped);

} // namespace parallax
