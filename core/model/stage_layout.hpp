#pragma once
// How the layers are spread over pipeline stages and virtual chunks. Allocation-free, O(1) per
// chunk, used by the validator, both cost models and the IR.
//
// Model chunk c (0 <= c < pp*vpp) holds a contiguous block of layers; as in Megatron's
// interleaved schedule, stage s owns chunks s, s+pp, s+2pp, ... (chunk v*pp + s).
// Without first/last overrides the layers are spread as evenly as possible, and when they do not
// divide, the extra layers go to the middle chunks first (the first and last stages also carry the
// embedding and the loss, as Llama 3 405B's 126 layers over PP 16 were balanced).

namespace parallax {

struct StageLayout {
    int layers = 0;
    int pp = 1;
    int vpp = 1;
    int first_stage_layers = 0; // 0 = not set
    int last_stage_layers = 0;

    int chunks() const { return pp * vpp; }
    int stage_of_chunk(int chunk) const { return chunk % pp; }
    int chunk_layers(int chunk) const;
    int chunk_first_layer(int chunk) const;
    int stage_layers(int stage) const;
    bool uneven() const;
    // Empty chunks are impossible splits (fewer layers than chunks): the validator rejects them.
    bool has_empty_chunk() const;
    int max_stage_layers() const;
};

} // namespace parallax
