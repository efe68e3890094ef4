#pragma once
// The link between a GPU and its host's memory, and the host's CPU-Adam rate: what offloading the
// optimizer states, the activations or the parameters to host memory costs.
#include "spec/cluster_spec.hpp"

namespace parallax {

// Pinned-memory copies over the GPU's PCIe x16 link, per direction, as the optimizer offload costs them
// (by generation: gen 3 V100, gen 4 A100 / MI250X, gen 5 later).
double pcie_copy_Bps(const ClusterSpec& c) noexcept;
// Achievable per-direction rate between a GPU and host memory: NVLink-C2C on Grace superchips (GH200,
// GB200 NVL72), PCIe x16 otherwise.
double host_link_Bps(const ClusterSpec& c) noexcept;
// NVLink-C2C: 900 GB/s in both directions together, 450 GB/s each way (NVIDIA GH200 and GB200 NVL72
// datasheets), before any copy efficiency.
inline constexpr double kNvlinkC2cBps = 450e9;
// GB200/GB300 NVL72: one Grace per 2 GPUs (NVIDIA GB200 NVL72 datasheet).
inline constexpr int kGpusPerGrace = 2;
// A Grace's LPDDR5X, which both GPUs of a GB200/GB300 superchip copy into at once: 512 GB/s per Grace
// (GB200 NVL72: up to 18.4 TB/s over its 36 Grace CPUs) and ~389 GB/s on GB300 (GB300 NVL72: up to
// 14 TB/s over 36; NVIDIA NVL72 product specifications).
inline constexpr double kGb200GraceMemoryBps = 18.4e12 / 36;
inline constexpr double kGb300GraceMemoryBps = 14e12 / 36;
// The Grace memory of an NVL72 rack's superchip holding this GPU (a B300-class GPU: the GB300 figure).
double nvl72_grace_memory_Bps(const GpuSpec& gpu) noexcept;
// Whether the GPUs of the cluster sit on a Grace CPU's NVLink-C2C.
bool grace_host(const ClusterSpec& c) noexcept;
// GPUs whose host step one CPU socket runs (the node's sockets shared by its GPUs).
double gpus_per_socket(const ClusterSpec& c) noexcept;
// Host memory of one node, shared by its GPUs' offloads: ClusterSpec::host_memory_GB, else the reference
// node of the GPU's generation, per GPU times gpus_per_node but never less than the whole reference node.
double host_memory_per_node_bytes(const ClusterSpec& c) noexcept;

// DeepSpeed's optimizer offload copies each gradient partition to host memory as fp32 at the step's last
// micro-batch (runtime/zero/stage_1_and_2.py, async_inplace_copy_grad_to_fp32_buffer_from_gpu: .float()
// before the copy), and, under gradient accumulation, moves the 16-bit partition down and the host's running
// sum back at every other micro-batch (async_accumulate_grad_in_cpu_via_gpu).
inline constexpr double kOffloadedGradientBytesPerParam = 4.0;

// DeepSpeed CPU-Adam: ~1 s per billion parameters per socket of ~32 cores (Ren et al. 2021 ZeRO-Offload,
// Table 2).
inline constexpr double kCpuAdamSecondsPerParamPerSocket = 1.0e-9;

} // namespace parallax
