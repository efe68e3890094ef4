#pragma once
// Memory of one GPU of a serving instance: the weights of its share of the model, the activation
// buffers the engine sizes for its largest step, what lives outside the model's tensors, and the KV
// cache pool the engine's memory rule leaves; from the pool, how many requests of a given length fit.
#include "serving/serving_context.hpp"

namespace parallax {

struct ServingMemory {
    double capacity_B = 0;
    double weights_B = 0; // the busiest pipeline stage's GPU
    double activations_B = 0;
    double other_B = 0;
    double kv_pool_B = 0; // what the engine allocates for the KV cache (<= 0: the weights do not fit)
    double kv_bytes_per_request = 0; // one request at its longest (isl + osl), paged, on this GPU
    long long max_requests = 0; // requests whose whole cache fits at once, per instance (static batches)
    // Requests the engine runs at once in steady state under its admission rule (pages allocated as
    // tokens arrive, or the whole cache reserved up front), per instance.
    long long max_running = 0;
    double peak_B() const { return weights_B + activations_B + other_B + std::max(0.0, kv_pool_B); }
    bool fits() const { return kv_pool_B > 0 && peak_B() <= capacity_B && max_requests >= 1; }
};

// Parameters one GPU holds per layer kind, sharded as the layout shards them.
double weights_bytes_per_gpu(const ServingContext& ctx);
ServingMemory serving_memory(const ServingContext& ctx, const ServingWorkload& w);

} // namespace parallax
