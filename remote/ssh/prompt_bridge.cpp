#include "ssh/prompt_bridge.hpp"

#include <algorithm>

#include <QThread>

namespace parallax::remote {

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

void wipe_shared(QString& s)
{
    // fill() would detach first and clear a private copy, leaving the characters in the buffer every other
    // QString of this text (the dialog's, the signal's) still shares: overwrite that buffer itself.
    // (Text that does not own its buffer, a literal in read-only memory, holds no typed secret.)
    if (!s.isEmpty() && s.data_ptr().isMutable())
        std::fill_n(const_cast<QChar*>(s.constData()), s.size(), QChar(0));
    s.clear();
}

PromptBridge::PromptBridge(QObject* parent)
    : QObject(parent)
{
}

PromptBridge::~PromptBridge()
{
    cancel_all();
}

bool PromptBridge::on_own_thread() const
{
    return QThread::currentThread() == thread();
}

quint64 PromptBridge::open_question()
{
    std::lock_guard lock(m_mutex);
    const quint64 id = m_next_id++;
    Pending p;
    p.answered = m_refusing; // refused at once after refuse_all()
    m_pending.emplace(id, std::move(p));
    return id;
}

PromptBridge::Pending PromptBridge::wait(quint64 id)
{
    std::unique_lock lock(m_mutex);
    m_cv.wait_for(lock, m_timeout, [&] { return m_pending[id].answered; });
    Pending out = std::move(m_pending[id]);
    m_pending.erase(id);
    return out;
}

void PromptBridge::answer(quint64 id, bool yes, std::vector<Secret> secrets)
{
    {
        std::lock_guard lock(m_mutex);
        auto it = m_pending.find(id);
        if (it == m_pending.end() || it->second.answered)
            return; // stale: timed out or already answered
        it->second.answered = true;
        it->second.yes = yes;
        it->second.secrets = std::move(secrets);
    }
    m_cv.notify_all();
}

void PromptBridge::cancel_all()
{
    {
        std::lock_guard lock(m_mutex);
        for (auto& [id, p] : m_pending)
            p.answered = true;
    }
    m_cv.notify_all();
}

void PromptBridge::refuse_all()
{
    {
        std::lock_guard lock(m_mutex);
        m_refusing = true;
    }
    cancel_all();
}

bool PromptBridge::confirm_unknown_host(const HostKeyInfo& key)
{
    if (on_own_thread())
        return false; // waiting here would block the thread that must answer
    const quint64 id = open_question();
    Q_EMIT host_key_question(id, q(key.host), q(key.key_type), q(key.fingerprint), q(describe_unknown_host(key)));
    return wait(id).yes;
}

std::optional<Secret> PromptBridge::key_passphrase(const std::string& key_file)
{
    if (on_own_thread())
        return std::nullopt;
    const quint64 id = open_question();
    Q_EMIT passphrase_requested(id, q(key_file));
    Pending p = wait(id);
    if (!p.yes || p.secrets.empty())
        return std::nullopt;
    return std::move(p.secrets.front());
}

std::optional<std::vector<Secret>> PromptBridge::answer_prompts(const KbdPrompt& prompt)
{
    if (on_own_thread())
        return std::nullopt;
    const quint64 id = open_question();
    QStringList texts;
    QList<bool> echo;
    for (const auto& item : prompt.prompts) {
        texts << q(item.text);
        echo << item.echo;
    }
    Q_EMIT prompts_requested(id, q(prompt.target), q(prompt.name), q(prompt.instruction), texts, echo);
    Pending p = wait(id);
    if (!p.yes || p.secrets.size() != prompt.prompts.size())
        return std::nullopt;
    return std::move(p.secrets);
}

void PromptBridge::host_key_refused(const HostKeyInfo& key, bool changed, const std::string& message)
{
    QStringList known;
    for (const auto& k : key.known)
        known << q(k.key_type + " " + k.fingerprint + " (" + k.file + ")");
    Q_EMIT host_key_refusal(q(key.host), q(key.key_type), q(key.fingerprint), known, changed, q(message));
}

void PromptBridge::answer_host_key(quint64 id, bool accept)
{
    answer(id, accept, {});
}

void PromptBridge::answer_passphrase(quint64 id, QString passphrase, bool given)
{
    std::vector<Secret> s;
    if (given)
        s.emplace_back(passphrase.toStdString());
    wipe_shared(passphrase);
    answer(id, given, std::move(s));
}

void PromptBridge::answer_prompts(quint64 id, QStringList answers, bool given)
{
    std::vector<Secret> s;
    if (given) {
        for (const QString& a : std::as_const(answers))
            s.emplace_back(a.toStdString());
    }
    for (QString& a : answers)
        wipe_shared(a);
    answer(id, given, std::move(s));
}

} // namespace parallax::remote
