#pragma once
// The layers of each pipeline chunk and stage, precomputed once per (model, pp, vpp, overrides,
// schedule), and the stage classes: stages whose chunks are identical cost the same, so the models
// evaluate one representative per class (O(classes) instead of O(pp * vpp) per strategy).
#include "spec/model_spec.hpp"
#include "spec/strategy.hpp"

#include <vector>

namespace parallax {

struct ChunkInfo {
    int first_layer = 0;
    int layers = 0;
    int moe_layers = 0;
};

struct StageInfo {
    int layers = 0; // compute layers (all chunks of the stage)
    int moe_layers = 0;
    bool has_embedding = false; // stage 0 (and DualPipe's last device, which starts the reverse pipeline)
    bool has_output = false;
    // Parameter-holding chunks: the stage's own chunks, plus DualPipe's mirrored stage.
    int param_layers = 0;
    int param_moe_layers = 0;
};

struct StageClass {
    int first_stage = 0; // the smallest stage index of the class (most micro-batches in flight)
    int count = 0;
};

class PlanLayout {
public:
    static PlanLayout make(const ModelSpec& m, const Strategy& s);

    int pp = 1;
    int vpp = 1;
    std::vector<ChunkInfo> chunk; // model chunk c = v * pp + stage
    std::vector<StageInfo> stage;
    std::vector<StageClass> classes;
    std::vector<int> class_of_stage;

    int chunks() const { return static_cast<int>(chunk.size()); }
};

// Calls f(layer) for each layer whose parameters stage `stage` holds: its own chunks' and, under
// DualPipe, the mirrored stage's.
template <class F> void for_each_param_layer(const PlanLayout& l, int stage, F f)
{
    auto chunks_of = [&](int st) {
        for (int v = 0; v < l.vpp; ++v) {
            const ChunkInfo& ci = l.chunk[v * l.pp + st];
            for (int layer = ci.first_layer; layer < ci.first_layer + ci.layers; ++layer)
                f(layer);
        }
    };
    chunks_of(stage);
    if (l.stage[stage].param_layers > l.stage[stage].layers)
        chunks_of(l.pp - 1 - stage);
}

} // namespace parallax
