#pragma once
// The words of a shell script as shell_script.cpp interprets them: the lexer (quotes, expansions,
// operators, comments, continuations) and the expansion of words against the script's variables
// (${VAR:-default}, arrays, $((arithmetic)); command substitutions become unknown values).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::shell {

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

bool is_name_start(char c);
bool is_name_char(char c);

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

// An unknown value (what a command substitution would print): kUnknownShellValue around its text, the
// shell's special characters escaped so that it survives an eval as one word.
std::string unknown(std::string_view what);
// The readable text of a value that may hold unknown parts.
std::string value_text(std::string_view s);

using Variables = std::map<std::string, std::vector<std::string>>; // a scalar is a one-element array

struct Expanded {
    std::vector<std::string> values;
    bool is_list = false; // "${NAME[@]}": one field per element even when quoted
};

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

// Integer arithmetic of $((...)): + - * / % and parentheses over numbers and variables.
std::optional<long long> arithmetic(std::string_view expr, const Variables& vars);

} // namespace parallax::shell
