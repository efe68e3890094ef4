#include "serving/speculative_decoding.hpp"

#include <cmath>

namespace parallax {

std::string_view to_string(DraftKind k)
{
    switch (k) {
    case DraftKind::mtp:
        return "mtp";
    case DraftKind::eagle:
        return "eagle";
    }
    return "mtp";
}

std::optional<DraftKind> draft_kind_from_string(std::string_view s)
{
    if (s == "mtp")
        return DraftKind::mtp;
    if (s == "eagle")
        return DraftKind::eagle;
    return std::nullopt;
}

double SpeculativeDecoding::tokens_per_step() const
{
    if (acceptance_length)
        return *acceptance_length;
    const double a = acceptance_rate.value_or(0.0);
    const double k = static_cast<double>(draft_tokens);
    // Leviathan et al. 2023 Eq. 1; at a = 1 every draft token is kept.
    if (a >= 1.0)
        return k + 1.0;
    return (1.0 - std::pow(a, k + 1.0)) / (1.0 - a);
}

ModelSpec draft_model_of(const ModelSpec& m, DraftKind kind)
{
    ModelSpec d = m;
    d.name = m.name + " draft";
    d.layers = 1;
    const int last = m.layers - 1;
    if (kind == DraftKind::eagle) {
        d.moe.reset();
        d.sliding_window = 0;
        return d;
    }
    if (d.moe)
        d.moe->first_dense_layers = m.is_moe_layer(last) ? 0 : 1;
    if (!m.is_windowed_layer(last))
        d.sliding_window = 0;
    else
        d.full_attention_every = 0;
    return d;
}

double draft_fusion_params(const ModelSpec& m)
{
    const double h = static_cast<double>(m.hidden);
    return 2.0 * h * h;
}

} // namespace parallax
