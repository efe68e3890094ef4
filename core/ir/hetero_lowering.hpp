#pragma once
// Lowers a heterogeneous plan (docs/heterogeneous.md) to the execution DAG: one device per stage,
// standing for the stage's replicas. Its passes are its slowest replica's on its own GPU and TP (the
// pacing stage's spread to its busy time over the lowered micro-batches, the others never slower than
// that), its pipeline sends the hetero model's sends across GPU types, its tail the slowest replica's
// gradient reduction and optimizer step. A stage whose replicas share the micro-batches is drawn as
// if its slowest replica ran every one: its row is busier than each of its GPUs is.
#include "ir/lowering.hpp"
#include "model/hetero_model.hpp"

namespace parallax {

// The step's micro-batches as the pipeline sees them: the pacing stage's busy time in units of its
// micro-batch time, rounded (at least 1).
long long hetero_microbatches(const HeteroModel& h);

// `microbatches` > 0 lowers that many (a window of a long step), else hetero_microbatches(h).
LoweredPlan lower_heterogeneous(const HeteroModel& h, long long microbatches = 0);

} // namespace parallax
