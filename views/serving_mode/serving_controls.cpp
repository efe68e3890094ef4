#include "serving_mode/serving_controls.hpp"

#include "planner/degree_slider.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <array>

namespace parallax::views {

namespace {

constexpr int kMaxTokens = 10'000'000; // the scenario reader's limit
constexpr double kMaxLoad = 1e7;
constexpr double kMaxSloMs = 1e6;

constexpr std::array<ServingDegree, 5> kDegrees
    = { ServingDegree::tp, ServingDegree::pp, ServingDegree::ep, ServingDegree::attention_dp, ServingDegree::replicas };
constexpr std::array<LoadKind, 4> kLoads
    = { LoadKind::concurrency, LoadKind::request_rate, LoadKind::batch_size, LoadKind::max_throughput };
constexpr std::array<Precision, 4> kPrecisions = { Precision::bf16, Precision::fp16, Precision::fp8, Precision::fp4 };
constexpr int kMaxDraftTokens = 16; // the scenario reader's limit
// Turning speculative decoding on starts from DeepSeek-V3's own MTP figures: one draft token accepted 85-90%
// of the time (DeepSeek-V3 technical report, Sec. 5.4.3).
constexpr double kDefaultAcceptanceRate = 0.85;
constexpr std::array<ServingEngine, 3> kEngines = { ServingEngine::vllm, ServingEngine::sglang, ServingEngine::trtllm };

QString degree_name(ServingDegree d)
{
    switch (d) {
    case ServingDegree::tp:
        return QStringLiteral("TP");
    case ServingDegree::pp:
        return QStringLiteral("PP");
    case ServingDegree::ep:
        return QStringLiteral("EP");
    case ServingDegree::attention_dp:
        return QStringLiteral("Attention DP");
    case ServingDegree::replicas:
        return QStringLiteral("Replicas");
    }
    return {};
}

QString load_name(LoadKind k)
{
    switch (k) {
    case LoadKind::concurrency:
        return QStringLiteral("Concurrency (requests in flight)");
    case LoadKind::request_rate:
        return QStringLiteral("Request rate (requests/s)");
    case LoadKind::batch_size:
        return QStringLiteral("Static batch");
    case LoadKind::max_throughput:
        return QStringLiteral("Offline, as many as fit");
    }
    return {};
}

double load_value(const ServingWorkload& w)
{
    switch (w.load) {
    case LoadKind::concurrency:
        return static_cast<double>(w.concurrency);
    case LoadKind::request_rate:
        return w.request_rate_qps;
    case LoadKind::batch_size:
        return static_cast<double>(w.batch_size);
    case LoadKind::max_throughput:
        return 0;
    }
    return 0;
}

QSpinBox* token_box(QWidget* parent)
{
    auto* b = new QSpinBox(parent);
    b->setRange(1, kMaxTokens);
    b->setKeyboardTracking(false);
    b->setGroupSeparatorShown(true);
    return b;
}

QDoubleSpinBox* slo_box(QWidget* parent)
{
    auto* b = new QDoubleSpinBox(parent);
    b->setRange(0, kMaxSloMs);
    b->setDecimals(1);
    b->setSuffix(QStringLiteral(" ms"));
    b->setSpecialValueText(QStringLiteral("none"));
    b->setKeyboardTracking(false);
    return b;
}

std::vector<SliderStop> slider_stops(const std::vector<ServingStop>& stops)
{
    std::vector<SliderStop> out;
    for (const ServingStop& s : stops)
        out.push_back(SliderStop { s.value, s.valid, QString::fromStdString(s.why) });
    return out;
}

} // namespace

ServingControls::ServingControls(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(build_deployment());
    layout->addWidget(build_workload());
    layout->addWidget(build_engine());
    layout->addWidget(build_speculative());
    layout->addStretch(1);
}

QWidget* ServingControls::build_deployment()
{
    auto* box = new QGroupBox(QStringLiteral("Deployment (one instance, and how many)"), this);
    auto* form = new QFormLayout(box);
    m_disaggregated = new QLabel(box);
    m_disaggregated->setWordWrap(true);
    m_disaggregated->setObjectName(QStringLiteral("serving_disaggregated"));
    form->addRow(m_disaggregated);
    for (ServingDegree d : kDegrees) {
        auto* row = new QWidget(box);
        auto* h = new QHBoxLayout(row);
        h->setContentsMargins(0, 0, 0, 0);
        auto* slider = new DegreeSlider(row);
        slider->setObjectName(QStringLiteral("serving_slider_") + degree_name(d).toLower().replace(u' ', u'_'));
        auto* value = new QLabel(row);
        value->setMinimumWidth(value->fontMetrics().horizontalAdvance(QStringLiteral("0000")));
        h->addWidget(slider, 1);
        h->addWidget(value);
        form->addRow(degree_name(d), row);
        m_sliders[d] = slider;
        m_degree_values[d] = value;
        connect(slider, &DegreeSlider::value_chosen, this, [this, d](int v, int) {
            emit_edit(with_degree(m_scenario, d, v), degree_name(d) + QStringLiteral(" ") + QString::number(v));
        });
    }
    m_exchange = new QComboBox(box);
    m_exchange->setObjectName(QStringLiteral("serving_moe_exchange"));
    m_exchange->addItem(QStringLiteral("all-to-all (DeepEP)"));
    m_exchange->addItem(QStringLiteral("gather (engine default)"));
    form->addRow(QStringLiteral("MoE exchange"), m_exchange);
    connect(m_exchange, &QComboBox::currentIndexChanged, this, [this] { read_exchange(); });
    return box;
}

QWidget* ServingControls::build_workload()
{
    auto* box = new QGroupBox(QStringLiteral("Workload"), this);
    auto* form = new QFormLayout(box);
    m_isl = token_box(box);
    m_osl = token_box(box);
    m_load_kind = new QComboBox(box);
    for (LoadKind k : kLoads)
        m_load_kind->addItem(load_name(k));
    m_load_value = new QDoubleSpinBox(box);
    m_load_value->setObjectName(QStringLiteral("serving_load"));
    m_load_value->setRange(1, kMaxLoad);
    m_load_value->setKeyboardTracking(false);
    m_ttft = slo_box(box);
    m_tpot = slo_box(box);
    form->addRow(QStringLiteral("Input tokens"), m_isl);
    form->addRow(QStringLiteral("Output tokens"), m_osl);
    form->addRow(QStringLiteral("Load"), m_load_kind);
    form->addRow(QStringLiteral("Value"), m_load_value);
    form->addRow(QStringLiteral("SLO: TTFT"), m_ttft);
    form->addRow(QStringLiteral("SLO: TPOT"), m_tpot);
    for (QSpinBox* b : { m_isl, m_osl })
        connect(b, &QSpinBox::valueChanged, this, [this] { read_workload(); });
    for (QDoubleSpinBox* b : { m_load_value, m_ttft, m_tpot })
        connect(b, &QDoubleSpinBox::valueChanged, this, [this] { read_workload(); });
    connect(m_load_kind, &QComboBox::currentIndexChanged, this, [this] { read_workload(); });
    return box;
}

QWidget* ServingControls::build_engine()
{
    auto* box = new QGroupBox(QStringLiteral("Engine and precision"), this);
    auto* form = new QFormLayout(box);
    m_engine = new QComboBox(box);
    for (ServingEngine e : kEngines)
        m_engine->addItem(QString::fromUtf8(to_string(e).data(), static_cast<int>(to_string(e).size())));
    m_weights = new QComboBox(box);
    m_kv = new QComboBox(box);
    for (Precision p : kPrecisions) {
        const QString name = QString::fromUtf8(to_string(p).data(), static_cast<int>(to_string(p).size()));
        m_weights->addItem(name);
        m_kv->addItem(name);
    }
    m_mixed_chunk = new QCheckBox(QStringLiteral("Prompts share steps with decodes"), box);
    m_mixed_chunk->setToolTip(QStringLiteral(
        "SGLang's --enable-mixed-chunk. Off (SGLang's default), a waiting prompt is prefilled in a step of its own "
        "before the running requests decode again, so a benchmark's requests of equal length stay in phase. "
        "vLLM and TensorRT-LLM always batch prompts with decodes."));
    form->addRow(QStringLiteral("Engine"), m_engine);
    form->addRow(QString(), m_mixed_chunk);
    form->addRow(QStringLiteral("Weights"), m_weights);
    form->addRow(QStringLiteral("KV cache"), m_kv);
    for (QComboBox* b : { m_engine, m_weights, m_kv })
        connect(b, &QComboBox::currentIndexChanged, this, [this] { read_engine(); });
    connect(m_mixed_chunk, &QCheckBox::toggled, this, [this] { read_engine(); });
    return box;
}

QWidget* ServingControls::build_speculative()
{
    auto* box = new QGroupBox(QStringLiteral("Speculative decoding"), this);
    auto* form = new QFormLayout(box);
    m_draft = new QComboBox(box);
    m_draft->setObjectName(QStringLiteral("serving_draft"));
    m_draft->addItem(QStringLiteral("off"));
    m_draft->addItem(QStringLiteral("MTP (the model's own layers)"));
    m_draft->addItem(QStringLiteral("EAGLE-3 draft head"));
    m_draft_tokens = new QSpinBox(box);
    m_draft_tokens->setRange(1, kMaxDraftTokens);
    m_draft_tokens->setKeyboardTracking(false);
    m_acceptance = new QDoubleSpinBox(box);
    m_acceptance->setDecimals(2);
    m_acceptance->setSingleStep(0.1);
    m_acceptance->setKeyboardTracking(false);
    m_acceptance->setSuffix(QStringLiteral(" tokens/step"));
    m_acceptance->setToolTip(QStringLiteral("Mean tokens a request gains per step (the engines' acceptance "
                                            "length): 1 when no draft token is kept, draft tokens + 1 when all are"));
    form->addRow(QStringLiteral("Draft"), m_draft);
    form->addRow(QStringLiteral("Draft tokens"), m_draft_tokens);
    form->addRow(QStringLiteral("Acceptance length"), m_acceptance);
    connect(m_draft, &QComboBox::currentIndexChanged, this, [this] { read_speculative(false); });
    connect(m_draft_tokens, &QSpinBox::valueChanged, this, [this] { read_speculative(false); });
    connect(m_acceptance, &QDoubleSpinBox::valueChanged, this, [this] { read_speculative(true); });
    return box;
}

void ServingControls::show_speculative()
{
    const auto& d = m_scenario.serving.speculative;
    m_draft->setCurrentIndex(!d ? 0 : d->draft == DraftKind::mtp ? 1 : 2);
    m_draft_tokens->setEnabled(d.has_value());
    m_acceptance->setEnabled(d.has_value());
    const int k = d ? d->draft_tokens : 1;
    m_draft_tokens->setValue(k);
    m_acceptance->setRange(1.0, 1.0 + k);
    m_acceptance->setValue(d ? d->tokens_per_step() : 1.0);
}

void ServingControls::read_speculative(bool acceptance_edited)
{
    if (m_updating)
        return;
    ServingScenario s = m_scenario;
    auto& d = s.serving.speculative;
    if (m_draft->currentIndex() == 0) {
        d.reset();
        emit_edit(s, QStringLiteral("speculative decoding off"));
        return;
    }
    if (!d) {
        d = SpeculativeDecoding {};
        d->acceptance_rate = kDefaultAcceptanceRate;
    }
    d->draft = m_draft->currentIndex() == 1 ? DraftKind::mtp : DraftKind::eagle;
    d->draft_tokens = m_draft_tokens->value();
    // A typed acceptance length replaces a rate; otherwise a rate stays a rate (it carries over to more
    // draft tokens) and a length is kept within what the draft can reach.
    if (acceptance_edited) {
        d->acceptance_rate.reset();
        d->acceptance_length = m_acceptance->value();
    } else if (d->acceptance_length) {
        d->acceptance_length = std::min(*d->acceptance_length, 1.0 + d->draft_tokens);
    }
    emit_edit(s, QStringLiteral("speculative decoding"));
}

void ServingControls::set_scenario(const ServingScenario& s)
{
    m_scenario = s;
    m_updating = true;
    show_degrees();
    show_exchange();
    show_workload();
    const ServingSpec& sv = s.serving;
    m_engine->setCurrentIndex(
        static_cast<int>(std::find(kEngines.begin(), kEngines.end(), sv.engine) - kEngines.begin()));
    const auto precision_index = [](Precision p) {
        return static_cast<int>(std::find(kPrecisions.begin(), kPrecisions.end(), p) - kPrecisions.begin());
    };
    m_weights->setCurrentIndex(precision_index(sv.precision.weights));
    m_kv->setCurrentIndex(precision_index(sv.precision.kv_cache));
    m_mixed_chunk->setEnabled(sv.engine == ServingEngine::sglang);
    m_mixed_chunk->setChecked(sv.engine != ServingEngine::sglang || sv.mixed_chunk.value_or(false));
    show_speculative();
    m_updating = false;
}

void ServingControls::show_degrees()
{
    const auto& dis = m_scenario.deployment.disaggregated;
    m_disaggregated->setVisible(dis.has_value());
    if (dis)
        m_disaggregated->setText(
            QStringLiteral("Disaggregated: prefill %1 × TP %2, decode %3 × TP %4. The sliders set an aggregated "
                           "deployment; pick one from the search or edit the pools in the file.")
                .arg(dis->prefill.workers)
                .arg(dis->prefill.layout.tp)
                .arg(dis->decode.workers)
                .arg(dis->decode.layout.tp));
    for (ServingDegree d : kDegrees) {
        const std::vector<ServingStop> stops = serving_degree_stops(m_scenario, d);
        m_sliders[d]->setEnabled(!dis && !stops.empty());
        m_sliders[d]->set_stops(slider_stops(stops), degree_of(m_scenario, d));
        m_degree_values[d]->setText(dis ? QStringLiteral("–") : QString::number(degree_of(m_scenario, d)));
    }
}

void ServingControls::show_exchange()
{
    const InstanceLayout& l = m_scenario.deployment.instance;
    const bool choice = !m_scenario.deployment.disaggregated && m_scenario.model.is_moe() && l.exchanges_moe_tokens();
    m_exchange->setEnabled(choice);
    m_exchange->setCurrentIndex(l.moe_exchange == MoeExchange::gather ? 1 : 0);
    m_exchange->setToolTip(choice
            ? QStringLiteral("How the MoE layers move tokens between attention-DP ranks: each token's routed rows "
                             "to their experts' ranks and back (DeepEP's kernels), or every rank gathering all "
                             "ranks' tokens and reduce-scattering the outputs (the engines' stock path)")
            : QStringLiteral("Only with attention DP and EP above 1 on an MoE model: otherwise every rank holds "
                             "the step's tokens and the MoE layer all-reduces"));
}

void ServingControls::read_exchange()
{
    if (m_updating)
        return;
    ServingScenario s = m_scenario;
    s.deployment.instance.moe_exchange
        = m_exchange->currentIndex() == 1 ? MoeExchange::gather : MoeExchange::all_to_all;
    emit_edit(s,
        QStringLiteral("MoE exchange ")
            + (m_exchange->currentIndex() == 1 ? QStringLiteral("gather") : QStringLiteral("all-to-all")));
}

void ServingControls::show_workload()
{
    const ServingWorkload& w = m_scenario.serving.workload;
    m_isl->setValue(static_cast<int>(w.isl));
    m_osl->setValue(static_cast<int>(w.osl));
    m_load_kind->setCurrentIndex(static_cast<int>(std::find(kLoads.begin(), kLoads.end(), w.load) - kLoads.begin()));
    m_load_value->setDecimals(w.load == LoadKind::request_rate ? 2 : 0);
    m_load_value->setEnabled(w.load != LoadKind::max_throughput);
    m_load_value->setValue(load_value(w));
    m_ttft->setValue(m_scenario.serving.slo.ttft_ms.value_or(0));
    m_tpot->setValue(m_scenario.serving.slo.tpot_ms.value_or(0));
}

void ServingControls::read_workload()
{
    if (m_updating)
        return;
    ServingScenario s = m_scenario;
    ServingWorkload& w = s.serving.workload;
    w.isl = m_isl->value();
    w.osl = m_osl->value();
    const LoadKind kind = kLoads[static_cast<std::size_t>(m_load_kind->currentIndex())];
    // A new kind starts from the value shown, so switching kinds never loses the number typed.
    const double value = m_load_value->value();
    w.load = kind;
    w.concurrency = kind == LoadKind::concurrency ? std::max(1LL, std::llround(value)) : 0;
    w.rounds = kind == LoadKind::concurrency ? w.rounds : 0;
    w.request_rate_qps = kind == LoadKind::request_rate ? value : 0;
    w.batch_size = kind == LoadKind::batch_size ? std::max(1LL, std::llround(value)) : 0;
    const auto slo = [](double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; };
    s.serving.slo.ttft_ms = slo(m_ttft->value());
    s.serving.slo.tpot_ms = slo(m_tpot->value());
    emit_edit(s, QStringLiteral("workload"));
}

void ServingControls::read_engine()
{
    if (m_updating)
        return;
    ServingScenario s = m_scenario;
    s.serving.engine = kEngines[static_cast<std::size_t>(m_engine->currentIndex())];
    s.serving.precision.weights = kPrecisions[static_cast<std::size_t>(m_weights->currentIndex())];
    s.serving.precision.kv_cache = kPrecisions[static_cast<std::size_t>(m_kv->currentIndex())];
    // Only SGLang has the choice; unchecked is its default, left out of the file.
    const bool was_sglang = m_scenario.serving.engine == ServingEngine::sglang;
    s.serving.mixed_chunk = s.serving.engine == ServingEngine::sglang && was_sglang && m_mixed_chunk->isChecked()
        ? std::optional<bool>(true)
        : std::nullopt;
    emit_edit(s, QStringLiteral("engine and precision"));
}

void ServingControls::emit_edit(const ServingScenario& s, const QString& what)
{
    set_scenario(s);
    emit edited(s, what);
}

} // namespace parallax::views
