#pragma once
// The questions an SSH connection asks, as dialogs on the GUI thread (PromptBridge carries them from the
// worker thread and back). All open window-modal with open(): the event loop keeps running and the window
// keeps painting while the worker waits for the answer.
// - HostKeyDialog: an unknown host key, its SHA256 fingerprint as OpenSSH prints it, Trust / Reject (Reject is
//   the default; Escape rejects).
// - host_key_refused_box(): a changed key (or one of a type known_hosts does not hold for the host) is refused;
//   the box shows the presented and the stored fingerprints and how to fix known_hosts, with a Close button
//   only: there is nothing to accept.
// - SecretPromptDialog: a key's passphrase or a keyboard-interactive round (password, one-time code), one field
//   per prompt, echo off unless the server allows it. Answers leave the dialog once and are cleared from it.
#include <QDialog>
#include <QList>
#include <QStringList>

class QLineEdit;
class QMessageBox;

namespace parallax::views {

class HostKeyDialog : public QDialog {
    Q_OBJECT
public:
    HostKeyDialog(const QString& host, const QString& key_type, const QString& fingerprint, const QString& text,
        QWidget* parent = nullptr);
    QString fingerprint() const { return m_fingerprint; }

private:
    QString m_fingerprint;
};

// The box explaining a refused host key. `known`: "type SHA256:... (file)" per stored key.
QMessageBox* host_key_refused_box(const QString& host, const QString& key_type, const QString& fingerprint,
    const QStringList& known, bool changed, const QString& text, QWidget* parent);

class SecretPromptDialog : public QDialog {
    Q_OBJECT
public:
    // prompts[i] is asked with echo[i] (false: typed characters are hidden).
    SecretPromptDialog(const QString& title, const QString& instruction, const QStringList& prompts,
        const QList<bool>& echo, QWidget* parent = nullptr);
    ~SecretPromptDialog() override;
    // The answers, then the fields are cleared: call once, after accepted().
    QStringList take_answers();
    QList<QLineEdit*> fields() const { return m_fields; }

protected:
    void done(int r) override;

private:
    QList<QLineEdit*> m_fields;
};

} // namespace parallax::views
