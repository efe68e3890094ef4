#include "io/import/shell_script.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

namespace parallax {

namespace {

// ------------------------------------------------------------------------------------------------
// Lexing: words made of literal and expansion parts (quoted or not), separators, parentheses.

struct WordPart {
    bool quoted = false;
    bool expansion = false; // text is "NAME", "{...}", "(...)", "((...))" or "`...`"
    std::string text;
};
using Word = std::vector<WordPart>;

enum class TokenKind : unsigned char { word, separator, and_or, pipe, lparen, rparen, redirect };

struct Token {
    TokenKind kind = TokenKind::word;
    Word word;
    std::string op; // "&&", "||", ">" ...
    int line = 1;
    bool joined = false; // a '(' right after an "NAME=" word (array assignment)
};

bool is_name_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

class Lexer {
public:
    explicit Lexer(const std::string& text)
        : m_s(text)
    {
    }
    std::vector<Token> run();

private:
    char peek(std::size_t ahead = 0) const { return m_i + ahead < m_s.size() ? m_s[m_i + ahead] : '\0'; }
    void end_word();
    void add(TokenKind kind, std::string op = {}, bool joined = false);
    void literal(char c, bool quoted);
    void read_single_quoted();
    void read_double_quoted();
    std::string read_balanced(char open, char close); // from after `open` to its matching `close`
    void read_dollar(bool quoted);
    void read_backtick(bool quoted);
    bool read_operator();
    void read_redirect();

    const std::string& m_s;
    std::size_t m_i = 0;
    int m_line = 1;
    std::vector<Token> m_tokens;
    Word m_word;
    bool m_in_word = false;
};

void Lexer::end_word()
{
    if (!m_in_word)
        return;
    Token t;
    t.kind = TokenKind::word;
    t.word = std::move(m_word);
    t.line = m_line;
    m_tokens.push_back(std::move(t));
    m_word.clear();
    m_in_word = false;
}

void Lexer::add(TokenKind kind, std::string op, bool joined)
{
    end_word();
    Token t;
    t.kind = kind;
    t.op = std::move(op);
    t.line = m_line;
    t.joined = joined;
    m_tokens.push_back(std::move(t));
}

void Lexer::literal(char c, bool quoted)
{
    m_in_word = true;
    if (!m_word.empty() && !m_word.back().expansion && m_word.back().quoted == quoted)
        m_word.back().text += c;
    else
        m_word.push_back({ quoted, false, std::string(1, c) });
}

void Lexer::read_single_quoted()
{
    m_in_word = true;
    ++m_i;
    std::string text;
    while (m_i < m_s.size() && m_s[m_i] != '\'') {
        m_line += m_s[m_i] == '\n' ? 1 : 0;
        text += m_s[m_i++];
    }
    ++m_i;
    m_word.push_back({ true, false, text });
}

void Lexer::read_double_quoted()
{
    m_in_word = true;
    if (m_word.empty())
        m_word.push_back({ true, false, {} }); // "" is an empty word, not nothing
    ++m_i;
    while (m_i < m_s.size() && m_s[m_i] != '"') {
        const char c = m_s[m_i];
        if (c == '\\' && std::string_view("\"\\$`\n").find(peek(1)) != std::string_view::npos) {
            if (peek(1) != '\n')
                literal(peek(1), true);
            m_line += peek(1) == '\n' ? 1 : 0;
            m_i += 2;
        } else if (c == '$') {
            read_dollar(true);
        } else if (c == '`') {
            read_backtick(true);
        } else {
            m_line += c == '\n' ? 1 : 0;
            literal(c, true);
            ++m_i;
        }
    }
    ++m_i;
}

std::string Lexer::read_balanced(char open, char close)
{
    std::string text;
    int depth = 1;
    while (m_i < m_s.size()) {
        const char c = m_s[m_i++];
        m_line += c == '\n' ? 1 : 0;
        if (c == open)
            ++depth;
        else if (c == close && --depth == 0)
            break;
        text += c;
    }
    return text;
}

void Lexer::read_dollar(bool quoted)
{
    m_in_word = true;
    const char next = peek(1);
    if (next == '{') {
        m_i += 2;
        m_word.push_back({ quoted, true, "{" + read_balanced('{', '}') + "}" });
    } else if (next == '(' && peek(2) == '(') {
        m_i += 3;
        std::string inner = read_balanced('(', ')');
        ++m_i; // the second ')'
        m_word.push_back({ quoted, true, "((" + inner + "))" });
    } else if (next == '(') {
        m_i += 2;
        m_word.push_back({ quoted, true, "(" + read_balanced('(', ')') + ")" });
    } else if (is_name_start(next)) {
        ++m_i;
        std::string name;
        while (is_name_char(peek()))
            name += m_s[m_i++];
        m_word.push_back({ quoted, true, name });
    } else if (std::isdigit(static_cast<unsigned char>(next)) || std::string_view("@*#?$!-").find(next) != std::string_view::npos) {
        m_word.push_back({ quoted, true, std::string(1, next) });
        m_i += 2;
    } else {
        literal('$', quoted);
        ++m_i;
    }
}

void Lexer::read_backtick(bool quoted)
{
    m_in_word = true;
    ++m_i;
    std::string text;
    while (m_i < m_s.size() && m_s[m_i] != '`')
        text += m_s[m_i++];
    ++m_i;
    m_word.push_back({ quoted, true, "`" + text + "`" });
}

// Separators and parentheses; true when one was read.
bool Lexer::read_operator()
{
    const char c = peek();
    const char n = peek(1);
    if (c == '\n' || c == ';') {
        add(TokenKind::separator, std::string(1, c));
        m_line += c == '\n' ? 1 : 0;
        ++m_i;
    } else if ((c == '&' && n == '&') || (c == '|' && n == '|')) {
        add(TokenKind::and_or, std::string { c, n });
        m_i += 2;
    } else if (c == '|') {
        add(TokenKind::pipe, "|");
        m_i += n == '&' ? 2 : 1;
    } else if (c == '&' && n != '>') {
        add(TokenKind::separator, "&");
        ++m_i;
    } else if (c == '(') {
        const bool joined = m_in_word && !m_word.empty() && !m_word.back().expansion && !m_word.back().quoted
            && !m_word.back().text.empty() && m_word.back().text.back() == '=';
        add(TokenKind::lparen, "(", joined);
        ++m_i;
    } else if (c == ')') {
        add(TokenKind::rparen, ")");
        ++m_i;
    } else {
        return false;
    }
    return true;
}

// ">", ">>", "<", ">&", "&>", "2>&1": the operator, and whether a target word follows.
void Lexer::read_redirect()
{
    if (m_in_word && m_word.size() == 1 && !m_word[0].quoted && !m_word[0].expansion
        && m_word[0].text.find_first_not_of("0123456789") == std::string::npos) {
        m_word.clear(); // a file-descriptor number
        m_in_word = false;
    }
    std::string op;
    while (std::string_view("<>&").find(peek()) != std::string_view::npos && peek() != '\0')
        op += m_s[m_i++];
    if (op.back() == '&' && std::isdigit(static_cast<unsigned char>(peek()))) {
        while (std::isdigit(static_cast<unsigned char>(peek())))
            ++m_i;
        end_word();
        return; // ">&1": complete
    }
    add(TokenKind::redirect, op);
}

std::vector<Token> Lexer::run()
{
    while (m_i < m_s.size()) {
        const char c = peek();
        if (c == '\\' && peek(1) == '\n') {
            m_i += 2;
            ++m_line;
        } else if (c == '\\') {
            literal(peek(1), true);
            m_i += 2;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            end_word();
            ++m_i;
        } else if (c == '#' && !m_in_word) {
            while (m_i < m_s.size() && m_s[m_i] != '\n')
                ++m_i;
        } else if (c == '\'') {
            read_single_quoted();
        } else if (c == '"') {
            read_double_quoted();
        } else if (c == '$') {
            read_dollar(false);
        } else if (c == '`') {
            read_backtick(false);
        } else if (c == '>' || c == '<' || (c == '&' && peek(1) == '>')) {
            read_redirect();
        } else if (!read_operator()) {
            literal(c, false);
            ++m_i;
        }
    }
    add(TokenKind::separator, "\n");
    return m_tokens;
}

// ------------------------------------------------------------------------------------------------
// Variables and expansion.

// An escape for the shell's special characters inside an unknown value's text, so that the value
// survives an eval as one word: '\x02' then the character with its high bit set.
constexpr char kShellEscape = '\x02';

std::string unknown(std::string_view what)
{
    std::string out(1, kUnknownShellValue);
    for (char c : what) {
        if (std::string_view(" \t\n\"'`$()|&;<>\\{}#").find(c) != std::string_view::npos) {
            out += kShellEscape;
            out += static_cast<char>(static_cast<unsigned char>(c) | 0x80U);
        } else {
            out += c;
        }
    }
    return out + kUnknownShellValue;
}

using Variables = std::map<std::string, std::vector<std::string>>; // a scalar is a one-element array

struct Expanded {
    std::vector<std::string> values;
    bool is_list = false; // "${NAME[@]}": one field per element even when quoted
};

std::optional<long long> arithmetic(std::string_view expr, const Variables& vars);

class Expander {
public:
    explicit Expander(const Variables& vars)
        : m_vars(vars)
    {
    }
    // A word's fields: unquoted expansions split on blanks; an unquoted empty expansion gives no field
    // unless `keep_empty` (test operands).
    std::vector<std::string> fields(const Word& w, bool keep_empty = false) const;
    std::string joined(const Word& w) const; // no splitting (assignment values)
    Expanded expand(const std::string& text) const;

private:
    std::string scalar(const std::string& name) const;
    bool is_set(const std::string& name) const { return m_vars.count(name) > 0; }
    Expanded braced(const std::string& inner) const;
    std::string operand(const std::string& word) const; // the word after ":-" etc.

    const Variables& m_vars;
};

std::string Expander::scalar(const std::string& name) const
{
    const auto it = m_vars.find(name);
    return it == m_vars.end() || it->second.empty() ? std::string() : it->second.front();
}

std::string Expander::operand(const std::string& word) const
{
    Lexer lexer(word);
    std::string out;
    for (const Token& t : lexer.run())
        if (t.kind == TokenKind::word)
            out += (out.empty() ? "" : " ") + joined(t.word);
    return out;
}

// ${...}: NAME, #NAME, NAME[@], NAME[N], NAME:-word, NAME-word, NAME:=word, NAME:+word, NAME+word.
Expanded Expander::braced(const std::string& inner) const
{
    if (!inner.empty() && inner[0] == '#')
        return { { std::to_string(scalar(inner.substr(1)).size()) }, false };
    std::size_t n = 0;
    while (n < inner.size() && is_name_char(inner[n]))
        ++n;
    const std::string name = inner.substr(0, n);
    const std::string rest = inner.substr(n);
    if (rest == "[@]" || rest == "[*]") {
        const auto it = m_vars.find(name);
        return { it == m_vars.end() ? std::vector<std::string> {} : it->second, true };
    }
    if (rest.empty())
        return { { scalar(name) }, false };
    const bool colon = rest[0] == ':';
    const std::string op = rest.substr(colon ? 1 : 0, 1);
    const std::string word = rest.substr(colon ? 2 : 1);
    const bool unset_or_empty = !is_set(name) || (colon && scalar(name).empty());
    if (op == "-" || op == "=")
        return { { unset_or_empty ? operand(word) : scalar(name) }, false };
    if (op == "+")
        return { { unset_or_empty ? std::string() : operand(word) }, false };
    if (op == "?")
        return { { scalar(name) }, false };
    return { { unknown("${" + inner + "}") }, false };
}

Expanded Expander::expand(const std::string& text) const
{
    if (text.rfind("((", 0) == 0) {
        const auto v = arithmetic(std::string_view(text).substr(2, text.size() - 4), m_vars);
        return { { v ? std::to_string(*v) : unknown("$" + text) }, false };
    }
    if (text[0] == '(' || text[0] == '`')
        return { { unknown(text[0] == '(' ? "$" + text : text) }, false };
    if (text[0] == '{')
        return braced(text.substr(1, text.size() - 2));
    if (text == "#")
        return { { "0" }, false };
    if (text == "@" || text == "*")
        return { {}, true };
    if (!is_name_start(text[0]))
        return { { std::string() }, false }; // positional and special parameters: none given
    return { { scalar(text) }, false };
}

std::vector<std::string> Expander::fields(const Word& w, bool keep_empty) const
{
    std::vector<std::string> out;
    std::string current;
    bool has_current = false;
    auto flush = [&] {
        if (has_current || (keep_empty && out.empty()))
            out.push_back(current);
        current.clear();
        has_current = false;
    };
    for (const WordPart& p : w) {
        if (!p.expansion) {
            current += p.text;
            has_current = true;
            continue;
        }
        const Expanded e = expand(p.text);
        for (std::size_t i = 0; i < e.values.size(); ++i) {
            if (i > 0 && e.is_list)
                flush();
            if (p.quoted) {
                current += e.values[i];
                has_current = true;
                continue;
            }
            std::size_t start = 0;
            const std::string& v = e.values[i];
            while (start <= v.size()) {
                const std::size_t blank = v.find_first_of(" \t\n", start);
                const std::string piece = v.substr(start, blank == std::string::npos ? std::string::npos : blank - start);
                if (!piece.empty()) {
                    current += piece;
                    has_current = true;
                }
                if (blank == std::string::npos)
                    break;
                if (has_current)
                    flush();
                start = blank + 1;
            }
        }
    }
    if (has_current || (keep_empty && out.empty()))
        out.push_back(current);
    return out;
}

std::string Expander::joined(const Word& w) const
{
    std::string out;
    for (const WordPart& p : w) {
        if (!p.expansion) {
            out += p.text;
            continue;
        }
        const Expanded e = expand(p.text);
        for (std::size_t i = 0; i < e.values.size(); ++i)
            out += (i > 0 ? " " : "") + e.values[i];
    }
    return out;
}

// Integer arithmetic of $((...)): + - * / % and parentheses over numbers and variables.
class Arithmetic {
public:
    Arithmetic(std::string_view expr, const Variables& vars)
        : m_e(expr)
        , m_vars(vars)
    {
    }
    std::optional<long long> run()
    {
        const auto v = sum();
        skip();
        return m_i == m_e.size() ? v : std::nullopt;
    }

private:
    void skip()
    {
        while (m_i < m_e.size() && (m_e[m_i] == ' ' || m_e[m_i] == '\t' || m_e[m_i] == '$' || m_e[m_i] == '{' || m_e[m_i] == '}'))
            ++m_i;
    }
    std::optional<long long> atom()
    {
        skip();
        if (m_i < m_e.size() && m_e[m_i] == '(') {
            ++m_i;
            const auto v = sum();
            skip();
            if (m_i >= m_e.size() || m_e[m_i] != ')')
                return std::nullopt;
            ++m_i;
            return v;
        }
        if (m_i < m_e.size() && m_e[m_i] == '-') {
            ++m_i;
            const auto v = atom();
            return v ? std::optional<long long>(-*v) : std::nullopt;
        }
        std::string token;
        while (m_i < m_e.size() && is_name_char(m_e[m_i]))
            token += m_e[m_i++];
        if (token.empty())
            return std::nullopt;
        if (std::isdigit(static_cast<unsigned char>(token[0])))
            return token.find_first_not_of("0123456789") == std::string::npos ? std::optional<long long>(std::stoll(token)) : std::nullopt;
        const auto it = m_vars.find(token);
        if (it == m_vars.end() || it->second.empty() || it->second.front().empty())
            return 0;
        const std::string& v = it->second.front();
        if (v.find_first_not_of("-0123456789") != std::string::npos)
            return std::nullopt;
        return std::stoll(v);
    }
    std::optional<long long> product()
    {
        auto v = atom();
        while (v) {
            skip();
            if (m_i >= m_e.size() || std::string_view("*/%").find(m_e[m_i]) == std::string_view::npos)
                break;
            const char op = m_e[m_i++];
            const auto r = atom();
            if (!r || ((op == '/' || op == '%') && *r == 0))
                return std::nullopt;
            v = op == '*' ? *v * *r : op == '/' ? *v / *r : *v % *r;
        }
        return v;
    }
    std::optional<long long> sum()
    {
        auto v = product();
        while (v) {
            skip();
            if (m_i >= m_e.size() || (m_e[m_i] != '+' && m_e[m_i] != '-'))
                break;
            const char op = m_e[m_i++];
            const auto r = product();
            if (!r)
                return std::nullopt;
            v = op == '+' ? *v + *r : *v - *r;
        }
        return v;
    }

    std::string_view m_e;
    const Variables& m_vars;
    std::size_t m_i = 0;
};

std::optional<long long> arithmetic(std::string_view expr, const Variables& vars)
{
    try {
        return Arithmetic(expr, vars).run();
    } catch (const std::exception&) {
        return std::nullopt; // out-of-range numbers
    }
}

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
            static const std::vector<std::string> kKeywords
                = { "if", "elif", "else", "fi", "then", "do", "done", "for", "while", "until", "select", "case", "esac", "{", "}" };
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
            if (words.empty() && (w == "export" || w == "declare" || w == "local" || w == "readonly" || w == "typeset")) {
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
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == kShellEscape && i + 1 < s.size())
            out += static_cast<char>(static_cast<unsigned char>(s[++i]) & 0x7FU);
        else if (s[i] != kUnknownShellValue)
            out += s[i];
    }
    return out;
}

ShellRun run_shell_script(const std::string& text)
{
    ShellRun out;
    Interpreter(out).run_text(text, 0);
    return out;
}

} // namespace parallax
