#pragma once
// Speculative decoding's draft: what it is made of (one layer of the model's own shape, a projection that
// joins the model's last hidden state with the next token's embedding, and the model's output head, shared),
// so that the step model costs its passes and the memory model holds its weights and KV cache.
#include "serving/serving_spec.hpp"

namespace parallax {

// The draft as a one-layer model: MTP repeats the model's last layer (DeepSeek-V3 Sec. 2.2: a transformer
// block of the main model's kind), EAGLE a dense decoder layer of the model's width with full attention
// (EAGLE's draft head, Li et al. 2024). Embedding and output head are the model's (shared, not counted).
ModelSpec draft_model_of(const ModelSpec& m, DraftKind kind);

// The projection that joins the last hidden state and the next token's embedding (2h -> h): MTP's M_k,
// EAGLE's fc layer.
double draft_fusion_params(const ModelSpec& m);

} // namespace parallax
