#pragma once
// A connection to one host that survives the network: an operation that fails because the connection went
// away drops the session, and the next operation reconnects once the back-off delay has passed (doubling
// from first_delay up to max_delay). Nothing here sleeps: a worker keeps serving its event loop while a
// host is down and simply tries again on its next tick. Refusals (host key, authentication) are not
// retried: they stay until reset(), because asking again would give the same answer.
//
// Owned and used by one thread (the session inside is not thread-safe).
#include "jobs/cancel_token.hpp"
#include "ssh/ssh_session.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace parallax::remote {

struct ReconnectPolicy {
    std::chrono::milliseconds first_delay { 500 };
    std::chrono::milliseconds max_delay { std::chrono::seconds(30) };
};

enum class ConnectionState : unsigned char {
    disconnected, // never connected, or closed on purpose
    connected,
    lost, // went away; reconnecting with back-off
    refused, // host key or authentication refused: needs the user (reset() to try again)
};

const char* to_string(ConnectionState s);

class SshConnection {
public:
    using Clock = std::chrono::steady_clock;
    SshConnection(SshTarget target, std::shared_ptr<SshInteraction> interaction, ReconnectPolicy policy = {});

    // The connected session; connects (or reconnects) first when needed. Throws SshError: the connect
    // error itself, or SshError(disconnected) while a lost connection waits out its back-off.
    SshSession& session(const CancelToken& cancel = {});

    // Runs f(session). A transient failure (the connection went away) marks the connection lost so that a
    // later call reconnects, and rethrows.
    template <class F> auto run(F&& f, const CancelToken& cancel = {}) -> decltype(f(std::declval<SshSession&>()))
    {
        SshSession& s = session(cancel);
        s.set_cancel(cancel);
        try {
            return f(s);
        } catch (const SshError& e) {
            if (e.transient() || !s.connected())
                mark_lost(e.what());
            throw;
        }
    }

    // Sends a keepalive when connected; a dead connection is marked lost (no throw).
    void keepalive();
    void close();
    // Forgets a refusal (the user changed the key file or fixed known_hosts) so the next call connects.
    void reset();

    ConnectionState state() const { return m_state; }
    const SshTarget& target() const { return m_target; }
    std::string label() const { return m_target.label(); }
    // When the next reconnect attempt may happen (state lost).
    Clock::time_point next_attempt() const { return m_next_attempt; }
    int attempts() const { return m_attempts; }
    const std::string& last_error() const { return m_last_error; }
    // Reconnections that succeeded after a loss, for tests and the status line.
    int reconnects() const { return m_reconnects; }

    // Told about every change of state with a human-readable reason.
    std::function<void(ConnectionState, const std::string&)> on_state;

    void mark_lost(const std::string& reason);

private:
    void set_state(ConnectionState s, const std::string& reason);

    SshTarget m_target;
    std::shared_ptr<SshInteraction> m_interaction;
    ReconnectPolicy m_policy;
    SshSession m_session;
    ConnectionState m_state = ConnectionState::disconnected;
    std::optional<SshError> m_refusal;
    Clock::time_point m_next_attempt {};
    std::chrono::milliseconds m_delay { 0 };
    int m_attempts = 0;
    int m_reconnects = 0;
    bool m_ever_connected = false;
    std::string m_last_error;
};

} // namespace parallax::remote
