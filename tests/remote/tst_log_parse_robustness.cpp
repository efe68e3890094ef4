// The log parsers never crash, hang or invent values, whatever they are fed: deterministic random garbage,
// mutated real logs, real logs cut at every line end, and pathological inputs. The same invariants as
// the libFuzzer target (remote/log_parse/fuzz), but with a fixed seed so it runs in every CTest.
#include "log_parse/fuzz/log_invariants.hpp"
#include "log_parse/training_log_parser.hpp"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QTest>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace parallax::remote;

namespace {

const std::string kFixtureDir = PARALLAX_SOURCE_DIR "/tests/data/logs/";

// The engine's output sequence is fixed by the standard (distributions are not), so draws are made
// from raw engine output: the same inputs on every platform.
using Rng = std::mt19937_64;
std::size_t draw(Rng& rng, std::size_t n)
{
    return n == 0 ? 0 : static_cast<std::size_t>(rng() % n);
}

constexpr LogFormat kFormats[]
    = { LogFormat::auto_detect, LogFormat::megatron, LogFormat::torchtitan, LogFormat::deepspeed, LogFormat::probe };

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> fixture_texts()
{
    std::vector<std::string> texts;
    const auto index = nlohmann::json::parse(read_file(kFixtureDir + "index.json"));
    for (const auto& e : index)
        texts.push_back(read_file(kFixtureDir + e.at("file").get<std::string>()));
    return texts;
}

// Pieces of every format's syntax, so random text reaches deep into the parsers.
const std::vector<std::string> kVocabulary {
    " iteration ",
    "10",
    "/ ",
    "1000",
    " | ",
    "elapsed time per iteration (ms): ",
    "elapsed time per iteration (s): ",
    "1572.7",
    "TFLOPs: ",
    "samples per second: ",
    "tokens per gpu per second (tgs): ",
    "power per GPU (W/GPU): ",
    "throughput per GPU (TFLOP/s/GPU): ",
    "lm loss: ",
    "1.2E+01",
    "[Rank 3] ",
    "(after 20 iterations) ",
    "memory (MB) | allocated: ",
    "| max reserved: ",
    "24084.0",
    "Effective Tera Flops per GPU: ",
    "step: ",
    "  loss: ",
    "  memory: ",
    "169.10GiB(94.81%)",
    "  tps: ",
    "10,530",
    "1,2",
    "  tflops: ",
    "  mfu: ",
    "38.5%",
    "N/A",
    "wps: ",
    "2026-05-20 02:13:44,263",
    "[2024-03-07 15:27:17,188] ",
    "epoch=0/micro_step=10/global_step=",
    ", RunningAvgSamplesPerSec=",
    ", CurrSamplesPerSec=",
    "53.7",
    ", MaxMemAllocated=",
    "9.8GB",
    "0/30, ",
    "SamplesPerSec=",
    "steps: ",
    " iter time (s): ",
    " samples/sec: ",
    "Profile Summary at step 2:\n",
    "iter latency: ",
    "487.61 ms",
    "FLOPS per GPU = 3 * fwd flops per GPU / iter latency: ",
    "2.35 TFLOPS",
    "samples/second: ",
    "-----",
    "PARALLAX_PROBE ",
    "{\"kind\":\"step\",\"step\":",
    ",\"step_time_s\":0.2}",
    "\"memory_GiB\":",
    "[[[[",
    "}",
    "\x1b[31m",
    "\x1b[38;2;1;2;3m",
    "\x1b]0;t\x07",
    "\x1b",
    "\n",
    "\r\n",
    "\r",
    " ",
    "  ",
    "|",
    ":",
    "e",
    "-",
    ".",
    "9",
    "99999999999999999999",
    "1e400",
    "nan",
    std::string(1, '\0'),
    "\xff\xfe",
};

std::string random_text(Rng& rng)
{
    const std::size_t length = draw(rng, 4096);
    std::string s;
    switch (draw(rng, 3)) {
    case 0: // any bytes
        for (std::size_t i = 0; i < length; ++i)
            s += static_cast<char>(rng() & 0xff);
        break;
    case 1: // printable text with line breaks and escapes
        for (std::size_t i = 0; i < length; ++i) {
            const std::size_t r = draw(rng, 100);
            s += r < 3 ? '\n' : r < 4 ? '\r' : r < 5 ? '\x1b' : static_cast<char>(' ' + draw(rng, 95));
        }
        break;
    default: // log vocabulary
        while (s.size() < length)
            s += kVocabulary[draw(rng, kVocabulary.size())];
        break;
    }
    return s;
}

std::string mutate(std::string s, Rng& rng)
{
    const std::size_t edits = 1 + draw(rng, 8);
    for (std::size_t k = 0; k < edits && !s.empty(); ++k) {
        const std::size_t at = draw(rng, s.size());
        const std::size_t len = 1 + draw(rng, 64);
        switch (draw(rng, 7)) {
        case 0: // flip bytes
            for (std::size_t i = at; i < std::min(s.size(), at + len); ++i)
                s[i] = static_cast<char>(rng() & 0xff);
            break;
        case 1: // delete a range
            s.erase(at, len);
            break;
        case 2: // duplicate a range (a rank printing the same line twice, a replayed chunk)
            s.insert(at, s.substr(at, len));
            break;
        case 3: // insert vocabulary
            s.insert(at, kVocabulary[draw(rng, kVocabulary.size())]);
            break;
        case 4: // truncate (a job still writing)
            s.resize(at);
            break;
        case 5: // line ends: CRLF or lone CR
            for (std::size_t i = at; i < std::min(s.size(), at + 4 * len); ++i) {
                if (s[i] == '\n')
                    s[i] = '\r';
            }
            break;
        default: // splice a far-away range in (interleaved ranks)
            s.insert(at, s.substr(draw(rng, s.size()), len));
            break;
        }
    }
    return s;
}

// Every format: invariants hold and random chunking changes nothing. Returns "" or what broke.
std::string check_everything(const std::string& text, Rng& rng)
{
    for (LogFormat format : kFormats) {
        const ParsedLog whole = parse_training_log(text, format);
        if (auto problem = fuzz::check_invariants(whole); !problem.empty())
            return std::string(log_format_name(format)) + ": " + problem;
        TrainingLogParser chunked(format);
        for (std::size_t i = 0; i < text.size();) {
            const std::size_t n = 1 + draw(rng, 300);
            chunked.feed(std::string_view(text).substr(i, n));
            i += n;
        }
        if (auto problem = fuzz::check_same(whole, chunked.finish()); !problem.empty())
            return std::string(log_format_name(format)) + " chunked: " + problem;
    }
    return {};
}

// A value read from a cut log must be the value of the whole log (memory may be lower: fewer ranks).
std::string check_no_invented_values(const ParsedLog& cut, const ParsedLog& whole)
{
    if (cut.format != whole.format)
        return {};
    for (const auto& c : cut.steps) {
        const StepRecord* w = nullptr;
        for (const auto& s : whole.steps) {
            if (s.step == c.step)
                w = &s;
        }
        if (!w)
            return "step " + std::to_string(c.step) + " is not in the whole log";
        const auto same = [](const std::optional<double>& a, const std::optional<double>& b) { return !a || a == b; };
        if (!same(c.step_time_s, w->step_time_s) || !same(c.tokens_per_s, w->tokens_per_s)
            || !same(c.samples_per_s, w->samples_per_s) || !same(c.tflops_per_gpu, w->tflops_per_gpu)
            || !same(c.mfu, w->mfu) || !same(c.power_W, w->power_W) || !same(c.loss, w->loss))
            return "step " + std::to_string(c.step) + " has a value the whole log does not";
        if (c.memory_GiB && (!w->memory_GiB || *c.memory_GiB > *w->memory_GiB))
            return "step " + std::to_string(c.step) + " has more memory than in the whole log";
    }
    return {};
}

} // namespace

class TestLogParseRobustness : public QObject {
    Q_OBJECT

private slots:
    void randomGarbage();
    void mutatedFixtures();
    void cutFixturesNeverInventValues();
    void pathologicalInputsStayFast_data();
    void pathologicalInputsStayFast();
};

void TestLogParseRobustness::randomGarbage()
{
    Rng rng(20240601);
    for (int i = 0; i < 400; ++i) {
        const std::string text = random_text(rng);
        const std::string problem = check_everything(text, rng);
        QVERIFY2(problem.empty(), ("random input " + std::to_string(i) + ": " + problem).c_str());
    }
}

void TestLogParseRobustness::mutatedFixtures()
{
    Rng rng(7);
    const auto fixtures = fixture_texts();
    QVERIFY(!fixtures.empty());
    for (std::size_t f = 0; f < fixtures.size(); ++f) {
        for (int i = 0; i < 40; ++i) {
            std::string text = mutate(fixtures[f], rng);
            if (i % 4 == 0) // splice in another log: mixed formats in one file
                text += mutate(fixtures[draw(rng, fixtures.size())], rng);
            const std::string problem = check_everything(text, rng);
            QVERIFY2(problem.empty(),
                ("fixture " + std::to_string(f) + " mutant " + std::to_string(i) + ": " + problem).c_str());
        }
    }
}

void TestLogParseRobustness::cutFixturesNeverInventValues()
{
    // A log read while the job still writes it ends anywhere; cut each real log around every line end
    // (where a missing newline matters) and at a stride in between.
    constexpr std::size_t kStride = 37;
    for (const std::string& text : fixture_texts()) {
        const ParsedLog whole = parse_training_log(text);
        std::vector<std::size_t> cuts;
        for (std::size_t i = 0; i < text.size(); i += kStride)
            cuts.push_back(i);
        for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', nl + 1)) {
            for (std::size_t d = 0; d < 6; ++d) {
                if (nl >= d)
                    cuts.push_back(nl - d);
            }
            cuts.push_back(nl + 1);
        }
        for (std::size_t cut : cuts) {
            const ParsedLog part = parse_training_log(std::string_view(text).substr(0, cut));
            const std::string problem = check_no_invented_values(part, whole);
            QVERIFY2(problem.empty(), ("cut at byte " + std::to_string(cut) + ": " + problem).c_str());
        }
    }
}

void TestLogParseRobustness::pathologicalInputsStayFast_data()
{
    QTest::addColumn<QByteArray>("text");
    constexpr std::size_t kBig = 4 << 20; // a few MiB: a quadratic pass would take hours
    auto repeat = [](const std::string& unit, std::size_t bytes) {
        std::string s;
        while (s.size() < bytes)
            s += unit;
        return QByteArray::fromStdString(s);
    };
    QTest::newRow("one huge line") << repeat(" iteration 1/ 1 | elapsed time per iteration (ms): 1 |", kBig);
    QTest::newRow("run-together memory reports")
        << repeat("[Rank 1] (after 1 iterations) memory (MB) | allocated: 1.0 | max reserved: 2.0", kBig);
    QTest::newRow("open record never closed") << repeat(" iteration 1/ 1 | elapsed: 1\nrate: 2\n", kBig);
    QTest::newRow("deep probe json") << QByteArray("PARALLAX_PROBE ") + repeat("[", kBig) + QByteArray("\n");
    QTest::newRow("digits") << repeat("9", kBig);
    QTest::newRow("escapes") << repeat("\x1b[", kBig);
    QTest::newRow("many short steps") << repeat("step: 1  loss: 1  tps: 1\n", kBig);
    QTest::newRow("profile header storm") << repeat("Profile Summary at step 1:\niter latency: 1 ms\n", kBig);
    QTest::newRow("empty lines") << repeat("\n", kBig);
}

void TestLogParseRobustness::pathologicalInputsStayFast()
{
    QFETCH(QByteArray, text);
    // Generous: about a second in a debug build; this catches super-linear passes, not slow machines.
    constexpr qint64 kLimitMs = 30000;
    QElapsedTimer timer;
    timer.start();
    Rng rng(1);
    const std::string problem = check_everything(text.toStdString(), rng);
    QVERIFY2(problem.empty(), problem.c_str());
    QVERIFY2(timer.elapsed() < kLimitMs, qPrintable(QString::number(timer.elapsed()) + QStringLiteral(" ms")));
}

QTEST_GUILESS_MAIN(TestLogParseRobustness)
#include "tst_log_parse_robustness.moc"
