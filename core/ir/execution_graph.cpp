#include "ir/execution_graph.hpp"

#include <algorithm>
#include <stdexcept>

namespace parallax {

const char* to_string(IrOpType t)
{
    switch (t) {
    case IrOpType::forward:
        return "F";
    case IrOpType::backward_input:
        return "B";
    case IrOpType::backward_weight:
        return "W";
    case IrOpType::recompute:
        return "R";
    case IrOpType::pp_send:
        return "send";
    case IrOpType::dp_reduce:
        return "dp-reduce";
    case IrOpType::param_gather:
        return "param-gather";
    case IrOpType::zero3_gather:
        return "zero3-gather";
    case IrOpType::zero3_reduce_scatter:
        return "zero3-reduce-scatter";
    case IrOpType::optimizer:
        return "optimizer";
    case IrOpType::offload:
        return "offload";
    case IrOpType::barrier:
        return "barrier";
    case IrOpType::tp_comm:
        return "TP";
    case IrOpType::cp_comm:
        return "CP";
    case IrOpType::ep_comm:
        return "EP";
    }
    return "?";
}

bool is_compute(IrOpType t)
{
    return t == IrOpType::forward || t == IrOpType::backward_input || t == IrOpType::backward_weight
        || t == IrOpType::recompute || t == IrOpType::optimizer;
}

const char* to_string(IrLink l)
{
    switch (l) {
    case IrLink::none:
        return "none";
    case IrLink::nvlink:
        return "nvlink";
    case IrLink::network:
        return "network";
    }
    return "?";
}

const char* to_string(IrStream s)
{
    switch (s) {
    case IrStream::compute:
        return "compute";
    case IrStream::pp:
        return "pp";
    case IrStream::dp:
        return "dp";
    case IrStream::tp:
        return "tp";
    case IrStream::cp:
        return "cp";
    case IrStream::ep:
        return "ep";
    case IrStream::sync:
        return "sync";
    case IrStream::dp_gather:
        return "dp-gather";
    }
    return "?";
}

std::uint32_t ExecutionGraph::add(const IrOp& op)
{
    if (m_device.size() >= 0xFFFFFFF0u)
        throw std::length_error("execution graph too large");
    m_device.push_back(op.device);
    m_type.push_back(static_cast<std::uint8_t>(op.type));
    m_stream.push_back(static_cast<std::uint8_t>(op.stream));
    m_link.push_back(static_cast<std::uint8_t>(op.link));
    m_ordering.push_back(static_cast<std::uint8_t>(op.ordering));
    m_blocks.push_back(op.blocks_compute ? 1 : 0);
    m_microbatch.push_back(op.microbatch);
    m_priority.push_back(op.priority);
    m_chunk.push_back(op.chunk);
    m_duration.push_back(op.duration_s);
    m_flops.push_back(op.flops);
    m_bytes.push_back(op.bytes);
    m_activation.push_back(op.activation_delta);
    return static_cast<std::uint32_t>(m_device.size() - 1);
}

void ExecutionGraph::add_dep(std::uint32_t op, std::uint32_t predecessor)
{
    if (op >= m_device.size() || predecessor >= m_device.size() || op == predecessor)
        throw std::logic_error("execution graph: dependency on a missing op");
    m_edges.emplace_back(op, predecessor);
}

void ExecutionGraph::finalize()
{
    const std::size_t n = m_device.size();
    m_dep_begin.assign(n + 1, 0);
    for (const auto& e : m_edges)
        ++m_dep_begin[e.first + 1];
    for (std::size_t i = 0; i < n; ++i)
        m_dep_begin[i + 1] += m_dep_begin[i];
    m_deps.assign(m_edges.size(), 0);
    std::vector<std::uint32_t> fill(m_dep_begin.begin(), m_dep_begin.end() - 1);
    for (const auto& e : m_edges)
        m_deps[fill[e.first]++] = e.second;
    m_edges.clear();
    m_edges.shrink_to_fit();
}

IrOp ExecutionGraph::op(std::uint32_t i) const
{
    IrOp o;
    o.device = m_device[i];
    o.type = type(i);
    o.stream = stream(i);
    o.link = link(i);
    o.ordering = ordering(i);
    o.microbatch = m_microbatch[i];
    o.chunk = m_chunk[i];
    o.priority = m_priority[i];
    o.duration_s = m_duration[i];
    o.flops = m_flops[i];
    o.bytes = m_bytes[i];
    o.activation_delta = m_activation[i];
    o.blocks_compute = m_blocks[i] != 0;
    return o;
}

std::size_t ExecutionGraph::memory_bytes() const
{
    const std::size_t per_op = sizeof(std::uint16_t) + 5 * sizeof(std::uint8_t) + 2 * sizeof(std::int32_t)
        + sizeof(std::int16_t) + 4 * sizeof(float) + sizeof(std::uint32_t);
    return size() * per_op + m_deps.size() * sizeof(std::uint32_t);
}

std::string ExecutionGraph::label(std::uint32_t i, int first_layer, int last_layer) const
{
    std::string s = to_string(type(i));
    if (first_layer >= 0)
        s += " L" + std::to_string(first_layer) + "-" + std::to_string(last_layer);
    if (m_microbatch[i] >= 0)
        s += " mb" + std::to_string(m_microbatch[i]);
    return s;
}

} // namespace parallax
