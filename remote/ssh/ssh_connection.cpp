#include "ssh/ssh_connection.hpp"

#include "logging/log_categories.hpp"

#include <algorithm>

namespace parallax::remote {

const char* to_string(ConnectionState s)
{
    switch (s) {
    case ConnectionState::disconnected:
        return "disconnected";
    case ConnectionState::connected:
        return "connected";
    case ConnectionState::lost:
        return "lost";
    case ConnectionState::refused:
        return "refused";
    }
    return "unknown";
}

SshConnection::SshConnection(SshTarget target, std::shared_ptr<SshInteraction> interaction, ReconnectPolicy policy)
    : m_target(std::move(target))
    , m_interaction(std::move(interaction))
    , m_policy(policy)
{
}

void SshConnection::set_state(ConnectionState s, const std::string& reason)
{
    m_state = s;
    if (on_state)
        on_state(s, reason);
}

SshSession& SshConnection::session(const CancelToken& cancel)
{
    if (m_state == ConnectionState::connected && m_session.connected())
        return m_session;
    if (m_state == ConnectionState::connected)
        mark_lost("the connection closed");
    if (m_refusal)
        throw *m_refusal;
    if (m_state == ConnectionState::lost && Clock::now() < m_next_attempt) {
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(m_next_attempt - Clock::now());
        throw SshError(SshErrorKind::disconnected,
            m_target.label() + ": connection lost (" + m_last_error + "); reconnecting in "
                + std::to_string((wait.count() + 999) / 1000) + " s");
    }
    ++m_attempts;
    try {
        m_session.connect(m_target, *m_interaction, cancel);
    } catch (const SshError& e) {
        m_last_error = e.what();
        // Every failed attempt, so that a dispatch that fails in the end shows each step that failed.
        qCWarning(lcSsh).noquote() << "connection attempt" << m_attempts << "failed:" << e.what();
        if (e.transient() || e.kind() == SshErrorKind::cancelled) {
            // Back off: 0.5 s, 1 s, 2 s ... up to max_delay.
            m_delay = m_delay.count() == 0 ? m_policy.first_delay : std::min(m_delay * 2, m_policy.max_delay);
            m_next_attempt = Clock::now() + m_delay;
            if (m_state != ConnectionState::lost)
                set_state(ConnectionState::lost, e.what());
        } else {
            m_refusal = e;
            set_state(ConnectionState::refused, e.what());
        }
        throw;
    }
    if (m_ever_connected)
        ++m_reconnects;
    m_ever_connected = true;
    m_delay = std::chrono::milliseconds(0);
    m_attempts = 0;
    set_state(ConnectionState::connected,
        m_reconnects > 0 ? "reconnected to " + m_target.label() : "connected to " + m_target.label());
    qCDebug(lcSsh).noquote() << (m_reconnects > 0 ? "reconnected to" : "connected to")
                             << QString::fromStdString(m_target.label()) << "by" << m_session.auth_method().c_str();
    return m_session;
}

void SshConnection::mark_lost(const std::string& reason)
{
    m_session.disconnect();
    m_last_error = reason;
    if (m_delay.count() == 0)
        m_delay = m_policy.first_delay;
    m_next_attempt = Clock::now(); // the first reconnect is immediate; back-off starts if it fails
    if (m_state != ConnectionState::lost)
        set_state(ConnectionState::lost, reason);
}

void SshConnection::keepalive()
{
    if (m_state != ConnectionState::connected)
        return;
    try {
        m_session.send_keepalive();
    } catch (const SshError& e) {
        mark_lost(e.what());
    }
}

void SshConnection::close()
{
    m_session.disconnect();
    if (m_state == ConnectionState::connected || m_state == ConnectionState::lost)
        set_state(ConnectionState::disconnected, "closed");
}

void SshConnection::reset()
{
    m_refusal.reset();
    m_delay = std::chrono::milliseconds(0);
    m_attempts = 0;
    if (m_state == ConnectionState::refused)
        m_state = ConnectionState::disconnected;
}

} // namespace parallax::remote
