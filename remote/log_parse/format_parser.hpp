#pragma once
// The interface of one log format's parser. Lines arrive with colour codes and line ends already
// removed; a parser ignores what it does not recognise, so the same lines can go to every parser while
// the format is still being detected.
#include "log_parse/log_types.hpp"

#include <string_view>

namespace parallax::remote {

class FormatParser {
public:
    virtual ~FormatParser() = default;

    // complete = false: the line may be cut short (see LineSplitter); the field touching its end is unsafe.
    virtual void on_line(std::string_view line, bool complete) = 0;
    // End of input: flush whatever is still buffered.
    virtual void on_end() { }
    // How many of the format's own step records (not side reports) were read: the detection evidence.
    virtual int records() const = 0;
    virtual ParsedLog result() const = 0;
};

} // namespace parallax::remote
