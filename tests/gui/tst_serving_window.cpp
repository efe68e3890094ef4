// The planner's serving mode (docs/serving.md, "In the planner"): a serving scenario opens in its own
// window, whose cards show what predict_serving computes; the sliders rest only on deployments the rules
// allow and each drag is one undo step; the latency-throughput curve runs through the scenario's own
// point; the deployment search's best row applies as an edit; Save writes a file that reads back as the
// same scenario; the main window hands serving files to this window rather than refusing them.
#include "gui/main_window.hpp"
#include "gui/serving_window.hpp"
#include "gui/settings.hpp"
#include "io/preset_catalog.hpp"
#include "io/serving_io.hpp"
#include "planner/degree_slider.hpp"
#include "plots/qcustomplot_include.hpp"
#include "serving/serving_rules.hpp"
#include "serving_mode/serving_controls.hpp"
#include "serving_mode/serving_curve_view.hpp"
#include "serving_mode/serving_metrics_panel.hpp"
#include "serving_mode/serving_search_table.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "../support/planner_test_main.hpp"
#include "../support/test_main_window.hpp"

using namespace parallax;
using parallax::app::ServingWindow;
using Card = views::ServingMetricsPanel::Card;

namespace {

const QString kExample = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/serving-llama3-70b-h100.json");

ServingScenario example()
{
    return load_serving_scenario_file(kExample.toStdString(), PresetCatalog::standard());
}

QString ms_text(double v)
{
    return QStringLiteral("%1 ms").arg(v, 0, 'f', v < 10 ? 2 : 1);
}

// Drags a slider's handle onto `value` (press, move, release), as a user would.
void drag_to(views::DegreeSlider* slider, int value)
{
    const QPoint from = slider->stop_position(slider->value());
    QTest::mousePress(slider, Qt::LeftButton, {}, from);
    QMouseEvent move(QEvent::MouseMove, slider->stop_position(value), slider->mapToGlobal(slider->stop_position(value)),
        Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(slider, &move);
    QTest::mouseRelease(slider, Qt::LeftButton, {}, slider->stop_position(value));
}

} // namespace

class TestServingWindow : public QObject {
    Q_OBJECT
private slots:
    void cardsShowThePrediction();
    void slidersRestOnValidDeploymentsAndUndo();
    void workloadEditRepredicts();
    void sglangMixedChunkEditsAndUndoes();
    void speculativeDecodingEditsAndUndoes();
    void moeExchangeChoiceFollowsTheDegrees();
    void curveRunsThroughTheScenariosPoint();
    void searchResultApplies();
    void searchCancels();
    void saveWritesTheScenarioBack();
    void mainWindowOpensServingFiles();
    void exportWritesTheLaunchScript();
};

void TestServingWindow::cardsShowThePrediction()
{
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    const ServingPrediction p = predict_serving(example());
    QCOMPARE(w.metrics()->value_text(Card::ttft), ms_text(p.ttft_ms));
    QCOMPARE(w.metrics()->value_text(Card::tpot), ms_text(p.tpot_ms));
    // The latency and throughput cards carry the prediction's error band; the others none.
    QVERIFY(p.interval.level > 0);
    QCOMPARE(w.metrics()->band_text(Card::ttft),
        QStringLiteral("80%: ") + ms_text(p.interval.ttft_ms_low) + QStringLiteral("–")
            + ms_text(p.interval.ttft_ms_high));
    QVERIFY(w.metrics()->band_text(Card::tpot).startsWith(QStringLiteral("80%: ")));
    QVERIFY(w.metrics()->band_text(Card::tokens_per_s_per_gpu).startsWith(QStringLiteral("80%: ")));
    QVERIFY(w.metrics()->band_text(Card::memory).isEmpty());
    QVERIFY(w.metrics()->value_text(Card::memory).endsWith(QStringLiteral("80 GiB")));
    QVERIFY2(w.metrics()->memory_text().contains(QStringLiteral("KV cache")), qPrintable(w.metrics()->memory_text()));
    // Where the steps' time goes, one line each for the decode and the prefill step.
    QVERIFY2(
        w.metrics()->steps_text().startsWith(QStringLiteral("Decode step ") + ms_text(p.tpot_ms) + QLatin1Char(':'))
            && w.metrics()->steps_text().contains(QStringLiteral("\nPrefill step ")),
        qPrintable(w.metrics()->steps_text()));
    QVERIFY(w.metrics()->banner_text().isEmpty()); // fits and meets its SLO
    QVERIFY(!w.is_modified());
}

void TestServingWindow::slidersRestOnValidDeploymentsAndUndo()
{
    ServingWindow w(false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    // TP 8 on 8 GPUs: PP 2 would need 16 GPUs, so its stop is blocked and says why.
    const auto pp_stops = w.controls()->slider(ServingDegree::pp)->stops();
    const auto pp2 = std::find_if(pp_stops.begin(), pp_stops.end(), [](const auto& s) { return s.value == 2; });
    QVERIFY(pp2 != pp_stops.end() && !pp2->valid);
    QVERIFY2(pp2->tip.contains(QStringLiteral("GPUs")), qPrintable(pp2->tip));
    // Dragging TP to 4 re-predicts TP 4 (two replicas now fit) as one undo step.
    drag_to(w.controls()->slider(ServingDegree::tp), 4);
    QCOMPARE(w.scenario().deployment.instance.tp, 4);
    QVERIFY(w.wait_for_evaluation(20000));
    const ServingPrediction p = predict_serving(w.scenario());
    QCOMPARE(w.metrics()->value_text(Card::tpot), ms_text(p.tpot_ms));
    QCOMPARE(w.undo_stack()->count(), 1);
    QVERIFY(w.is_modified());
    w.undo_stack()->undo();
    QCOMPARE(w.scenario().deployment.instance.tp, 8);
    QCOMPARE(w.controls()->slider(ServingDegree::tp)->value(), 8);
    QVERIFY(!w.is_modified());
}

void TestServingWindow::workloadEditRepredicts()
{
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    w.controls()->load_box()->setValue(16);
    QCOMPARE(w.scenario().serving.workload.concurrency, 16LL);
    QVERIFY(w.wait_for_evaluation(20000));
    ServingScenario s = example();
    s.serving.workload.concurrency = 16;
    QCOMPARE(w.metrics()->value_text(Card::ttft), ms_text(predict_serving(s).ttft_ms));
}

void TestServingWindow::sglangMixedChunkEditsAndUndoes()
{
    // The mixed-chunk box is SGLang's alone: with vLLM it is off limits (vLLM always mixes), switching to SGLang
    // starts from its default (prompts apart), ticking it re-predicts with prompts batched with decodes, and
    // switching away drops it from the scenario; each edit is one undo step.
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    views::ServingControls* c = w.controls();
    QVERIFY(!c->mixed_chunk_box()->isEnabled());
    c->engine_box()->setCurrentText(QStringLiteral("sglang"));
    QVERIFY(w.scenario().serving.engine == ServingEngine::sglang);
    QVERIFY(c->mixed_chunk_box()->isEnabled() && !c->mixed_chunk_box()->isChecked());
    QVERIFY(!w.scenario().serving.mixed_chunk.has_value());
    QVERIFY(w.wait_for_evaluation(20000));
    const QString in_phase = w.metrics()->value_text(Card::ttft);
    c->mixed_chunk_box()->setChecked(true);
    QVERIFY(w.scenario().serving.mixed_chunk.value_or(false));
    QVERIFY(w.wait_for_evaluation(20000));
    ServingScenario s = example();
    s.serving.engine = ServingEngine::sglang;
    s.serving.mixed_chunk = true;
    QCOMPARE(w.metrics()->value_text(Card::ttft), ms_text(predict_serving(s).ttft_ms));
    QVERIFY(w.metrics()->value_text(Card::ttft) != in_phase);
    c->engine_box()->setCurrentText(QStringLiteral("vllm"));
    QVERIFY(!w.scenario().serving.mixed_chunk.has_value());
    QCOMPARE(w.undo_stack()->count(), 3);
    w.undo_stack()->undo();
    QVERIFY(w.scenario().serving.engine == ServingEngine::sglang && w.scenario().serving.mixed_chunk.value_or(false));
    QVERIFY(c->mixed_chunk_box()->isChecked());
}

void TestServingWindow::speculativeDecodingEditsAndUndoes()
{
    // Turning a draft on starts from DeepSeek-V3's MTP acceptance (one token, 85%), shortens TPOT as the model
    // says, keeps a rate while the draft grows, takes a typed acceptance length, and each edit is one undo step.
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    views::ServingControls* c = w.controls();
    QVERIFY(!c->acceptance_box()->isEnabled());
    c->draft_box()->setCurrentIndex(2); // EAGLE-3
    const auto& d = w.scenario().serving.speculative;
    QVERIFY(d.has_value());
    QVERIFY(d->draft == DraftKind::eagle);
    QCOMPARE(d->draft_tokens, 1);
    QCOMPARE(*d->acceptance_rate, 0.85);
    QCOMPARE(c->acceptance_box()->value(), 1.85);
    QVERIFY(w.wait_for_evaluation(20000));
    QCOMPARE(w.metrics()->value_text(Card::tpot), ms_text(predict_serving(w.scenario()).tpot_ms));
    QVERIFY(predict_serving(w.scenario()).tpot_ms < predict_serving(example()).tpot_ms);
    c->draft_tokens_box()->setValue(3);
    QCOMPARE(w.scenario().serving.speculative->draft_tokens, 3);
    QCOMPARE(*w.scenario().serving.speculative->acceptance_rate, 0.85);
    QCOMPARE(c->acceptance_box()->maximum(), 4.0);
    c->acceptance_box()->setValue(2.5);
    QVERIFY(!w.scenario().serving.speculative->acceptance_rate);
    QCOMPARE(*w.scenario().serving.speculative->acceptance_length, 2.5);
    QCOMPARE(w.undo_stack()->count(), 3);
    c->draft_box()->setCurrentIndex(0);
    QVERIFY(!w.scenario().serving.speculative);
    for (int i = 0; i < 4; ++i)
        w.undo_stack()->undo();
    QVERIFY(!w.scenario().serving.speculative);
    QCOMPARE(c->draft_box()->currentIndex(), 0);
    QVERIFY(!w.is_modified());
}

void TestServingWindow::moeExchangeChoiceFollowsTheDegrees()
{
    // The exchange is a choice only under attention DP with EP on an MoE model: the dense example has none;
    // DeepSeek-V3 at attention DP 8 x EP 8 offers it, the edit is one undo step, and dragging attention DP
    // back to 1 returns to the all-reduce (and to the default exchange).
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    views::ServingControls* c = w.controls();
    QVERIFY(!c->exchange_box()->isEnabled());
    QVERIFY(w.open_file(QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/serving-deepseek-v3-h200.json")));
    QVERIFY(w.wait_for_evaluation(20000));
    QCOMPARE(w.scenario().deployment.instance.attention_dp, 8);
    QVERIFY(c->exchange_box()->isEnabled());
    QCOMPARE(c->exchange_box()->currentIndex(), 0);
    c->exchange_box()->setCurrentIndex(1);
    QVERIFY(w.scenario().deployment.instance.moe_exchange == MoeExchange::gather);
    QCOMPARE(w.undo_stack()->count(), 1);
    QVERIFY(w.wait_for_evaluation(20000));
    QCOMPARE(w.metrics()->value_text(Card::tpot), ms_text(predict_serving(w.scenario()).tpot_ms));
    emit c->slider(ServingDegree::ep)->value_chosen(1, 0);
    QVERIFY(!c->exchange_box()->isEnabled()); // one expert group: every rank gathers
    emit c->slider(ServingDegree::attention_dp)->value_chosen(1, 0);
    QCOMPARE(w.scenario().deployment.instance.attention_dp, 1);
    QVERIFY(w.scenario().deployment.instance.moe_exchange == MoeExchange::all_to_all);
    check_serving_scenario(w.scenario(), "test"); // a valid deployment: throws otherwise
    for (int i = 0; i < 2; ++i)
        w.undo_stack()->undo();
    QVERIFY(w.scenario().deployment.instance.moe_exchange == MoeExchange::gather);
    QVERIFY(c->exchange_box()->isEnabled());
    w.undo_stack()->undo();
    QCOMPARE(c->exchange_box()->currentIndex(), 0);
    QVERIFY(!w.is_modified());
}

void TestServingWindow::curveRunsThroughTheScenariosPoint()
{
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    const std::vector<ServingCurvePoint>& points = w.curve()->points();
    QVERIFY(points.size() >= 8);
    const ServingPrediction p = predict_serving(example());
    const auto here = std::find_if(points.begin(), points.end(), [](const auto& pt) { return pt.concurrency == 64; });
    QVERIFY(here != points.end());
    QCOMPARE(here->tokens_per_s_per_gpu, p.output_tokens_per_s_per_gpu);
    // Each point carries its error band, shaded around the curve and exported with it.
    QVERIFY(here->tokens_per_s_per_gpu_low < here->tokens_per_s_per_gpu);
    QVERIFY(here->tokens_per_s_per_gpu_high > here->tokens_per_s_per_gpu);
    QVERIFY(
        w.curve()->csv().section(QLatin1Char('\n'), 0, 0).endsWith(QStringLiteral("output_tokens_per_s_per_gpu_high")));
    // More requests in flight: each streams no faster, and the GPUs (until the plateau) produce more.
    for (std::size_t i = 1; i < points.size(); ++i) {
        QVERIFY(points[i].tokens_per_s_per_user <= points[i - 1].tokens_per_s_per_user * (1 + 1e-9));
        if (points[i].concurrency <= 64)
            QVERIFY(points[i].tokens_per_s_per_gpu > points[i - 1].tokens_per_s_per_gpu);
    }
    QVERIFY2(
        w.curve()->summary().contains(QStringLiteral("SLO holds up to concurrency")), qPrintable(w.curve()->summary()));
    QVERIFY(w.curve()->csv().startsWith(QStringLiteral("concurrency,feasible,slo_met")));
    // A request-rate scenario is no point of the concurrency curve: its own prediction is marked where it lies
    // (Llama 3.1 8B at 40 requests/s: 143 tokens/s per user and 1,280 per GPU, between concurrency 8 and 16).
    const QString rate = QStringLiteral(PARALLAX_SOURCE_DIR "/docs/examples/serving-llama3.1-8b-rate.json");
    QVERIFY(w.open_file(rate));
    QVERIFY(w.wait_for_evaluation(20000));
    const ServingPrediction at_rate
        = predict_serving(load_serving_scenario_file(rate.toStdString(), PresetCatalog::standard()));
    QCPGraph* marked = nullptr;
    for (int i = 0; i < w.curve()->plot()->graphCount(); ++i)
        if (w.curve()->plot()->graph(i)->name() == QStringLiteral("the scenario's load"))
            marked = w.curve()->plot()->graph(i);
    QVERIFY(marked);
    QCOMPARE(marked->data()->size(), 1);
    QCOMPARE(marked->data()->begin()->key, at_rate.output_tokens_per_s_per_user);
    QCOMPARE(marked->data()->begin()->value, at_rate.output_tokens_per_s_per_gpu);
}

// The search button turns into Cancel while a search runs; cancelling keeps the last complete result.
void TestServingWindow::searchCancels()
{
    ServingWindow w(false);
    // Qwen3-235B-A22B on 64 H100: thousands of deployments, a search long enough to be cancelled while it runs
    // (a small one can finish before the window attaches its continuation).
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("qwen3-235b-64.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({ "schema": 1, "model": "qwen3-235b-a22b",
        "cluster": { "gpu": "H100-SXM5-80GB", "nodes": 8, "gpus_per_node": 8,
                     "intra_node": { "bw_GBps": 450, "latency_us": 3 }, "inter_node": { "bw_GBps": 50, "latency_us": 8 } },
        "serving": { "workload": { "isl": 2048, "osl": 512, "concurrency": 512 }, "slo": { "tpot_ms": 60 } },
        "deployment": { "tp": 8, "pp": 1, "ep": 8, "attention_dp": 1 } })");
    file.close();
    QVERIFY(w.open_file(path));
    QVERIFY(w.wait_for_evaluation(20000));
    w.start_search();
    QCOMPARE(w.search_table()->search_button()->text(), QStringLiteral("Cancel search"));
    w.search_table()->search_button()->click();
    QVERIFY(w.wait_for_search(60000));
    QCOMPARE(w.search_table()->search_button()->text(), QStringLiteral("Search deployments"));
    QVERIFY2(
        w.search_table()->summary().contains(QStringLiteral("cancelled")), qPrintable(w.search_table()->summary()));
    QCOMPARE(w.search_table()->table()->rowCount(), 0);
}

void TestServingWindow::searchResultApplies()
{
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    w.start_search();
    QVERIFY(w.wait_for_search(60000));
    const ServingSearchResult& r = w.search_table()->result();
    QVERIFY(!r.results.empty());
    QCOMPARE(w.search_table()->table()->rowCount(), static_cast<int>(r.results.size()));
    emit w.search_table()->table()->cellDoubleClicked(0, 0);
    QVERIFY(w.wait_for_evaluation(20000));
    QCOMPARE(w.scenario().deployment.disaggregated.has_value(), r.results.front().deployment.disaggregated.has_value());
    const ServingPrediction p = predict_serving(w.scenario());
    QCOMPARE(p.output_tokens_per_s_per_gpu, r.results.front().prediction.output_tokens_per_s_per_gpu);
    QCOMPARE(w.undo_stack()->count(), 1);
    // A disaggregated deployment has no single instance layout: the sliders step aside and say so.
    if (w.scenario().deployment.disaggregated)
        QVERIFY(!w.controls()->slider(ServingDegree::tp)->isEnabled());
}

void TestServingWindow::saveWritesTheScenarioBack()
{
    QTemporaryDir dir;
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.wait_for_evaluation(20000));
    w.controls()->load_box()->setValue(32);
    QVERIFY(w.is_modified());
    const QString path = dir.filePath(QStringLiteral("saved.json"));
    QVERIFY(w.save_as(path));
    QVERIFY(!w.is_modified());
    const ServingScenario back = load_serving_scenario_file(path.toStdString(), PresetCatalog::standard());
    QCOMPARE(back.serving.workload.concurrency, 32LL);
    QCOMPARE(serving_scenario_to_json(back).dump(), serving_scenario_to_json(w.scenario()).dump());
    QCOMPARE(back.refs.model, std::string("llama3-70b")); // presets stay names
}

void TestServingWindow::mainWindowOpensServingFiles()
{
    test::TestMainWindow fixture;
    app::MainWindow& main = fixture.window;
    QVERIFY(main.open_scenario_file(kExample));
    const auto opened = main.findChildren<ServingWindow*>();
    QCOMPARE(opened.size(), 1);
    QVERIFY(opened.front()->isWindow());
    QVERIFY(opened.front()->wait_for_evaluation(20000));
    QCOMPARE(opened.front()->scenario().deployment.instance.tp, 8);
}

void TestServingWindow::exportWritesTheLaunchScript()
{
    QTemporaryDir dir;
    ServingWindow w(false);
    QVERIFY(w.open_file(kExample));
    QVERIFY(w.export_launch(ServingEngine::sglang, dir.path()));
    QFile f(dir.filePath(QStringLiteral("serve.sh")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY2(text.contains(QStringLiteral("sglang.launch_server")) && text.contains(QStringLiteral("--tp-size 8")),
        qPrintable(text));
    QVERIFY(QFileInfo(f).isExecutable());
}

PARALLAX_PLANNER_TEST_MAIN(TestServingWindow)
#include "tst_serving_window.moc"
