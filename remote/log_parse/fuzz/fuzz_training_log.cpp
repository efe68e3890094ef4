// libFuzzer target for the training-log parsers: any bytes, every format, whole and in two chunks.
// Build with clang (remote/CMakeLists.txt adds it only then) and run e.g.
//   fuzz_training_log -max_len=16384 corpus/ tests/data/logs
#include "log_parse/fuzz/log_invariants.hpp"
#include "log_parse/training_log_parser.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

void require(const std::string& problem)
{
    if (problem.empty())
        return;
    std::fprintf(stderr, "invariant broken: %s\n", problem.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace parallax::remote;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The split point comes from the input itself so the fuzzer can steer it.
    const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
    for (LogFormat format : { LogFormat::auto_detect, LogFormat::megatron, LogFormat::torchtitan, LogFormat::deepspeed,
             LogFormat::probe }) {
        const ParsedLog whole = parse_training_log(text, format);
        require(fuzz::check_invariants(whole));
        TrainingLogParser chunked(format);
        chunked.feed(text.substr(0, split));
        chunked.feed(text.substr(split));
        require(fuzz::check_same(whole, chunked.finish()));
    }
    return 0;
}
