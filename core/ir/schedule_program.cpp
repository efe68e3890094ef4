#include "ir/schedule_program.hpp"

#include <cctype>
#include <charconv>
#include <deque>
#include <mutex>
#include <sstream>

namespace parallax {

namespace {

[[noreturn]] void fail(const std::string& message)
{
    throw ScheduleProgramError(message);
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const char* prefix)
{
    return s.rfind(prefix, 0) == 0;
}

// "<mb>" or "<mb>.<chunk>" (chunk 0 when left out).
bool parse_ids(std::string_view s, std::int32_t& mb, std::int16_t& chunk)
{
    const char* end = s.data() + s.size();
    auto r = std::from_chars(s.data(), end, mb);
    if (r.ec != std::errc {} || mb < 0)
        return false;
    chunk = 0;
    if (r.ptr == end)
        return true;
    if (*r.ptr != '.')
        return false;
    auto r2 = std::from_chars(r.ptr + 1, end, chunk);
    return r2.ec == std::errc {} && r2.ptr == end && chunk >= 0;
}

bool pass_letter(std::string_view s, PassKind& kind, std::size_t& len)
{
    len = 1;
    if (s.starts_with("F"))
        kind = PassKind::forward;
    else if (s.starts_with("B"))
        kind = PassKind::backward_input;
    else if (s.starts_with("W"))
        kind = PassKind::backward_weight;
    else
        return false;
    return true;
}

const char* kTokenHelp = "expected F<mb>.<chunk>, B, W (W...~ floats), BW, SEND:F/SEND:B, RECV:F/RECV:B, A2A or "
                         "WAIT:F/B/W, e.g. F3.0";

ScheduleDirective parse_directive(const std::string& token, const std::string& where)
{
    ScheduleDirective d;
    std::string_view t(token);
    auto bad = [&]() { fail(where + ": cannot read \"" + token + "\": " + kTokenHelp); };
    auto ids = [&](std::string_view rest) {
        if (!parse_ids(rest, d.microbatch, d.chunk))
            bad();
    };
    std::size_t len = 0;
    if (t.starts_with("SEND:") || t.starts_with("RECV:") || t.starts_with("WAIT:")) {
        d.kind = t.starts_with("SEND:") ? DirectiveKind::send
            : t.starts_with("RECV:")    ? DirectiveKind::recv
                                        : DirectiveKind::wait;
        t.remove_prefix(5);
        if (!pass_letter(t, d.target, len))
            bad();
        if (d.kind != DirectiveKind::wait && d.target == PassKind::backward_weight)
            fail(where + ": \"" + token + "\": SEND and RECV carry activations (F) or gradients (B), not W");
        ids(t.substr(len));
        return d;
    }
    if (t.starts_with("A2A")) {
        d.kind = DirectiveKind::all_to_all;
        ids(t.substr(3));
        return d;
    }
    if (t.starts_with("BW")) {
        d.kind = DirectiveKind::backward_full;
        ids(t.substr(2));
        return d;
    }
    PassKind k {};
    if (!pass_letter(t, k, len))
        bad();
    d.kind = k == PassKind::forward     ? DirectiveKind::forward
        : k == PassKind::backward_input ? DirectiveKind::backward_input
                                        : DirectiveKind::backward_weight;
    t.remove_prefix(len);
    if (d.kind == DirectiveKind::backward_weight && t.ends_with("~")) {
        d.filler = true;
        t.remove_suffix(1);
    }
    ids(t);
    return d;
}

std::vector<std::string> split_words(const std::string& s)
{
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

void read_header(ScheduleProgram& p, const std::vector<std::string>& words, const std::string& where)
{
    if (words.size() != 2)
        fail(where + ": \"" + words[0] + "\" takes one value");
    if (words[0] == "layout") {
        if (words[1] == "interleaved")
            p.layout = ChunkLayout::interleaved;
        else if (words[1] == "dualpipe")
            p.layout = ChunkLayout::dualpipe;
        else
            fail(where + ": layout is interleaved or dualpipe, got \"" + words[1] + "\"");
    } else {
        if (words[1] == "in-order")
            p.order = ProgramOrder::in_order;
        else if (words[1] == "priority")
            p.order = ProgramOrder::priority;
        else
            fail(where + ": order is in-order or priority, got \"" + words[1] + "\"");
    }
}

void require_all_stages(const std::vector<bool>& seen)
{
    for (std::size_t s = 0; s < seen.size(); ++s)
        if (!seen[s])
            fail("stage " + std::to_string(s) + " is missing (stages are numbered 0.." + std::to_string(seen.size() - 1)
                + ")");
}

} // namespace

ScheduleProgram parse_schedule_text(const std::string& text)
{
    ScheduleProgram p;
    std::vector<bool> seen;
    std::istringstream in(text);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        const std::string where = "line " + std::to_string(line_no);
        line = trim(line.substr(0, line.find('#')));
        if (line.empty())
            continue;
        if (starts_with(line, "layout ") || starts_with(line, "order ")) {
            read_header(p, split_words(line), where);
            continue;
        }
        const auto colon = line.find(':');
        int stage = -1;
        const std::string head = trim(line.substr(0, colon));
        if (colon == std::string::npos || !starts_with(head, "stage ")
            || std::from_chars(head.data() + 6, head.data() + head.size(), stage).ec != std::errc {} || stage < 0
            || stage > 65535)
            fail(where + ": expected \"stage <n>: <directives>\", \"layout ...\" or \"order ...\"");
        if (static_cast<std::size_t>(stage) >= seen.size()) {
            seen.resize(static_cast<std::size_t>(stage) + 1, false);
            p.stages.resize(seen.size());
        }
        if (seen[stage])
            fail(where + ": stage " + std::to_string(stage) + " is listed twice");
        seen[stage] = true;
        for (const std::string& w : split_words(line.substr(colon + 1)))
            p.stages[stage].push_back(parse_directive(w, where + " (stage " + std::to_string(stage) + ")"));
    }
    if (p.stages.empty())
        fail("no stages: write one \"stage <n>: ...\" line per pipeline stage");
    require_all_stages(seen);
    return p;
}

ScheduleProgram parse_schedule_stages(const std::vector<std::vector<std::string>>& stages)
{
    ScheduleProgram p;
    if (stages.empty())
        fail("no stages: give one list of directives per pipeline stage");
    p.stages.resize(stages.size());
    for (std::size_t s = 0; s < stages.size(); ++s)
        for (std::size_t i = 0; i < stages[s].size(); ++i)
            p.stages[s].push_back(
                parse_directive(stages[s][i], "stage " + std::to_string(s) + ", step " + std::to_string(i)));
    return p;
}

namespace {

// One torch.distributed.pipelining action, "[stage][action][microbatch]" (schedules.py _Action.from_str).
void read_csv_action(ScheduleProgram& p, int rank, int ranks, const std::string& cell, const std::string& where)
{
    std::size_t i = 0;
    while (i < cell.size() && std::isdigit(static_cast<unsigned char>(cell[i])))
        ++i;
    std::size_t j = cell.size();
    while (j > i && std::isdigit(static_cast<unsigned char>(cell[j - 1])))
        --j;
    if (i == 0 || j == cell.size() || j <= i)
        fail(where + ": cannot read \"" + cell + "\" (expected <stage><action><microbatch>, e.g. 0F0)");
    const int stage = std::stoi(cell.substr(0, i));
    const std::string action = cell.substr(i, j - i);
    ScheduleDirective d;
    d.microbatch = std::stoi(cell.substr(j));
    if (stage % ranks != rank)
        fail(where + ": stage " + std::to_string(stage) + " on rank " + std::to_string(rank)
            + ": only the looped placement (stage s on rank s mod ranks) is read; V-shaped placements are not");
    d.chunk = static_cast<std::int16_t>(stage / ranks);
    // _ComputationType's letters: F forward, I backward-input, W backward-weight, B full backward.
    if (action == "F")
        d.kind = DirectiveKind::forward;
    else if (action == "I")
        d.kind = DirectiveKind::backward_input;
    else if (action == "W")
        d.kind = DirectiveKind::backward_weight;
    else if (action == "B")
        d.kind = DirectiveKind::backward_full;
    else if (action == "SEND_F" || action == "SEND_B" || action == "RECV_F" || action == "RECV_B") {
        d.kind = action[0] == 'S' ? DirectiveKind::send : DirectiveKind::recv;
        d.target = action.back() == 'F' ? PassKind::forward : PassKind::backward_input;
    } else
        fail(where + ": action \"" + action
            + "\" is not one Parallax reads (F, I, W, B, SEND_F, RECV_F, SEND_B, RECV_B)");
    p.stages[rank].push_back(d);
}

} // namespace

ScheduleProgram parse_torchtitan_csv(const std::string& text)
{
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> cells;
        std::string cell;
        std::istringstream cs(line);
        while (std::getline(cs, cell, ','))
            cells.push_back(trim(cell));
        rows.push_back(cells);
    }
    while (!rows.empty() && (rows.back().empty() || (rows.back().size() == 1 && rows.back()[0].empty())))
        rows.pop_back();
    if (rows.empty())
        fail("the CSV has no rows (one row per pipeline rank)");
    ScheduleProgram p;
    const int ranks = static_cast<int>(rows.size());
    p.stages.resize(rows.size());
    for (int r = 0; r < ranks; ++r)
        for (std::size_t c = 0; c < rows[r].size(); ++c)
            if (!rows[r][c].empty())
                read_csv_action(
                    p, r, ranks, rows[r][c], "row " + std::to_string(r + 1) + ", column " + std::to_string(c + 1));
    return p;
}

std::string torchtitan_schedule_csv(const ScheduleProgram& p)
{
    if (p.layout == ChunkLayout::dualpipe)
        fail("a DualPipe-layout program has no looped torchtitan CSV (torchtitan's DualPipeV is V-shaped)");
    const int ranks = static_cast<int>(p.stages.size());
    std::string out;
    for (int r = 0; r < ranks; ++r) {
        std::string row;
        for (const ScheduleDirective& d : p.stages[r]) {
            std::string action;
            switch (d.kind) {
            case DirectiveKind::forward:
                action = "F";
                break;
            case DirectiveKind::backward_input:
                action = "I";
                break;
            case DirectiveKind::backward_weight:
                action = "W";
                break;
            case DirectiveKind::backward_full:
                action = "B";
                break;
            case DirectiveKind::send:
            case DirectiveKind::recv:
                action = std::string(d.kind == DirectiveKind::send ? "SEND_" : "RECV_")
                    + (d.target == PassKind::forward ? "F" : "B");
                break;
            case DirectiveKind::all_to_all:
            case DirectiveKind::wait:
                continue;
            }
            if (!row.empty())
                row += ",";
            row += std::to_string(d.chunk * ranks + r) + action + std::to_string(d.microbatch);
        }
        out += row + "\n";
    }
    return out;
}

std::string directive_text(const ScheduleDirective& d)
{
    auto letter = [](PassKind k) {
        return k == PassKind::forward ? std::string("F") : k == PassKind::backward_input ? "B" : "W";
    };
    std::string head;
    switch (d.kind) {
    case DirectiveKind::forward:
        head = "F";
        break;
    case DirectiveKind::backward_input:
        head = "B";
        break;
    case DirectiveKind::backward_weight:
        head = "W";
        break;
    case DirectiveKind::backward_full:
        head = "BW";
        break;
    case DirectiveKind::send:
        head = "SEND:" + letter(d.target);
        break;
    case DirectiveKind::recv:
        head = "RECV:" + letter(d.target);
        break;
    case DirectiveKind::all_to_all:
        head = "A2A";
        break;
    case DirectiveKind::wait:
        head = "WAIT:" + letter(d.target);
        break;
    }
    return head + std::to_string(d.microbatch) + "." + std::to_string(d.chunk) + (d.filler ? "~" : "");
}

std::string schedule_program_text(const ScheduleProgram& p)
{
    std::string out;
    if (p.layout == ChunkLayout::dualpipe)
        out += "layout dualpipe\n";
    if (p.order == ProgramOrder::priority)
        out += "order priority\n";
    for (std::size_t s = 0; s < p.stages.size(); ++s) {
        out += "stage " + std::to_string(s) + ":";
        for (const ScheduleDirective& d : p.stages[s])
            out += " " + directive_text(d);
        out += "\n";
    }
    return out;
}

const ScheduleProgram* intern_schedule_program(ScheduleProgram p)
{
    // A deque never moves its elements, so the pointers stay valid for the process.
    static std::mutex mutex;
    static std::deque<ScheduleProgram> programs;
    const std::lock_guard<std::mutex> lock(mutex);
    for (const ScheduleProgram& q : programs)
        if (q == p)
            return &q;
    programs.push_back(std::move(p));
    return &programs.back();
}

} // namespace parallax
