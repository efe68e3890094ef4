#pragma once
// Failures, spot preemptions and checkpointing of a training job (the scenario's "reliability"
// section, docs/goodput.md). Without it no goodput is computed.
#include <optional>

namespace parallax {

// How the job comes back after losing a node.
enum class RecoveryStrategy : unsigned char {
    checkpoint, // every node reloads the last checkpoint from storage
    replica_memory, // the lost node's share comes from a surviving data-parallel replica over the fabric
    replan, // continue on the survivors at their throughput until the replacement arrives
};

// The name a scenario file uses ("checkpoint", "replica_memory", "replan").
const char* to_string(RecoveryStrategy r);

struct ReliabilitySpec {
    double failure_rate_per_gpu_hour = 0; // hardware and software interruptions per GPU and hour of running
    std::optional<double> checkpoint_interval_s; // unset = "auto": the interval that maximises goodput
    double checkpoint_write_GBps_per_node = 0;
    double checkpoint_read_GBps_per_node = 0;
    double restart_overhead_s = 0; // detection, rescheduling, process and communicator start-up
    double replacement_delay_s = 0; // until a failed GPU's node is replaced (spot groups may set their own)
    RecoveryStrategy recovery = RecoveryStrategy::checkpoint;
    bool operator==(const ReliabilitySpec&) const = default;
};

} // namespace parallax
