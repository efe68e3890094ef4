#pragma once
// Cuts a byte stream that arrives in arbitrary chunks (a file read in blocks, an SSH channel) into lines.
// A line is handed over with `complete` = false when it may have been cut short: the unterminated tail
// at the end of the stream (a job still writing) or a line longer than the cap. Parsers then drop the
// field that touches the cut instead of reading "16" from "1623.5".
#include <cstddef>
#include <string>
#include <string_view>

namespace parallax::remote {

// Real records are at most a few KiB (64 run-together Megatron memory reports are ~10 KiB); a
// "line" beyond this is binary junk and keeping it whole would let one input pin unbounded memory.
inline constexpr std::size_t kMaxLogLineBytes = 1 << 20;

class LineSplitter {
public:
    explicit LineSplitter(std::size_t max_line_bytes = kMaxLogLineBytes)
        : m_max_line_bytes(max_line_bytes == 0 ? 1 : max_line_bytes)
    {
    }

    // on_line(std::string_view line, bool complete); the view is valid only during the call.
    template <class OnLine> void feed(std::string_view chunk, OnLine&& on_line)
    {
        while (!chunk.empty()) {
            const std::size_t nl = chunk.find('\n');
            const std::string_view piece = chunk.substr(0, nl);
            if (nl != std::string_view::npos && m_pending.empty() && !m_discarding
                && piece.size() <= m_max_line_bytes) {
                on_line(piece, true); // fast path: the whole line is inside this chunk, no copy
            } else {
                append_capped(piece, on_line);
                if (nl != std::string_view::npos) {
                    if (!m_discarding)
                        on_line(std::string_view(m_pending), true);
                    m_pending.clear();
                    m_discarding = false;
                }
            }
            if (nl == std::string_view::npos)
                break;
            chunk.remove_prefix(nl + 1);
        }
    }

    // The unterminated tail, if any, as an incomplete line.
    template <class OnLine> void finish(OnLine&& on_line)
    {
        if (!m_pending.empty() && !m_discarding)
            on_line(std::string_view(m_pending), false);
        m_pending.clear();
        m_discarding = false;
    }

private:
    template <class OnLine> void append_capped(std::string_view piece, OnLine& on_line)
    {
        if (m_discarding)
            return;
        const std::size_t room = m_max_line_bytes - m_pending.size();
        if (piece.size() <= room) {
            m_pending.append(piece);
            return;
        }
        // Hand over what fits as a cut line and skip the rest of this line.
        m_pending.append(piece.substr(0, room));
        on_line(std::string_view(m_pending), false);
        m_pending.clear();
        m_discarding = true;
    }

    std::size_t m_max_line_bytes;
    std::string m_pending;
    bool m_discarding = false;
};

} // namespace parallax::remote
