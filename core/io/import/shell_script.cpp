#include "io/import/shell_script.hpp"

#include "io/import/shell_words.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

namespace parallax {

namespace {

using namespace shell;

// ------------------------------------------------------------------------------------------------
// Tests ([ ], [[ ]], test): true, false or unknown.

enum class Truth : unsigned char { no, yes, unknown };

Truth truth(bool b)
{
    return b ? Truth::yes : Truth::no;
}
Truth negate(Truth t)
{
    return t == Truth::unknown ? t : truth(t == Truth::no);
}
Truth both(Truth a, Truth b)
{
    if (a == Truth::no || b == Truth::no)
        return Truth::no;
    return a == Truth::yes && b == Truth::yes ? Truth::yes : Truth::unknown;
}
Truth either(Truth a, Truth b)
{
    if (a == Truth::yes || b == Truth::yes)
        return Truth::yes;
    return a == Truth::no && b == Truth::no ? Truth::no : Truth::unknown;
}

std::optional<long long> integer(const std::string& s)
{
    if (s.empty() || s.find_first_not_of("-0123456789") != std::string::npos)
        return std::nullopt;
    try {
        return std::stoll(s);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

Truth compare(const std::string& a, const std::string& op, const std::string& b)
{
    if (is_unknown_shell_value(a) || is_unknown_shell_value(b))
        return Truth::unknown;
    if (op == "=" || op == "==")
        return truth(a == b);
    if (op == "!=")
        return truth(a != b);
    const auto x = integer(a);
    const auto y = integer(b);
    if (!x || !y)
        return Truth::unknown;
    if (op == "-eq")
        return truth(*x == *y);
    if (op == "-ne")
        return truth(*x != *y);
    if (op == "-lt")
        return truth(*x < *y);
    if (op == "-le")
        return truth(*x <= *y);
    if (op == "-gt")
        return truth(*x > *y);
    if (op == "-ge")
        return truth(*x >= *y);
    return Truth::unknown;
}

Truth primary(const std::vector<std::string>& w)
{
    if (!w.empty() && w[0] == "!")
        return negate(primary(std::vector<std::string>(w.begin() + 1, w.end())));
    if (w.size() == 1)
        return is_unknown_shell_value(w[0]) ? Truth::unknown : truth(!w[0].empty());
    if (w.size() == 2 && (w[0] == "-z" || w[0] == "-n")) {
        if (is_unknown_shell_value(w[1]))
            return Truth::unknown;
        return truth(w[1].empty() == (w[0] == "-z"));
    }
    if (w.size() == 3)
        return compare(w[0], w[1], w[2]);
    return Truth::unknown; // file tests, regular expressions
}

Truth test_expression(const std::vector<std::string>& w)
{
    for (const char* op : { "-o", "||", "-a", "&&" }) {
        for (std::size_t i = 1; i + 1 < w.size(); ++i) {
            if (w[i] != op)
                continue;
            const Truth l = test_expression(std::vector<std::string>(w.begin(), w.begin() + static_cast<long>(i)));
            const Truth r = test_expression(std::vector<std::string>(w.begin() + static_cast<long>(i) + 1, w.end()));
            return op[0] == '-' && op[1] == 'o' ? either(l, r) : op[0] == '|' ? either(l, r) : both(l, r);
        }
    }
    return primary(w);
}

Truth test_command(std::vector<std::string> w)
{
    bool negated = false;
    while (!w.empty() && w[0] == "!") {
        negated = !negated;
        w.erase(w.begin());
    }
    Truth t = Truth::unknown;
    if (w.empty())
        t = Truth::unknown;
    else if ((w.front() == "[" && w.back() == "]") || (w.front() == "[[" && w.back() == "]]"))
        t = test_expression(std::vector<std::string>(w.begin() + 1, w.end() - 1));
    else if (w.front() == "test")
        t = test_expression(std::vector<std::string>(w.begin() + 1, w.end()));
    else if (w.front() == "true" || w.front() == ":")
        t = Truth::yes;
    else if (w.front() == "false")
        t = Truth::no;
    return negated ? negate(t) : t;
}

// ------------------------------------------------------------------------------------------------
// Statements.

struct SimpleCommand {
    std::vector<Token> tokens; // words, redirections and the parentheses of array assignments
    int line = 1;
};

struct AndOrList {
    std::vector<SimpleCommand> commands;
    std::vector<std::string> ops; // between commands: "&&", "||", "|"
};

// A compound command's frame: whether its body runs.
struct Frame {
    char kind = 'i'; // i: if, l: loop, c: case, b: { } group, f: function body, p: ( ) subshell
    bool parent_active = true;
    bool active = true;
    bool taken = false; // an if's branch already ran
    bool awaiting_brace = false; // a function whose "{" is still to come
};

constexpr int kMaxEvalDepth = 4;

std::string plain(const Token& t)
{
    if (t.kind != TokenKind::word)
        return {};
    std::string out;
    for (const WordPart& p : t.word) {
        if (p.quoted || p.expansion)
            return {};
        out += p.text;
    }
    return out;
}

// "NAME=" or "NAME+=" at the start of a word: the name, whether it appends, and the value's parts.
std::optional<std::pair<std::string, bool>> assignment(const Word& w, Word* value)
{
    if (w.empty() || w[0].quoted || w[0].expansion)
        return std::nullopt;
    const std::string& t = w[0].text;
    std::size_t n = 0;
    while (n < t.size() && is_name_char(t[n]))
        ++n;
    if (n == 0 || !is_name_start(t[0]) || n >= t.size())
        return std::nullopt;
    const bool append = t[n] == '+' && n + 1 < t.size() && t[n + 1] == '=';
    if (!append && t[n] != '=')
        return std::nullopt;
    if (value) {
        value->clear();
        const std::string rest = t.substr(n + (append ? 2 : 1));
        if (!rest.empty())
            value->push_back({ false, false, rest });
        value->insert(value->end(), w.begin() + 1, w.end());
    }
    return std::make_pair(t.substr(0, n), append);
}

class Interpreter {
public:
    explicit Interpreter(ShellRun& out)
        : m_out(out)
    {
    }
    void run_text(const std::string& text, int depth);

private:
    bool active() const { return m_frames.empty() || m_frames.back().active; }
    std::size_t read_list(const std::vector<Token>& t, std::size_t i, AndOrList& list) const;
    void run_list(AndOrList list);
    bool keyword(const std::string& word, AndOrList& list);
    void condition(const std::string& word, AndOrList& list);
    Truth evaluate(const AndOrList& list) const;
    void execute(const SimpleCommand& c);
    std::size_t assign(const std::vector<Token>& t, std::size_t i);
    void builtin_or_record(const std::vector<std::string>& words, int line);

    ShellRun& m_out;
    Variables m_vars;
    std::vector<Frame> m_frames;
    bool m_exited = false;
    int m_depth = 0;
};

// One and-or list from token i: simple commands joined by && || |, up to a separator. The parentheses
// of an array assignment (and the newlines inside them) belong to its command.
std::size_t Interpreter::read_list(const std::vector<Token>& t, std::size_t i, AndOrList& list) const
{
    SimpleCommand cmd;
    int paren = 0;
    for (; i < t.size(); ++i) {
        const Token& tok = t[i];
        if (paren > 0 || (tok.kind == TokenKind::lparen && tok.joined)) {
            paren += tok.kind == TokenKind::lparen ? 1 : tok.kind == TokenKind::rparen ? -1 : 0;
            if (tok.kind != TokenKind::separator)
                cmd.tokens.push_back(tok);
            continue;
        }
        if (tok.kind == TokenKind::separator)
            break;
        if (tok.kind == TokenKind::and_or || tok.kind == TokenKind::pipe) {
            list.commands.push_back(std::move(cmd));
            list.ops.push_back(tok.op);
            cmd = {};
            continue;
        }
        if (cmd.tokens.empty())
            cmd.line = tok.line;
        cmd.tokens.push_back(tok);
    }
    list.commands.push_back(std::move(cmd));
    return i + 1;
}

void Interpreter::run_text(const std::string& text, int depth)
{
    const int saved = m_depth;
    m_depth = depth;
    const std::vector<Token> tokens = Lexer(text).run();
    for (std::size_t i = 0; i < tokens.size() && !m_exited;) {
        AndOrList list;
        i = read_list(tokens, i, list);
        run_list(std::move(list));
    }
    m_depth = saved;
}

Truth Interpreter::evaluate(const AndOrList& list) const
{
    const Expander ex(m_vars);
    Truth result = Truth::unknown;
    for (std::size_t k = 0; k < list.commands.size(); ++k) {
        std::vector<std::string> words;
        for (const Token& t : list.commands[k].tokens)
            if (t.kind == TokenKind::word)
                for (std::string& f : ex.fields(t.word, true))
                    words.push_back(std::move(f));
        const Truth t = test_command(words);
        if (k == 0)
            result = t;
        else if (list.ops[k - 1] == "&&")
            result = both(result, t);
        else if (list.ops[k - 1] == "||")
            result = either(result, t);
        else
            result = Truth::unknown;
    }
    return result;
}

// "if"/"elif": the rest of the list is the test.
void Interpreter::condition(const std::string& word, AndOrList& list)
{
    Frame& f = m_frames.back();
    if (!f.parent_active || (word == "elif" && f.taken)) {
        f.active = false;
        return;
    }
    const Truth t = evaluate(list);
    if (t == Truth::unknown) {
        std::string text;
        for (const Token& tok : list.commands.front().tokens)
            text += (text.empty() ? "" : " ") + Expander(m_vars).joined(tok.word);
        m_out.notes.push_back("line " + std::to_string(list.commands.front().line) + ": the test `"
            + shell_value_text(text) + "` cannot be evaluated without running the script; its branch is not taken");
    }
    f.active = t == Truth::yes;
    f.taken = f.taken || f.active;
}

// Handles a leading keyword of the list's first command (removing it); true when the rest of the list
// is consumed by it.
bool Interpreter::keyword(const std::string& word, AndOrList& list)
{
    const bool now = active();
    if (word == "if") {
        m_frames.push_back({ 'i', now, false, false, false });
        condition(word, list);
        return true;
    }
    if (word == "elif" && !m_frames.empty()) {
        condition(word, list);
        return true;
    }
    if (word == "else" && !m_frames.empty()) {
        Frame& f = m_frames.back();
        f.active = f.parent_active && !f.taken;
        return false;
    }
    if (word == "fi" || word == "done" || word == "esac" || word == "}") {
        if (!m_frames.empty())
            m_frames.pop_back();
        return true;
    }
    if (word == "for" || word == "while" || word == "until" || word == "select" || word == "case") {
        if (now)
            m_out.notes.push_back("line " + std::to_string(list.commands.front().line) + ": a " + word
                + " block is not run (loops and case are beyond the importer's shell)");
        m_frames.push_back({ word == "case" ? 'c' : 'l', now, false, false, false });
        return true;
    }
    if (word == "{") {
        if (!m_frames.empty() && m_frames.back().awaiting_brace)
            m_frames.back().awaiting_brace = false;
        else
            m_frames.push_back({ 'b', now, now, false, false });
        return false;
    }
    return false; // then, do: nothing to do
}

void Interpreter::run_list(AndOrList list)
{
    if (list.commands.empty())
        return;
    std::vector<Token>& first = list.commands.front().tokens;
    while (!first.empty()) {
        const Token& t = first.front();
        if (t.kind == TokenKind::rparen && !m_frames.empty() && m_frames.back().kind == 'p') {
            m_frames.pop_back();
        } else if (t.kind == TokenKind::lparen && !t.joined) {
            m_frames.push_back({ 'p', active(), active(), false, false });
        } else {
            const std::string w = plain(t);
            static const std::vector<std::string> kKeywords = { "if", "elif", "else", "fi", "then", "do", "done", "for",
                "while", "until", "select", "case", "esac", "{", "}" };
            if (std::find(kKeywords.begin(), kKeywords.end(), w) == kKeywords.end())
                break;
            first.erase(first.begin());
            if (keyword(w, list))
                return;
            continue;
        }
        first.erase(first.begin());
    }
    // A function definition: "name() {" or "function name {"; its body is not run.
    if (first.size() >= 3 && first[1].kind == TokenKind::lparen && !first[1].joined
        && first[2].kind == TokenKind::rparen) {
        m_frames.push_back({ 'f', active(), false, false, first.size() < 4 });
        return;
    }
    if (!first.empty() && plain(first[0]) == "function") {
        m_frames.push_back({ 'f', active(), false, false, first.size() < 3 });
        return;
    }
    if (!active() || m_exited)
        return;
    for (const SimpleCommand& c : list.commands)
        execute(c);
}

// NAME=value or NAME=( words ) at t[i]; returns the index after it. The value is expanded before the
// variable changes (RUN="$RUN | tee log").
std::size_t Interpreter::assign(const std::vector<Token>& t, std::size_t i)
{
    Word value;
    const auto target = assignment(t[i].word, &value);
    const Expander ex(m_vars);
    std::vector<std::string> items;
    std::size_t next = i + 1;
    const bool array = i + 1 < t.size() && t[i + 1].kind == TokenKind::lparen && t[i + 1].joined;
    if (array) {
        std::size_t k = i + 2;
        for (; k < t.size() && t[k].kind != TokenKind::rparen; ++k)
            if (t[k].kind == TokenKind::word)
                for (std::string& f : ex.fields(t[k].word))
                    items.push_back(std::move(f));
        next = k + 1;
    } else {
        items.push_back(ex.joined(value));
    }
    std::vector<std::string>& var = m_vars[target->first];
    if (!target->second)
        var.clear();
    if (target->second && !array && !var.empty())
        var.back() += items.front();
    else
        var.insert(var.end(), items.begin(), items.end());
    return next;
}

void Interpreter::execute(const SimpleCommand& c)
{
    const std::vector<Token>& t = c.tokens;
    std::size_t i = 0;
    bool declaring = false;
    std::vector<std::string> words;
    const Expander ex(m_vars);
    while (i < t.size()) {
        const Token& tok = t[i];
        if (tok.kind == TokenKind::redirect) {
            i += 2;
        } else if (tok.kind != TokenKind::word) {
            ++i;
        } else if ((words.empty() || declaring) && assignment(tok.word, nullptr)) {
            i = assign(t, i);
        } else {
            const std::string w = plain(tok);
            if (words.empty()
                && (w == "export" || w == "declare" || w == "local" || w == "readonly" || w == "typeset")) {
                declaring = true;
            } else if (!(declaring && !w.empty() && w[0] == '-')) {
                for (std::string& f : ex.fields(tok.word))
                    words.push_back(std::move(f));
            }
            ++i;
        }
    }
    if (!declaring)
        builtin_or_record(words, c.line);
}

void Interpreter::builtin_or_record(const std::vector<std::string>& words, int line)
{
    if (words.empty())
        return;
    if (words[0] == "unset") {
        for (std::size_t k = 1; k < words.size(); ++k)
            m_vars.erase(words[k]);
    } else if (words[0] == "exit") {
        m_exited = true;
    } else if (words[0] == "eval" && m_depth < kMaxEvalDepth) {
        std::string text;
        for (std::size_t k = 1; k < words.size(); ++k)
            text += (k > 1 ? " " : "") + words[k];
        run_text(text, m_depth + 1);
    } else {
        m_out.commands.push_back({ words, line });
    }
}

} // namespace

std::string shell_value_text(std::string_view s)
{
    return shell::value_text(s);
}

ShellRun run_shell_script(const std::string& text)
{
    ShellRun out;
    Interpreter(out).run_text(text, 0);
    return out;
}

} // namespace parallax
