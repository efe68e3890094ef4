#include "model/compute_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

namespace parallax {

namespace {

// Causal attention wastes part of each diagonal block (FlashAttention-2 Sec. 3.1.1: ~1.7x instead
// of 2x speed-up over non-causal at long sequences) — a fraction of the ideal rate.
constexpr double kCausalBlockEfficiency = 0.9;
// Sequence length at which fused attention reaches half its long-sequence rate above the ideal
// (fit to FlashAttention-2 Fig. 4: 512 -> ~0.67, 2k -> ~0.89, 16k -> ~0.98 of the 16k rate).
constexpr double kAttentionHalfRateSeq = 256;
// Head dims below 128 under-fill the tensor-core tiles (FlashAttention-2 Fig. 4/5, head dim 64 vs 128).
constexpr double kAttentionHeadDimKnee = 16;
// Rowwise-scaled fp8 GEMMs (torch._scaled_mm with per-row scales, CUTLASS kernels of 2024-25) run at
// about half the rate of tensorwise cuBLAS fp8 GEMMs: torchtitan's async-TP benchmarks (June 2025)
// measure Llama 3 8B/70B float8-rowwise at or below the bf16 throughput (torchtitan issue #1207).
constexpr double kRowwiseFp8GemmFactor = 0.5;
// Key-block width of the fused attention kernels' tiles (FlashAttention-2 Sec. 3.3 and FlashAttention-3
// use B_c = 128 at head dims 64-128; cuDNN's fused attention tiles alike): the granularity at which
// blocks outside a sliding window are skipped.
constexpr double kAttentionKeyBlock = 128;
constexpr double kAttentionQueryBlock = 128;
// FlashAttention backward: 5 matmuls against the forward's 2 (Dao 2023, Sec. 3.1).
constexpr double kAttentionBwdFlopsPerFwd = 2.5;
// No kernel reaches the datasheet peak; a calibration cannot push one past this.
constexpr double kMaxEfficiency = 0.98;

} // namespace

ComputeDevice ComputeDevice::of(const GpuSpec& g)
{
    ComputeDevice d;
    d.gpu = &g;
    d.gen = &generation_constants(g.architecture);
    d.sm_count = g.sm_count > 0 ? g.sm_count : d.gen->default_sm_count;
    // The power limit throttles kernel by kernel (power_model.hpp), not the whole device.
    return d;
}

double gemm_efficiency(const ComputeDevice& dev, double m, double n, double k, Precision p) noexcept
{
    if (m <= 0 || n <= 0 || k <= 0)
        return 1.0;
    const GenerationConstants& gen = *dev.gen;
    const double base = tuned_gemm_efficiency(gen, p);
    const double k_eff = k / (k + gen.gemm_k_overhead);
    // A calibrated efficiency can never exceed the hardware's peak.
    const double scaling
        = (p == Precision::fp8 && dev.fp8_scaling == Fp8Scaling::rowwise) ? kRowwiseFp8GemmFactor : 1.0;
    return std::min(kMaxEfficiency, base * scaling * dev.gemm_scale * dev.kernel_scale)
        * gemm_wave_efficiency(dev, m, n) * k_eff;
}

double tuned_gemm_efficiency(const GenerationConstants& gen, Precision p) noexcept
{
    constexpr double kUntunedEfficiency = 0.5; // precision without a tuned constant: conservative
    const double tuned = gen.gemm_efficiency[static_cast<int>(p)];
    return tuned > 0 ? tuned : kUntunedEfficiency;
}

double gemm_wave_efficiency(const ComputeDevice& dev, double m, double n) noexcept
{
    if (m <= 0 || n <= 0)
        return 1.0;
    // The same shapes come back many times (a layer's kernel lists are built at several clocks and
    // scales, a search builds the same layers over and over): a small per-thread memo of the result.
    // `gen` points into the static per-generation table (ComputeDevice::of), so it identifies the tiles.
    struct Memo {
        double m = -1, n = -1;
        const GenerationConstants* gen = nullptr;
        int sms = 0;
        double value = 0;
    };
    constexpr std::size_t kMemoSlots = 256;
    thread_local std::array<Memo, kMemoSlots> memo;
    const std::size_t slot
        = (std::hash<double> {}(m)*31 + std::hash<double> {}(n) + static_cast<std::size_t>(dev.sm_count)) % kMemoSlots;
    Memo& e = memo[slot];
    if (e.m == m && e.n == n && e.gen == dev.gen && e.sms == dev.sm_count)
        return e.value;
    const double sms = dev.sm_count;
    double best = 0;
    for (const GemmTile& t : dev.gen->tiles) {
        const double tiles = std::ceil(m / t.m) * std::ceil(n / t.n);
        const double waves = std::ceil(tiles / sms);
        const double useful = (m * n) / (waves * sms * t.m * t.n);
        best = std::max(best, useful * t.relative_throughput);
    }
    e = Memo { m, n, dev.gen, dev.sm_count, std::min(1.0, best) };
    return e.value;
}

double gemm_time_s(const ComputeDevice& dev, double m, double n, double k, Precision p, double batch) noexcept
{
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
        return 0;
    const double flops = 2.0 * m * n * k * batch;
    const double peak = dev.peak(p) > 0 ? dev.peak(p) : dev.half_peak();
    const double compute_s = flops / (peak * gemm_efficiency(dev, m, n, k, p));
    const double e = element_bytes(p);
    // Outputs are written in bf16/fp16 (fp8 GEMMs too, as in Transformer Engine); fp32 GEMMs write fp32.
    const double out_bytes = is_full_precision(p) ? element_bytes(p) : 2.0;
    const double bytes = batch * (e * (m * k + k * n) + out_bytes * m * n);
    const double memory_s
        = bytes / (dev.gpu->memory_bw_Bps * std::min(kMaxEfficiency, dev.gen->hbm_efficiency * dev.kernel_scale));
    return std::max(compute_s, memory_s) + dev.gen->kernel_overhead_s;
}

namespace {

double attention_seq_factor(double kv_len)
{
    return kv_len / (kv_len + kAttentionHalfRateSeq);
}

double attention_shape_factor(double kv_len, double head_dim)
{
    const double hd = (head_dim / (head_dim + kAttentionHeadDimKnee)) * ((128.0 + kAttentionHeadDimKnee) / 128.0);
    return attention_seq_factor(kv_len) * std::min(1.0, hd);
}

// The forward's floor set by the exponentials, one per executed score, at the fused kernel's achieved
// fraction of its binding unit: where 4*d FLOPs per score reach GenerationConstants::tensor_flops_per_exp
// (head dim 128 on Blackwell, 64 on Hopper) the tensor cores and the exp unit are balanced, so at the
// fused kernel's efficiency this floor equals the FLOP time there and binds only below it (GPT-OSS's
// head dim 64 on Blackwell: FlashAttention-4, Sec. 3.1).
double exp_bound_fwd_s(const ComputeDevice& dev, double scores, double rate_factor)
{
    const GenerationConstants& gen = *dev.gen;
    if (gen.tensor_flops_per_exp <= 0 || scores <= 0)
        return 0;
    const double eff
        = std::min(kMaxEfficiency, gen.attention_fwd_efficiency * dev.attention_scale * dev.kernel_scale) * rate_factor;
    return scores * gen.tensor_flops_per_exp / (dev.half_peak() * eff);
}

double attention_flops_fwd(double batch_heads, double q_len, double kv_len, double qk_dim, double v_dim, bool causal)
{
    // QK^T (2*q*kv*d_qk) and P*V (2*q*kv*d_v); causal kernels skip the masked half.
    const double full = 2.0 * batch_heads * q_len * kv_len * (qk_dim + v_dim);
    return causal ? 0.5 * full : full;
}

} // namespace

double flash_attention_fwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double kv_len,
    double qk_head_dim, double v_head_dim, bool causal, double* flops_out) noexcept
{
    const double flops = attention_flops_fwd(batch_heads, q_len, kv_len, qk_head_dim, v_head_dim, causal);
    if (flops_out)
        *flops_out = flops;
    const double base = dev.attention_kernel == AttentionKernel::flash2 ? dev.gen->attention_fa2_fwd_efficiency
                                                                        : dev.gen->attention_fwd_efficiency;
    const double causal_eff = causal ? kCausalBlockEfficiency : 1.0;
    const double eff = std::min(kMaxEfficiency, base * dev.attention_scale * dev.kernel_scale)
        * attention_shape_factor(kv_len, qk_head_dim) * causal_eff;
    const double scores = flops / (2.0 * (qk_head_dim + v_head_dim));
    const double exp_s = exp_bound_fwd_s(dev, scores, attention_seq_factor(kv_len) * causal_eff);
    return std::max(flops / (dev.half_peak() * eff), exp_s) + dev.gen->kernel_overhead_s;
}

double flash_attention_bwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double kv_len,
    double qk_head_dim, double v_head_dim, bool causal, double* flops_out) noexcept
{
    const double flops
        = kAttentionBwdFlopsPerFwd * attention_flops_fwd(batch_heads, q_len, kv_len, qk_head_dim, v_head_dim, causal);
    if (flops_out)
        *flops_out = flops;
    const double base = dev.attention_kernel == AttentionKernel::flash2 ? dev.gen->attention_fa2_bwd_efficiency
                                                                        : dev.gen->attention_bwd_efficiency;
    const double eff = std::min(kMaxEfficiency, base * dev.attention_scale * dev.kernel_scale)
        * attention_shape_factor(kv_len, qk_head_dim) * (causal ? kCausalBlockEfficiency : 1.0);
    return flops / (dev.half_peak() * eff) + 2 * dev.gen->kernel_overhead_s;
}

double windowed_attention_pairs(double q_len, double window) noexcept
{
    if (q_len <= 0 || window <= 0)
        return 0;
    const double w = std::min(window, q_len);
    // The first w queries see 1..w keys, the rest w each.
    return w * (w + 1) / 2 + (q_len - w) * w;
}

double windowed_attention_executed_pairs(double q_len, double window) noexcept
{
    if (q_len <= 0 || window <= 0)
        return 0;
    // A query block of B_r rows reaches back window-1 keys from its first row to its last: the band
    // spans window + B_r - 1 keys, i.e. that many key blocks (rounded up), never more than the causal
    // prefix.
    const double blocks_touched = std::ceil((std::min(window, q_len) + kAttentionQueryBlock - 1) / kAttentionKeyBlock);
    const double causal_blocks = std::ceil(q_len / kAttentionKeyBlock);
    const double per_query = std::min(blocks_touched, causal_blocks) * kAttentionKeyBlock;
    return q_len * std::min(per_query, q_len);
}

namespace {

double windowed_attention_s(const ComputeDevice& dev, double batch_heads, double q_len, double window,
    double qk_head_dim, double v_head_dim, double flops_per_fwd, double base_eff, double launches, double* flops_out)
{
    const double useful = 2.0 * batch_heads * windowed_attention_pairs(q_len, window) * (qk_head_dim + v_head_dim);
    const double executed
        = 2.0 * batch_heads * windowed_attention_executed_pairs(q_len, window) * (qk_head_dim + v_head_dim);
    if (flops_out)
        *flops_out = flops_per_fwd * useful;
    // The masked part of the band's blocks is in `executed`; the per-row-block fixed work (load Q, write
    // O, rescale) is paid against the few keys each query block visits, as for a short sequence.
    const double keys_per_query = executed / std::max(1.0, 2.0 * batch_heads * q_len * (qk_head_dim + v_head_dim));
    const double eff = std::min(kMaxEfficiency, base_eff * dev.attention_scale * dev.kernel_scale)
        * attention_shape_factor(keys_per_query, qk_head_dim);
    // The backward (5 matmuls per exp) stays bound by its matmuls and shared memory (FlashAttention-4).
    const double exp_s = flops_per_fwd == 1.0
        ? exp_bound_fwd_s(dev, executed / (2.0 * (qk_head_dim + v_head_dim)), attention_seq_factor(keys_per_query))
        : 0.0;
    return std::max(flops_per_fwd * executed / (dev.half_peak() * eff), exp_s) + launches * dev.gen->kernel_overhead_s;
}

} // namespace

double flash_attention_windowed_fwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double window,
    double qk_head_dim, double v_head_dim, double* flops_out) noexcept
{
    const double base = dev.attention_kernel == AttentionKernel::flash2 ? dev.gen->attention_fa2_fwd_efficiency
                                                                        : dev.gen->attention_fwd_efficiency;
    return windowed_attention_s(dev, batch_heads, q_len, window, qk_head_dim, v_head_dim, 1.0, base, 1, flops_out);
}

double flash_attention_windowed_bwd_s(const ComputeDevice& dev, double batch_heads, double q_len, double window,
    double qk_head_dim, double v_head_dim, double* flops_out) noexcept
{
    const double base = dev.attention_kernel == AttentionKernel::flash2 ? dev.gen->attention_fa2_bwd_efficiency
                                                                        : dev.gen->attention_bwd_efficiency;
    return windowed_attention_s(
        dev, batch_heads, q_len, window, qk_head_dim, v_head_dim, kAttentionBwdFlopsPerFwd, base, 2, flops_out);
}

double per_expert_gemm_time_s(
    const ComputeDevice& dev, double rows, double n, double k, Precision p, double experts) noexcept
{
    if (experts <= 0)
        return 0;
    // gemm_time_s charges one kernel's launch and tail for the whole batch; a GEMM per expert pays it
    // once per expert.
    return gemm_time_s(dev, rows, n, k, p, experts) + (experts - 1) * dev.gen->kernel_overhead_s;
}

double memory_bound_time_s(const ComputeDevice& dev, double bytes) noexcept
{
    if (bytes <= 0)
        return 0;
    return bytes / (dev.gpu->memory_bw_Bps * std::min(kMaxEfficiency, dev.gen->hbm_efficiency * dev.kernel_scale))
        + dev.gen->kernel_overhead_s;
}

} // namespace parallax
