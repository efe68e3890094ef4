#pragma once
// Waiting in the GUI thread for background work without freezing it (tests, --screenshot): runs the
// event loop until `done()` holds, waking on `signal` of `sender`, or until the timeout.
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <functional>

namespace parallax::app {

template <class Sender, class Signal>
bool wait_until(const std::function<bool()>& done, Sender* sender, Signal signal, int timeout_ms)
{
    QElapsedTimer clock;
    clock.start();
    while (!done()) {
        if (clock.elapsed() > timeout_ms)
            return false;
        QEventLoop loop;
        QObject::connect(sender, signal, &loop, &QEventLoop::quit);
        QTimer::singleShot(std::max<qint64>(1, timeout_ms - clock.elapsed()), &loop, &QEventLoop::quit);
        loop.exec();
    }
    return true;
}

} // namespace parallax::app
