#include "remote/dispatch_dialog.hpp"

#include "cluster/profile_store.hpp"
#include "jobs/bundle_folder.hpp"
#include "spec/input_error.hpp"
#include "style/view_style.hpp"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

constexpr remote::JobFramework kFrameworks[] = { remote::JobFramework::probe, remote::JobFramework::megatron,
    remote::JobFramework::torchtitan, remote::JobFramework::deepspeed };

// A count with a special value at 0 ("default", "auto").
QSpinBox* count_box(QWidget* parent, const char* name, int max, const QString& zero_text, const QString& tip)
{
    auto* box = new QSpinBox(parent);
    box->setObjectName(QLatin1String(name));
    box->setRange(0, max);
    box->setSpecialValueText(zero_text);
    box->setToolTip(tip);
    return box;
}

} // namespace

DispatchDialog::DispatchDialog(
    const Scenario& plan, const QString& plan_label, const QString& settings_file, QWidget* parent)
    : QDialog(parent)
    , m_plan(plan)
    , m_label(plan_label)
    , m_settings_file(settings_file)
    , m_run_id(qs(remote::new_run_id()))
{
    setObjectName(QStringLiteral("dispatch_dialog"));
    setWindowTitle(QStringLiteral("Send as validation run: ") + plan_label);
    resize(980, 720);
    auto* v = new QVBoxLayout(this);
    v->addLayout(make_form());

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("bundle_summary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(m_summary);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("dispatch_error"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();
    v->addWidget(m_error);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("job_files"));
    m_tabs->setDocumentMode(true);
    v->addWidget(m_tabs, 1);
    v->addWidget(make_buttons());

    connect(m_profile, &QComboBox::currentTextChanged, this, [this] { regenerate(); });
    connect(m_framework, &QComboBox::currentIndexChanged, this, [this] { regenerate(); });
    for (QSpinBox* s : { m_steps, m_layers, m_micro })
        connect(s, &QSpinBox::valueChanged, this, [this] { regenerate(); });
    reload_profiles();
}

QFormLayout* DispatchDialog::make_form()
{
    auto* form = new QFormLayout;
    auto* prow = new QHBoxLayout;
    m_profile = new QComboBox(this);
    m_profile->setObjectName(QStringLiteral("profile"));
    m_profile->setMinimumContentsLength(20);
    auto* edit_profiles = new QPushButton(QStringLiteral("Profiles..."), this);
    edit_profiles->setObjectName(QStringLiteral("edit_profiles"));
    connect(edit_profiles, &QPushButton::clicked, this, &DispatchDialog::edit_profiles_requested);
    prow->addWidget(m_profile, 1);
    prow->addWidget(edit_profiles);
    form->addRow(QStringLiteral("Cluster profile"), prow);
    m_framework = new QComboBox(this);
    m_framework->setObjectName(QStringLiteral("framework"));
    for (remote::JobFramework f : kFrameworks)
        m_framework->addItem(qs(std::string(remote::to_string(f))), static_cast<int>(f));
    m_framework->setToolTip(QStringLiteral("probe: the built-in PyTorch probe (benchmarks and a few training steps of "
                                           "the plan's layers); the others run the plan itself"));
    form->addRow(QStringLiteral("Framework"), m_framework);
    m_steps = count_box(this, "steps", 1000000, QStringLiteral("default"),
        QStringLiteral("Training steps; default: 6 for the probe, 30 for the frameworks"));
    m_layers = count_box(this, "probe_layers", 100000, QStringLiteral("auto"),
        QStringLiteral("Layers the probe trains (a multiple of PP); auto: 2 per stage"));
    m_micro = count_box(this, "probe_microbatches", 100000, QStringLiteral("auto"),
        QStringLiteral("Micro-batches per probe step; auto: the plan's, at most 2 x PP"));
    auto* orow = new QHBoxLayout;
    const std::pair<const char*, QSpinBox*> counts[]
        = { { "Steps", m_steps }, { "Probe layers", m_layers }, { "Probe micro-batches", m_micro } };
    for (const auto& [label, box] : counts) {
        if (orow->count() > 0)
            orow->addSpacing(12);
        orow->addWidget(new QLabel(QLatin1String(label), this));
        orow->addWidget(box);
    }
    orow->addStretch(1);
    form->addRow(QStringLiteral("Run"), orow);
    return form;
}

QDialogButtonBox* DispatchDialog::make_buttons()
{
    auto* buttons = new QDialogButtonBox(this);
    m_revert = buttons->addButton(QStringLiteral("Revert this file"), QDialogButtonBox::ResetRole);
    m_revert->setObjectName(QStringLiteral("revert_file"));
    connect(m_revert, &QPushButton::clicked, this, [this] {
        const int i = m_tabs->currentIndex();
        if (i >= 0)
            revert(m_tabs->widget(i)->objectName().mid(5));
    });
    QPushButton* write = buttons->addButton(QStringLiteral("Write to folder..."), QDialogButtonBox::ActionRole);
    write->setObjectName(QStringLiteral("write_files"));
    write->setToolTip(QStringLiteral("Write the files (with your edits) to a folder, as `parallax-cli run --out` "
                                     "does; send them later with `parallax-cli run --from DIR`"));
    connect(write, &QPushButton::clicked, this, &DispatchDialog::write_to_chosen_folder);
    m_send = buttons->addButton(QStringLiteral("Send"), QDialogButtonBox::AcceptRole);
    m_send->setObjectName(QStringLiteral("send_run"));
    m_send->setDefault(true);
    // Its text counts the edited files; a button that keeps its width keeps the row still.
    m_send->setMinimumWidth(m_send->fontMetrics().horizontalAdvance(QStringLiteral("Send (99 edited files)")) + 24);
    connect(m_send, &QPushButton::clicked, this, [this] {
        if (!m_bundle)
            return;
        Q_EMIT send_requested();
        accept();
    });
    QPushButton* cancel = buttons->addButton(QDialogButtonBox::Cancel);
    cancel->setObjectName(QStringLiteral("cancel_dispatch"));
    connect(cancel, &QPushButton::clicked, this, &QDialog::reject);
    return buttons;
}

void DispatchDialog::write_to_chosen_folder()
{
    const QString dir = QFileDialog::getExistingDirectory(this, QStringLiteral("Write the job's files to"));
    if (dir.isEmpty())
        return;
    QString error;
    if (!write_to(dir, &error)) {
        m_error->setText(QStringLiteral("<b>Not written:</b> ") + error.toHtmlEscaped());
        m_error->show();
    } else {
        m_summary->setText(m_summary->text() + QStringLiteral("<br><b>Written to %1</b>").arg(dir.toHtmlEscaped()));
    }
}

void DispatchDialog::reload_profiles()
{
    const QString keep = m_profile->currentText();
    m_filling = true;
    m_profile->clear();
    m_profile->addItems(remote::ProfileStore(m_settings_file).names());
    const int i = m_profile->findText(keep);
    if (i >= 0)
        m_profile->setCurrentIndex(i);
    m_filling = false;
    regenerate();
}

void DispatchDialog::set_profile(const QString& name)
{
    const int i = m_profile->findText(name);
    if (i >= 0)
        m_profile->setCurrentIndex(i);
    regenerate();
}

void DispatchDialog::set_framework(remote::JobFramework f)
{
    m_framework->setCurrentIndex(m_framework->findData(static_cast<int>(f)));
}

void DispatchDialog::set_steps(int steps)
{
    m_steps->setValue(steps);
}

void DispatchDialog::set_probe_shape(int layers, int microbatches)
{
    m_layers->setValue(layers);
    m_micro->setValue(microbatches);
}

QString DispatchDialog::profile_name() const
{
    return m_profile->currentText();
}

std::optional<remote::ClusterProfile> DispatchDialog::load_profile(QString* error) const
{
    if (m_profile->currentText().isEmpty()) {
        *error = QStringLiteral("No cluster profile yet: add one with Profiles...");
        return std::nullopt;
    }
    try {
        auto p = remote::ProfileStore(m_settings_file).load(m_profile->currentText());
        if (!p)
            *error = QStringLiteral("The profile '%1' is no longer stored").arg(m_profile->currentText());
        return p;
    } catch (const InputError& e) {
        *error = qs(e.what());
        return std::nullopt;
    }
}

remote::RunRequest DispatchDialog::request() const
{
    remote::RunRequest req;
    req.scenario = m_plan;
    req.scenario_label = m_label.toStdString();
    QString error;
    if (auto p = load_profile(&error))
        req.profile = *p;
    req.framework = static_cast<remote::JobFramework>(m_framework->currentData().toInt());
    req.run_id = m_run_id.toStdString();
    req.steps = m_steps->value();
    req.probe_layers = m_layers->value();
    req.probe_microbatches = m_micro->value();
    for (auto it = m_editors.begin(); it != m_editors.end(); ++it)
        if (edited(it.key()))
            req.edited_files.emplace_back(it.key().toStdString(), it.value()->toPlainText().toStdString());
    return req;
}

bool DispatchDialog::write_to(const QString& dir, QString* error) const
{
    if (!m_bundle) {
        if (error)
            *error = error_text();
        return false;
    }
    try {
        const remote::JobBundle b = remote::make_job_bundle(request());
        remote::write_bundle_folder(b, dir);
        return true;
    } catch (const InputError& e) {
        if (error)
            *error = qs(e.what());
        return false;
    }
}

void DispatchDialog::regenerate()
{
    if (m_filling)
        return;
    m_bundle.reset();
    QString error;
    const auto profile = load_profile(&error);
    if (profile) {
        remote::RunRequest req = request();
        req.profile = *profile;
        req.edited_files.clear(); // generate the plain bundle; edits are laid over it below
        try {
            m_bundle = remote::make_job_bundle(req);
        } catch (const InputError& e) {
            error = qs(e.what());
        }
    }
    m_send->setEnabled(m_bundle.has_value());
    if (!m_bundle) {
        m_error->setText(QStringLiteral("<b>Cannot send:</b> ") + error.toHtmlEscaped());
        m_error->setStyleSheet(QStringLiteral("QLabel { color: %1; }").arg(bad_colour(is_dark(palette())).name()));
        m_error->show();
        m_summary->clear();
        return;
    }
    m_error->hide();
    QString summary = QStringLiteral("<b>Run %1</b>: %2 · %3 ranks on %4 node(s)")
                          .arg(m_run_id, qs(m_bundle->description).toHtmlEscaped())
                          .arg(m_bundle->world_size)
                          .arg(m_bundle->nodes);
    for (const auto& n : m_bundle->notes)
        summary += QStringLiteral("<br>· ") + qs(n).toHtmlEscaped();
    m_summary->setText(summary);

    // Files: regenerated text where the user did not edit, the user's text where they did.
    const QString current
        = m_tabs->currentIndex() >= 0 ? m_tabs->widget(m_tabs->currentIndex())->objectName() : QString();
    QMap<QString, QString> user_text;
    for (auto it = m_editors.begin(); it != m_editors.end(); ++it)
        if (edited(it.key()))
            user_text.insert(it.key(), it.value()->toPlainText());
    m_filling = true;
    while (m_tabs->count() > 0) {
        QWidget* w = m_tabs->widget(0);
        m_tabs->removeTab(0);
        w->deleteLater();
    }
    m_editors.clear();
    m_generated.clear();
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    for (const remote::JobFile& f : m_bundle->files) {
        const QString name = qs(f.name);
        auto* e = new QPlainTextEdit(m_tabs);
        e->setObjectName(QStringLiteral("file_") + name);
        e->setFont(mono);
        e->setLineWrapMode(QPlainTextEdit::NoWrap);
        e->setPlainText(qs(f.content));
        // The editor's own rendering of the generated text is what "not edited" means.
        m_generated.insert(name, e->toPlainText());
        if (user_text.contains(name))
            e->setPlainText(user_text.value(name));
        connect(e, &QPlainTextEdit::textChanged, this, [this] {
            if (!m_filling)
                update_tab_titles();
        });
        m_editors.insert(name, e);
        m_tabs->addTab(e, name);
    }
    m_filling = false;
    // The tab the user was reading; at first, the script the launcher runs (job.sh for SLURM, node.sh direct).
    const QString show = !current.isEmpty() ? current
                                            : QStringLiteral("file_")
            + qs(profile->launcher == remote::LauncherKind::slurm ? m_bundle->batch_script : m_bundle->node_script);
    for (int i = 0; i < m_tabs->count(); ++i)
        if (m_tabs->widget(i)->objectName() == show)
            m_tabs->setCurrentIndex(i);
    update_tab_titles();
}

void DispatchDialog::update_tab_titles()
{
    int n_edited = 0;
    for (int i = 0; i < m_tabs->count(); ++i) {
        const QString name = m_tabs->widget(i)->objectName().mid(5);
        const bool e = edited(name);
        n_edited += e;
        m_tabs->setTabText(i, e ? name + QStringLiteral(" (edited)") : name);
    }
    m_send->setText(n_edited ? QStringLiteral("Send (%1 edited file%2)")
                                   .arg(n_edited)
                                   .arg(n_edited > 1 ? QStringLiteral("s") : QString())
                             : QStringLiteral("Send"));
}

QString DispatchDialog::error_text() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

QStringList DispatchDialog::file_names() const
{
    QStringList out;
    for (int i = 0; i < m_tabs->count(); ++i)
        out << m_tabs->widget(i)->objectName().mid(5);
    return out;
}

QPlainTextEdit* DispatchDialog::editor(const QString& file) const
{
    return m_editors.value(file, nullptr);
}

bool DispatchDialog::edited(const QString& file) const
{
    const QPlainTextEdit* e = m_editors.value(file, nullptr);
    return e && e->toPlainText() != m_generated.value(file);
}

void DispatchDialog::revert(const QString& file)
{
    if (QPlainTextEdit* e = m_editors.value(file, nullptr))
        e->setPlainText(m_generated.value(file));
}

} // namespace parallax::views
