#pragma once
// Goodput: the tokens per second a training job keeps over a long run once interruptions (GPU
// failures, spot preemptions), checkpoint writes, lost work and recovery are paid for
// (docs/goodput.md). Plain maths on a renewal process; goodput_plan.hpp derives its inputs from a
// scenario and its prediction, goodput_sim.hpp simulates the same process.
#include "spec/reliability_spec.hpp"

#include <string>
#include <vector>

namespace parallax {

// Llama 3 pre-training (Dubey et al. 2024, "The Llama 3 Herd of Models", sec. 3.3.4): 466 job
// interruptions (419 unexpected, 47 planned) in a 54-day snapshot on up to 16,384 H100 GPUs.
inline constexpr double kLlama3Interruptions = 466;
inline constexpr double kLlama3UnexpectedInterruptions = 419;
inline constexpr double kLlama3SnapshotDays = 54;
inline constexpr double kLlama3Gpus = 16384;
// Every interruption stops the synchronous job, planned or not: 466 / (54 d x 24 h x 16,384 GPUs)
// = 2.19e-5 per GPU-hour (8.6 a day on 16,384 GPUs). The default failure rate.
inline constexpr double kLlama3InterruptionsPerGpuHour
    = kLlama3Interruptions / (kLlama3SnapshotDays * 24 * kLlama3Gpus);
inline constexpr double kLlama3UnexpectedInterruptionsPerGpuHour
    = kLlama3UnexpectedInterruptions / (kLlama3SnapshotDays * 24 * kLlama3Gpus);
// Llama 3's checkpoint storage (Tectonic, same report sec. 3.3.1): 2 TB/s sustained for the job's
// 2,048 nodes of 8 GPUs, ~1 GB/s per node. The default write and read bandwidth.
inline constexpr double kLlama3StorageGBpsPerNode = 2000.0 / (kLlama3Gpus / 8);

// Wall time one interruption costs besides the lost work, by part (seconds).
struct RecoveryCost {
    double restart_s = 0; // detection, rescheduling, process and communicator start-up
    double replacement_s = 0; // waiting for a replacement node (or running degraded, for replan)
    double reload_s = 0; // model and optimizer state back onto the GPUs
    double warmup_s = 0; // the first step after a restart (allocator, kernels, pipeline fill)
    double total() const { return restart_s + replacement_s + reload_s + warmup_s; }
};

// The process: interruptions arrive as a Poisson process of rate interruptions_per_s while the job
// runs; every interval_s of useful work the job writes a checkpoint for write_s (synchronously);
// an interruption loses everything since the last completed checkpoint, then recovery takes
// `recovery` (no interruptions during recovery).
struct CheckpointProcess {
    double interruptions_per_s = 0;
    double interval_s = 0;
    double write_s = 0;
    RecoveryCost recovery;
};

// Fractions of wall time; they sum to 1.
struct TimeFractions {
    double useful = 1;
    double lost_work = 0; // work (and partial checkpoint writes) since the last checkpoint, redone
    double checkpoint_writes = 0;
    double restart = 0;
    double replacement = 0;
    double reload = 0;
    double warmup = 0;
    double lost() const { return lost_work + checkpoint_writes + restart + replacement + reload + warmup; }
};

// Closed form of the process: a segment of tau = T + C completes after (e^(lambda tau) - 1) / lambda
// of running on average, with e^(lambda tau) - 1 interruptions each followed by the recovery
// (the exact renewal result behind Daly 2006, "A higher order estimate of the optimum checkpoint
// interval for restart dumps", FGCS 22(3), without failures during recovery).
TimeFractions expected_time_fractions(const CheckpointProcess& p);
// Young 1974, "A first order approximation to the optimum checkpoint interval", CACM 17(9):
// T = sqrt(2 C / lambda).
double young_interval_s(double write_s, double interruptions_per_s);
// Daly 2006 (above), eq. 37: T = sqrt(2 C M) [1 + sqrt(C / 2M) / 3 + (C / 2M) / 9] - C for C < 2M,
// else T = M, with M = 1 / lambda.
double daly_interval_s(double write_s, double interruptions_per_s);
// The interval that maximises the closed form's useful fraction (it does not depend on the
// recovery cost): the root of e^(x + a) (x - 1) + 1 = 0, x = lambda T, a = lambda C.
// 0 when there are no interruptions (no checkpoint needed).
double best_interval_s(double write_s, double interruptions_per_s);

// What the plan contributes (goodput_plan.hpp fills it from a scenario and its prediction).
struct GoodputPlan {
    double tokens_per_s = 0; // throughput without interruptions
    double step_time_s = 0;
    double gpus = 0; // GPUs the plan uses (every one of them stops the job when it fails)
    double nodes = 0; // nodes the plan uses (checkpoints are written and read by all of them)
    int data_parallel_copies = 1; // replicas holding every stage (fewest over the stages)
    double checkpoint_bytes = 0; // model state as saved: weights + optimizer states
    double parameters = 0; // of the whole model (for the report: bytes per parameter)
    double inter_node_Bps_per_node = 0; // one node's share of the fabric between nodes
    double preemptions_per_s = 0; // all spot nodes of the plan together
    double preemption_replacement_s = 0; // mean wait for a preempted node's replacement
    // replan: the survivors' throughput over the whole plan's, when their plan was re-predicted;
    // < 0: (copies - 1) / copies, the surviving replicas at the same speed each.
    double survivor_throughput_fraction = -1;
};

struct GoodputReport {
    double throughput_tokens_per_s = 0;
    double tokens_per_s = 0; // goodput at the interval used
    double fraction_of_throughput = 1;
    double interruptions_per_day = 0; // of running
    double failures_per_day = 0; // of them, GPU failures
    double preemptions_per_day = 0; // of them, spot preemptions
    double checkpoint_interval_s = 0; // used (given, or the best when "auto")
    double best_checkpoint_interval_s = 0;
    double best_tokens_per_s = 0; // goodput at the best interval
    double young_interval_s = 0;
    double daly_interval_s = 0;
    double checkpoint_bytes = 0;
    double checkpoint_write_s = 0;
    double checkpoint_read_s = 0;
    RecoveryStrategy recovery = RecoveryStrategy::checkpoint;
    RecoveryCost recovery_cost; // per interruption
    TimeFractions time;
    std::vector<std::string> assumptions;
};

// Recovery of one interruption under the spec's strategy (replica_memory and replan fall back to a
// checkpoint reload when no stage has a second replica).
RecoveryCost recovery_cost(const ReliabilitySpec& spec, const GoodputPlan& plan);
GoodputReport predict_goodput(const ReliabilitySpec& spec, const GoodputPlan& plan);
// The goodput only, allocation-free (the search ranks plans by it).
double goodput_tokens_per_s(const ReliabilitySpec& spec, const GoodputPlan& plan);

} // namespace parallax
