#include "io/import/shell_words.hpp"

#include "io/import/shell_script.hpp"

#include <cctype>
#include <exception>

namespace parallax::shell {

// ------------------------------------------------------------------------------------------------
// Lexing: words made of literal and expansion parts (quoted or not), separators, parentheses.

bool is_name_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

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
    } else if (std::isdigit(static_cast<unsigned char>(next))
        || std::string_view("@*#?$!-").find(next) != std::string_view::npos) {
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

std::string value_text(std::string_view s)
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
    // "${X:}" has an operator position but no operator (fuzz_import found the out-of-range substr).
    const std::size_t word_at = colon ? 2 : 1;
    const std::string word = rest.size() > word_at ? rest.substr(word_at) : std::string();
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
                const std::string piece
                    = v.substr(start, blank == std::string::npos ? std::string::npos : blank - start);
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

namespace {

// A recursive-descent reader of $((...)).
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
        while (m_i < m_e.size()
            && (m_e[m_i] == ' ' || m_e[m_i] == '\t' || m_e[m_i] == '$' || m_e[m_i] == '{' || m_e[m_i] == '}'))
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
            return token.find_first_not_of("0123456789") == std::string::npos
                ? std::optional<long long>(std::stoll(token))
                : std::nullopt;
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

} // namespace

std::optional<long long> arithmetic(std::string_view expr, const Variables& vars)
{
    try {
        return Arithmetic(expr, vars).run();
    } catch (const std::exception&) {
        return std::nullopt; // out-of-range numbers
    }
}

} // namespace parallax::shell
