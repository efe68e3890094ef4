#include "remote/ssh_dialogs.hpp"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

// Text that came from the server or the network (key types, prompts, instructions, the host key report):
// shown as it is, never interpreted as rich text, whatever tags or entities it holds.
QLabel* plain_label(const QString& text, QWidget* parent)
{
    auto* l = new QLabel(parent);
    l->setTextFormat(Qt::PlainText);
    l->setText(text);
    return l;
}

} // namespace

HostKeyDialog::HostKeyDialog(
    const QString& host, const QString& key_type, const QString& fingerprint, const QString& text, QWidget* parent)
    : QDialog(parent)
    , m_fingerprint(fingerprint)
{
    setObjectName(QStringLiteral("host_key_dialog"));
    setWindowTitle(QStringLiteral("Unknown host key: ") + host);
    setWindowModality(Qt::WindowModal);
    auto* v = new QVBoxLayout(this);
    auto* intro = new QLabel(QStringLiteral("<b>%1</b> is not in your known_hosts file. Check the fingerprint below "
                                            "with the cluster's administrators (or its documentation) before you "
                                            "trust it: an attacker between you and the cluster would show another one.")
                                 .arg(host.toHtmlEscaped()),
        this);
    intro->setWordWrap(true);
    v->addWidget(intro);
    auto* form = new QFormLayout;
    auto* type = plain_label(key_type, this);
    type->setObjectName(QStringLiteral("key_type"));
    auto* fp = plain_label(fingerprint, this);
    fp->setObjectName(QStringLiteral("fingerprint"));
    fp->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    fp->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(QStringLiteral("Key type:"), type);
    form->addRow(QStringLiteral("Fingerprint:"), fp);
    v->addLayout(form);
    auto* details = plain_label(text, this);
    details->setObjectName(QStringLiteral("host_key_text"));
    details->setWordWrap(true);
    details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(details);
    auto* buttons = new QDialogButtonBox(this);
    QPushButton* trust = buttons->addButton(QStringLiteral("Trust this key and connect"), QDialogButtonBox::AcceptRole);
    trust->setObjectName(QStringLiteral("accept_host_key"));
    trust->setAutoDefault(false);
    QPushButton* reject = buttons->addButton(QStringLiteral("Reject"), QDialogButtonBox::RejectRole);
    reject->setObjectName(QStringLiteral("reject_host_key"));
    reject->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    v->addWidget(buttons);
}

QMessageBox* host_key_refused_box(const QString& host, const QString& key_type, const QString& fingerprint,
    const QStringList& known, bool changed, const QString& text, QWidget* parent)
{
    auto* box = new QMessageBox(parent);
    box->setObjectName(QStringLiteral("host_key_refused_dialog"));
    box->setIcon(QMessageBox::Critical);
    box->setWindowTitle(QStringLiteral("Host key refused: ") + host);
    box->setWindowModality(Qt::WindowModal);
    box->setTextFormat(Qt::RichText);
    QString stored;
    for (const QString& k : known)
        stored += QStringLiteral("<br>&nbsp;&nbsp;stored: <code>") + k.toHtmlEscaped() + QStringLiteral("</code>");
    box->setText(
        (changed ? QStringLiteral("<b>The host key of %1 has CHANGED.</b>")
                 : QStringLiteral("<b>%1 presented a key of a type that known_hosts does not hold for it.</b>"))
            .arg(host.toHtmlEscaped())
        + QStringLiteral("<br>&nbsp;&nbsp;presented: <code>%1 %2</code>")
              .arg(key_type.toHtmlEscaped(), fingerprint.toHtmlEscaped())
        + stored);
    box->setInformativeText(
        QStringLiteral("Someone may be intercepting the connection (man-in-the-middle), or the host was reinstalled. "
                       "Parallax did not connect and will not replace the stored key. If the change is expected, "
                       "confirm the new fingerprint with the cluster's administrators, then remove the old entry "
                       "from known_hosts (the details say how) and send the run again."));
    box->setDetailedText(text);
    box->setStandardButtons(QMessageBox::Close);
    box->setDefaultButton(QMessageBox::Close);
    box->setAttribute(Qt::WA_DeleteOnClose);
    return box;
}

SecretPromptDialog::SecretPromptDialog(const QString& title, const QString& instruction, const QStringList& prompts,
    const QList<bool>& echo, QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("ssh_prompt_dialog"));
    setWindowTitle(title);
    setWindowModality(Qt::WindowModal);
    auto* v = new QVBoxLayout(this);
    if (!instruction.isEmpty()) {
        auto* l = plain_label(instruction, this);
        l->setWordWrap(true);
        l->setObjectName(QStringLiteral("instruction"));
        v->addWidget(l);
    }
    auto* form = new QFormLayout;
    for (int i = 0; i < prompts.size(); ++i) {
        auto* edit = new QLineEdit(this);
        edit->setObjectName(QStringLiteral("answer_%1").arg(i));
        edit->setEchoMode(echo.value(i, false) ? QLineEdit::Normal : QLineEdit::Password);
        // No history, no completion, no drag out: a secret stays in this field only.
        edit->setInputMethodHints(Qt::ImhHiddenText | Qt::ImhSensitiveData | Qt::ImhNoPredictiveText);
        edit->setDragEnabled(false);
        QLabel* label = plain_label(prompts[i], this);
        label->setObjectName(QStringLiteral("prompt_%1").arg(i));
        label->setBuddy(edit);
        form->addRow(label, edit);
        m_fields << edit;
    }
    v->addLayout(form);
    v->addWidget(new QLabel(QStringLiteral("Answers are sent to the server only and never stored."), this));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    v->addWidget(buttons);
    if (!m_fields.isEmpty())
        m_fields.front()->setFocus();
}

SecretPromptDialog::~SecretPromptDialog()
{
    for (QLineEdit* f : std::as_const(m_fields))
        f->clear();
}

QStringList SecretPromptDialog::take_answers()
{
    QStringList out;
    for (QLineEdit* f : std::as_const(m_fields)) {
        out << f->text();
        f->clear();
    }
    return out;
}

void SecretPromptDialog::done(int r)
{
    if (r != QDialog::Accepted)
        for (QLineEdit* f : std::as_const(m_fields))
            f->clear();
    QDialog::done(r);
}

} // namespace parallax::views
