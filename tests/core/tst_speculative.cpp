// Speculative decoding in the serving model (docs/serving.md, "Speculative decoding"): the acceptance
// arithmetic of Leviathan et al., the draft's layer (MTP repeats the model's last layer, EAGLE is a dense
// one), its share of a step and of memory against hand computation, TPOT as the step over the tokens a step
// gains, the scenario keys and their errors, and the engines' launch flags.
#include "io/export/serving_launch.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "io/serving_io.hpp"
#include "model/model_math.hpp"
#include "serving/kv_cache.hpp"
#include "serving/serving_context.hpp"
#include "serving/serving_memory.hpp"
#include "serving/serving_model.hpp"
#include "serving/serving_step.hpp"
#include "serving/speculative_decoding.hpp"
#include "spec/input_error.hpp"

#include "../support/serving_fixtures.hpp"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using namespace parallax;
using nlohmann::json;

namespace {

json base_scenario()
{
    return test::llama70b_fp8_on_h100_node({ { "isl", 1024 }, { "osl", 256 }, { "batch_size", 1 } });
}

json with_draft(json j, const char* draft, int tokens, double acceptance_length)
{
    j["serving"]["speculative"]
        = { { "draft", draft }, { "draft_tokens", tokens }, { "acceptance_length", acceptance_length } };
    return j;
}

ServingScenario parse(const json& j)
{
    return test::parse_serving(j);
}

std::string error_of(const json& j)
{
    return test::serving_error_of(j);
}

StepLoad decode_of(double requests, double context)
{
    StepLoad l;
    l.decode_requests = requests;
    l.decode_context = context;
    l.sampled_requests = requests;
    return l;
}

bool near(double a, double b, double rel)
{
    return std::fabs(a - b) <= rel * std::fabs(b);
}

} // namespace

class TestSpeculative : public QObject {
    Q_OBJECT
private slots:
    void tokensPerStepFollowLeviathan();
    void draftLayerOfEachKind();
    void draftPassesCostTheirLayerHandWorked();
    void tpotIsTheStepOverTheTokensItGains();
    void memoryHoldsTheDraft();
    void scenarioKeysReadBackAndRefuseBadInput();
    void launchFlagsForEachEngine();
};

void TestSpeculative::tokensPerStepFollowLeviathan()
{
    // Leviathan et al. 2023, Eq. 1: (1 - a^(k+1)) / (1 - a) tokens per step for acceptance a, k draft tokens.
    SpeculativeDecoding d;
    d.acceptance_rate = 0.85;
    QVERIFY(near(d.tokens_per_step(), 1.85, 1e-12)); // DeepSeek-V3's one MTP token, 85% accepted
    d.draft_tokens = 3;
    d.acceptance_rate = 0.7;
    QVERIFY(near(d.tokens_per_step(), (1 - std::pow(0.7, 4)) / 0.3, 1e-12));
    d.acceptance_rate = 0.0;
    QCOMPARE(d.tokens_per_step(), 1.0);
    d.acceptance_rate = 1.0;
    QCOMPARE(d.tokens_per_step(), 4.0);
    d.acceptance_rate.reset();
    d.acceptance_length = 2.4;
    QCOMPARE(d.tokens_per_step(), 2.4);
}

void TestSpeculative::draftLayerOfEachKind()
{
    const auto model = [](const char* name) {
        return resolve_model(json(name), "test.json", "model", PresetCatalog::standard(), nullptr);
    };
    // DeepSeek-V3's MTP module is a block of its MoE layers; an EAGLE head is a dense layer.
    const ModelSpec ds = model("deepseek-v3");
    const ModelSpec mtp = draft_model_of(ds, DraftKind::mtp);
    QCOMPARE(mtp.layers, 1);
    QVERIFY(mtp.is_moe_layer(0));
    QCOMPARE(layer_params(mtp, 0).total(), layer_params(ds, ds.layers - 1).total());
    const ModelSpec eagle = draft_model_of(ds, DraftKind::eagle);
    QVERIFY(!eagle.is_moe());
    QCOMPARE(layer_params(eagle, 0).mlp, layer_params(ds, 0).mlp); // the dense layers' MLP width
    // GPT-OSS ends on a full-attention layer (windowed and full alternate, the first windowed).
    const ModelSpec oss = model("gpt-oss-120b");
    QVERIFY(!oss.is_windowed_layer(oss.layers - 1));
    QVERIFY(!draft_model_of(oss, DraftKind::mtp).is_windowed_layer(0));
    ModelSpec windowed_last = oss;
    windowed_last.layers = oss.layers - 1;
    QVERIFY(draft_model_of(windowed_last, DraftKind::mtp).is_windowed_layer(0));
    QCOMPARE(draft_fusion_params(ds), 2.0 * 7168.0 * 7168.0);
}

void TestSpeculative::draftPassesCostTheirLayerHandWorked()
{
    // One decoding request: a step with k draft tokens costs the plain step, plus k passes of the draft
    // (its layer and the shared output head: the one-layer model's step less the engine's host work), plus
    // k reads of the fusion projection; verifying k + 1 tokens instead of one adds next to nothing at batch 1
    // (the weight reads dominate).
    const ServingScenario plain = parse(base_scenario());
    const ServingContext ctx0(plain.model, plain.cluster, plain.serving, plain.deployment.instance);
    const StepLoad load = decode_of(1, 2048);
    const double plain_s = step_cost(ctx0, load).time_s;
    for (int k : { 1, 3 }) {
        const ServingScenario s = parse(with_draft(base_scenario(), "eagle", k, 1.0));
        const ServingContext ctx(s.model, s.cluster, s.serving, s.deployment.instance);
        QVERIFY(ctx.draft);
        const double draft_pass_s = step_cost(*ctx.draft, load).time_s - ctx.engine.step_host_s;
        const double fusion_bytes = draft_fusion_params(s.model) / 8; // fp8: a byte per weight, TP 8
        const double fusion_s = fusion_bytes / (s.cluster.gpu.memory_bw_Bps * ctx.device.gen->hbm_efficiency)
            + ctx.device.gen->kernel_overhead_s;
        const double expected = plain_s + k * (draft_pass_s + fusion_s);
        const double got = step_cost(ctx, load).time_s;
        QVERIFY2(got >= expected * 0.999 && got < expected * 1.03,
            qPrintable(QStringLiteral("k %1: %2 s against %3 s").arg(k).arg(got).arg(expected)));
    }
    // At a large batch the verification's extra rows are real work: 64 requests verifying 4 tokens each cost
    // more than 64 requests with the draft alone.
    const ServingScenario s = parse(with_draft(base_scenario(), "eagle", 3, 1.0));
    const ServingContext ctx(s.model, s.cluster, s.serving, s.deployment.instance);
    const StepLoad big = decode_of(256, 2048);
    const double draft_s = 3 * (step_cost(*ctx.draft, big).time_s - ctx.engine.step_host_s);
    QVERIFY(step_cost(ctx, big).time_s > step_cost(ctx0, big).time_s + draft_s);
    QVERIFY(step_cost(ctx, big).flops > 3.9 * step_cost(ctx0, big).flops);
}

void TestSpeculative::tpotIsTheStepOverTheTokensItGains()
{
    const json base = base_scenario();
    const ServingPrediction plain = predict_serving(parse(base));
    const ServingPrediction spec = predict_serving(parse(with_draft(base, "mtp", 3, 2.6)));
    QVERIFY(spec.feasible);
    QVERIFY(near(spec.tpot_ms, spec.decode_step.time_s * 1e3 / 2.6, 1e-12));
    QVERIFY(near(spec.output_tokens_per_s_per_user, 1e3 / spec.tpot_ms, 1e-12));
    QVERIFY(near(spec.e2e_latency_ms, spec.ttft_ms + 255 * spec.tpot_ms, 1e-9));
    QVERIFY(spec.tpot_ms < plain.tpot_ms / 2); // 2.6 tokens a step for a step less than 30% dearer
    QVERIFY(spec.output_tokens_per_s > 2 * plain.output_tokens_per_s);
    // Nothing accepted: every step pays for the draft and gains one token.
    const ServingPrediction none = predict_serving(parse(with_draft(base, "mtp", 3, 1.0)));
    QVERIFY(none.tpot_ms > plain.tpot_ms);
    // A closed loop at concurrency 64 and a disaggregated deployment divide the same way.
    json loop = base;
    loop["serving"]["workload"] = { { "isl", 1024 }, { "osl", 256 }, { "concurrency", 64 } };
    const ServingPrediction loop_spec = predict_serving(parse(with_draft(loop, "mtp", 2, 2.0)));
    QVERIFY(near(loop_spec.tpot_ms, loop_spec.decode_step.time_s * 1e3 / 2.0, 1e-12));
    json dis = with_draft(loop, "mtp", 2, 2.0);
    dis["deployment"] = { { "disaggregated", { { "prefill", { { "tp", 4 } } }, { "decode", { { "tp", 4 } } } } } };
    const ServingPrediction d = predict_serving(parse(dis));
    // The KV transfer's share of the first gap between tokens comes on top of the step, spread over the request.
    QVERIFY(d.tpot_ms >= d.decode_step.time_s * 1e3 / 2.0);
    QVERIFY(near(d.tpot_ms, d.decode_step.time_s * 1e3 / 2.0, 0.02));
    dis["serving"]["speculative"]["acceptance_length"] = 1.0;
    QVERIFY(predict_serving(parse(dis)).tpot_ms > 1.5 * d.tpot_ms);
}

void TestSpeculative::memoryHoldsTheDraft()
{
    // The draft's layer and fusion projection add to the weights; its own KV cache adds one layer's worth
    // per token (Llama 3 70B: 80 layers, so 81/80 of the cache per request).
    const ServingScenario plain = parse(base_scenario());
    const ServingScenario s = parse(with_draft(base_scenario(), "eagle", 2, 2.0));
    const ServingContext ctx0(plain.model, plain.cluster, plain.serving, plain.deployment.instance);
    const ServingContext ctx(s.model, s.cluster, s.serving, s.deployment.instance);
    const double embed_and_head = (embedding_params(s.model) + output_params(s.model)) * 2.0 / 8;
    const double draft_layer = weights_bytes_per_gpu(*ctx.draft) - embed_and_head;
    const double fusion = draft_fusion_params(s.model) / 8;
    QVERIFY(near(weights_bytes_per_gpu(ctx) - weights_bytes_per_gpu(ctx0), draft_layer + fusion, 1e-9));
    const ServingMemory m0 = serving_memory(ctx0, plain.serving.workload);
    const ServingMemory m = serving_memory(ctx, s.serving.workload);
    QVERIFY(near(m.kv_bytes_per_request, m0.kv_bytes_per_request * 81.0 / 80.0, 1e-9));
    QVERIFY(m.activations_B > m0.activations_B); // logits for the three tokens each request verifies
    QVERIFY(m.max_running < m0.max_running);
}

void TestSpeculative::scenarioKeysReadBackAndRefuseBadInput()
{
    json j = base_scenario();
    j["serving"]["speculative"] = { { "draft", "eagle" }, { "draft_tokens", 4 }, { "acceptance_rate", 0.6 } };
    const ServingScenario s = parse(j);
    QVERIFY(s.serving.speculative);
    QCOMPARE(s.serving.speculative->draft_tokens, 4);
    const ServingScenario back = parse(serving_scenario_to_json(s));
    QVERIFY(back.serving.speculative);
    QVERIFY(back.serving.speculative->draft == DraftKind::eagle);
    QCOMPARE(*back.serving.speculative->acceptance_rate, 0.6);
    QVERIFY(!back.serving.speculative->acceptance_length);
    QCOMPARE(predict_serving(back).tpot_ms, predict_serving(s).tpot_ms);
    QVERIFY(!serving_scenario_to_json(parse(base_scenario()))["serving"].contains("speculative"));

    auto error_with = [&](const json& spec) {
        json k = base_scenario();
        k["serving"]["speculative"] = spec;
        return error_of(k);
    };
    std::string e = error_with({ { "draft_tokens", 2 } });
    QVERIFY2(e.find("test.json") == 0 && e.find("serving.speculative") != std::string::npos
            && e.find("acceptance_rate") != std::string::npos,
        e.c_str());
    e = error_with({ { "draft_tokens", 2 }, { "acceptance_rate", 0.5 }, { "acceptance_length", 2 } });
    QVERIFY2(e.find("not both") != std::string::npos, e.c_str());
    e = error_with({ { "draft_tokens", 2 }, { "acceptance_length", 3.5 } });
    QVERIFY2(e.find("serving.speculative.acceptance_length") != std::string::npos, e.c_str());
    e = error_with({ { "draft_tokens", 2 }, { "acceptance_rate", 1.2 } });
    QVERIFY2(e.find("serving.speculative.acceptance_rate") != std::string::npos, e.c_str());
    e = error_with({ { "draft", "medusa" }, { "draft_tokens", 2 }, { "acceptance_rate", 0.5 } });
    QVERIFY2(
        e.find("serving.speculative.draft") != std::string::npos && e.find("eagle") != std::string::npos, e.c_str());
    e = error_with({ { "draft_tokens", 0 }, { "acceptance_rate", 0.5 } });
    QVERIFY2(e.find("serving.speculative.draft_tokens") != std::string::npos, e.c_str());
    e = error_with({ { "draft_tokens", 2 }, { "acceptance", 0.5 } });
    QVERIFY2(e.find("serving.speculative") != std::string::npos, e.c_str());
}

void TestSpeculative::launchFlagsForEachEngine()
{
    const ServingScenario mtp = parse(with_draft(base_scenario(), "mtp", 3, 2.5));
    const LaunchConfig v = export_serving_launch(mtp, ServingEngine::vllm);
    QVERIFY(v.files.front().content.find(R"(--speculative-config '{"method":"mtp","num_speculative_tokens":3}')")
        != std::string::npos);
    const LaunchConfig g = export_serving_launch(mtp, ServingEngine::sglang);
    for (const char* flag : { "--speculative-algorithm EAGLE", "--speculative-num-steps 3",
             "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4" })
        QVERIFY2(g.files.front().content.find(flag) != std::string::npos, flag);
    const LaunchConfig t = export_serving_launch(mtp, ServingEngine::trtllm);
    const LaunchFile* options = t.find("llm-api-options.yaml");
    QVERIFY(options);
    QVERIFY(options->content.find("speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 3")
        != std::string::npos);
    // An EAGLE-3 draft is a checkpoint of its own: the script asks for it.
    const ServingScenario eagle = parse(with_draft(base_scenario(), "eagle", 2, 2.0));
    const std::string script = export_serving_launch(eagle, ServingEngine::vllm).files.front().content;
    QVERIFY(script.find(R"(: "${DRAFT_MODEL:?)") != std::string::npos);
    QVERIFY(script.find(R"(\"method\":\"eagle3\",\"model\":\"$DRAFT_MODEL\")") != std::string::npos);
    QVERIFY(
        export_serving_launch(eagle, ServingEngine::sglang).files.front().content.find("EAGLE3") != std::string::npos);
    const LaunchConfig te = export_serving_launch(eagle, ServingEngine::trtllm);
    QVERIFY(
        te.find("llm-api-options.yaml")->content.find("decoding_type: Eagle\n  max_draft_len: 2") != std::string::npos);
    QVERIFY(!te.notes.empty());
}

QTEST_GUILESS_MAIN(TestSpeculative)
#include "tst_speculative.moc"
