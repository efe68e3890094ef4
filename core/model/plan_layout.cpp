#include "model/plan_layout.hpp"

#include "ir/schedule_program.hpp"
#include "model/stage_layout.hpp"

namespace parallax {

namespace {

int moe_layers_before(const ModelSpec& m, int layer)
{
    if (!m.is_moe() || layer <= m.moe->first_dense_layers)
        return 0;
    const int span = layer - m.moe->first_dense_layers;
    return (span + m.moe->moe_layer_freq - 1) / m.moe->moe_layer_freq;
}

bool same_signature(const PlanLayout& l, int a, int b)
{
    const StageInfo& x = l.stage[a];
    const StageInfo& y = l.stage[b];
    if (x.has_embedding != y.has_embedding || x.has_output != y.has_output || x.param_layers != y.param_layers
        || x.param_moe_layers != y.param_moe_layers)
        return false;
    for (int v = 0; v < l.vpp; ++v) {
        const ChunkInfo& ca = l.chunk[v * l.pp + a];
        const ChunkInfo& cb = l.chunk[v * l.pp + b];
        if (ca.layers != cb.layers || ca.moe_layers != cb.moe_layers)
            return false;
    }
    return true;
}

} // namespace

PlanLayout PlanLayout::make(const ModelSpec& m, const Strategy& s)
{
    PlanLayout l;
    l.pp = s.pp;
    l.vpp = s.vpp;
    const StageLayout layout { m.layers, s.pp, s.vpp, s.first_stage_layers, s.last_stage_layers };
    const int n = layout.chunks();
    l.chunk.resize(static_cast<std::size_t>(n));
    int first = 0;
    for (int c = 0; c < n; ++c) {
        ChunkInfo& ci = l.chunk[c];
        ci.first_layer = first;
        ci.layers = layout.chunk_layers(c);
        ci.moe_layers = moe_layers_before(m, first + ci.layers) - moe_layers_before(m, first);
        first += ci.layers;
    }
    l.stage.resize(static_cast<std::size_t>(s.pp));
    const bool dual = runs_dualpipe(s);
    for (int st = 0; st < s.pp; ++st) {
        StageInfo& si = l.stage[st];
        for (int v = 0; v < s.vpp; ++v) {
            const ChunkInfo& ci = l.chunk[v * s.pp + st];
            si.layers += ci.layers;
            si.moe_layers += ci.moe_layers;
        }
        si.param_layers = si.layers;
        si.param_moe_layers = si.moe_layers;
        si.has_embedding = st == 0;
        si.has_output = st == s.pp - 1;
        if (dual) {
            // DualPipe: a device holds its stage and the mirrored stage pp-1-st (2x parameters), and
            // the ends of both pipelines (embedding and output on the first and last device).
            const int mirror = s.pp - 1 - st;
            for (int v = 0; v < s.vpp; ++v) {
                const ChunkInfo& ci = l.chunk[v * s.pp + mirror];
                si.param_layers += ci.layers;
                si.param_moe_layers += ci.moe_layers;
            }
            si.has_embedding = st == 0 || st == s.pp - 1;
            si.has_output = si.has_embedding;
        }
    }
    l.class_of_stage.assign(static_cast<std::size_t>(s.pp), -1);
    for (int st = 0; st < s.pp; ++st) {
        if (l.class_of_stage[st] >= 0)
            continue;
        const int id = static_cast<int>(l.classes.size());
        l.classes.push_back({ st, 0 });
        // Neighbouring stages with the same chunks join the class (a linear scan from the
        // representative: uneven splits give a few runs).
        for (int other = st; other < s.pp; ++other) {
            // A composite plan's stages may hold layers of different settings: each is its own class.
            const bool alike = s.layers ? other == st : same_signature(l, st, other);
            if (l.class_of_stage[other] < 0 && alike) {
                l.class_of_stage[other] = id;
                ++l.classes[id].count;
            }
        }
    }
    return l;
}

} // namespace parallax
