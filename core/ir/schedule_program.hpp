#pragma once
// A pipeline schedule written as a program: per stage, the ordered directives it runs (forward,
// backward-input, backward-weight, sends, receives, all-to-all, waits), each naming a micro-batch
// and the stage's local chunk. docs/schedule-programs.md describes the text format.
#include "ir/pipeline_schedule.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace parallax {

enum class DirectiveKind : std::uint8_t {
    forward, // F
    backward_input, // B
    backward_weight, // W
    backward_full, // BW = B then W, the input gradient leaves after W (autograd's order)
    send, // SEND:F (activations onward) or SEND:B (input gradient back)
    recv, // RECV:F (this pass's input activations) or RECV:B (its output gradient)
    all_to_all, // A2A (the MoE dispatch/combine of this micro-batch chunk, within its stage)
    wait, // WAIT:X (the next pass starts only once this stage's pass X has finished)
};

struct ScheduleDirective {
    DirectiveKind kind = DirectiveKind::forward;
    std::int32_t microbatch = 0;
    std::int16_t chunk = 0; // the stage's local chunk
    // SEND/RECV: forward (activations) or backward_input (gradients); WAIT: the pass waited for.
    PassKind target = PassKind::forward;
    bool filler = false; // W~: a weight pass that floats into idle time (zero-bubble)
    bool operator==(const ScheduleDirective&) const = default;
};

// How local chunks map to the model: interleaved puts local chunk v of stage d at model chunk
// v*pp + d (1 chunk per stage is plain 1F1B); dualpipe runs two pipelines in opposite directions,
// chunk 0 of stage d is stage d of the down pipeline, chunk 1 stage pp-1-d of the up one.
enum class ChunkLayout : std::uint8_t { interleaved, dualpipe };
// in_order: each stage runs its list in order; priority: a stage runs whichever listed pass is
// ready, backward first, then forward, weight passes last (DualPipe's run-time order).
enum class ProgramOrder : std::uint8_t { in_order, priority };

struct ScheduleProgram {
    ChunkLayout layout = ChunkLayout::interleaved;
    ProgramOrder order = ProgramOrder::in_order;
    std::vector<std::vector<ScheduleDirective>> stages;

    // Filled by check_schedule_program:
    int chunks = 1; // local chunks per stage
    long long microbatches = 0;
    bool explicit_comm = false; // SEND/RECV are written out (else inferred)
    bool split_backward = false; // some B and W written apart: their input gradient leaves after B
    std::vector<long long> peak_in_flight; // per stage: chunk micro-batches forwarded, not yet backward
    bool operator==(const ScheduleProgram&) const = default;
};

// Thrown for malformed or deadlocking programs; `what()` names the stage, step and rule. Scenario
// reading turns it into an InputError naming the file and key.
class ScheduleProgramError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The text format: `stage N: F0.0 B0.0 ...` lines, `layout dualpipe`, `order priority`, `#` comments.
ScheduleProgram parse_schedule_text(const std::string& text);
// JSON stages: arrays of directive strings, one array per stage.
ScheduleProgram parse_schedule_stages(const std::vector<std::vector<std::string>>& stages);
// torch.distributed.pipelining's CSV (rows are ranks, cells `0F0` = stage 0 forward of micro-batch
// 0, `1B0`, `2W1`, `0I0`/`0FULL_BACKWARD0` ..., empty = idle). Stage index s on rank r becomes local
// chunk (s - r) / ranks, the interleaved layout.
ScheduleProgram parse_torchtitan_csv(const std::string& text);

// The same CSV written from a program (rows are ranks, stage = chunk * ranks + rank; B as I, BW
// as B). WAIT, A2A and W~'s floating have no CSV form and are left out; DualPipe's layout has no
// looped placement and throws.
std::string torchtitan_schedule_csv(const ScheduleProgram& p);

std::string directive_text(const ScheduleDirective& d);
std::string schedule_program_text(const ScheduleProgram& p);

// Proves the program well formed and deadlock free, and fills the derived fields; throws
// ScheduleProgramError otherwise.
void check_schedule_program(ScheduleProgram& p);

// One chunk pass's duration on a stage.
struct PassTimes {
    double forward_s = 0;
    double backward_input_s = 0;
    double weight_s = 0;
};

// The program's makespan when stage s's passes take per_stage[s] and data moves at once: a list
// schedule over its dependencies (in-order: as listed, a W~ run where the stage would wait;
// priority: whenever a stage is free, its most urgent ready pass). `p` must have passed check_schedule_program.
double program_makespan_s(const ScheduleProgram& p, const std::vector<PassTimes>& per_stage);
// The same with times per stage and local chunk (a DualPipe device's two chunks are two stages).
double program_makespan_s(const ScheduleProgram& p, const std::vector<std::vector<PassTimes>>& per_stage_chunk);

// A built-in schedule written as a program (checked), passes in device_program's order.
ScheduleProgram builtin_schedule_program(Schedule schedule, int pp, int vpp, long long microbatches);

// The virtual stages a program runs: its chunks per stage; DualPipe's two chunks are its two pipelines.
inline int program_vpp(const ScheduleProgram& p)
{
    return p.layout == ChunkLayout::dualpipe ? 1 : p.chunks;
}

inline bool runs_dualpipe(const Strategy& s)
{
    return s.schedule == Schedule::dualpipe
        || (s.schedule == Schedule::custom && s.program && s.program->layout == ChunkLayout::dualpipe);
}

// DualPipe's own static order (deepseek-ai/DualPipe dualpipe.py, DualPipe.step: eight phases from
// the warm-up forwards to the trailing weight passes), in order; needs an even pp and m >= 2 pp.
ScheduleProgram dualpipe_reference_program(int pp, long long microbatches);

// Programs live for the whole process so plain-data strategies can point at them.
const ScheduleProgram* intern_schedule_program(ScheduleProgram p);

} // namespace parallax
