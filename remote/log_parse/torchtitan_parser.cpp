#include "log_parse/torchtitan_parser.hpp"

#include "log_parse/text_scan.hpp"

#include <optional>

namespace parallax::remote {

namespace {

using namespace std::string_view_literals;

// The value token after "key:" (spaces skipped, up to the next space), or nothing when the key is absent
// or the token runs into a cut at the end of an incomplete line.
std::optional<std::string_view> field_token(
    std::string_view line, std::string_view key, std::size_t from, bool complete)
{
    const std::size_t p = text::find_word(line, key, from);
    if (p == std::string_view::npos)
        return std::nullopt;
    const std::size_t b = text::skip_spaces(line, p + key.size());
    std::size_t e = b;
    while (e < line.size() && !text::is_space(line[e]))
        ++e;
    if (e == b || (!complete && e == line.size()))
        return std::nullopt;
    return line.substr(b, e - b);
}

// The token must be exactly the number (with thousands separators), e.g. "10,530"; "N/A" is absent.
std::optional<double> grouped_token(std::optional<std::string_view> token)
{
    if (!token)
        return std::nullopt;
    std::size_t n = 0;
    const auto v = text::parse_grouped_number(*token, 0, &n);
    return (v && n == token->size()) ? v : std::nullopt;
}

// "39.73%" -> 0.3973. torchtitan always prints MFU as a percentage.
std::optional<double> percent_token(std::optional<std::string_view> token)
{
    if (!token)
        return std::nullopt;
    std::size_t n = 0;
    const auto v = text::parse_number(*token, -2, &n);
    if (!v || n == 0 || (n != token->size() && !(n + 1 == token->size() && (*token)[n] == '%')))
        return std::nullopt;
    return v;
}

// "169.10GiB(94.81%)" or "5.38 GiB(5.66%)"; only GiB is read, the unit torchtitan prints.
std::optional<double> memory_GiB(std::string_view line, std::size_t from, bool complete)
{
    const auto token = field_token(line, "memory:"sv, from, complete);
    if (!token)
        return std::nullopt;
    std::size_t n = 0;
    const auto v = text::parse_number(*token, 0, &n);
    if (!v)
        return std::nullopt;
    // The unit follows the number directly or after one space (then it is the next token).
    const std::size_t number_end = static_cast<std::size_t>(token->data() - line.data()) + n;
    const std::size_t unit_at = text::skip_spaces(line, number_end);
    if (!line.substr(unit_at).starts_with("GiB"sv))
        return std::nullopt;
    if (!complete && unit_at + 3 >= line.size())
        return std::nullopt;
    return v;
}

// torchtitan's validator prints "validate step: 100  loss: ...  memory: ..." after the training step of the
// same number; its loss and memory are not the training step's.
bool is_validation(std::string_view before_step)
{
    const auto t = text::trim(before_step);
    return t.ends_with("validate"sv) || t.ends_with("Validation"sv) || t.ends_with("validation"sv);
}

} // namespace

void TorchtitanParser::on_line(std::string_view line, bool complete)
{
    const std::size_t step_at = text::find_word(line, "step:"sv);
    if (step_at == std::string_view::npos || is_validation(line.substr(0, step_at)))
        return;
    const std::size_t number_at = text::skip_spaces(line, step_at + 5);
    std::size_t n = 0;
    const auto step = text::parse_count(line.substr(number_at), &n);
    if (!step || (!complete && number_at + n == line.size()))
        return;
    const std::size_t fields_from = number_at + n;
    // A torchtitan step line has a loss and at least one throughput or memory field; DeepSpeed's
    // pipeline "step: 10 / 100 loss: ... iter time (s): ..." has a loss but none of these.
    if (text::find_word(line, "loss:"sv, fields_from) == std::string_view::npos)
        return;
    const auto tps = field_token(line, "tps:"sv, fields_from, complete);
    const auto wps = field_token(line, "wps:"sv, fields_from, complete);
    const auto tflops = field_token(line, "tflops:"sv, fields_from, complete);
    const auto mfu = field_token(line, "mfu:"sv, fields_from, complete);
    const auto memory = memory_GiB(line, fields_from, complete);
    const bool has_metric = text::find_word(line, "tps:"sv, fields_from) != std::string_view::npos
        || text::find_word(line, "wps:"sv, fields_from) != std::string_view::npos
        || text::find_word(line, "tflops:"sv, fields_from) != std::string_view::npos
        || text::find_word(line, "mfu:"sv, fields_from) != std::string_view::npos
        || text::find_word(line, "memory:"sv, fields_from) != std::string_view::npos;
    if (!has_metric)
        return;

    ++m_records;
    StepRecord& r = m_table.at(*step);
    set_once(r.loss, grouped_token(field_token(line, "loss:"sv, fields_from, complete)));
    set_once(r.tokens_per_s, grouped_token(tps ? tps : wps));
    set_once(r.tflops_per_gpu, grouped_token(tflops));
    set_once(r.mfu, percent_token(mfu));
    if (memory)
        m_table.raise_memory(*step, *memory);
    if (const auto t = text::find_fractional_timestamp_us(line.substr(0, step_at)))
        m_table.note_timestamp(*step, *t);
}

ParsedLog TorchtitanParser::result() const
{
    return m_table.build(LogFormat::torchtitan, true);
}

} // namespace parallax::remote
