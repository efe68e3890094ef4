#include "planner/scenario_forms.hpp"

#include "io/json_reader.hpp"
#include "io/preset_catalog.hpp"
#include "io/scenario_io.hpp"
#include "search/degree_snapping.hpp"
#include "spec/input_error.hpp"
#include "spec/strategy_rules.hpp"
#include "spec/units.hpp"
#include "style/view_style.hpp"
#include "viewdata/plan_evaluation.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

namespace parallax::views {

namespace {

using Kind = FormField::Kind;
const QString kCustom = QStringLiteral("(custom)");

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QStringList preset_names(PresetKind kind)
{
    QStringList out { kCustom };
    for (const std::string& n : PresetCatalog::standard().names(kind))
        out << QString::fromStdString(n);
    return out;
}

FormField integer(QString key, QString label, double min, double max, std::function<double(const Scenario&)> get,
    std::function<void(Scenario&, double)> set, QString section = {}, QString special = {}, QString unit = {})
{
    FormField f;
    f.key = std::move(key);
    f.label = std::move(label);
    f.kind = Kind::integer;
    f.min = min;
    f.max = max;
    f.section = std::move(section);
    f.special = std::move(special);
    f.unit = std::move(unit);
    f.get = [get](const Scenario& s) { return QVariant(get(s)); };
    f.set = [set](Scenario& s, const QVariant& v) { set(s, std::round(v.toDouble())); };
    return f;
}

FormField number(QString key, QString label, QString unit, double min, double max, int decimals,
    std::function<double(const Scenario&)> get, std::function<void(Scenario&, double)> set, QString section = {},
    QString special = {})
{
    FormField f = integer(std::move(key), std::move(label), min, max, std::move(get), {}, std::move(section),
        std::move(special), std::move(unit));
    f.kind = Kind::number;
    f.decimals = decimals;
    f.set = [set](Scenario& s, const QVariant& v) { set(s, v.toDouble()); };
    return f;
}

FormField boolean(QString key, QString label, std::function<bool(const Scenario&)> get,
    std::function<void(Scenario&, bool)> set, QString section = {})
{
    FormField f;
    f.key = std::move(key);
    f.label = std::move(label);
    f.kind = Kind::boolean;
    f.section = std::move(section);
    f.get = [get](const Scenario& s) { return QVariant(get(s)); };
    f.set = [set](Scenario& s, const QVariant& v) { set(s, v.toBool()); };
    return f;
}

FormField choice(QString key, QString label, std::function<QStringList(const Scenario&)> choices,
    std::function<QString(const Scenario&)> get, std::function<void(Scenario&, const QString&)> set,
    QString section = {})
{
    FormField f;
    f.key = std::move(key);
    f.label = std::move(label);
    f.kind = Kind::choice;
    f.section = std::move(section);
    f.choices = std::move(choices);
    f.get = [get](const Scenario& s) { return QVariant(get(s)); };
    f.set = [set](Scenario& s, const QVariant& v) { set(s, v.toString()); };
    return f;
}

FormField text(QString key, QString label, std::function<QString(const Scenario&)> get,
    std::function<void(Scenario&, const QString&)> set, QString section = {})
{
    FormField f = choice(std::move(key), std::move(label), {}, std::move(get), std::move(set), std::move(section));
    f.kind = Kind::text;
    return f;
}

QStringList fixed(std::initializer_list<const char*> items)
{
    QStringList out;
    for (const char* i : items)
        out << QString::fromLatin1(i);
    return out;
}

std::optional<std::pair<QString, QString>> error_of(const InputError& e)
{
    return std::make_pair(QString::fromStdString(e.key()), QString::fromStdString(e.rule()));
}

// Refits the strategy after the GPU count changed, so the plan stays a plan of this cluster.
void refit(Scenario& s)
{
    s.strategy = refit_to_gpus(plan_inputs(s), s.strategy);
}

// The preset's own references (its gpu and fabrics by name), so editing one part later keeps the others.
void adopt_cluster_preset(Scenario& s, const QString& name)
{
    const PresetCatalog& catalog = PresetCatalog::standard();
    s.cluster = resolve_cluster(nlohmann::json(name.toStdString()), "", "cluster", catalog, &s.refs);
    s.refs.cluster = name.toStdString();
    const PresetEntry* e = catalog.find(PresetKind::clusters, name.toStdString());
    auto ref = [&](const char* key) {
        return e && e->json.contains(key) && e->json[key].is_string() ? e->json[key].get<std::string>() : std::string();
    };
    s.refs.gpu = ref("gpu");
    s.refs.intra_node = ref("intra_node");
    s.refs.inter_node = ref("inter_node");
    refit(s);
}

// Model fields: editing one makes the model inline.
FormField model_int(const char* key, const char* label, double min, double max, long long ModelSpec::*field,
    QString section = {}, QString special = {})
{
    return integer(
        QStringLiteral("model.") + QString::fromLatin1(key), QString::fromLatin1(label), min, max,
        [field](const Scenario& s) { return static_cast<double>(s.model.*field); },
        [field](Scenario& s, double v) {
            s.model.*field = static_cast<long long>(v);
            s.refs.model.clear();
        },
        std::move(section), std::move(special));
}

FormField model_int(const char* key, const char* label, double min, double max, int ModelSpec::*field,
    QString section = {}, QString special = {})
{
    return integer(
        QStringLiteral("model.") + QString::fromLatin1(key), QString::fromLatin1(label), min, max,
        [field](const Scenario& s) { return static_cast<double>(s.model.*field); },
        [field](Scenario& s, double v) {
            s.model.*field = static_cast<int>(v);
            s.refs.model.clear();
        },
        std::move(section), std::move(special));
}

FormField mla_int(const char* key, const char* label, double min, int MlaSpec::*field)
{
    FormField f = integer(
        QStringLiteral("model.attention.") + QString::fromLatin1(key), QString::fromLatin1(label), min, 1e7,
        [field](const Scenario& s) { return s.model.mla ? static_cast<double>((*s.model.mla).*field) : 0.0; },
        [field](Scenario& s, double v) {
            if (!s.model.mla)
                s.model.mla = MlaSpec {};
            (*s.model.mla).*field = static_cast<int>(v);
            s.refs.model.clear();
        },
        QStringLiteral("Attention"));
    f.enabled = [](const Scenario& s) { return s.model.mla.has_value(); };
    return f;
}

MoeSpec& moe_of(Scenario& s)
{
    if (!s.model.moe) {
        MoeSpec e;
        e.experts = 8;
        e.top_k = 2;
        e.expert_ffn_hidden = s.model.ffn_hidden;
        s.model.moe = e;
    }
    s.refs.model.clear();
    return *s.model.moe;
}

FormField moe_int(const char* key, const char* label, double min, std::function<double(const MoeSpec&)> get,
    std::function<void(MoeSpec&, double)> set)
{
    FormField f = integer(
        QStringLiteral("model.moe.") + QString::fromLatin1(key), QString::fromLatin1(label), min, 1e7,
        [get](const Scenario& s) { return s.model.moe ? get(*s.model.moe) : 0.0; },
        [set](Scenario& s, double v) { set(moe_of(s), v); }, QStringLiteral("Mixture of experts"));
    f.enabled = [](const Scenario& s) { return s.model.is_moe(); };
    return f;
}

std::vector<FormField> gpu_fields()
{
    const QString sec = QStringLiteral("GPU");
    auto touch = [](Scenario& s) {
        s.refs.gpu.clear();
        s.refs.cluster.clear();
    };
    std::vector<FormField> f;
    f.push_back(choice(
        QStringLiteral("cluster.gpu"), QStringLiteral("GPU preset"),
        [](const Scenario&) { return preset_names(PresetKind::gpus); },
        [](const Scenario& s) { return s.refs.gpu.empty() ? kCustom : QString::fromStdString(s.refs.gpu); },
        [](Scenario& s, const QString& v) {
            if (v == kCustom) {
                s.refs.gpu.clear();
            } else {
                s.cluster.gpu = resolve_gpu(
                    nlohmann::json(v.toStdString()), "", "cluster.gpu", PresetCatalog::standard(), &s.refs.gpu);
            }
            s.refs.cluster.clear();
        },
        sec));
    f.push_back(text(
        QStringLiteral("cluster.gpu.name"), QStringLiteral("Name"),
        [](const Scenario& s) { return QString::fromStdString(s.cluster.gpu.name); },
        [touch](Scenario& s, const QString& v) {
            s.cluster.gpu.name = v.toStdString();
            touch(s);
        },
        sec));
    f.push_back(choice(
        QStringLiteral("cluster.gpu.architecture"), QStringLiteral("Architecture"),
        [](const Scenario&) {
            return fixed({ "generic", "volta", "ampere", "hopper", "blackwell", "cdna2", "cdna3" });
        },
        [](const Scenario& s) { return qs(to_string(s.cluster.gpu.architecture)); },
        [touch](Scenario& s, const QString& v) {
            architecture_from_string(v.toStdString(), s.cluster.gpu.architecture);
            touch(s);
        },
        sec));
    for (int i = 0; i < kPrecisionCount; ++i) {
        f.push_back(number(
            QStringLiteral("cluster.gpu.peak_TFLOPs.") + qs(kPrecisionNames[i]),
            QStringLiteral("Peak ") + qs(kPrecisionNames[i]), QStringLiteral("TFLOP/s"), 0, 1e7, 1,
            [i](const Scenario& s) { return s.cluster.gpu.peak_flops[i] / units::kTFLOP; },
            [i, touch](Scenario& s, double v) {
                s.cluster.gpu.peak_flops[i] = v * units::kTFLOP;
                touch(s);
            },
            sec, QStringLiteral("unsupported")));
    }
    auto gpu_number = [&](const char* key, const char* label, const char* unit, double min, double max, int decimals,
                          double GpuSpec::*field, double scale, QString special = {}) {
        f.push_back(number(
            QStringLiteral("cluster.gpu.") + QString::fromLatin1(key), QString::fromLatin1(label),
            QString::fromUtf8(unit), min, max, decimals,
            [field, scale](const Scenario& s) { return s.cluster.gpu.*field / scale; },
            [field, scale, touch](Scenario& s, double v) {
                s.cluster.gpu.*field = v * scale;
                touch(s);
            },
            sec, std::move(special)));
    };
    gpu_number("memory_GiB", "Memory", "GiB", 0.001, 1e6, 1, &GpuSpec::memory_bytes, units::kGiB);
    gpu_number("memory_bw_GBps", "Memory bandwidth", "GB/s", 0.001, 1e7, 0, &GpuSpec::memory_bw_Bps, units::kGB);
    gpu_number("tdp_W", "TDP", "W", 1, 1e5, 0, &GpuSpec::tdp_W, 1);
    gpu_number("idle_W", "Idle power", "W", 0, 1e5, 0, &GpuSpec::idle_W, 1);
    gpu_number("power_limit_W", "Power limit", "W", 0, 1e5, 0, &GpuSpec::power_limit_W, 1, QStringLiteral("TDP"));
    gpu_number("clock_MHz", "Clock", "MHz", 0, 1e5, 0, &GpuSpec::clock_MHz, 1, QStringLiteral("unknown"));
    f.push_back(integer(
        QStringLiteral("cluster.gpu.sm_count"), QStringLiteral("SMs / CUs"), 0, 100000,
        [](const Scenario& s) { return static_cast<double>(s.cluster.gpu.sm_count); },
        [touch](Scenario& s, double v) {
            s.cluster.gpu.sm_count = static_cast<int>(v);
            touch(s);
        },
        sec, QStringLiteral("unknown")));
    return f;
}

std::vector<FormField> fabric_fields(bool intra)
{
    const QString key = intra ? QStringLiteral("cluster.intra_node") : QStringLiteral("cluster.inter_node");
    const QString sec = intra ? QStringLiteral("Inside a node") : QStringLiteral("Between nodes");
    auto fabric = [intra](Scenario& s) -> FabricSpec& { return intra ? s.cluster.intra_node : s.cluster.inter_node; };
    auto cfabric = [intra](const Scenario& s) -> const FabricSpec& {
        return intra ? s.cluster.intra_node : s.cluster.inter_node;
    };
    auto ref = [intra](Scenario& s) -> std::string& { return intra ? s.refs.intra_node : s.refs.inter_node; };
    auto touch = [ref](Scenario& s) {
        ref(s).clear();
        s.refs.cluster.clear();
    };
    std::vector<FormField> f;
    f.push_back(choice(
        key, QStringLiteral("Fabric preset"), [](const Scenario&) { return preset_names(PresetKind::fabrics); },
        [intra](const Scenario& s) {
            const std::string& r = intra ? s.refs.intra_node : s.refs.inter_node;
            return r.empty() ? kCustom : QString::fromStdString(r);
        },
        [fabric, ref, key](Scenario& s, const QString& v) {
            if (v == kCustom)
                ref(s).clear();
            else
                fabric(s) = resolve_fabric(
                    nlohmann::json(v.toStdString()), "", key.toStdString(), PresetCatalog::standard(), &ref(s));
            s.refs.cluster.clear();
        },
        sec));
    f.push_back(choice(
        key + QStringLiteral(".kind"), QStringLiteral("Kind"),
        [](const Scenario&) {
            return fixed({ "unspecified", "nvlink", "nvswitch", "pcie", "xgmi", "ib", "roce", "tcp" });
        },
        [cfabric](const Scenario& s) { return qs(to_string(cfabric(s).kind)); },
        [fabric, touch](Scenario& s, const QString& v) {
            FabricKind k = FabricKind::unspecified;
            fabric_kind_from_string(v.toStdString(), k);
            fabric(s).kind = k;
            touch(s);
        },
        sec));
    f.push_back(number(
        key + QStringLiteral(".bw_GBps"), QStringLiteral("Bandwidth per GPU"), QStringLiteral("GB/s"), 0.001, 1e6, 1,
        [cfabric](const Scenario& s) { return cfabric(s).bw_Bps / units::kGB; },
        [fabric, touch](Scenario& s, double v) {
            fabric(s).bw_Bps = v * units::kGB;
            touch(s);
        },
        sec));
    f.push_back(number(
        key + QStringLiteral(".latency_us"), QStringLiteral("Latency per step"), QStringLiteral("µs"), 0, 1e6, 2,
        [cfabric](const Scenario& s) { return cfabric(s).latency_s / units::kMicrosecond; },
        [fabric, touch](Scenario& s, double v) {
            fabric(s).latency_s = v * units::kMicrosecond;
            touch(s);
        },
        sec));
    f.push_back(boolean(
        key + QStringLiteral(".rail_optimized"), QStringLiteral("Rail-optimised"),
        [cfabric](const Scenario& s) { return cfabric(s).rail_optimized; },
        [fabric, touch](Scenario& s, bool v) {
            fabric(s).rail_optimized = v;
            touch(s);
        },
        sec));
    f.push_back(number(
        key + QStringLiteral(".oversubscription"), QStringLiteral("Oversubscription"), QStringLiteral(": 1"), 1, 1000,
        2, [cfabric](const Scenario& s) { return cfabric(s).oversubscription; },
        [fabric, touch](Scenario& s, double v) {
            fabric(s).oversubscription = v;
            touch(s);
        },
        sec));
    return f;
}

// The preset, the name and the dense transformer's shape.
std::vector<FormField> model_shape_fields()
{
    std::vector<FormField> f;
    f.push_back(choice(
        QStringLiteral("model"), QStringLiteral("Model preset"),
        [](const Scenario&) { return preset_names(PresetKind::models); },
        [](const Scenario& s) { return s.refs.model.empty() ? kCustom : QString::fromStdString(s.refs.model); },
        [](Scenario& s, const QString& v) {
            if (v == kCustom)
                s.refs.model.clear();
            else
                s.model = resolve_model(
                    nlohmann::json(v.toStdString()), "", "model", PresetCatalog::standard(), &s.refs.model);
        }));
    f.push_back(text(
        QStringLiteral("model.name"), QStringLiteral("Name"),
        [](const Scenario& s) { return QString::fromStdString(s.model.name); },
        [](Scenario& s, const QString& v) {
            s.model.name = v.toStdString();
            s.refs.model.clear();
        }));
    f.push_back(model_int("layers", "Layers", 1, 100000, &ModelSpec::layers));
    f.push_back(model_int("hidden", "Hidden size", 1, 1e7, &ModelSpec::hidden));
    f.push_back(model_int("heads", "Attention heads", 1, 1e7, &ModelSpec::heads));
    f.push_back(model_int("kv_heads", "KV heads", 1, 1e7, &ModelSpec::kv_heads));
    f.push_back(model_int("ffn_hidden", "FFN hidden size", 1, 1e7, &ModelSpec::ffn_hidden));
    f.push_back(model_int("vocab", "Vocabulary", 1, 1e8, &ModelSpec::vocab));
    f.push_back(choice(
        QStringLiteral("model.ffn_act"), QStringLiteral("FFN activation"),
        [](const Scenario&) {
            return fixed({ "gelu", "swiglu" });
        },
        [](const Scenario& s) {
            return s.model.ffn_act == FfnActivation::swiglu ? QStringLiteral("swiglu") : QStringLiteral("gelu");
        },
        [](Scenario& s, const QString& v) {
            s.model.ffn_act = v == QStringLiteral("swiglu") ? FfnActivation::swiglu : FfnActivation::gelu;
            s.refs.model.clear();
        }));
    f.push_back(boolean(
        QStringLiteral("model.tied_embeddings"), QStringLiteral("Tied embeddings"),
        [](const Scenario& s) { return s.model.tied_embeddings; },
        [](Scenario& s, bool v) {
            s.model.tied_embeddings = v;
            s.refs.model.clear();
        }));
    f.push_back(choice(
        QStringLiteral("model.dropout"), QStringLiteral("Dropout"),
        [](const Scenario&) {
            return fixed({ "auto", "on", "off" });
        },
        [](const Scenario& s) {
            return !s.model.dropout ? QStringLiteral("auto")
                                    : (*s.model.dropout ? QStringLiteral("on") : QStringLiteral("off"));
        },
        [](Scenario& s, const QString& v) {
            if (v == QStringLiteral("auto"))
                s.model.dropout.reset();
            else
                s.model.dropout = v == QStringLiteral("on");
            s.refs.model.clear();
        }));
    f.push_back(integer(
        QStringLiteral("model.head_dim"), QStringLiteral("Head dimension"), 0, 65536,
        [](const Scenario& s) {
            return s.model.head_dim_override ? static_cast<double>(*s.model.head_dim_override) : 0.0;
        },
        [](Scenario& s, double v) {
            if (v <= 0)
                s.model.head_dim_override.reset();
            else
                s.model.head_dim_override = static_cast<int>(v);
            s.refs.model.clear();
        },
        {}, QStringLiteral("hidden / heads")));
    return f;
}

// Standard attention or MLA, and MLA's ranks and head dimensions.
std::vector<FormField> attention_fields()
{
    std::vector<FormField> f;
    f.push_back(choice(
        QStringLiteral("model.attention"), QStringLiteral("Attention"),
        [](const Scenario&) {
            return fixed({ "standard", "mla" });
        },
        [](const Scenario& s) { return s.model.mla ? QStringLiteral("mla") : QStringLiteral("standard"); },
        [](Scenario& s, const QString& v) {
            if (v == QStringLiteral("mla")) {
                if (!s.model.mla) {
                    // DeepSeek-V3's shape as a starting point (its config.json).
                    s.model.mla = MlaSpec { 1536, 512, 128, 64, 128 };
                }
            } else {
                s.model.mla.reset();
            }
            s.refs.model.clear();
        },
        QStringLiteral("Attention")));
    f.push_back(mla_int("q_lora_rank", "Query LoRA rank", 0, &MlaSpec::q_lora_rank));
    f.push_back(mla_int("kv_lora_rank", "KV LoRA rank", 1, &MlaSpec::kv_lora_rank));
    f.push_back(mla_int("qk_nope_head_dim", "QK no-RoPE head dim", 1, &MlaSpec::qk_nope_head_dim));
    f.push_back(mla_int("qk_rope_head_dim", "QK RoPE head dim", 0, &MlaSpec::qk_rope_head_dim));
    f.push_back(mla_int("v_head_dim", "V head dim", 1, &MlaSpec::v_head_dim));
    return f;
}

// Mixture of experts: the expert count (0: dense) and the routing shape.
std::vector<FormField> moe_fields()
{
    std::vector<FormField> f;
    FormField experts = integer(
        QStringLiteral("model.moe.experts"), QStringLiteral("Experts"), 0, 1e7,
        [](const Scenario& s) { return s.model.moe ? static_cast<double>(s.model.moe->experts) : 0.0; },
        [](Scenario& s, double v) {
            if (v <= 0) {
                s.model.moe.reset();
                s.strategy.ep = 1;
                s.refs.model.clear();
                return;
            }
            moe_of(s).experts = static_cast<int>(v);
        },
        QStringLiteral("Mixture of experts"), QStringLiteral("dense"));
    f.push_back(experts);
    f.push_back(moe_int(
        "top_k", "Experts per token", 1, [](const MoeSpec& m) { return static_cast<double>(m.top_k); },
        [](MoeSpec& m, double v) { m.top_k = static_cast<int>(v); }));
    f.push_back(moe_int(
        "expert_ffn_hidden", "Expert FFN hidden", 1,
        [](const MoeSpec& m) { return static_cast<double>(m.expert_ffn_hidden); },
        [](MoeSpec& m, double v) { m.expert_ffn_hidden = static_cast<long long>(v); }));
    f.push_back(moe_int(
        "shared_experts", "Shared experts", 0, [](const MoeSpec& m) { return static_cast<double>(m.shared_experts); },
        [](MoeSpec& m, double v) { m.shared_experts = static_cast<int>(v); }));
    f.push_back(moe_int(
        "moe_layer_freq", "MoE every k-th layer", 1,
        [](const MoeSpec& m) { return static_cast<double>(m.moe_layer_freq); },
        [](MoeSpec& m, double v) { m.moe_layer_freq = static_cast<int>(v); }));
    f.push_back(moe_int(
        "first_dense_layers", "First dense layers", 0,
        [](const MoeSpec& m) { return static_cast<double>(m.first_dense_layers); },
        [](MoeSpec& m, double v) { m.first_dense_layers = static_cast<int>(v); }));
    FormField capacity = number(
        QStringLiteral("model.moe.capacity_factor"), QStringLiteral("Capacity factor"), QString(), 0, 1e4, 2,
        [](const Scenario& s) {
            return s.model.moe && s.model.moe->capacity_factor ? *s.model.moe->capacity_factor : 0.0;
        },
        [](Scenario& s, double v) {
            if (v <= 0)
                moe_of(s).capacity_factor.reset();
            else
                moe_of(s).capacity_factor = v;
        },
        QStringLiteral("Mixture of experts"), QStringLiteral("dropless"));
    capacity.enabled = [](const Scenario& s) { return s.model.is_moe(); };
    f.push_back(capacity);
    return f;
}

void append(std::vector<FormField>& to, std::vector<FormField> fields)
{
    for (FormField& field : fields)
        to.push_back(std::move(field));
}

// The run itself: description, batch, sequence, precision, kernels and framework.
std::vector<FormField> training_run_fields()
{
    std::vector<FormField> f;
    f.push_back(text(
        QStringLiteral("description"), QStringLiteral("Description"),
        [](const Scenario& s) { return QString::fromStdString(s.description); },
        [](Scenario& s, const QString& v) { s.description = v.toStdString(); }));
    f.push_back(integer(
        QStringLiteral("training.global_batch"), QStringLiteral("Global batch"), 1, 1e9,
        [](const Scenario& s) { return static_cast<double>(s.training.global_batch); },
        [](Scenario& s, double v) { s.training.global_batch = static_cast<long long>(v); }, {}, {},
        QStringLiteral("sequences")));
    f.push_back(integer(
        QStringLiteral("training.seq_len"), QStringLiteral("Sequence length"), 1, 4294967296.0,
        [](const Scenario& s) { return static_cast<double>(s.training.seq_len); },
        [](Scenario& s, double v) { s.training.seq_len = static_cast<long long>(v); }, {}, {},
        QStringLiteral("tokens")));
    f.push_back(choice(
        QStringLiteral("training.precision"), QStringLiteral("Precision"),
        [](const Scenario&) {
            return fixed({ "fp32", "tf32", "bf16", "fp16", "fp8", "fp4" });
        },
        [](const Scenario& s) { return qs(to_string(s.training.precision)); },
        [](Scenario& s, const QString& v) {
            if (auto p = precision_from_string(v.toStdString()))
                s.training.precision = *p;
        }));
    f.push_back(boolean(
        QStringLiteral("training.flash_attention"), QStringLiteral("Flash attention"),
        [](const Scenario& s) { return s.training.flash_attention; },
        [](Scenario& s, bool v) { s.training.flash_attention = v; }));
    f.push_back(boolean(
        QStringLiteral("training.grad_reduce_in_fp32"), QStringLiteral("Reduce gradients in fp32"),
        [](const Scenario& s) { return s.training.grad_reduce_in_fp32; },
        [](Scenario& s, bool v) { s.training.grad_reduce_in_fp32 = v; }));
    f.push_back(boolean(
        QStringLiteral("training.grad_reduce_in_bf16"), QStringLiteral("Gradients in bf16 (Megatron)"),
        [](const Scenario& s) { return s.training.grad_reduce_in_bf16; },
        [](Scenario& s, bool v) { s.training.grad_reduce_in_bf16 = v; }));
    f.push_back(choice(
        QStringLiteral("training.framework"), QStringLiteral("Framework"),
        [](const Scenario&) {
            return fixed({ "megatron", "torchtitan", "torchtitan-compile", "megatron-deepspeed" });
        },
        [](const Scenario& s) { return qs(to_string(s.training.framework)); },
        [](Scenario& s, const QString& v) { framework_from_string(v.toStdString(), s.training.framework); }));
    f.push_back(choice(
        QStringLiteral("training.fp8_scaling"), QStringLiteral("fp8 scaling"),
        [](const Scenario&) {
            return fixed({ "tensorwise", "delayed", "rowwise", "mxfp8", "blockwise" });
        },
        [](const Scenario& s) { return qs(to_string(s.training.fp8_scaling)); },
        [](Scenario& s, const QString& v) {
            if (auto k = fp8_scaling_from_string(v.toStdString()))
                s.training.fp8_scaling = *k;
        }));
    f.push_back(choice(
        QStringLiteral("training.cuda_graphs"), QStringLiteral("CUDA graphs"),
        [](const Scenario&) {
            return fixed({ "none", "layers", "full-iteration" });
        },
        [](const Scenario& s) {
            switch (s.training.cuda_graphs) {
            case CudaGraphs::layers:
                return QStringLiteral("layers");
            case CudaGraphs::full_iteration:
                return QStringLiteral("full-iteration");
            case CudaGraphs::none:
                break;
            }
            return QStringLiteral("none");
        },
        [](Scenario& s, const QString& v) {
            s.training.cuda_graphs = v == QLatin1String("layers") ? CudaGraphs::layers
                : v == QLatin1String("full-iteration")            ? CudaGraphs::full_iteration
                                                                  : CudaGraphs::none;
        }));
    return f;
}

// MoE routing settings (enabled for MoE models) and the training length.
std::vector<FormField> training_moe_and_length_fields()
{
    std::vector<FormField> f;
    const QString moe = QStringLiteral("Mixture of experts");
    FormField dispatcher = choice(
        QStringLiteral("training.moe_dispatcher"), QStringLiteral("Token dispatcher"),
        [](const Scenario&) {
            return fixed({ "all-to-all", "deepep" });
        },
        [](const Scenario& s) {
            return s.training.moe_dispatcher == MoeDispatcher::deepep ? QStringLiteral("deepep")
                                                                      : QStringLiteral("all-to-all");
        },
        [](Scenario& s, const QString& v) {
            s.training.moe_dispatcher
                = v == QLatin1String("deepep") ? MoeDispatcher::deepep : MoeDispatcher::all_to_all;
        },
        moe);
    dispatcher.enabled = [](const Scenario& s) { return s.model.is_moe(); };
    f.push_back(dispatcher);
    FormField imbalance = number(
        QStringLiteral("training.moe_imbalance"), QStringLiteral("Router imbalance"), QStringLiteral("x mean"), 1, 1e4,
        2, [](const Scenario& s) { return s.training.moe_imbalance; },
        [](Scenario& s, double v) { s.training.moe_imbalance = v; }, moe);
    imbalance.enabled = [](const Scenario& s) { return s.model.is_moe() && s.training.moe_expert_load.empty(); };
    f.push_back(imbalance);
    f.push_back(number(
        QStringLiteral("training.tokens_to_train"), QStringLiteral("Tokens to train"), QStringLiteral("B tokens"), 0,
        1e9, 1, [](const Scenario& s) { return s.training.tokens_to_train ? *s.training.tokens_to_train / 1e9 : 0.0; },
        [](Scenario& s, double v) {
            if (v <= 0)
                s.training.tokens_to_train.reset();
            else
                s.training.tokens_to_train = v * 1e9;
        },
        {}, QStringLiteral("not set")));
    return f;
}

// Clocks, the power cap and the inlet temperature.
std::vector<FormField> power_fields()
{
    std::vector<FormField> f;
    const QString power = QStringLiteral("Power and DVFS");
    f.push_back(number(
        QStringLiteral("training.clock_MHz"), QStringLiteral("GPU clock"), QStringLiteral("MHz"), 0, 1e5, 0,
        [](const Scenario& s) { return s.training.clock_MHz; }, [](Scenario& s, double v) { s.training.clock_MHz = v; },
        power, QStringLiteral("nominal")));
    f.push_back(text(
        QStringLiteral("training.stage_clock_MHz"), QStringLiteral("Clock per stage (MHz)"),
        [](const Scenario& s) {
            QStringList parts;
            for (double v : s.training.stage_clock_MHz)
                parts << QString::number(v, 'g', 6);
            return parts.join(QStringLiteral(", "));
        },
        [](Scenario& s, const QString& v) {
            s.training.stage_clock_MHz.clear();
            for (const QString& part : v.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                bool ok = false;
                const double mhz = part.trimmed().toDouble(&ok);
                if (!ok)
                    throw InputError("", "training.stage_clock_MHz",
                        "takes clocks in MHz separated by commas, got \"" + part.toStdString() + "\"");
                s.training.stage_clock_MHz.push_back(mhz);
            }
        },
        power));
    f.push_back(number(
        QStringLiteral("training.power_cap_W"), QStringLiteral("Power cap"), QStringLiteral("W"), 0, 1e5, 0,
        [](const Scenario& s) { return s.training.power_cap_W; },
        [](Scenario& s, double v) { s.training.power_cap_W = v; }, power, QStringLiteral("TDP")));
    f.push_back(number(
        QStringLiteral("training.inlet_temp_C"), QStringLiteral("Inlet temperature"), QStringLiteral("°C"), 0, 70, 1,
        [](const Scenario& s) { return s.training.inlet_temp_C.value_or(0.0); },
        [](Scenario& s, double v) {
            if (v <= 0)
                s.training.inlet_temp_C.reset();
            else
                s.training.inlet_temp_C = v;
        },
        power, QStringLiteral("default (25 °C)")));
    return f;
}

// The strategy keys the search keeps fixed, edited as a JSON object such as {"tp": 8}.
FormField search_fix_field()
{
    return text(
        QStringLiteral("search.fix"), QStringLiteral("Keep fixed (JSON)"),
        [](const Scenario& s) {
            if (!s.search || s.search->fix.empty())
                return QString();
            nlohmann::json j = nlohmann::json::object();
            for (const auto& [k, v] : s.search->fix) {
                try {
                    j[k] = nlohmann::json::parse(v);
                } catch (const nlohmann::json::exception&) {
                    j[k] = v;
                }
            }
            return QString::fromStdString(j.dump());
        },
        [](Scenario& s, const QString& v) {
            if (!s.search)
                s.search = SearchSpec {};
            s.search->fix.clear();
            if (v.trimmed().isEmpty())
                return;
            const nlohmann::json j = parse_json_text(v.toStdString(), "search.fix");
            if (!j.is_object())
                throw InputError("", "search.fix", "must be an object such as {\"tp\": 8}");
            parse_strategy(j, "", "search.fix", Strategy {});
            for (auto it = j.begin(); it != j.end(); ++it)
                s.search->fix[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
        },
        QStringLiteral("Search"));
}

// The search's objective, limits and fixed keys.
std::vector<FormField> search_fields()
{
    std::vector<FormField> f;
    const QString sec = QStringLiteral("Search");
    f.push_back(choice(
        QStringLiteral("search.objective"), QStringLiteral("Objective"),
        [](const Scenario&) {
            return fixed({ "throughput", "time_to_train", "energy" });
        },
        [](const Scenario& s) {
            return s.search ? QString::fromStdString(s.search->objective) : QStringLiteral("throughput");
        },
        [](Scenario& s, const QString& v) {
            if (!s.search)
                s.search = SearchSpec {};
            s.search->objective = v.toStdString();
        },
        sec));
    f.push_back(number(
        QStringLiteral("search.limits.memory_headroom"), QStringLiteral("Memory headroom"), QStringLiteral("%"), 0, 99,
        0,
        [](const Scenario& s) {
            return s.search && s.search->min_memory_headroom_fraction ? *s.search->min_memory_headroom_fraction * 100
                                                                      : 0.0;
        },
        [](Scenario& s, double v) {
            if (!s.search)
                s.search = SearchSpec {};
            if (v <= 0)
                s.search->min_memory_headroom_fraction.reset();
            else
                s.search->min_memory_headroom_fraction = v / 100;
        },
        sec, QStringLiteral("none")));
    f.push_back(integer(
        QStringLiteral("search.limits.max_gpus"), QStringLiteral("At most"), 0, 1e9,
        [](const Scenario& s) {
            return s.search && s.search->max_gpus ? static_cast<double>(*s.search->max_gpus) : 0.0;
        },
        [](Scenario& s, double v) {
            if (!s.search)
                s.search = SearchSpec {};
            if (v <= 0)
                s.search->max_gpus.reset();
            else
                s.search->max_gpus = static_cast<long long>(v);
        },
        sec, QStringLiteral("all GPUs"), QStringLiteral("GPUs")));
    f.push_back(number(
        QStringLiteral("search.limits.power_budget_kW"), QStringLiteral("Power budget"), QStringLiteral("kW"), 0, 1e9,
        1, [](const Scenario& s) { return s.search && s.search->power_budget_kW ? *s.search->power_budget_kW : 0.0; },
        [](Scenario& s, double v) {
            if (!s.search)
                s.search = SearchSpec {};
            if (v <= 0)
                s.search->power_budget_kW.reset();
            else
                s.search->power_budget_kW = v;
        },
        sec, QStringLiteral("none")));
    f.push_back(number(
        QStringLiteral("search.limits.max_slowdown"), QStringLiteral("Energy: within"), QStringLiteral("% of fastest"),
        0, 1000, 1,
        [](const Scenario& s) { return s.search && s.search->max_slowdown ? *s.search->max_slowdown * 100 : 0.0; },
        [](Scenario& s, double v) {
            if (!s.search)
                s.search = SearchSpec {};
            if (v <= 0)
                s.search->max_slowdown.reset();
            else
                s.search->max_slowdown = v / 100;
        },
        sec, QStringLiteral("any time")));
    f.push_back(search_fix_field());
    return f;
}

} // namespace

ScenarioForm::ScenarioForm(
    std::vector<FormField> fields, FormValidator validate, QStringList rule_prefixes, QWidget* parent)
    : QWidget(parent)
    , m_validate(std::move(validate))
    , m_rule_prefixes(std::move(rule_prefixes))
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* inner = new QWidget(scroll);
    auto* layout = new QVBoxLayout(inner);
    layout->setContentsMargins(6, 6, 6, 6);
    scroll->setWidget(inner);
    outer->addWidget(scroll);

    std::map<QString, QFormLayout*> sections;
    auto form_of = [&](const QString& section) {
        auto it = sections.find(section);
        if (it != sections.end())
            return it->second;
        QFormLayout* form = nullptr;
        if (section.isEmpty()) {
            form = new QFormLayout;
            layout->addLayout(form);
        } else {
            auto* box = new QGroupBox(section, inner);
            form = new QFormLayout(box);
            layout->addWidget(box);
        }
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        sections[section] = form;
        return form;
    };

    m_rows.reserve(fields.size());
    for (FormField& f : fields) {
        Row r;
        r.field = std::move(f);
        QFormLayout* form = form_of(r.field.section);
        QWidget* parent_widget = form->parentWidget() ? form->parentWidget() : inner;
        const int index = static_cast<int>(m_rows.size());
        switch (r.field.kind) {
        case Kind::integer:
        case Kind::number: {
            auto* box = new QDoubleSpinBox(parent_widget);
            box->setDecimals(r.field.kind == Kind::integer ? 0 : r.field.decimals);
            box->setRange(r.field.min, r.field.max);
            box->setKeyboardTracking(false);
            box->setAccelerated(true);
            if (!r.field.unit.isEmpty())
                box->setSuffix(QStringLiteral(" ") + r.field.unit);
            if (!r.field.special.isEmpty())
                box->setSpecialValueText(r.field.special);
            connect(box, &QDoubleSpinBox::valueChanged, this, [this, index] { commit(index); });
            r.editor = box;
            break;
        }
        case Kind::boolean: {
            auto* box = new QCheckBox(parent_widget);
            connect(box, &QCheckBox::toggled, this, [this, index] { commit(index); });
            r.editor = box;
            break;
        }
        case Kind::choice: {
            auto* box = new QComboBox(parent_widget);
            connect(box, &QComboBox::activated, this, [this, index] { commit(index); });
            r.editor = box;
            break;
        }
        case Kind::text: {
            auto* edit = new QLineEdit(parent_widget);
            connect(edit, &QLineEdit::editingFinished, this, [this, index] { commit(index); });
            r.editor = edit;
            break;
        }
        }
        r.editor->setObjectName(r.field.key);
        r.editor->setToolTip(QStringLiteral("<code>") + r.field.key + QStringLiteral("</code>")
            + (r.field.unit.isEmpty() ? QString() : QStringLiteral(" in ") + r.field.unit));
        r.message = new QLabel(parent_widget);
        r.message->setWordWrap(true);
        r.message->setTextFormat(Qt::RichText);
        r.message->hide();
        auto* cell = new QWidget(parent_widget);
        auto* v = new QVBoxLayout(cell);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(1);
        r.editor->setParent(cell);
        r.message->setParent(cell);
        v->addWidget(r.editor);
        v->addWidget(r.message);
        form->addRow(r.field.label, cell);
        m_rows.push_back(std::move(r));
    }
    layout->addStretch(1);
}

QStringList ScenarioForm::keys() const
{
    QStringList out;
    for (const Row& r : m_rows)
        out << r.field.key;
    return out;
}

QWidget* ScenarioForm::field_widget(const QString& key) const
{
    for (const Row& r : m_rows)
        if (r.field.key == key)
            return r.editor;
    return nullptr;
}

QString ScenarioForm::field_message(const QString& key) const
{
    for (const Row& r : m_rows)
        if (r.field.key == key && !r.message->isHidden())
            return r.message->text();
    return {};
}

void ScenarioForm::show_value(Row& r)
{
    const QVariant v = r.field.get(*m_scenario);
    switch (r.field.kind) {
    case Kind::integer:
    case Kind::number:
        static_cast<QDoubleSpinBox*>(r.editor)->setValue(v.toDouble());
        break;
    case Kind::boolean:
        static_cast<QCheckBox*>(r.editor)->setChecked(v.toBool());
        break;
    case Kind::choice: {
        auto* box = static_cast<QComboBox*>(r.editor);
        const QStringList items = r.field.choices(*m_scenario);
        QStringList current;
        for (int i = 0; i < box->count(); ++i)
            current << box->itemText(i);
        if (current != items) {
            box->clear();
            box->addItems(items);
        }
        box->setCurrentIndex(box->findText(v.toString()));
        break;
    }
    case Kind::text:
        static_cast<QLineEdit*>(r.editor)->setText(v.toString());
        break;
    }
    r.editor->setEnabled(!r.field.enabled || r.field.enabled(*m_scenario));
}

QVariant ScenarioForm::value_of(const Row& r) const
{
    switch (r.field.kind) {
    case Kind::integer:
    case Kind::number:
        return static_cast<QDoubleSpinBox*>(r.editor)->value();
    case Kind::boolean:
        return static_cast<QCheckBox*>(r.editor)->isChecked();
    case Kind::choice:
        return static_cast<QComboBox*>(r.editor)->currentText();
    case Kind::text:
        return static_cast<QLineEdit*>(r.editor)->text();
    }
    return {};
}

void ScenarioForm::clear_messages()
{
    for (Row& r : m_rows) {
        r.message->clear();
        r.message->hide();
    }
}

void ScenarioForm::show_message(const QString& key, const QString& text, bool hard)
{
    const bool dark = is_dark(palette());
    const QColor colour = hard ? bad_colour(dark) : QColor(dark ? 0xffc466 : 0xa35a00);
    // The field with this key, else the one with the longest key that prefixes it.
    Row* target = nullptr;
    for (Row& r : m_rows)
        if (r.field.key == key
            || (key.startsWith(r.field.key + u'.') && (!target || r.field.key.size() > target->field.key.size())))
            target = &r;
    if (!target)
        return;
    const QString line = QStringLiteral("<span style='color:%1'>%2</span>").arg(colour.name(), text.toHtmlEscaped());
    target->message->setText(
        target->message->text().isEmpty() ? line : target->message->text() + QStringLiteral("<br>") + line);
    target->message->show();
}

void ScenarioForm::set_scenario(const Scenario& s)
{
    m_scenario = s;
    m_updating = true;
    for (Row& r : m_rows)
        show_value(r);
    m_updating = false;
    clear_messages();
    // Rules of the plan that these fields take part in (e.g. training.global_batch).
    const PlanInputs in = plan_inputs(*m_scenario);
    for (Rule rule : all_violations(in, m_scenario->strategy)) {
        const QString key = QString::fromLatin1(rule_key(rule, m_scenario->strategy));
        for (const QString& prefix : m_rule_prefixes)
            if (key.startsWith(prefix))
                show_message(key,
                    QStringLiteral("Plan rule: ") + QString::fromStdString(explain(rule, in, m_scenario->strategy)),
                    false);
    }
}

void ScenarioForm::commit(int index)
{
    if (m_updating || !m_scenario)
        return;
    Row& r = m_rows[static_cast<std::size_t>(index)];
    const QVariant v = value_of(r);
    Scenario next = *m_scenario;
    try {
        r.field.set(next, v);
    } catch (const InputError& e) {
        clear_messages();
        show_message(r.field.key, QString::fromStdString(e.rule()), true);
        return;
    }
    if (m_validate) {
        if (auto problem = m_validate(next)) {
            clear_messages();
            show_message(problem->first, problem->second, true);
            // A problem reported for a key this form does not show lands on the edited field.
            if (field_message(problem->first).isEmpty() && r.message->isHidden())
                show_message(r.field.key, problem->first + QStringLiteral(": ") + problem->second, true);
            return;
        }
    }
    QString shown = v.toString();
    if (r.field.kind == Kind::integer)
        shown = QString::number(static_cast<long long>(std::llround(v.toDouble())));
    emit edit_requested(next, r.field.label + QStringLiteral(" ") + shown, 0);
}

ScenarioForm* make_model_editor(QWidget* parent)
{
    std::vector<FormField> f;
    append(f, model_shape_fields());
    append(f, attention_fields());
    append(f, moe_fields());
    FormValidator validate = [](const Scenario& s) -> std::optional<std::pair<QString, QString>> {
        try {
            parse_model(model_to_json(s.model), "", "model");
        } catch (const InputError& e) {
            return error_of(e);
        }
        return std::nullopt;
    };
    return new ScenarioForm(std::move(f), validate, { QStringLiteral("model") }, parent);
}

ScenarioForm* make_cluster_editor(QWidget* parent)
{
    std::vector<FormField> f;
    f.push_back(choice(
        QStringLiteral("cluster"), QStringLiteral("Cluster preset"),
        [](const Scenario&) { return preset_names(PresetKind::clusters); },
        [](const Scenario& s) { return s.refs.cluster.empty() ? kCustom : QString::fromStdString(s.refs.cluster); },
        [](Scenario& s, const QString& v) {
            if (v == kCustom)
                s.refs.cluster.clear();
            else
                adopt_cluster_preset(s, v);
        }));
    f.push_back(text(
        QStringLiteral("cluster.name"), QStringLiteral("Name"),
        [](const Scenario& s) { return QString::fromStdString(s.cluster.name); },
        [](Scenario& s, const QString& v) {
            s.cluster.name = v.toStdString();
            s.refs.cluster.clear();
        }));
    f.push_back(integer(
        QStringLiteral("cluster.nodes"), QStringLiteral("Nodes"), 1, 1e6,
        [](const Scenario& s) { return static_cast<double>(s.cluster.nodes); },
        [](Scenario& s, double v) {
            s.cluster.nodes = static_cast<int>(v);
            s.refs.cluster.clear();
            refit(s);
        }));
    f.push_back(integer(
        QStringLiteral("cluster.gpus_per_node"), QStringLiteral("GPUs per node"), 1, 4096,
        [](const Scenario& s) { return static_cast<double>(s.cluster.gpus_per_node); },
        [](Scenario& s, double v) {
            s.cluster.gpus_per_node = static_cast<int>(v);
            s.refs.cluster.clear();
            refit(s);
        }));
    for (FormField& g : gpu_fields())
        f.push_back(std::move(g));
    for (FormField& g : fabric_fields(true))
        f.push_back(std::move(g));
    for (FormField& g : fabric_fields(false))
        f.push_back(std::move(g));
    FormValidator validate = [](const Scenario& s) -> std::optional<std::pair<QString, QString>> {
        try {
            parse_gpu(gpu_to_json(s.cluster.gpu), "", "cluster.gpu");
            parse_fabric(fabric_to_json(s.cluster.intra_node), "", "cluster.intra_node");
            parse_fabric(fabric_to_json(s.cluster.inter_node), "", "cluster.inter_node");
        } catch (const InputError& e) {
            return error_of(e);
        }
        return std::nullopt;
    };
    return new ScenarioForm(std::move(f), validate, { QStringLiteral("cluster") }, parent);
}

ScenarioForm* make_training_editor(QWidget* parent)
{
    std::vector<FormField> f;
    append(f, training_run_fields());
    append(f, training_moe_and_length_fields());
    append(f, power_fields());
    append(f, search_fields());
    FormValidator validate = [](const Scenario& s) -> std::optional<std::pair<QString, QString>> {
        try {
            check_power_settings(s, "");
        } catch (const InputError& e) {
            return error_of(e);
        }
        return std::nullopt;
    };
    return new ScenarioForm(
        std::move(f), validate, { QStringLiteral("training"), QStringLiteral("description") }, parent);
}

} // namespace parallax::views
