#pragma once
// Framework releases: the same plan runs on different kernels in successive containers. Each release
// in the catalogue says which kernels it runs where a release changed one that the model costs, with
// the source of that change; everything else comes from the framework's traits (software_stack.hpp).
// training.software names a release; unset means the newest release of the framework that the
// published tables cover.
#include "spec/software_stack.hpp"

#include <span>
#include <string>
#include <string_view>

namespace parallax {

struct SoftwareRelease {
    std::string_view id; // "nemo-24.03": the stack and its release tag
    Framework framework = Framework::megatron;
    int year = 0; // release date, for matching a run of a release not in the catalogue
    int month = 0;
    // The fused-attention kernel the release's Transformer Engine picks on Hopper and newer.
    AttentionKernel attention = AttentionKernel::best;
    // Learned softmax sinks (GPT-OSS) inside the fused kernel; otherwise unfused attention.
    bool fused_attention_sinks = true;
    // What changed against the previous release of the catalogue, and where that is documented.
    std::string_view changes;
    // Pipeline transfers (software_stack.hpp): the activation gradient split across TP ranks like the
    // activation, and the attention mask's bytes per position pair sent with each stage output.
    bool p2p_grad_scatter_gather = true;
    double p2p_mask_bytes_per_position_pair = 0;
    // Host time per eager op of a layer (SoftwareTraits::layer_host_op_s) where the release's stack differs
    // from the framework's; 0 keeps the framework's.
    double layer_host_op_s = 0;
    // SoftwareTraits::expert_quantise_in_cpp.
    bool expert_quantise_in_cpp = false;
};

std::span<const SoftwareRelease> software_releases();
// nullptr when the catalogue has no release of that id.
const SoftwareRelease* find_software_release(std::string_view id);
// The newest catalogued release of the framework; nullptr when the catalogue has none of it.
const SoftwareRelease* newest_software_release(Framework f);
// The newest catalogued release of the framework not newer than year-month (a run of an uncatalogued
// release is costed with the kernels of the release before it); the oldest one if all are newer.
const SoftwareRelease* software_release_at(Framework f, int year, int month);
// The ids of the framework's catalogued releases, comma-separated (for error messages).
std::string software_release_ids(Framework f);

// The framework's traits with the release's kernels (release may be nullptr: the framework's own).
SoftwareTraits software_traits(Framework f, const SoftwareRelease* release);

} // namespace parallax
