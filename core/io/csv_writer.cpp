#include "io/csv_writer.hpp"

#include <cmath>
#include <cstdio>

namespace parallax {

CsvWriter::CsvWriter(std::initializer_list<std::string_view> header)
{
    for (std::string_view name : header)
        field(name);
    end_row();
}

void CsvWriter::separate()
{
    if (m_row_started)
        m_text += ',';
    m_row_started = true;
}

CsvWriter& CsvWriter::field(std::string_view text)
{
    separate();
    m_text += escaped(text);
    return *this;
}

CsvWriter& CsvWriter::quoted_field(std::string_view text)
{
    separate();
    m_text += '"';
    for (char c : text) {
        if (c == '"')
            m_text += '"';
        m_text += c;
    }
    m_text += '"';
    return *this;
}

CsvWriter& CsvWriter::integer(long long value)
{
    separate();
    m_text += std::to_string(value);
    return *this;
}

CsvWriter& CsvWriter::number(double value, int significant_digits)
{
    separate();
    m_text += format_number(value, significant_digits);
    return *this;
}

CsvWriter& CsvWriter::end_row()
{
    m_text += '\n';
    m_row_started = false;
    return *this;
}

std::string CsvWriter::escaped(std::string_view text)
{
    if (text.find_first_of(",\"\r\n") == std::string_view::npos)
        return std::string(text);
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string CsvWriter::format_number(double value, int significant_digits)
{
    // printf may write "-nan" for a NaN with its sign bit set; the exports have always written "nan".
    if (std::isnan(value))
        return "nan";
    // Qt writes negative zero as "0"; so do the exports.
    if (value == 0)
        value = 0;
    char buffer[64];
    const int n = std::snprintf(buffer, sizeof buffer, "%.*g", significant_digits, value);
    return std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
}

} // namespace parallax
