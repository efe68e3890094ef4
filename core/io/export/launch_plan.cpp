#include "io/export/launch_plan.hpp"

#include "io/export/launch_text.hpp"
#include "ir/schedule_program.hpp"
#include "model/stage_layout.hpp"

#include <algorithm>

namespace parallax::launch_plan {

using launch_text::num;

namespace {

StageLayout layout_of(const Scenario& s)
{
    const Strategy& st = s.strategy;
    return StageLayout { s.model.layers, st.pp, st.vpp, st.first_stage_layers, st.last_stage_layers };
}

// Megatron-LM's --pipeline-model-parallel-layout (megatron/core/transformer/pipeline_parallel_layer_layout.py):
// one "|"-separated entry per virtual stage in model order, E the embedding, t*N N decoder layers, L the loss.
std::string megatron_layout(const std::vector<int>& chunks)
{
    std::string out;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
        if (c > 0)
            out += "|";
        if (c == 0)
            out += "E";
        if (chunks[c] == 1)
            out += "t";
        else if (chunks[c] > 1)
            out += "t*" + num(chunks[c]);
        if (c + 1 == chunks.size())
            out += "L";
    }
    return out;
}

} // namespace

int etp_of(const Strategy& st)
{
    return st.effective_expert_tp();
}

bool data_sharded(const Strategy& st)
{
    return static_cast<long long>(st.dp) * st.cp > 1;
}

std::vector<int> chunk_layer_counts(const Scenario& s)
{
    const StageLayout l = layout_of(s);
    std::vector<int> out;
    for (int c = 0; c < l.chunks(); ++c)
        out.push_back(l.chunk_layers(c));
    return out;
}

MegatronSplit megatron_split_of_uneven(const std::vector<int>& chunks, int vpp)
{
    MegatronSplit out;
    out.even = false;
    const std::size_t n = chunks.size();
    if (vpp == 1 && n > 2) {
        const int mid = chunks[1];
        if (std::all_of(chunks.begin() + 1, chunks.end() - 1, [&](int c) { return c == mid; })) {
            out.first = chunks.front() != mid ? chunks.front() : 0;
            out.last = chunks.back() != mid ? chunks.back() : 0;
            return out;
        }
    }
    if (vpp == 1 && n == 2) { // the last stage takes what the first leaves
        out.first = chunks.front();
        return out;
    }
    out.layout = megatron_layout(chunks);
    return out;
}

MegatronSplit megatron_split(const Scenario& s)
{
    const Strategy& st = s.strategy;
    if (st.pp <= 1)
        return {};
    const std::vector<int> chunks = chunk_layer_counts(s);
    const bool all_equal = std::all_of(chunks.begin(), chunks.end(), [&](int c) { return c == chunks.front(); });
    if (all_equal && st.first_stage_layers <= 0 && st.last_stage_layers <= 0)
        return {};
    return megatron_split_of_uneven(chunks, st.vpp);
}

// Megatron's --moe-layer-freq as a Python list expression ("([0]*3+[1]*58)") when not every layer is an
// MoE layer: exact for any first-dense / frequency pattern.
std::string moe_layer_pattern(const ModelSpec& m)
{
    std::string out;
    int run = 0;
    int value = -1;
    auto flush = [&] {
        if (run > 0)
            out += (out.empty() ? "" : "+") + std::string("[") + num(value) + "]*" + num(run);
    };
    for (int l = 0; l < m.layers; ++l) {
        const int v = m.is_moe_layer(l) ? 1 : 0;
        if (v != value) {
            flush();
            value = v;
            run = 0;
        }
        ++run;
    }
    flush();
    return "(" + out + ")";
}

bool every_layer_moe(const ModelSpec& m)
{
    return m.is_moe() && m.moe_layer_count() == m.layers;
}

bool has_torchtitan_csv(const Strategy& st)
{
    return st.pp > 1 && st.schedule == Schedule::custom && st.program && st.program->layout == ChunkLayout::interleaved;
}

} // namespace parallax::launch_plan
