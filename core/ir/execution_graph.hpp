#pragma once
// The IR: an explicit per-device execution DAG of one training step. Devices are pipeline stages
// (one representative rank each: DP replicas and TP ranks of a stage behave alike). Ops are compute
// chunks (forward, backward-input B, backward-weight W, recompute), pipeline sends, data-parallel
// reductions and gathers, ZeRO-3 gathers, the optimizer step, and display-only companions showing
// the TP/CP/EP traffic that runs under a compute op. Structure of arrays: ~40 bytes per op, so a
// 1,024-stage x 512-micro-batch schedule (a few million ops) fits in a few hundred MB.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace parallax {

enum class IrOpType : std::uint8_t {
    forward,
    backward_input,
    backward_weight,
    recompute,
    pp_send,
    dp_reduce,
    param_gather,
    zero3_gather,
    zero3_reduce_scatter,
    optimizer,
    offload,
    barrier,
    tp_comm, // display-only companions: busy time of the collectives under one compute op
    cp_comm,
    ep_comm,
};
const char* to_string(IrOpType t);
bool is_compute(IrOpType t);

// The stream an op runs on (one per device): the compute stream, the pipeline-send and
// data-parallel communication streams, streams for TP/CP/EP traffic, and a synchronisation
// pseudo-stream. A stream runs one op at a time.
// dp carries gradient reductions, dp_gather parameter gathers (FSDP keeps them on separate CUDA
// streams so they overlap, sharing the link's bandwidth).
enum class IrStream : std::uint8_t { compute, pp, dp, tp, cp, ep, sync, dp_gather };
inline constexpr int kIrStreamCount = 8;
const char* to_string(IrStream s);

// The physical link a communication op uses. Ops of different streams on the same link of a device
// share its bandwidth while they overlap (processor sharing).
enum class IrLink : std::uint8_t { none, nvlink, network };
inline constexpr int kIrLinkCount = 3;
const char* to_string(IrLink l);

// How a stream picks its next op: in program order (the schedule's static order, Megatron), the
// ready op with the smallest priority (dynamic schedules such as DualPipe), or first-ready-first-
// served (communication links, so collectives sharing a link contend).
enum class IrOrdering : std::uint8_t { program, filler, priority, fifo };

struct IrOp {
    std::uint16_t device = 0;
    IrOpType type = IrOpType::forward;
    IrStream stream = IrStream::compute;
    IrLink link = IrLink::none;
    IrOrdering ordering = IrOrdering::program;
    std::int32_t microbatch = -1;
    std::int16_t chunk = -1; // model chunk (virtual stage); -1 when not chunk-specific
    std::int32_t priority = 0;
    float duration_s = 0;
    float flops = 0;
    float bytes = 0;
    float activation_delta = 0; // bytes of activations this op adds (+) or frees (-) at its end
    // Critical-path gate: the next op of this device's compute program waits for this one
    // (Megatron's synchronous pipeline sends).
    bool blocks_compute = false;
};

class ExecutionGraph {
public:
    int devices = 0;
    int chunks = 0;
    long long microbatches = 0;

    std::uint32_t add(const IrOp& op);
    void add_dep(std::uint32_t op, std::uint32_t predecessor);
    // Builds the dependency arrays (CSR); call once after all add()/add_dep().
    void finalize();

    std::size_t size() const { return m_device.size(); }
    IrOp op(std::uint32_t i) const;
    std::uint16_t device(std::uint32_t i) const { return m_device[i]; }
    IrOpType type(std::uint32_t i) const { return static_cast<IrOpType>(m_type[i]); }
    IrStream stream(std::uint32_t i) const { return static_cast<IrStream>(m_stream[i]); }
    IrLink link(std::uint32_t i) const { return static_cast<IrLink>(m_link[i]); }
    IrOrdering ordering(std::uint32_t i) const { return static_cast<IrOrdering>(m_ordering[i]); }
    std::int32_t microbatch(std::uint32_t i) const { return m_microbatch[i]; }
    std::int16_t chunk(std::uint32_t i) const { return m_chunk[i]; }
    std::int32_t priority(std::uint32_t i) const { return m_priority[i]; }
    double duration_s(std::uint32_t i) const { return m_duration[i]; }
    double flops(std::uint32_t i) const { return m_flops[i]; }
    double bytes(std::uint32_t i) const { return m_bytes[i]; }
    double activation_delta(std::uint32_t i) const { return m_activation[i]; }
    bool blocks_compute(std::uint32_t i) const { return m_blocks[i] != 0; }
    std::span<const std::uint32_t> deps(std::uint32_t i) const
    {
        return { m_deps.data() + m_dep_begin[i], m_deps.data() + m_dep_begin[i + 1] };
    }
    std::size_t edge_count() const { return m_deps.size(); }
    std::size_t memory_bytes() const;
    // "F L0-9 mb3" style label for traces and tooltips.
    std::string label(std::uint32_t i, int first_layer, int last_layer) const;

private:
    std::vector<std::uint16_t> m_device;
    std::vector<std::uint8_t> m_type, m_stream, m_link, m_ordering, m_blocks;
    std::vector<std::int32_t> m_microbatch, m_priority;
    std::vector<std::int16_t> m_chunk;
    std::vector<float> m_duration, m_flops, m_bytes, m_activation;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> m_edges; // (op, predecessor) until finalize()
    std::vector<std::uint32_t> m_dep_begin, m_deps;
};

} // namespace parallax
