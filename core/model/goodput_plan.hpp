#pragma once
// The inputs of the goodput model (goodput.hpp) from a scenario and its predicted step: GPUs and
// nodes the plan uses, its checkpoint size, data-parallel copies, fabric and spot nodes.
#include "model/goodput.hpp"
#include "model/hetero_model.hpp"
#include "spec/prediction.hpp"
#include "spec/scenario.hpp"

namespace parallax {

// Data-parallel replicas that hold every stage: strategy.dp, or the fewest replicas of any stage.
int data_parallel_copies(const Scenario& s);
// Bytes of a checkpoint: bf16 weights + the optimizer's states (master weights and moments) of the
// whole model, as memory_model's state_bytes() counts them (14 B/parameter with Adam).
double checkpoint_bytes(const Scenario& s, const Strategy& strategy);

// A plain plan: `strategy` on the scenario's cluster at the given throughput.
GoodputPlan goodput_plan(const Scenario& s, const Strategy& strategy, double tokens_per_s, double step_time_s);
// A heterogeneous plan (strategy.stages): GPUs and nodes per group, each group's spot nodes.
GoodputPlan goodput_plan(const Scenario& s, const HeteroPrediction& h);

// replan on a plain plan: the survivors' throughput (one data-parallel replica fewer, on the nodes
// left, same global batch) over `p`'s, re-predicted by the analytic model; -1 when that is not a
// valid plan (a replica that does not fill whole nodes, a batch the survivors cannot split, DP 1).
double survivor_throughput_fraction(const Scenario& s, const Prediction& p, const Calibration& cal);

// The goodput inputs of a plain scenario with a reliability section and its prediction (with the
// survivors' throughput when the recovery re-plans).
GoodputPlan scenario_goodput_plan(const Scenario& s, const Prediction& p, const Calibration& cal);

// The report for a scenario with a reliability section (s.reliability must be set).
GoodputReport scenario_goodput(const Scenario& s, const Prediction& p, const Calibration& cal = builtin_calibration());
GoodputReport scenario_goodput(const Scenario& s, const HeteroPrediction& h);

} // namespace parallax
