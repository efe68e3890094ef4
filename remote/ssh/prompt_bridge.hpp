#pragma once
// SshInteraction for the GUI: a connection on a worker thread asks, the GUI thread answers. The question
// travels as a queued signal to the GUI thread (connect it to a dialog); the worker thread waits until the
// matching answer*() slot is called, the bridge is cancelled, or the wait times out (an unattended
// question is a "no"). Secrets cross as QString only for the moment of the call and are wiped.
#include "ssh/ssh_interaction.hpp"

#include <QList>
#include <QObject>
#include <QStringList>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace parallax::remote {

// Overwrites the characters of `s` in the buffer it shares with every copy (not a detached copy), then
// empties it: a secret answer leaves no readable text behind in the dialog's or the signal's string.
void wipe_shared(QString& s);

class PromptBridge : public QObject, public SshInteraction {
    Q_OBJECT
public:
    explicit PromptBridge(QObject* parent = nullptr);
    ~PromptBridge() override;

    // How long a worker waits for an answer before taking it as "no".
    void set_answer_timeout(std::chrono::milliseconds timeout) { m_timeout = timeout; }

    // Called on the worker thread (never on the bridge's own thread: that would wait for itself).
    bool confirm_unknown_host(const HostKeyInfo& key) override;
    std::optional<Secret> key_passphrase(const std::string& key_file) override;
    std::optional<std::vector<Secret>> answer_prompts(const KbdPrompt& prompt) override;
    // Emits host_key_refusal and returns at once: there is nothing to answer.
    void host_key_refused(const HostKeyInfo& key, bool changed, const std::string& message) override;

public Q_SLOTS:
    void answer_host_key(quint64 id, bool accept);
    // given = false: the user cancelled.
    void answer_passphrase(quint64 id, QString passphrase, bool given);
    void answer_prompts(quint64 id, QStringList answers, bool given);
    // Answers every open question with "no" (a dialog closed, a run cancelled).
    void cancel_all();
    // cancel_all(), and every later question is answered "no" at once: for shutdown, when the GUI thread is
    // about to wait for the workers and could not answer anyway.
    void refuse_all();

Q_SIGNALS:
    // text: the full explanation to show (OpenSSH's wording with the SHA256 fingerprint).
    void host_key_question(quint64 id, QString host, QString keyType, QString fingerprint, QString text);
    void passphrase_requested(quint64 id, QString keyFile);
    void prompts_requested(
        quint64 id, QString target, QString name, QString instruction, QStringList prompts, QList<bool> echo);
    // The connection to `host` was refused because its key does not match known_hosts (changed: same type,
    // different key; else only other types are stored). known: "type SHA256:... (file)" per stored key.
    // Show it; never offer to accept.
    void host_key_refusal(
        QString host, QString keyType, QString fingerprint, QStringList known, bool changed, QString text);

private:
    struct Pending {
        bool answered = false;
        bool yes = false;
        std::vector<Secret> secrets;
    };
    quint64 open_question();
    // Waits for the answer to `id`, then forgets the question.
    Pending wait(quint64 id);
    void answer(quint64 id, bool yes, std::vector<Secret> secrets);
    bool on_own_thread() const;

    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::map<quint64, Pending> m_pending;
    quint64 m_next_id = 1;
    bool m_refusing = false;
    std::chrono::milliseconds m_timeout { std::chrono::minutes(5) };
};

} // namespace parallax::remote
