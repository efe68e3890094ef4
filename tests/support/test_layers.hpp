#pragma once
// Helpers shared by the core tests that build one layer's ops: the layer context of a plan (TP group over
// one node, the framework's software traits) and the Sailor OPT-350M layer on GH200 nodes.
#include "model/layer_ops.hpp"
#include "model/topology.hpp"

#include "test_plans.hpp"

namespace parallax::test {

// The context build_layer_ops needs for `s` on `c`: the TP group placed within a node of c.gpus_per_node.
inline LayerContext layer_context(const ModelSpec& m, const TrainingSpec& t, const Strategy& s, const ClusterSpec& c)
{
    LayerContext lc;
    lc.model = &m;
    lc.training = &t;
    lc.strategy = &s;
    lc.device = ComputeDevice::of(c.gpu);
    lc.network = NetworkModel::of(c);
    lc.tp_group = place_group(s.rank_order, LayoutSizes::dense(s), { ParallelDim::tp }, c.gpus_per_node);
    lc.traits = software_traits(t.framework);
    return lc;
}

// OPT-350M as Sailor trains it (Megatron-DeepSpeed, tf32 GEMMs on fp32 state, unfused attention without
// dropout, one 2,048-token sequence per micro-batch) at TP 4 on a 4-GPU GH200 node.
struct SailorOptLayer {
    ModelSpec model = gpt(24, 1024, 16, 50272);
    TrainingSpec training;
    ClusterSpec cluster = test::cluster("GH200-96GB", 1, 4, "nvlink4-nvswitch", "ib-ndr");
    Strategy strategy;

    SailorOptLayer()
    {
        model.dropout = false;
        training.seq_len = 2048;
        training.global_batch = 8;
        training.precision = Precision::tf32;
        training.framework = Framework::megatron_deepspeed;
        training.flash_attention = false;
        strategy.tp = 4;
        strategy.dp = 1;
        strategy.micro_batch = 1;
    }

    LayerOps ops() const
    {
        LayerOps out;
        build_layer_ops(layer_context(model, training, strategy, cluster), false, out);
        return out;
    }
};

} // namespace parallax::test
