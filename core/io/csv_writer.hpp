#pragma once
// CSV text built row by row: fields are separated by commas and quoted as RFC 4180 says (a field
// holding a comma, a double quote, CR or LF is wrapped in double quotes, its quotes doubled). Rows end
// with a bare LF, not RFC 4180's CRLF, because that is what the exports have always written and
// spreadsheets read both. Numbers are written like printf's %g (and Qt's QString::number(v, 'g', n)).
#include <initializer_list>
#include <string>
#include <string_view>

namespace parallax {

class CsvWriter {
public:
    CsvWriter() = default;
    // Starts with a header row of these column names.
    explicit CsvWriter(std::initializer_list<std::string_view> header);

    // A text field, quoted only when RFC 4180 needs it.
    CsvWriter& field(std::string_view text);
    // A text field always in quotes (free text such as notes, quoted even when plain).
    CsvWriter& quoted_field(std::string_view text);
    CsvWriter& integer(long long value);
    // `significant_digits` as printf's %.*g: trailing zeros dropped, exponent form for very large or
    // small magnitudes.
    CsvWriter& number(double value, int significant_digits);
    // Ends the current row (an empty row when no field was written since the last).
    CsvWriter& end_row();

    const std::string& text() const { return m_text; }

    // `text` as one field: unchanged, or quoted when RFC 4180 needs it.
    static std::string escaped(std::string_view text);
    // `value` as printf's %.*g writes it.
    static std::string format_number(double value, int significant_digits);

private:
    void separate();

    std::string m_text;
    bool m_row_started = false;
};

} // namespace parallax
