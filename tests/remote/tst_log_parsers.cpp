// The training-log parsers against every real log in tests/data/logs (the values index.json says a
// correct parser must read) and against hand-made edge cases.
#include "log_parse/step_table.hpp"
#include "log_parse/text_scan.hpp"
#include "log_parse/training_log_parser.hpp"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

using namespace parallax::remote;
using nlohmann::json;

namespace {

const std::string kFixtureDir = PARALLAX_SOURCE_DIR "/tests/data/logs/";

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

json fixture_index()
{
    return json::parse(read_file(kFixtureDir + "index.json"));
}

const json* index_entry(const json& index, const std::string& file)
{
    for (const auto& e : index) {
        if (e.at("file").get<std::string>() == file)
            return &e;
    }
    return nullptr;
}

QString fmt(LogFormat f)
{
    return QString::fromUtf8(log_format_name(f).data(), qsizetype(log_format_name(f).size()));
}

// A string of exactly the bytes of a literal, embedded NULs included.
template <std::size_t N> std::string bytes(const char (&literal)[N])
{
    return std::string(literal, N - 1);
}

const StepRecord* find_step(const ParsedLog& log, std::int64_t step)
{
    for (const auto& s : log.steps) {
        if (s.step == step)
            return &s;
    }
    return nullptr;
}

// Values are converted from the printed decimal text, so they match to rounding.
bool close(double got, double want)
{
    return std::abs(got - want) <= 1e-9 * std::max(1.0, std::abs(want));
}

QByteArray describe(const std::string& what, std::int64_t step, const std::optional<double>& got, double want)
{
    std::ostringstream ss;
    ss.precision(17);
    ss << what << " at step " << step << ": got ";
    if (got)
        ss << *got;
    else
        ss << "(absent)";
    ss << ", want " << want;
    return QByteArray::fromStdString(ss.str());
}

#define EXPECT_VALUE(got, want, what, step)                                                                            \
    QVERIFY2((got) && close(*(got), (want)), describe((what), (step), (got), (want)).constData())

#define EXPECT_ABSENT(got, what)                                                                                       \
    QVERIFY2(!(got), (std::string(what) + " should be absent, got " + std::to_string((got).value_or(0))).c_str())

std::optional<double> median(std::vector<double> v)
{
    if (v.empty())
        return std::nullopt;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// "487.61 ms" -> 0.48761 (the DeepSpeed profiler's latency text).
double seconds_from(const std::string& text)
{
    std::size_t n = 0;
    const double v = std::stod(text, &n);
    const std::string unit(text::trim(std::string_view(text).substr(n)));
    if (unit == "ms")
        return v / 1e3;
    if (unit == "us")
        return v / 1e6;
    if (unit == "s")
        return v;
    throw std::runtime_error("unknown latency unit in '" + text + "'");
}

double tflops_from(const std::string& text)
{
    std::size_t n = 0;
    const double v = std::stod(text, &n);
    const std::string unit(text::trim(std::string_view(text).substr(n)));
    if (unit == "TFLOPS")
        return v;
    if (unit == "GFLOPS")
        return v / 1e3;
    throw std::runtime_error("unknown FLOPS unit in '" + text + "'");
}

// Keys of index.json whose values are not parse-log output (learning rate, batch sizes, line numbers,
// string copies of numbers checked elsewhere...). Every other key must be checked below, so a new kind
// of expectation in a new fixture makes this test fail until it is checked.
const std::set<std::string> kNotParsedKeys {
    "line",
    "train_iters",
    "learning_rate",
    "global_batch_size",
    "consumed_samples",
    "consumed_tokens",
    "loss_scale",
    "skipped_iterations",
    "nan_iterations",
    "grad_norm",
    "lm_loss",
    "rank_prefix",
    "srun_label_prefix",
    "timestamp",
    "memory_pct",
    "has_ansi",
    "total_steps",
    "progress_pct",
    "total_parameters_b",
    "n_step_lines",
    "file_line_count",
    "file_has_ansi_escapes",
    "step_time_note",
    "_conventions",
    "has_profile_header",
};

QByteArray unchecked(const std::string& where, const std::string& key)
{
    return QByteArray::fromStdString("index.json has '" + where + "." + key + "', which this test does not check yet");
}

} // namespace

class TestLogParsers : public QObject {
    Q_OBJECT

private:
    void check_megatron(const json& expected, const ParsedLog& log);
    void check_torchtitan(const json& expected, const ParsedLog& log);
    void check_deepspeed(const json& expected, const ParsedLog& log);
    void check_summary(const json& summary, const ParsedLog& log, const std::string& file);

private slots:
    void everyLogHasAnIndexEntry();
    void fixture_data();
    void fixture();

    void partialLastLineDropsTheCutField();
    void crlfLineEnds();
    void ansiColoursAreStripped();
    void duplicateRanksAppearOnce();
    void mfuNotAvailable();
    void validationLinesAreNotSteps();
    void thousandsSeparators();
    void garbageAndBinaryInterleaved();
    void megatronSecondsEnergyAndTgs();
    void megatronLogEnergyFixture();
    void megatronHardWrappedWithCrlf();
    void megatronRunTogetherMemoryReports();
    void deepspeedTimerLinesGiveStepTimeFromTimestamps();
    void deepspeedOlderTimerSpellings();
    void deepspeedPipelineStepLines();
    void probeRecords();
    void probeIgnoresBrokenRecords();
    void autoDetectPrefersMegatronOverItsDeepSpeedLines();
    void nothingRecognised();
    void explicitFormatReadsOnlyThatFormat();
    void chunkingDoesNotMatter();
    void summaryRules();
    void formatNames();
    void numberParsing();
};

void TestLogParsers::everyLogHasAnIndexEntry()
{
    const json index = fixture_index();
    QVERIFY(index.is_array() && !index.empty());
    const QStringList logs
        = QDir(QString::fromStdString(kFixtureDir)).entryList({ QStringLiteral("*.log") }, QDir::Files);
    QVERIFY(!logs.isEmpty());
    for (const QString& f : logs)
        QVERIFY2(index_entry(index, f.toStdString()), qPrintable(f + QStringLiteral(" has no index.json entry")));
    for (const auto& e : index)
        QVERIFY2(logs.contains(QString::fromStdString(e.at("file").get<std::string>())), e.at("file").dump().c_str());
}

void TestLogParsers::fixture_data()
{
    QTest::addColumn<QString>("file");
    for (const auto& e : fixture_index()) {
        const std::string file = e.at("file").get<std::string>();
        QTest::newRow(file.c_str()) << QString::fromStdString(file);
    }
}

void TestLogParsers::fixture()
{
    QFETCH(QString, file);
    const json index = fixture_index();
    const json& entry = *index_entry(index, file.toStdString());
    const std::string text = read_file(kFixtureDir + file.toStdString());
    const ParsedLog log = parse_training_log(text);
    const std::string framework = entry.at("framework").get<std::string>();
    QCOMPARE(fmt(log.format), QString::fromStdString(framework));
    QVERIFY(log.recognised());
    // The explicit format reads the same as auto-detection.
    const ParsedLog explicit_log = parse_training_log(text, log.format);
    QCOMPARE(explicit_log.steps.size(), log.steps.size());

    const json& expected = entry.at("expected");
    if (framework == "megatron")
        check_megatron(expected, log);
    else if (framework == "torchtitan")
        check_torchtitan(expected, log);
    else if (framework == "deepspeed")
        check_deepspeed(expected, log);
    else
        QFAIL(qPrintable(QStringLiteral("no checks for framework ") + QString::fromStdString(framework)));
    if (QTest::currentTestFailed())
        return;
    if (expected.contains("summary"))
        check_summary(expected.at("summary"), log, file.toStdString());
}

void TestLogParsers::check_megatron(const json& expected, const ParsedLog& log)
{
    for (const auto& [group, value] : expected.items()) {
        if (group != "iteration_lines" && group != "memory_reports" && group != "effective_tflops_lines"
            && group != "summary" && !kNotParsedKeys.count(group))
            QFAIL(unchecked("expected", group).constData());
    }
    const json& records = expected.at("iteration_lines");
    QCOMPARE(log.steps.size(), records.size());
    std::vector<std::pair<int, std::int64_t>> record_lines; // (line, step) for the effective-TFLOPs lines
    for (const auto& rec : records) {
        const std::int64_t step = rec.at("step").get<std::int64_t>();
        const StepRecord* s = find_step(log, step);
        QVERIFY2(s, ("no step " + std::to_string(step)).c_str());
        if (rec.contains("line"))
            record_lines.emplace_back(rec.at("line").get<int>(), step);
        for (const auto& [key, v] : rec.items()) {
            if (key == "step" || kNotParsedKeys.count(key))
                continue;
            if (key == "elapsed_ms")
                EXPECT_VALUE(s->step_time_s, v.get<double>() / 1000, "step_time_s", step);
            else if (key == "elapsed_s")
                EXPECT_VALUE(s->step_time_s, v.get<double>(), "step_time_s", step);
            else if (key == "TFLOPs")
                EXPECT_VALUE(s->tflops_per_gpu, v.get<double>(), "tflops_per_gpu", step);
            else if (key == "samples_per_second")
                EXPECT_VALUE(s->samples_per_s, v.get<double>(), "samples_per_s", step);
            else if (key == "lm_loss_value")
                EXPECT_VALUE(s->loss, v.get<double>(), "loss", step);
            else
                QFAIL(unchecked("iteration_lines", key).constData());
        }
        if (!rec.contains("TFLOPs") && !expected.contains("effective_tflops_lines"))
            EXPECT_ABSENT(s->tflops_per_gpu, "tflops_per_gpu");
        if (!rec.contains("samples_per_second"))
            EXPECT_ABSENT(s->samples_per_s, "samples_per_s");
        EXPECT_ABSENT(s->tokens_per_s, "tokens_per_s"); // no fixture prints tgs
        EXPECT_ABSENT(s->mfu, "mfu");
        EXPECT_ABSENT(s->power_W, "power_W");
    }

    // Every memory report, in file order, including the ones run together on one line.
    const json& reports = expected.at("memory_reports");
    QCOMPARE(log.memory_reports.size(), reports.size());
    std::map<std::int64_t, double> peak_GiB; // per step: the largest max reserved of any rank
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const json& want = reports[i];
        const MemoryReport& got = log.memory_reports[i];
        for (const auto& [key, v] : want.items()) {
            if (key == "rank") {
                if (v.is_null())
                    QVERIFY(!got.rank);
                else
                    QCOMPARE(got.rank.value_or(-1), v.get<int>());
            } else if (key == "after_iterations") {
                QCOMPARE(got.after_iterations, v.get<std::int64_t>());
            } else if (key == "allocated_mb") {
                EXPECT_VALUE(got.allocated_MiB, v.get<double>(), "allocated_MiB", got.after_iterations);
            } else if (key == "max_allocated_mb") {
                EXPECT_VALUE(got.max_allocated_MiB, v.get<double>(), "max_allocated_MiB", got.after_iterations);
            } else if (key == "reserved_mb") {
                EXPECT_VALUE(got.reserved_MiB, v.get<double>(), "reserved_MiB", got.after_iterations);
            } else if (key == "max_reserved_mb") {
                EXPECT_VALUE(got.max_reserved_MiB, v.get<double>(), "max_reserved_MiB", got.after_iterations);
                auto& peak = peak_GiB[want.at("after_iterations").get<std::int64_t>()];
                peak = std::max(peak, v.get<double>() / 1024);
            } else {
                QFAIL(unchecked("memory_reports", key).constData());
            }
        }
    }
    for (const auto& s : log.steps) {
        const auto it = peak_GiB.find(s.step);
        if (it == peak_GiB.end())
            EXPECT_ABSENT(s.memory_GiB, "memory_GiB");
        else
            EXPECT_VALUE(s.memory_GiB, it->second, "memory_GiB", s.step);
    }

    // "Effective Tera Flops per GPU: X" belongs to the iteration record printed before it.
    if (expected.contains("effective_tflops_lines")) {
        for (const auto& eff : expected.at("effective_tflops_lines")) {
            for (const auto& [key, v] : eff.items()) {
                if (key != "effective_tflops_per_gpu" && !kNotParsedKeys.count(key))
                    QFAIL(unchecked("effective_tflops_lines", key).constData());
            }
            const int line = eff.at("line").get<int>();
            std::int64_t step = -1;
            for (const auto& [l, st] : record_lines) {
                if (l < line)
                    step = st;
            }
            const StepRecord* s = find_step(log, step);
            QVERIFY(s);
            EXPECT_VALUE(s->tflops_per_gpu, eff.at("effective_tflops_per_gpu").get<double>(), "tflops_per_gpu", step);
        }
    }
}

void TestLogParsers::check_torchtitan(const json& expected, const ParsedLog& log)
{
    for (const auto& [group, value] : expected.items()) {
        if (group != "step_lines" && group != "summary" && !kNotParsedKeys.count(group))
            QFAIL(unchecked("expected", group).constData());
    }
    std::map<std::int64_t, double> peak_GiB;
    std::set<std::int64_t> checked_first;
    for (const auto& line : expected.at("step_lines")) {
        const std::int64_t step = line.at("step").get<std::int64_t>();
        const StepRecord* s = find_step(log, step);
        QVERIFY2(s, ("no step " + std::to_string(step)).c_str());
        const bool first_occurrence = checked_first.insert(step).second;
        for (const auto& [key, v] : line.items()) {
            if (key == "step" || kNotParsedKeys.count(key))
                continue;
            if (key == "memory_gib") {
                auto& peak = peak_GiB[step];
                peak = std::max(peak, v.get<double>());
                continue;
            }
            if (!first_occurrence)
                continue; // the first rank's line wins; later duplicates must not change it
            if (key == "tps" || key == "wps")
                EXPECT_VALUE(s->tokens_per_s, v.get<double>(), "tokens_per_s", step);
            else if (key == "tflops")
                EXPECT_VALUE(s->tflops_per_gpu, v.get<double>(), "tflops_per_gpu", step);
            else if (key == "mfu_pct")
                EXPECT_VALUE(s->mfu, v.get<double>() / 100, "mfu", step);
            else if (key == "loss")
                EXPECT_VALUE(s->loss, v.get<double>(), "loss", step);
            else
                QFAIL(unchecked("step_lines", key).constData());
        }
        if (first_occurrence) {
            if (!line.contains("tflops"))
                EXPECT_ABSENT(s->tflops_per_gpu, "tflops_per_gpu");
            if (!line.contains("mfu_pct"))
                EXPECT_ABSENT(s->mfu, "mfu");
            EXPECT_ABSENT(s->samples_per_s, "samples_per_s");
            EXPECT_ABSENT(s->power_W, "power_W");
        }
    }
    QCOMPARE(log.steps.size(), checked_first.size());
    for (const auto& [step, peak] : peak_GiB)
        EXPECT_VALUE(find_step(log, step)->memory_GiB, peak, "memory_GiB", step);
}

void TestLogParsers::check_deepspeed(const json& expected, const ParsedLog& log)
{
    for (const auto& [group, value] : expected.items()) {
        if (group != "profile_summary" && group != "summary" && !kNotParsedKeys.count(group))
            QFAIL(unchecked("expected", group).constData());
    }
    if (!expected.contains("profile_summary"))
        return;
    const std::int64_t step = std::stoll(expected.at("summary").at("profile_step").get<std::string>());
    const StepRecord* s = find_step(log, step);
    QVERIFY2(s, ("no profiled step " + std::to_string(step)).c_str());
    const json& profile = expected.at("profile_summary");
    // The per-step values among the profiler's key/value pairs; the rest describe the model and layout.
    EXPECT_VALUE(s->step_time_s, seconds_from(profile.at("iter latency").get<std::string>()), "step_time_s", step);
    EXPECT_VALUE(s->tflops_per_gpu,
        tflops_from(profile.at("FLOPS per GPU = 3 * fwd flops per GPU / iter latency").get<std::string>()),
        "tflops_per_gpu", step);
    EXPECT_VALUE(s->samples_per_s, std::stod(profile.at("samples/second").get<std::string>()), "samples_per_s", step);
    EXPECT_ABSENT(s->tokens_per_s, "tokens_per_s");
    QCOMPARE(log.steps.size(), std::size_t(1));
}

void TestLogParsers::check_summary(const json& summary, const ParsedLog& log, const std::string& file)
{
    QCOMPARE(log.summary.steps, static_cast<int>(log.steps.size()));
    const auto median_of = [&](std::optional<double> StepRecord::*field) {
        std::vector<double> v;
        for (std::size_t i = 1; i < log.steps.size(); ++i) {
            if (const auto& x = log.steps[i].*field)
                v.push_back(*x);
        }
        return median(v);
    };
    for (const auto& [key, v] : summary.items()) {
        if (kNotParsedKeys.count(key) || key == "profile_step")
            continue;
        if (key == "n_iteration_lines" || key == "n_unique_steps") {
            QCOMPARE(log.steps.size(), v.get<std::size_t>());
        } else if (key == "unique_steps") {
            std::vector<std::int64_t> got;
            for (const auto& s : log.steps)
                got.push_back(s.step);
            QVERIFY(got == v.get<std::vector<std::int64_t>>());
        } else if (key == "n_memory_reports") {
            QCOMPARE(log.memory_reports.size(), v.get<std::size_t>());
        } else if (key == "median_step_time_ms_excl_first") {
            if (v.is_null())
                EXPECT_ABSENT(log.summary.step_time_s, "summary.step_time_s");
            else
                EXPECT_VALUE(log.summary.step_time_s, v.get<double>() / 1000, "summary.step_time_s", 0);
        } else if (key == "median_TFLOPs_excl_first" || key == "median_tflops_excl_first") {
            EXPECT_VALUE(log.summary.tflops_per_gpu, v.get<double>(), "summary.tflops_per_gpu", 0);
        } else if (key == "median_tps_excl_first" || key == "median_wps_excl_first") {
            EXPECT_VALUE(log.summary.tokens_per_s, v.get<double>(), "summary.tokens_per_s", 0);
        } else if (key == "median_mfu_pct_excl_first") {
            EXPECT_VALUE(median_of(&StepRecord::mfu), v.get<double>() / 100, "median mfu", 0);
        } else if (key == "step_time_ms_from_timestamps") {
            const auto want = v.get<std::vector<double>>();
            QCOMPARE(want.size() + 1, log.steps.size());
            QVERIFY(log.step_time_from_timestamps);
            for (std::size_t i = 0; i < want.size(); ++i)
                EXPECT_VALUE(log.steps[i + 1].step_time_s, want[i] / 1000, "step_time_s", log.steps[i + 1].step);
        } else if (key == "file_bytes") {
            QCOMPARE(read_file(kFixtureDir + file).size(), v.get<std::size_t>()); // the fixture is byte-exact
        } else {
            QFAIL(unchecked("summary", key).constData());
        }
    }
    // Fewer than three steps: no medians at all.
    if (log.steps.size() < static_cast<std::size_t>(kMinStepsForMedians)) {
        EXPECT_ABSENT(log.summary.step_time_s, "summary.step_time_s");
        EXPECT_ABSENT(log.summary.tokens_per_s, "summary.tokens_per_s");
        EXPECT_ABSENT(log.summary.tflops_per_gpu, "summary.tflops_per_gpu");
    }
}

// --- hand-made edge cases ------------------------------------------------------------------------------

namespace {

const char* const kMegatronLine10 = " iteration       10/    1000 | consumed samples:           40 | elapsed time per "
                                    "iteration (ms): 3171.3 | learning rate: 0.000E+00 | global batch size:     4 | "
                                    "lm loss: 1.210588E+01 | number of nan iterations:   0 |";

std::string titan_line(
    int step, const std::string& tps, const std::string& mfu, const std::string& time = "02:13:44,263")
{
    return "[rank0]:[titan] 2026-05-20 " + time + " - root - INFO - step: " + std::to_string(step)
        + "  loss: 12.5453  memory: 160.86GiB(90.19%)  tps: " + tps + "  tflops: 94.75  mfu: " + mfu + "\n";
}

} // namespace

void TestLogParsers::partialLastLineDropsTheCutField()
{
    // Megatron: the record is cut inside the elapsed time; "16" must not become 16 ms.
    const std::string megatron = std::string(kMegatronLine10)
        + "\n iteration       20/    1000 | consumed samples: "
          "80 | elapsed time per iteration (ms): 16";
    ParsedLog log = parse_training_log(megatron);
    QCOMPARE(log.steps.size(), std::size_t(2));
    QVERIFY(find_step(log, 20));
    EXPECT_ABSENT(find_step(log, 20)->step_time_s, "cut elapsed time");
    EXPECT_VALUE(find_step(log, 10)->step_time_s, 3.1713, "step_time_s", 10);

    // torchtitan: the tps value "10,5" touches the cut; the fields before it are whole.
    const std::string titan = titan_line(1, "1,125", "4.21%")
        + "[rank0]:[titan] 2026-05-20 02:13:46,329 - root - INFO - step: 2  loss: 11.13  memory: 169.10GiB(94.81%)  "
          "tps: 10,5";
    log = parse_training_log(titan);
    QCOMPARE(log.steps.size(), std::size_t(2));
    EXPECT_ABSENT(find_step(log, 2)->tokens_per_s, "cut tps");
    EXPECT_VALUE(find_step(log, 2)->memory_GiB, 169.10, "memory_GiB", 2);

    // A cut memory report keeps its whole fields only.
    log = parse_training_log(std::string(kMegatronLine10)
        + "\n[Rank 0] (after 10 iterations) memory (MB) | allocated: 100.5 | max allocated: 200.0 | reserved: 3");
    QCOMPARE(log.memory_reports.size(), std::size_t(1));
    EXPECT_VALUE(log.memory_reports[0].max_allocated_MiB, 200.0, "max_allocated_MiB", 10);
    EXPECT_ABSENT(log.memory_reports[0].reserved_MiB, "cut reserved");

    // The same line with its newline is whole.
    log = parse_training_log(titan + "00\n");
    EXPECT_VALUE(find_step(log, 2)->tokens_per_s, 10500, "tokens_per_s", 2);
}

void TestLogParsers::crlfLineEnds()
{
    std::string text;
    for (int step = 1; step <= 4; ++step) {
        text += " iteration " + std::to_string(step) + "/ 100 | elapsed time per iteration (ms): 10"
            + std::to_string(step) + ".5 | samples per second: 9.5 |\r\n";
    }
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(fmt(log.format), fmt(LogFormat::megatron));
    QCOMPARE(log.steps.size(), std::size_t(4));
    EXPECT_VALUE(log.steps[3].step_time_s, 0.1045, "step_time_s", 4);
    EXPECT_VALUE(log.steps[3].samples_per_s, 9.5, "samples_per_s", 4);
    EXPECT_VALUE(log.summary.step_time_s, 0.1035, "summary.step_time_s", 0);
}

void TestLogParsers::ansiColoursAreStripped()
{
    const std::string line
        = "[rank0]:[titan] 2026-05-20 02:13:44,263 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss: "
          "12.54527  \x1b[38;2;180;60;0mgrad_norm: 20.6250  \x1b[38;2;54;234;195mmemory: "
          "160.86GiB(90.19%)  \x1b[34mtps: 1,125  \x1b[36mtflops: 94.75  \x1b[35mmfu: 4.21%\x1b[39m\n";
    const ParsedLog log = parse_training_log(line);
    QCOMPARE(fmt(log.format), fmt(LogFormat::torchtitan));
    const StepRecord& s = log.steps.at(0);
    EXPECT_VALUE(s.tokens_per_s, 1125, "tokens_per_s", 1);
    EXPECT_VALUE(s.tflops_per_gpu, 94.75, "tflops_per_gpu", 1);
    EXPECT_VALUE(s.mfu, 0.0421, "mfu", 1);
    EXPECT_VALUE(s.memory_GiB, 160.86, "memory_GiB", 1);
    EXPECT_VALUE(s.loss, 12.54527, "loss", 1);
}

void TestLogParsers::duplicateRanksAppearOnce()
{
    // Four ranks print steps 1..3 (srun --label); rank 2 sits on a pipeline stage with more memory.
    std::string text;
    for (int step = 1; step <= 3; ++step) {
        for (int rank = 0; rank < 4; ++rank) {
            const std::string mem = rank == 2 ? "70.25" : "68.57";
            text += std::to_string(rank) + ": 2025-03-04 00:44:4" + std::to_string(step * 2)
                + ",441 - root - INFO - step: " + std::to_string(step) + "  loss:  3.4370  memory: " + mem
                + "GiB(86.69%)  wps: 6,785  mfu: 39.73%\n";
        }
    }
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(log.steps.size(), std::size_t(3));
    for (const auto& s : log.steps) {
        EXPECT_VALUE(s.memory_GiB, 70.25, "memory_GiB (largest rank)", s.step);
        EXPECT_VALUE(s.tokens_per_s, 6785, "tokens_per_s from wps", s.step);
    }
    EXPECT_VALUE(log.steps[2].step_time_s, 2.0, "step_time_s from timestamps", 3);
    QCOMPARE(log.summary.steps, 3);
}

void TestLogParsers::validationLinesAreNotSteps()
{
    const std::string text = titan_line(10, "9,913", "37.12%")
        + "[rank0]:[titan] 2026-05-20 02:13:48,000 - root - INFO - validate step: 10  loss: 2.5000  memory: "
          "175.00GiB(98.00%)\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(log.steps.size(), std::size_t(1));
    EXPECT_VALUE(log.steps[0].loss, 12.5453, "training loss", 10);
    EXPECT_VALUE(log.steps[0].memory_GiB, 160.86, "training memory", 10);
}

void TestLogParsers::mfuNotAvailable()
{
    const ParsedLog log = parse_training_log(titan_line(1, "1,125", "N/A") + titan_line(2, "9,913", "N/A"));
    QCOMPARE(log.steps.size(), std::size_t(2));
    for (const auto& s : log.steps) {
        EXPECT_ABSENT(s.mfu, "mfu N/A");
        QVERIFY(s.tokens_per_s);
    }
}

void TestLogParsers::thousandsSeparators()
{
    const ParsedLog log = parse_training_log(titan_line(7, "1,234,567", "41.2%"));
    EXPECT_VALUE(log.steps.at(0).tokens_per_s, 1234567, "tokens_per_s", 7);
    EXPECT_VALUE(log.steps.at(0).mfu, 0.412, "mfu", 7);
    // A comma that does not separate thousands is a broken number, not a shorter one.
    const ParsedLog broken = parse_training_log(titan_line(7, "12,34", "41.2%"));
    EXPECT_ABSENT(broken.steps.at(0).tokens_per_s, "tokens_per_s from '12,34'");
    std::size_t n = 0;
    EXPECT_VALUE(text::parse_grouped_number("1,234.5", 0, &n), 1234.5, "grouped", 0);
    QCOMPARE(n, std::size_t(7));
}

void TestLogParsers::garbageAndBinaryInterleaved()
{
    std::string text = "W0520 02:13:12.567000 310047 run.py:874] Setting OMP_NUM_THREADS\n";
    text += bytes("\x00\x01\xff\xfe binary \x1b[ junk \x1b]0;title\x07|||:::\n");
    text += kMegatronLine10;
    text += "\nTraceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n";
    text += bytes("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR iteration 5/");
    text += "\n iteration       20/    1000 | elapsed time per iteration (ms): 1572.7 | lm loss: 1.2E+01 |\n";
    text += "iteration x/ y | elapsed time per iteration (ms): nan | \n";
    text += " iteration 30/ 1000 | elapsed time per iteration (ms): inf | samples per second: 1e999 |\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(fmt(log.format), fmt(LogFormat::megatron));
    QCOMPARE(log.steps.size(), std::size_t(3));
    EXPECT_VALUE(find_step(log, 20)->step_time_s, 1.5727, "step_time_s", 20);
    EXPECT_ABSENT(find_step(log, 30)->step_time_s, "inf elapsed time");
    EXPECT_ABSENT(find_step(log, 30)->samples_per_s, "out-of-range samples/s");
}

void TestLogParsers::megatronSecondsEnergyAndTgs()
{
    // Current Megatron-LM with --log-throughput and --log-energy, and a Megatron-DeepSpeed tgs record.
    const std::string text
        = " [2026-02-06 20:55:02.918469] iteration      292/95367431 | consumed samples:         9344 | elapsed time "
          "per iteration (ms): 3075.7 | throughput per GPU (TFLOP/s/GPU): 478.0 | energy per GPU (J/iter/GPU): 1992.5 "
          "| power per GPU (W/GPU): 647.8 | learning rate: 9.568256E-08 | global batch size:    32 | lm loss: "
          "2.401035E-02 | loss scale: 1.0 | grad norm: 1.797 |\n"
          " iteration        6/      10 | consumed samples:         9216 | elapsed time per iteration (s): 347.3192 "
          "| samples per second: 4.457 | tokens per gpu per second (tgs): 142.612 | TFLOPs: 153.38 |\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(log.steps.size(), std::size_t(2));
    const StepRecord& a = *find_step(log, 292);
    EXPECT_VALUE(a.step_time_s, 3.0757, "step_time_s", 292);
    EXPECT_VALUE(a.tflops_per_gpu, 478.0, "tflops_per_gpu", 292);
    EXPECT_VALUE(a.power_W, 647.8, "power_W", 292);
    EXPECT_VALUE(a.loss, 0.02401035, "loss", 292);
    EXPECT_ABSENT(a.tokens_per_s, "tokens_per_s");
    const StepRecord& b = *find_step(log, 6);
    EXPECT_VALUE(b.step_time_s, 347.3192, "step_time_s (s)", 6);
    EXPECT_VALUE(b.tokens_per_s, 142.612, "tokens_per_s (tgs, per GPU)", 6);
    EXPECT_VALUE(b.samples_per_s, 4.457, "samples_per_s", 6);
    EXPECT_VALUE(b.tflops_per_gpu, 153.38, "tflops_per_gpu", 6);
}

void TestLogParsers::megatronLogEnergyFixture()
{
    // Megatron-LM with --log-energy (tests/remote/data/README.md): every step's energy and power per GPU,
    // power = energy / elapsed time as Megatron prints them, medians over all but the first step.
    const std::string text = read_file(PARALLAX_SOURCE_DIR "/tests/remote/data/megatron-log-energy.log");
    QVERIFY(!text.empty());
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(log.format, LogFormat::megatron);
    QCOMPARE(log.steps.size(), std::size_t(8));
    const double energy[] = { 880.8, 961.4, 966.1, 968.4, 966.0, 957.2, 963.5, 963.3 };
    const double power[] = { 521.7, 663.2, 662.1, 663.9, 662.7, 663.4, 663.5, 660.2 };
    for (int i = 0; i < 8; ++i) {
        const StepRecord& r = *find_step(log, i + 1);
        EXPECT_VALUE(r.energy_J, energy[i], "energy_J", i + 1);
        EXPECT_VALUE(r.power_W, power[i], "power_W", i + 1);
        QVERIFY(r.step_time_s);
        // Megatron: power = energy / elapsed time, each printed to 0.1.
        QVERIFY2(std::fabs(*r.energy_J / *r.step_time_s - *r.power_W) < 0.1, qPrintable(QString::number(i + 1)));
    }
    QVERIFY(log.summary.power_W && log.summary.energy_J);
    QCOMPARE(*log.summary.power_W, 663.2); // median of steps 2-8
    QCOMPARE(*log.summary.energy_J, 963.5);
    QVERIFY(log.summary.peak_memory_GiB);
    QVERIFY(std::fabs(*log.summary.peak_memory_GiB - 70118.0 / 1024) < 1e-6);
}

void TestLogParsers::megatronHardWrappedWithCrlf()
{
    std::string text = "[default7]: iteration   42780/ 115311 | consumed samples:    71455664 | elapsed time per "
                       "iteration (s): 105.16 | learning\r\n"
                       "\r\n"
                       " rate: 4.475E-05 | global batch size: 2048 | lm loss: 2.117073E+00 | number of nan\r\n"
                       "iterations:  0 | samples per second: 19.474 | TFLOPs: 149.10 |\r\n"
                       "[default7]: iteration   42781/ 115311 | elapsed time per iteration (s): 105.17 | learning\r\n"
                       "[Rank 0] (after 42781 iterations) memory (MB) | max reserved: 2048.0\r\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(log.steps.size(), std::size_t(2));
    const StepRecord& a = *find_step(log, 42780);
    EXPECT_VALUE(a.step_time_s, 105.16, "step_time_s", 42780);
    EXPECT_VALUE(a.samples_per_s, 19.474, "samples_per_s", 42780);
    EXPECT_VALUE(a.tflops_per_gpu, 149.10, "tflops_per_gpu", 42780);
    EXPECT_VALUE(a.loss, 2.117073, "loss", 42780);
    // The second record's wrap never came (a memory report followed): its terminated fields still count.
    const StepRecord& b = *find_step(log, 42781);
    EXPECT_VALUE(b.step_time_s, 105.17, "step_time_s", 42781);
    EXPECT_VALUE(b.memory_GiB, 2.0, "memory_GiB", 42781);
}

void TestLogParsers::megatronRunTogetherMemoryReports()
{
    const std::string text = std::string(kMegatronLine10)
        + "\n[Rank 25] (after 10 iterations) memory (MB) | allocated: 17693.36 | max allocated: 19944.51 | reserved: "
          "23974.0 | max reserved: 23974.0[Rank 27] (after 10 iterations) memory (MB) | allocated: 17693.36 | max "
          "allocated: 19944.51 | reserved: 23954.0 | max reserved: 25600.0\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(log.memory_reports.size(), std::size_t(2));
    QCOMPARE(log.memory_reports[0].rank.value_or(-1), 25);
    QCOMPARE(log.memory_reports[1].rank.value_or(-1), 27);
    EXPECT_VALUE(log.memory_reports[0].max_reserved_MiB, 23974.0, "max_reserved_MiB", 10);
    EXPECT_VALUE(log.memory_reports[1].max_reserved_MiB, 25600.0, "max_reserved_MiB", 10);
    EXPECT_VALUE(find_step(log, 10)->memory_GiB, 25.0, "memory_GiB", 10);
    EXPECT_VALUE(log.summary.peak_memory_GiB, 25.0, "peak_memory_GiB", 0);
}

void TestLogParsers::deepspeedTimerLinesGiveStepTimeFromTimestamps()
{
    std::string text;
    const char* times[] = { "15:27:17,188", "15:27:31,438", "15:27:45,738", "15:28:00,038" };
    for (int i = 0; i < 4; ++i) {
        const std::string step = std::to_string((i + 1) * 10);
        text += "[2024-03-07 " + std::string(times[i]) + "] [INFO] [timer.py:260:stop] epoch=0/micro_step=" + step
            + "/global_step=" + step + ", RunningAvgSamplesPerSec=53.1, CurrSamplesPerSec=5" + std::to_string(i)
            + ".5, MemAllocated=4.2GB, MaxMemAllocated=9.75GB\n";
        text += "[2024-03-07 " + std::string(times[i]) + "] [INFO] [logging.py:96:log_dist] [Rank 0] step=" + step
            + ", skipped=0, lr=[0.0002], mom=[(0.9, 0.999)]\n";
    }
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(fmt(log.format), fmt(LogFormat::deepspeed));
    QCOMPARE(log.steps.size(), std::size_t(4));
    EXPECT_ABSENT(log.steps[0].step_time_s, "first step time");
    EXPECT_VALUE(log.steps[1].step_time_s, 1.425, "step_time_s (14.25 s over 10 steps)", 20);
    EXPECT_VALUE(log.steps[3].step_time_s, 1.43, "step_time_s", 40);
    EXPECT_VALUE(log.steps[2].samples_per_s, 52.5, "samples_per_s", 30);
    EXPECT_VALUE(log.steps[2].memory_GiB, 9.75, "memory_GiB", 30);
    EXPECT_ABSENT(log.steps[2].tokens_per_s, "tokens_per_s");
    QVERIFY(log.step_time_from_timestamps);
    EXPECT_VALUE(log.summary.step_time_s, 1.43, "summary.step_time_s", 0);
}

void TestLogParsers::deepspeedOlderTimerSpellings()
{
    const std::string text = "[INFO] [timer.py:181:stop] 0/30, RunningAvgSamplesPerSec=12.5, CurrSamplesPerSec=13.25, "
                             "MemAllocated=1.5GB, MaxMemAllocated=2.5GB\n"
                             "[INFO] [timer.py:160:stop] 1/40, SamplesPerSec=11.75\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(fmt(log.format), fmt(LogFormat::deepspeed));
    QCOMPARE(log.steps.size(), std::size_t(2));
    EXPECT_VALUE(find_step(log, 30)->samples_per_s, 13.25, "samples_per_s", 30);
    EXPECT_VALUE(find_step(log, 30)->memory_GiB, 2.5, "memory_GiB", 30);
    EXPECT_VALUE(find_step(log, 40)->samples_per_s, 11.75, "samples_per_s", 40);
    EXPECT_ABSENT(find_step(log, 40)->step_time_s, "step time without timestamps");
}

void TestLogParsers::deepspeedPipelineStepLines()
{
    const std::string text = "steps: 10 loss: 2.3456 iter time (s): 1.234 samples/sec: 51.864\n"
                             "steps: 20 loss: 2.1001 iter time (s): 1.220 samples/sec: 52.459\n"
                             "steps: 30 loss: 2.0050 iter time (s): 1.226 samples/sec: 52.202\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(fmt(log.format), fmt(LogFormat::deepspeed));
    QCOMPARE(log.steps.size(), std::size_t(3));
    EXPECT_VALUE(log.steps[1].step_time_s, 1.220, "step_time_s", 20);
    EXPECT_VALUE(log.steps[1].samples_per_s, 52.459, "samples_per_s", 20);
    EXPECT_VALUE(log.steps[1].loss, 2.1001, "loss", 20);
    QVERIFY(!log.step_time_from_timestamps);
    EXPECT_VALUE(log.summary.step_time_s, 1.223, "summary.step_time_s", 0);
}

void TestLogParsers::probeRecords()
{
    const std::string text
        = "[rank0]: PARALLAX_PROBE {\"kind\":\"run\",\"schema\":1,\"world_size\":2}\n"
          "[rank0]: PARALLAX_PROBE {\"kind\":\"step\",\"step\":1,\"step_time_s\":0.412,\"tokens_per_s\":2485.4,"
          "\"samples_per_s\":4.85,\"loss\":10.84,\"future_key\":[1,2]}\n"
          "UserWarning: something\n"
          "[rank1]: PARALLAX_PROBE {\"kind\":\"step\",\"step\":1,\"step_time_s\":9.9,\"memory_GiB\":1.5}\n"
          "[rank0]: PARALLAX_PROBE {\"kind\":\"step\",\"step\":2,\"step_time_s\":0.208,\"tokens_per_s\":4923.1,"
          "\"tflops_per_gpu\":1.25,\"mfu\":0.41,\"memory_GiB\":1.25,\"power_W\":310.5,\"energy_J\":64.6}\n"
          "[rank0]: PARALLAX_PROBE {\"kind\":\"step\",\"step\":3,\"step_time_s\":0.212,\"tokens_per_s\":4852.9}\n";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(fmt(log.format), fmt(LogFormat::probe));
    QCOMPARE(log.steps.size(), std::size_t(3));
    EXPECT_VALUE(log.steps[0].step_time_s, 0.412, "first line wins", 1);
    EXPECT_VALUE(log.steps[0].memory_GiB, 1.5, "memory_GiB from another rank", 1);
    EXPECT_VALUE(log.steps[1].mfu, 0.41, "mfu", 2);
    EXPECT_VALUE(log.steps[1].power_W, 310.5, "power_W", 2);
    EXPECT_VALUE(log.steps[1].energy_J, 64.6, "energy_J (NVML energy counter)", 2);
    EXPECT_ABSENT(log.steps[2].power_W, "power_W on a CPU step");
    EXPECT_VALUE(log.summary.step_time_s, 0.21, "summary.step_time_s", 0);
    EXPECT_VALUE(log.summary.tokens_per_s, 4888.0, "summary.tokens_per_s", 0);
}

void TestLogParsers::probeIgnoresBrokenRecords()
{
    const std::string deep = "PARALLAX_PROBE " + std::string(100000, '[') + "\n";
    const std::string text = "PARALLAX_PROBE {\"kind\":\"step\",\"step\":1,\"step_time_s\":0.4}\n" + deep
        + "PARALLAX_PROBE {\"kind\":\"step\",\"step\":-2}\n"
          "PARALLAX_PROBE {\"kind\":\"step\",\"step\":2.5}\n"
          "PARALLAX_PROBE {\"kind\":\"step\",\"step\":3,\"step_time_s\":NaN}\n"
          "PARALLAX_PROBE {\"kind\":\"step\",\"step\":4,\"step_time_s\":\"fast\",\"tokens_per_s\":null}\n"
          "PARALLAX_PROBE {\"kind\":\"step\",\"step\":5,\"step_time_s\":0.2} trailing\n"
          "PARALLAX_PROBE {\"kind\":\"step\",\"step\":6,\"step_time_s\":0.2";
    const ParsedLog log = parse_training_log(text);
    QCOMPARE(fmt(log.format), fmt(LogFormat::probe));
    QCOMPARE(log.steps.size(), std::size_t(2)); // steps 1 and 4
    QCOMPARE(log.steps[1].step, std::int64_t(4));
    EXPECT_ABSENT(log.steps[1].step_time_s, "non-numeric step time");
    EXPECT_ABSENT(log.steps[1].tokens_per_s, "null tokens_per_s");
}

void TestLogParsers::autoDetectPrefersMegatronOverItsDeepSpeedLines()
{
    const std::string text
        = "[2024-03-07 15:27:17,188] [INFO] [timer.py:260:stop] epoch=0/micro_step=10/global_step=10, "
          "RunningAvgSamplesPerSec=53.1, CurrSamplesPerSec=53.7, MemAllocated=4.2GB, "
          "MaxMemAllocated=9.8GB\n"
        + std::string(kMegatronLine10) + "\n";
    QCOMPARE(fmt(parse_training_log(text).format), fmt(LogFormat::megatron));
    QCOMPARE(fmt(parse_training_log(text, LogFormat::deepspeed).format), fmt(LogFormat::deepspeed));
    EXPECT_VALUE(parse_training_log(text, LogFormat::deepspeed).steps.at(0).samples_per_s, 53.7, "samples_per_s", 10);
}

void TestLogParsers::nothingRecognised()
{
    for (const std::string& text :
        { std::string(), std::string("hello\nworld\n"), std::string("\n\n\r\n"), std::string("step: 3 loss: 1.0\n"),
            std::string("[Rank 0] (after 1 iterations) memory (MB) | max reserved: 1.0\n") }) {
        const ParsedLog log = parse_training_log(text);
        QVERIFY(!log.recognised());
        QCOMPARE(fmt(log.format), fmt(LogFormat::auto_detect));
        QVERIFY(log.steps.empty() || log.format != LogFormat::auto_detect);
    }
}

void TestLogParsers::explicitFormatReadsOnlyThatFormat()
{
    const std::string text = read_file(kFixtureDir + "megatron-04.log");
    ParsedLog log = parse_training_log(text, LogFormat::torchtitan);
    QVERIFY(!log.recognised());
    QCOMPARE(fmt(log.format), fmt(LogFormat::torchtitan));
    log = parse_training_log(text, LogFormat::megatron);
    QVERIFY(log.recognised());
    QCOMPARE(log.steps.size(), std::size_t(11));
}

void TestLogParsers::chunkingDoesNotMatter()
{
    for (const auto& e : fixture_index()) {
        const std::string text = read_file(kFixtureDir + e.at("file").get<std::string>());
        const ParsedLog whole = parse_training_log(text);
        for (std::size_t chunk : { std::size_t(1), std::size_t(7), std::size_t(4096) }) {
            TrainingLogParser parser;
            for (std::size_t i = 0; i < text.size(); i += chunk)
                parser.feed(std::string_view(text).substr(i, chunk));
            const ParsedLog chunked = parser.finish();
            QCOMPARE(fmt(chunked.format), fmt(whole.format));
            QCOMPARE(chunked.steps.size(), whole.steps.size());
            QCOMPARE(chunked.memory_reports.size(), whole.memory_reports.size());
            for (std::size_t i = 0; i < whole.steps.size(); ++i) {
                QCOMPARE(chunked.steps[i].step, whole.steps[i].step);
                QVERIFY(chunked.steps[i].step_time_s == whole.steps[i].step_time_s);
                QVERIFY(chunked.steps[i].tokens_per_s == whole.steps[i].tokens_per_s);
                QVERIFY(chunked.steps[i].memory_GiB == whole.steps[i].memory_GiB);
            }
        }
    }
}

void TestLogParsers::summaryRules()
{
    const auto step = [](std::int64_t n, double t, std::optional<double> mem = {}) {
        StepRecord r;
        r.step = n;
        r.step_time_s = t;
        r.memory_GiB = mem;
        return r;
    };
    // The first (warm-up) step is left out of the median but counts for the peak memory.
    LogSummary s
        = summarize_steps({ step(1, 100.0, 9.0), step(2, 1.0, 4.0), step(3, 3.0), step(4, 2.0), step(5, 5.0) });
    QCOMPARE(s.steps, 5);
    EXPECT_VALUE(s.step_time_s, 2.5, "even-count median", 0);
    EXPECT_VALUE(s.peak_memory_GiB, 9.0, "peak includes the first step", 0);
    EXPECT_ABSENT(s.tokens_per_s, "tokens_per_s never printed");
    s = summarize_steps({ step(1, 100.0), step(2, 1.0) });
    QCOMPARE(s.steps, 2);
    EXPECT_ABSENT(s.step_time_s, "median of fewer than 3 steps");
    s = summarize_steps({});
    QCOMPARE(s.steps, 0);
    EXPECT_ABSENT(s.peak_memory_GiB, "peak of nothing");
}

void TestLogParsers::formatNames()
{
    for (LogFormat f :
        { LogFormat::auto_detect, LogFormat::megatron, LogFormat::torchtitan, LogFormat::deepspeed, LogFormat::probe })
        QCOMPARE(fmt(log_format_from_name(log_format_name(f)).value()), fmt(f));
    QVERIFY(!log_format_from_name("Megatron"));
    QVERIFY(!log_format_from_name(""));
}

void TestLogParsers::numberParsing()
{
    std::size_t n = 0;
    // Scaling through the decimal exponent gives the double nearest the scaled decimal.
    QCOMPARE(text::parse_number("1572.7", -3).value(), 1.5727);
    QCOMPARE(text::parse_number("39.73%", -2, &n).value(), 0.3973);
    QCOMPARE(n, std::size_t(5));
    QCOMPARE(text::parse_number("1.210588E+01").value(), 12.10588);
    QCOMPARE(text::parse_number("-1.0").value(), -1.0);
    QCOMPARE(text::parse_number("7e", 0, &n).value(), 7.0);
    QCOMPARE(n, std::size_t(1));
    QVERIFY(!text::parse_number("."));
    QVERIFY(!text::parse_number("e5"));
    QVERIFY(!text::parse_number("nan"));
    QVERIFY(!text::parse_number("1e400"));
    QVERIFY(!text::parse_number(std::string(60, '9')));
    QCOMPARE(text::parse_count("123456789012345678").value(), std::int64_t(123456789012345678));
    QVERIFY(!text::parse_count("1234567890123456789"));
    const auto t1 = text::find_fractional_timestamp_us("x 2024-02-28 23:59:59,500 y");
    const auto t2 = text::find_fractional_timestamp_us("[2024-02-29 00:00:01.000000]");
    QVERIFY(t1 && t2);
    QCOMPARE(*t2 - *t1, std::int64_t(1'500'000));
    const auto y1 = text::find_fractional_timestamp_us("2023-12-31 23:59:59,000");
    const auto y2 = text::find_fractional_timestamp_us("2024-01-01T00:00:00,250");
    QVERIFY(y1 && y2);
    QCOMPARE(*y2 - *y1, std::int64_t(1'250'000));
    QVERIFY(!text::find_fractional_timestamp_us("2024-02-29 00:00:01")); // whole seconds only
    QVERIFY(!text::find_fractional_timestamp_us("2024-13-29 00:00:01,5"));
    std::string clean;
    text::strip_ansi("\x1b[1;31mred\x1b[0m \x1b]0;title\x07plain\x1b", clean);
    QCOMPARE(QString::fromStdString(clean), QStringLiteral("red plain"));
}

QTEST_GUILESS_MAIN(TestLogParsers)
#include "tst_log_parsers.moc"
