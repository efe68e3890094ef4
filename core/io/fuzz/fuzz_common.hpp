#pragma once
// What every reader's fuzz target shares: bad input must end in an InputError (the CLI's exit 2);
// any other exception, a crash or a sanitizer report is a bug. A broken invariant aborts so that
// libFuzzer keeps the input.
#include "spec/input_error.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace parallax::fuzz {

[[noreturn]] inline void broken(const std::string& what)
{
    std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
    std::abort();
}

// Runs `read`; an InputError is an accepted answer, anything else escaping is a bug.
template <typename F> bool accepts(F&& read)
{
    try {
        read();
        return true;
    } catch (const InputError&) {
        return false;
    } catch (const std::exception& e) {
        broken(std::string("an exception other than InputError escaped: ") + e.what());
    }
}

} // namespace parallax::fuzz
