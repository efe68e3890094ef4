#include "model/stage_layout.hpp"

#include <algorithm>

namespace parallax {
namespace {

// Chunk indices in the order they receive one extra layer: middle chunks first, then the last,
// then the first.
int extra_rank(int chunk, int chunks)
{
    if (chunks <= 2)
        return chunk;
    if (chunk == chunks - 1)
        return chunks - 2;
    if (chunk == 0)
        return chunks - 1;
    return chunk - 1;
}

int even_split(int layers, int chunks, int chunk)
{
    if (chunks <= 0)
        return 0;
    int base = layers / chunks;
    int extra = layers % chunks;
    return base + (extra_rank(chunk, chunks) < extra ? 1 : 0);
}

} // namespace

int StageLayout::chunk_layers(int chunk) const
{
    const int n = chunks();
    if (first_stage_layers <= 0 && last_stage_layers <= 0)
        return even_split(layers, n, chunk);
    // Overrides fix the totals of stage 0 and stage pp-1; the rest share what is left.
    const int stage = stage_of_chunk(chunk);
    const int v = chunk / pp;
    const bool first_fixed = first_stage_layers > 0;
    const bool last_fixed = last_stage_layers > 0 && pp > 1;
    if (stage == 0 && first_fixed)
        return even_split(first_stage_layers, vpp, v);
    if (stage == pp - 1 && last_fixed)
        return even_split(last_stage_layers, vpp, v);
    const int fixed_stages = (first_fixed ? 1 : 0) + (last_fixed ? 1 : 0);
    const int free_stages = pp - fixed_stages;
    const int rest = layers - (first_fixed ? first_stage_layers : 0) - (last_fixed ? last_stage_layers : 0);
    if (free_stages <= 0)
        return 0;
    const int free_index = stage - (first_fixed ? 1 : 0);
    // Spread `rest` over the free stages' chunks in chunk order.
    const int free_chunks = free_stages * vpp;
    const int index = v * free_stages + free_index;
    int base = rest / free_chunks;
    int extra = rest % free_chunks;
    return base + (index < extra ? 1 : 0);
}

int StageLayout::chunk_first_layer(int chunk) const
{
    int first = 0;
    for (int c = 0; c < chunk; ++c)
        first += chunk_layers(c);
    return first;
}

int StageLayout::stage_layers(int stage) const
{
    int total = 0;
    for (int v = 0; v < vpp; ++v)
        total += chunk_layers(v * pp + stage);
    return total;
}

bool StageLayout::uneven() const
{
    const int first = chunk_layers(0);
    for (int c = 1; c < chunks(); ++c)
        if (chunk_layers(c) != first)
            return true;
    return false;
}

bool StageLayout::has_empty_chunk() const
{
    for (int c = 0; c < chunks(); ++c)
        if (chunk_layers(c) <= 0)
            return true;
    return false;
}

int StageLayout::max_stage_layers() const
{
    int m = 0;
    for (int s = 0; s < pp; ++s)
        m = std::max(m, stage_layers(s));
    return m;
}

} // namespace parallax
