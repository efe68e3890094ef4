#pragma once
// What a background task ended with: its value, the error it threw, or its cancellation. A task run
// on a thread pool must never let an exception escape: a continuation (QFuture::then) is skipped when
// its task throws, so the view waiting for it would wait forever ("running" with nothing running).
// Every background task runs its work through run_catching() and its continuation reads the outcome.
#include "jobs/cancelled.hpp"

#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace parallax {

template <typename T> struct TaskOutcome {
    std::optional<T> value; // set when the task returned
    std::string error; // what the task threw (not set when it returned or was cancelled)
    bool cancelled = false; // it stopped because its token was cancelled (Cancelled thrown)
};

template <typename F> auto run_catching(F&& work) -> TaskOutcome<std::invoke_result_t<F>>
{
    using T = std::invoke_result_t<F>;
    TaskOutcome<T> out;
    try {
        out.value.emplace(std::forward<F>(work)());
    } catch (const Cancelled&) {
        out.cancelled = true;
    } catch (const std::exception& e) {
        out.error = e.what();
        if (out.error.empty())
            out.error = "an unnamed error";
    } catch (...) {
        out.error = "an unknown exception";
    }
    return out;
}

} // namespace parallax
