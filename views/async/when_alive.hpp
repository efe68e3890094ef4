#pragma once
// A worker's result handed to a GUI object only while that object still exists.
//
// QFuture::then(context, f) (Qt 6.4) checks its context on the worker thread and then posts to it: a
// window closed on the GUI thread in between (its simulation or search still finishing on the global
// pool) can be sent an event after it is gone. Continuing on qApp, which outlives every window, and
// checking a QPointer there, on the thread that destroys GUI objects, leaves no such gap:
//     QtConcurrent::run(work).then(qApp, when_alive(this, [this](const Result& r) { show(r); }));
#include <QCoreApplication>
#include <QObject>
#include <QPointer>

#include <utility>

namespace parallax::views {

namespace detail {
template <class Member> struct SoleArgument;
template <class C, class R, class A> struct SoleArgument<R (C::*)(A) const> {
    using type = A;
};
} // namespace detail

// `f` takes the future's result (one argument) and is called only if `receiver` is still alive.
template <class F> auto when_alive(QObject* receiver, F f)
{
    using Arg = typename detail::SoleArgument<decltype(&F::operator())>::type;
    return [alive = QPointer<QObject>(receiver), f = std::move(f)](Arg result) {
        if (alive)
            f(std::forward<Arg>(result));
    };
}

} // namespace parallax::views
