#pragma once
// A measured trace (Chrome trace / Perfetto JSON: a PyTorch profiler export, Nsight's JSON, or a
// Parallax trace) read into timeline rows, so the timeline view draws it on the same time axis as the
// prediction. GPU kernels only when the trace has them (a PyTorch trace's CPU ops nest and repeat
// the kernels); nested events are reduced to the outermost one per track.
#include "viewdata/timeline_data.hpp"

#include <string>
#include <vector>

namespace parallax {

struct MeasuredTrace {
    std::string path;
    std::vector<TimelineRow> rows; // kind measured, stage -1; items' op is an index into `names`
    std::vector<std::string> names; // event names
    double origin_s = 0; // trace time of the earliest kept event: it is drawn at 0
    double span_s = 0; // last end, relative to the origin
    std::size_t events = 0; // events kept
    std::size_t nested = 0; // events dropped because an outer event on the same track covers them
    bool gpu_only = false; // the trace had GPU kernels, so only they were kept
};

// Throws InputError naming the file when it cannot be read or is not a trace.
MeasuredTrace load_measured_trace(const std::string& path);
// The same from JSON text (`origin` names it in errors).
MeasuredTrace parse_measured_trace(const std::string& text, const std::string& origin);

} // namespace parallax
