#pragma once
// Plans the timeline's benchmarks, tests and screenshot tool share (no Qt): the large interleaved
// schedule of the targets, and readable pipeline plans of every schedule.
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "spec/scenario.hpp"
#include "spec/strategy_rules.hpp"

#include <string>

namespace parallax::views::examples {

// 64 stages x 1,024 micro-batches, interleaved with 2 virtual stages (~800k ops): a GPT-style
// 128-layer, 8192-hidden model on 512 H100 (TP 8, SP), as tests/core/tst_simulator.cpp builds it.
inline Scenario large_interleaved()
{
    const PresetCatalog& cat = PresetCatalog::standard();
    auto find = [&](PresetKind k, const char* name) { return cat.find(k, name); };
    Scenario s;
    ModelSpec& m = s.model;
    m.name = "gpt-128x8192";
    m.layers = 128;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 64;
    m.ffn_hidden = 4 * 8192;
    m.vocab = 128000;
    m.ffn_act = FfnActivation::gelu;
    ClusterSpec& c = s.cluster;
    c.name = "64 x 8 H100";
    const PresetEntry* gpu = find(PresetKind::gpus, "H100-SXM5-80GB");
    const PresetEntry* nv = find(PresetKind::fabrics, "nvlink4-nvswitch");
    const PresetEntry* ib = find(PresetKind::fabrics, "ib-ndr");
    c.gpu = parse_gpu(gpu->json, gpu->origin, "");
    c.intra_node = parse_fabric(nv->json, nv->origin, "");
    c.inter_node = parse_fabric(ib->json, ib->origin, "");
    c.nodes = 64;
    c.gpus_per_node = 8;
    s.training.seq_len = 4096;
    s.training.global_batch = 1024;
    Strategy& st = s.strategy;
    st.tp = 8;
    st.pp = 64;
    st.vpp = 2;
    st.dp = 1;
    st.schedule = Schedule::interleaved;
    st.sequence_parallel = true;
    return s;
}

// The scenario preset `base` with pipeline degree pp, `microbatches` micro-batches per step and the
// given schedule (vpp virtual stages for interleaved), the GPU count kept by moving the rest into DP
// and the global batch set to microbatches x micro_batch x dp. Throws InputError when the plan breaks
// a rule (the message says which).
inline Scenario pipeline_example(
    const std::string& base, Schedule schedule, int pp, long long microbatches, int vpp = 2)
{
    Scenario s = load_scenario_preset(base, PresetCatalog::standard());
    Strategy& st = s.strategy;
    const long long gpus = s.cluster.total_gpus();
    st.pp = pp;
    st.schedule = schedule;
    st.vpp = schedule == Schedule::interleaved ? vpp : 1;
    const long long per_replica = static_cast<long long>(st.tp) * st.cp * st.pp;
    st.dp = static_cast<int>(std::max(1LL, gpus / per_replica));
    s.training.global_batch = microbatches * st.micro_batch * st.dp;
    validate_scenario(s, base + " (pipeline example)");
    return s;
}

} // namespace parallax::views::examples
