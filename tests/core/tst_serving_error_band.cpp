// Serving error bands: the percentile band and its fallback to broader classes, the table's JSON, the
// shipped table matching what the measured serving rows give now, its leave-one-model-out coverage, and the
// intervals every serving prediction carries.
#include "calibration/serving_band_residuals.hpp"
#include "calibration/serving_error_band.hpp"
#include "io/json_reader.hpp"
#include "io/preset_catalog.hpp"
#include "io/serving_io.hpp"
#include "io/serving_prediction_io.hpp"
#include "io/serving_runs.hpp"
#include "serving/serving_model.hpp"
#include "spec/input_error.hpp"

#include "../support/serving_fixtures.hpp"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace parallax;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

ServingBandResidual residual(const std::string& model, ServingEngine engine, bool moe, double log_throughput)
{
    ServingBandResidual r;
    r.model = model;
    r.klass.engine = engine;
    r.klass.moe = moe;
    r.log_ttft = kNaN;
    r.log_tpot = kNaN;
    r.log_throughput = log_throughput;
    return r;
}

// 41 vLLM MoE rows of two models, ln(measured / predicted) from -0.2 to +0.2 in steps of 0.01, and 10 SGLang
// dense rows all at +0.5.
ServingBandTable small_table()
{
    ServingBandTable t;
    for (int i = 0; i <= 40; ++i)
        t.residuals.push_back(residual(i % 2 ? "a" : "b", ServingEngine::vllm, true, -0.2 + 0.01 * i));
    for (int i = 0; i < 10; ++i)
        t.residuals.push_back(residual("c", ServingEngine::sglang, false, 0.5));
    return t;
}

ServingBandTable rebuilt_from_validation()
{
    std::vector<ServingRun> runs;
    std::vector<ServingSkip> skipped;
    for (const char* name : { "measured-serving.json", "published-serving-throughput.json" }) {
        const std::string path = std::string(PARALLAX_SOURCE_DIR) + "/validation/" + name;
        auto more
            = read_serving_runs(parse_json_text(read_text_file(path), path), path, PresetCatalog::standard(), skipped);
        runs.insert(runs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    return build_serving_band_table(run_serving_validation(runs, skipped), "test");
}

} // namespace

class TestServingErrorBand : public QObject {
    Q_OBJECT

private slots:
    void percentileBandOfTheClass()
    {
        // quantile_level 0.9: the 5th and 95th percentiles of the 41 rows, -0.18 and +0.18.
        const ServingBandTable t = small_table();
        ServingBandClass moe_vllm;
        moe_vllm.moe = true;
        const ServingBand b = serving_error_band(t, moe_vllm, ServingMetric::throughput);
        QVERIFY(b.valid());
        QCOMPARE(b.level, 0.8);
        QCOMPARE(b.rows, 41);
        QVERIFY(std::fabs(b.low_factor - std::exp(-0.18)) < 1e-12);
        QVERIFY(std::fabs(b.high_factor - std::exp(0.18)) < 1e-12);
        QVERIFY(b.basis.find("the rows of its engine, family and mode") != std::string::npos);
    }

    void smallClassesFallBackAndTheBandHoldsThePrediction()
    {
        // SGLang dense has 10 rows of one model: too few for its class and its engine, so the band is the
        // aggregated rows' (51), and although every SGLang row says +0.5 it still holds the prediction itself.
        const ServingBandTable t = small_table();
        ServingBandClass dense_sglang;
        dense_sglang.engine = ServingEngine::sglang;
        const ServingBand b = serving_error_band(t, dense_sglang, ServingMetric::throughput);
        QCOMPARE(b.rows, 51);
        QVERIFY(b.basis.find("the rows of its mode") != std::string::npos);
        QVERIFY(b.low_factor <= 1.0 && b.high_factor >= 1.0);
        // Leaving a model out drops its rows: 20 of "b"'s left of 41, below the 30 a class needs.
        ServingBandClass moe_vllm;
        moe_vllm.moe = true;
        QCOMPARE(serving_error_band(t, moe_vllm, ServingMetric::throughput, "b").rows, 30);
        // No row measures TTFT: no band.
        QVERIFY(!serving_error_band(t, moe_vllm, ServingMetric::ttft).valid());
    }

    void tableJsonRoundTripAndErrors()
    {
        ServingBandTable t = small_table();
        t.residuals[0].log_ttft = 0.25;
        const nlohmann::json j = serving_band_table_to_json(t);
        const ServingBandTable back = serving_band_table_from_json(j, "bands.json");
        QCOMPARE(back.residuals.size(), t.residuals.size());
        QCOMPARE(back.quantile_level, 0.9);
        QCOMPARE(back.residuals[0].log_ttft, 0.25);
        QVERIFY(std::isnan(back.residuals[1].log_ttft));
        QVERIFY(back.residuals.back().klass == t.residuals.back().klass);
        nlohmann::json bad = j;
        bad["residuals"][0]["engine"] = "tgi";
        try {
            serving_band_table_from_json(bad, "bands.json");
            QFAIL("an unknown engine was accepted");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("bands.json") != std::string::npos);
            QVERIFY(std::string(e.what()).find("engine") != std::string::npos);
        }
        bad = j;
        bad["quantile_level"] = 0.5;
        QVERIFY_THROWS_EXCEPTION(InputError, serving_band_table_from_json(bad, "bands.json"));
    }

    // The shipped table is what `parallax-cli error-bands --serving validation/measured-serving.json
    // validation/published-serving-throughput.json --out presets/calibration/serving-error-bands.json` gives
    // today: if the serving model changes, this fails until the table is rebuilt.
    void shippedTableMatchesTheMeasuredRows()
    {
        const ServingBandTable rebuilt = rebuilt_from_validation();
        const ServingBandTable& shipped = builtin_serving_error_bands();
        QCOMPARE(shipped.residuals.size(), rebuilt.residuals.size());
        QVERIFY(rebuilt.residuals.size() > 3000);
        const auto same
            = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) < 1e-4; };
        for (std::size_t i = 0; i < rebuilt.residuals.size(); ++i) {
            const ServingBandResidual& s = shipped.residuals[i];
            const ServingBandResidual& r = rebuilt.residuals[i];
            QCOMPARE(QString::fromStdString(s.model), QString::fromStdString(r.model));
            QVERIFY(s.klass == r.klass);
            QVERIFY2(same(s.log_ttft, r.log_ttft) && same(s.log_tpot, r.log_tpot)
                    && same(s.log_throughput, r.log_throughput),
                qPrintable(QString::number(i)));
        }
    }

    // Measured, not asserted into being: each metric's bands, built without a row's model, hold 70-90% of
    // the rows (the level is 80%).
    void shippedBandsCoverTheirLevelWithEachModelLeftOut()
    {
        const std::vector<BandCoverage> cov = serving_band_coverage(builtin_serving_error_bands());
        QCOMPARE(cov.size(), std::size_t(3));
        for (const BandCoverage& c : cov) {
            QVERIFY2(c.rows > 3000, c.group.c_str());
            QVERIFY2(c.coverage() >= 0.7 && c.coverage() <= 0.9,
                qPrintable(QString::fromStdString(c.group + " ") + QString::number(c.coverage())));
        }
    }

    void everyServingPredictionCarriesItsBand()
    {
        const ServingScenario s = test::parse_serving(
            test::llama70b_fp8_on_h100_node({ { "isl", 1024 }, { "osl", 128 }, { "concurrency", 64 } }));
        const ServingPrediction p = predict_serving(s);
        const ServingInterval& i = p.interval;
        QCOMPARE(i.level, 0.8);
        QVERIFY(i.ttft_ms_low <= p.ttft_ms && p.ttft_ms <= i.ttft_ms_high && i.ttft_ms_low < i.ttft_ms_high);
        QVERIFY(i.tpot_ms_low <= p.tpot_ms && p.tpot_ms <= i.tpot_ms_high && i.tpot_ms_low < i.tpot_ms_high);
        QVERIFY(i.tokens_per_s_low <= p.output_tokens_per_s && p.output_tokens_per_s <= i.tokens_per_s_high);
        // The class's own band: vLLM dense aggregated.
        const ServingBands& b = builtin_serving_bands(serving_band_class(s));
        QCOMPARE(i.tokens_per_s_high, p.output_tokens_per_s * b.throughput.high_factor);
        QVERIFY(i.basis.find("the deployment: vllm dense aggregated") != std::string::npos);
        const nlohmann::json j = serving_prediction_to_json(p);
        QCOMPARE(j["interval_level"].get<double>(), 0.8);
        QCOMPARE(j["ttft_ms_interval"][0].get<double>(), i.ttft_ms_low);
        QCOMPARE(i.tokens_per_s_per_gpu_high, p.output_tokens_per_s_per_gpu * b.throughput.high_factor);
        QCOMPARE(j["output_tokens_per_s_per_gpu_interval"][1].get<double>(), i.tokens_per_s_per_gpu_high);
        QVERIFY(serving_prediction_to_text(s, p).find("(80%: ") != std::string::npos);
        // An infeasible deployment has no band, and says so with nulls.
        ServingPrediction none;
        QVERIFY(serving_prediction_to_json(none)["ttft_ms_interval"].is_null());
    }
};

QTEST_GUILESS_MAIN(TestServingErrorBand)
#include "tst_serving_error_band.moc"
