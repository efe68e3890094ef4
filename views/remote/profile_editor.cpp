#include "remote/profile_editor.hpp"

#include "cluster/profile_store.hpp"
#include "io/preset_catalog.hpp"
#include "spec/input_error.hpp"
#include "style/view_style.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTabWidget>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

using remote::ClusterProfile;

const QStringList kIntegerKeys = { QStringLiteral("port"), QStringLiteral("connect_timeout_s"),
    QStringLiteral("keepalive_s"), QStringLiteral("gpus_per_node"), QStringLiteral("cpus_per_task") };
const QStringList kNumberKeys = { QStringLiteral("poll_min_s"), QStringLiteral("poll_max_s") };
const QStringList kListKeys
    = { QStringLiteral("extra_sbatch_args"), QStringLiteral("hosts"), QStringLiteral("modules") };

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QStringList lines_of(const QString& text)
{
    QStringList out;
    for (const QString& l : text.split(u'\n')) {
        const QString t = l.trimmed();
        if (!t.isEmpty())
            out << t;
    }
    return out;
}

// The part of a loader key that names a form field: "modules[2]" -> "modules", "env.FOO" -> "env".
QString field_key(const QString& key)
{
    QString k = key;
    const int cut = k.indexOf(QRegularExpression(QStringLiteral("[\\[.]")));
    return cut > 0 ? k.left(cut) : k;
}

constexpr const char* kNewItem = "(new profile)";

} // namespace

ProfileEditorDialog::ProfileEditorDialog(const QString& settings_file, QWidget* parent)
    : QDialog(parent)
    , m_settings_file(settings_file)
{
    setObjectName(QStringLiteral("profile_editor"));
    setWindowTitle(QStringLiteral("Cluster profiles"));
    build();
    reload_list(QString());
    if (m_list->count() == 0)
        new_profile();
}

void ProfileEditorDialog::build()
{
    auto* outer = new QVBoxLayout(this);
    auto* split = new QHBoxLayout;
    outer->addLayout(split, 1);
    split->addLayout(build_profile_list());

    auto* right = new QVBoxLayout;
    m_tabs = new QTabWidget(this);
    right->addWidget(m_tabs, 1);
    split->addLayout(right, 3);
    build_connection_page();
    build_launch_page();
    build_paths_page();
    build_monitoring_page();
    build_footer(right, outer);
}

QVBoxLayout* ProfileEditorDialog::build_profile_list()
{
    auto* left = new QVBoxLayout;
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("profile_list"));
    m_list->setMinimumWidth(160);
    left->addWidget(m_list, 1);
    auto* row = new QHBoxLayout;
    auto* add = new QPushButton(QStringLiteral("New"), this);
    add->setObjectName(QStringLiteral("new_profile"));
    auto* dup = new QPushButton(QStringLiteral("Duplicate"), this);
    dup->setObjectName(QStringLiteral("duplicate_profile"));
    auto* del = new QPushButton(QStringLiteral("Remove"), this);
    del->setObjectName(QStringLiteral("remove_profile"));
    row->addWidget(add);
    row->addWidget(dup);
    row->addWidget(del);
    left->addLayout(row);
    connect(add, &QPushButton::clicked, this, &ProfileEditorDialog::new_profile);
    connect(dup, &QPushButton::clicked, this, &ProfileEditorDialog::duplicate_current);
    connect(del, &QPushButton::clicked, this, [this] { remove_current(); });
    connect(m_list, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* cur, QListWidgetItem* prev) {
        if (m_loading || !cur || cur == prev)
            return;
        load_selected();
    });
    return left;
}

// ---------------------------------------------------------------------------------------------
// Form fields: each is registered under its profile key and remembers a draft when edited.

QLineEdit* ProfileEditorDialog::add_line(QFormLayout* f, const char* key, const QString& label, const QString& tip)
{
    auto* e = new QLineEdit(this);
    e->setObjectName(QLatin1String(key));
    e->setToolTip(tip);
    f->addRow(label, e);
    m_lines.insert(QLatin1String(key), e);
    connect(e, &QLineEdit::textEdited, this, [this] { remember_draft(); });
    return e;
}

void ProfileEditorDialog::add_check(QFormLayout* f, const char* key, const QString& label, const QString& tip)
{
    auto* c = new QCheckBox(label, this);
    c->setObjectName(QLatin1String(key));
    c->setToolTip(tip);
    f->addRow(QString(), c);
    m_checks.insert(QLatin1String(key), c);
    connect(c, &QCheckBox::toggled, this, [this] { remember_draft(); });
}

void ProfileEditorDialog::add_combo(
    QFormLayout* f, const char* key, const QString& label, const QStringList& items, bool editable, const QString& tip)
{
    auto* c = new QComboBox(this);
    c->setObjectName(QLatin1String(key));
    c->setEditable(editable);
    c->addItems(items);
    c->setToolTip(tip);
    f->addRow(label, c);
    m_combos.insert(QLatin1String(key), c);
    connect(c, &QComboBox::currentTextChanged, this, [this] { remember_draft(); });
}

void ProfileEditorDialog::add_text(QFormLayout* f, const char* key, const QString& label, const QString& tip)
{
    auto* t = new QPlainTextEdit(this);
    t->setObjectName(QLatin1String(key));
    t->setToolTip(tip);
    t->setTabChangesFocus(true);
    t->setMaximumHeight(fontMetrics().height() * 5);
    f->addRow(label, t);
    m_texts.insert(QLatin1String(key), t);
    connect(t, &QPlainTextEdit::textChanged, this, [this] { remember_draft(); });
}

QFormLayout* ProfileEditorDialog::add_page(const QString& title)
{
    auto* w = new QWidget(this);
    auto* f = new QFormLayout(w);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_tabs->addTab(w, title);
    return f;
}

// ---------------------------------------------------------------------------------------------
// The tabs, one per part of a profile

void ProfileEditorDialog::build_connection_page()
{
    QFormLayout* c = add_page(QStringLiteral("Connection"));
    add_line(c, "name", QStringLiteral("Name"), QStringLiteral("Letters, digits, '.', '_' and '-'"));
    add_line(
        c, "host", QStringLiteral("Host"), QStringLiteral("Login node: a name, an address or an ~/.ssh/config alias"));
    add_line(c, "port", QStringLiteral("Port"), QStringLiteral("1..65535"));
    add_line(c, "user", QStringLiteral("User"), QStringLiteral("Empty: from ~/.ssh/config, else your local user name"));
    QLineEdit* key = add_line(c, "key_file", QStringLiteral("Key file"),
        QStringLiteral("Private key (its passphrase is asked when needed and never stored); empty: ~/.ssh/id_*"));
    auto* browse = new QPushButton(QStringLiteral("Choose key file..."), this);
    browse->setObjectName(QStringLiteral("choose_key_file"));
    connect(browse, &QPushButton::clicked, this, [this, key] {
        const QString f = QFileDialog::getOpenFileName(this, QStringLiteral("Private key"), key->text());
        if (!f.isEmpty()) {
            key->setText(f);
            remember_draft();
        }
    });
    c->addRow(QString(), browse);
    add_line(c, "known_hosts", QStringLiteral("known_hosts"),
        QStringLiteral("Checked strictly; an unknown host key is shown and asked. Empty: ~/.ssh/known_hosts"));
    add_check(c, "use_agent", QStringLiteral("Try ssh-agent first"), QStringLiteral("When SSH_AUTH_SOCK is set"));
    add_check(c, "use_ssh_config", QStringLiteral("Apply ~/.ssh/config (aliases, User, Port, IdentityFile, ProxyJump)"),
        QString());
    add_check(c, "login_shell", QStringLiteral("Cluster commands in a login shell (bash -lc: modules and PATH apply)"),
        QString());
    add_line(c, "connect_timeout_s", QStringLiteral("Connect timeout (s)"), QStringLiteral("1..600"));
    add_line(c, "keepalive_s", QStringLiteral("Keepalive (s)"), QStringLiteral("0..3600, 0: off"));
}

void ProfileEditorDialog::build_launch_page()
{
    QFormLayout* l = add_page(QStringLiteral("Launch"));
    add_combo(l, "launcher", QStringLiteral("Launcher"), { QStringLiteral("slurm"), QStringLiteral("direct") }, false,
        QStringLiteral("slurm: sbatch + srun; direct: torchrun on each host over SSH"));
    add_line(l, "partition", QStringLiteral("Partition"), QString());
    add_line(l, "account", QStringLiteral("Account"), QString());
    add_line(l, "qos", QStringLiteral("QoS"), QString());
    add_line(l, "time_limit", QStringLiteral("Time limit"), QStringLiteral("sbatch --time, e.g. 00:30:00"));
    add_text(l, "extra_sbatch_args", QStringLiteral("Extra sbatch arguments"),
        QStringLiteral("One argument per line, e.g. --reservation=abc"));
    add_text(l, "hosts", QStringLiteral("Hosts (direct)"), QStringLiteral("One host per node; empty: the login host"));
    QStringList gpus { QString(), QStringLiteral("cpu") };
    for (const auto& n : PresetCatalog::standard().names(PresetKind::gpus))
        gpus << qs(n);
    add_combo(l, "gpu_type", QStringLiteral("GPU type"), gpus, true,
        QStringLiteral("A GPU preset; cpu or empty: CPU ranks with gloo (measured, not compared)"));
    add_line(l, "gpus_per_node", QStringLiteral("GPUs per node"), QStringLiteral("Ranks per node; 0: the plan's"));
    add_line(l, "cpus_per_task", QStringLiteral("CPUs per task"), QStringLiteral("0: the launcher decides"));
    add_text(l, "modules", QStringLiteral("Modules"), QStringLiteral("`module load` each line, in order"));
    add_line(l, "container", QStringLiteral("Container image"), QString());
    add_combo(l, "container_runtime", QStringLiteral("Container runtime"),
        { QString(), QStringLiteral("pyxis"), QStringLiteral("apptainer") }, true,
        QStringLiteral("pyxis (srun --container-image) or apptainer; empty: no container"));
}

void ProfileEditorDialog::build_paths_page()
{
    QFormLayout* p = add_page(QStringLiteral("Paths"));
    add_line(p, "work_dir", QStringLiteral("Run folder"), QStringLiteral("Relative: below the login folder"));
    add_line(p, "python", QStringLiteral("Python"), QString());
    add_line(p, "megatron_path", QStringLiteral("Megatron-LM"), QStringLiteral("Checkout with pretrain_gpt.py"));
    add_line(p, "torchtitan_path", QStringLiteral("torchtitan"), QString());
    add_line(p, "deepspeed_path", QStringLiteral("Megatron-DeepSpeed"), QString());
    add_text(p, "env", QStringLiteral("Environment"), QStringLiteral("KEY=VALUE per line, exported in job scripts"));
}

void ProfileEditorDialog::build_monitoring_page()
{
    QFormLayout* m = add_page(QStringLiteral("Monitoring"));
    add_line(
        m, "poll_min_s", QStringLiteral("First poll interval (s)"), QStringLiteral("Grows 1.5x while nothing changes"));
    add_line(m, "poll_max_s", QStringLiteral("Longest poll interval (s)"), QString());
}

void ProfileEditorDialog::build_footer(QVBoxLayout* right, QVBoxLayout* outer)
{
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("profile_error"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();
    right->addWidget(m_error);
    auto* note = new QLabel(QStringLiteral("Stored in %1. No passwords or passphrases are ever stored.")
                                .arg(remote::ProfileStore(m_settings_file).location()),
        this);
    note->setWordWrap(true);
    right->addWidget(note);

    auto* buttons = new QDialogButtonBox(this);
    QPushButton* save_button = buttons->addButton(QStringLiteral("Save"), QDialogButtonBox::ApplyRole);
    save_button->setObjectName(QStringLiteral("save_profile"));
    QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
    close->setObjectName(QStringLiteral("close_profiles"));
    outer->addWidget(buttons);

    connect(save_button, &QPushButton::clicked, this, [this] { save(); });
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
}

void ProfileEditorDialog::duplicate_current()
{
    const nlohmann::json raw = [this] {
        nlohmann::json j;
        try {
            j = form_json();
        } catch (const InputError&) {
        }
        return j;
    }();
    new_profile();
    try {
        ClusterProfile p = remote::profile_from_json(raw, "duplicate");
        p.name += "-copy";
        set_form(p);
    } catch (const std::exception&) {
        // Nothing valid to copy: the new form stays empty.
    }
    remember_draft();
}

QStringList ProfileEditorDialog::stored_names() const
{
    return remote::ProfileStore(m_settings_file).names();
}

QString ProfileEditorDialog::current_name() const
{
    const QListWidgetItem* i = m_list->currentItem();
    return i ? i->data(Qt::UserRole).toString() : QString();
}

void ProfileEditorDialog::reload_list(const QString& select_name)
{
    m_loading = true;
    m_list->clear();
    for (const QString& n : stored_names()) {
        auto* item = new QListWidgetItem(m_drafts.contains(n) ? n + QStringLiteral(" *") : n, m_list);
        item->setData(Qt::UserRole, n);
    }
    if (m_drafts.contains(QString())) {
        auto* item = new QListWidgetItem(QLatin1String(kNewItem) + QStringLiteral(" *"), m_list);
        item->setData(Qt::UserRole, QString());
    }
    m_loading = false;
    for (int i = 0; i < m_list->count(); ++i)
        if (m_list->item(i)->data(Qt::UserRole).toString() == select_name) {
            m_list->setCurrentRow(i);
            return;
        }
    if (m_list->count() > 0 && select_name.isEmpty() && !m_drafts.contains(QString()))
        m_list->setCurrentRow(0);
}

bool ProfileEditorDialog::select(const QString& name)
{
    for (int i = 0; i < m_list->count(); ++i)
        if (m_list->item(i)->data(Qt::UserRole).toString() == name) {
            m_list->setCurrentRow(i);
            return true;
        }
    return false;
}

void ProfileEditorDialog::new_profile()
{
    if (!m_drafts.contains(QString())) {
        ClusterProfile p;
        m_loading = true;
        set_form(p);
        m_loading = false;
        m_loaded_name.clear();
        nlohmann::json raw = nlohmann::json::object();
        m_drafts.insert(QString(), raw); // filled by remember_draft below
        remember_draft();
    }
    reload_list(QString());
    select(QString());
}

void ProfileEditorDialog::set_form(const ClusterProfile& p)
{
    const bool was = m_loading;
    m_loading = true;
    const nlohmann::json j = remote::profile_to_json(p);
    for (auto it = m_lines.begin(); it != m_lines.end(); ++it) {
        const std::string k = it.key().toStdString();
        const auto& v = j.contains(k) ? j[k] : nlohmann::json();
        if (v.is_string())
            it.value()->setText(qs(v.get<std::string>()));
        else if (v.is_number_integer() || v.is_number_unsigned())
            it.value()->setText(QString::number(v.get<long long>()));
        else if (v.is_number())
            it.value()->setText(QString::number(v.get<double>(), 'g', 12));
        else
            it.value()->clear();
    }
    for (auto it = m_checks.begin(); it != m_checks.end(); ++it)
        it.value()->setChecked(j.value(it.key().toStdString(), false));
    for (auto it = m_combos.begin(); it != m_combos.end(); ++it) {
        const QString v = qs(j.value(it.key().toStdString(), std::string()));
        const int i = it.value()->findText(v);
        if (i >= 0)
            it.value()->setCurrentIndex(i);
        else
            it.value()->setEditText(v);
    }
    for (auto it = m_texts.begin(); it != m_texts.end(); ++it) {
        QStringList lines;
        const auto& v = j[it.key().toStdString()];
        if (it.key() == QLatin1String("env")) {
            for (const auto& [ek, ev] : v.items())
                lines << qs(ek) + QLatin1Char('=') + qs(ev.get<std::string>());
        } else {
            for (const auto& e : v)
                lines << qs(e.get<std::string>());
        }
        it.value()->setPlainText(lines.join(u'\n'));
    }
    m_loading = was;
}

nlohmann::json ProfileEditorDialog::form_json() const
{
    nlohmann::json j = nlohmann::json::object();
    for (auto it = m_lines.begin(); it != m_lines.end(); ++it) {
        const std::string k = it.key().toStdString();
        const QString t = it.value()->text().trimmed();
        if (kIntegerKeys.contains(it.key()) || kNumberKeys.contains(it.key())) {
            if (t.isEmpty())
                continue; // the loader's default
            bool ok = false;
            const long long n = t.toLongLong(&ok);
            if (ok && kIntegerKeys.contains(it.key())) {
                j[k] = n;
                continue;
            }
            const double d = t.toDouble(&ok);
            if (ok) {
                j[k] = d;
                continue;
            }
            j[k] = t.toStdString(); // the loader names the key and what it expected
            continue;
        }
        // Paths and names as typed: spaces inside are the loader's to judge, surrounding ones are not meant.
        j[k] = (it.key() == QLatin1String("name") || it.key() == QLatin1String("host") ? t : it.value()->text())
                   .toStdString();
    }
    for (auto it = m_checks.begin(); it != m_checks.end(); ++it)
        j[it.key().toStdString()] = it.value()->isChecked();
    for (auto it = m_combos.begin(); it != m_combos.end(); ++it)
        j[it.key().toStdString()] = it.value()->currentText().trimmed().toStdString();
    for (auto it = m_texts.begin(); it != m_texts.end(); ++it) {
        const QStringList lines = lines_of(it.value()->toPlainText());
        if (it.key() == QLatin1String("env")) {
            nlohmann::json env = nlohmann::json::object();
            int n = 0;
            for (const QString& l : lines) {
                ++n;
                const int eq = l.indexOf(u'=');
                if (eq <= 0)
                    throw InputError("cluster profile", "env",
                        "line " + std::to_string(n) + " must be KEY=VALUE, found '" + l.toStdString() + "'");
                env[l.left(eq).trimmed().toStdString()] = l.mid(eq + 1).toStdString();
            }
            j["env"] = env;
        } else {
            nlohmann::json list = nlohmann::json::array();
            for (const QString& l : lines)
                list.push_back(l.toStdString());
            j[it.key().toStdString()] = list;
        }
    }
    return j;
}

QWidget* ProfileEditorDialog::field(const QString& key) const
{
    const QString k = field_key(key);
    if (auto* w = m_lines.value(k))
        return w;
    if (auto* w = m_checks.value(k))
        return w;
    if (auto* w = m_combos.value(k))
        return w;
    return m_texts.value(k);
}

void ProfileEditorDialog::show_error(const QString& key, const QString& message)
{
    clear_error();
    m_error_key = key;
    m_error->setText(QStringLiteral("<b>Not saved:</b> ") + message.toHtmlEscaped());
    m_error->setStyleSheet(QStringLiteral("QLabel { color: %1; }").arg(bad_colour(is_dark(palette())).name()));
    m_error->show();
    if (QWidget* w = field(key)) {
        w->setStyleSheet(QStringLiteral("border: 2px solid %1;").arg(bad_colour(is_dark(palette())).name()));
        w->setToolTip(message);
        // The field's page, then the field itself.
        for (int i = 0; i < m_tabs->count(); ++i)
            if (m_tabs->widget(i)->isAncestorOf(w))
                m_tabs->setCurrentIndex(i);
        w->setFocus();
    }
}

void ProfileEditorDialog::clear_error()
{
    if (!m_error_key.isEmpty())
        if (QWidget* w = field(m_error_key))
            w->setStyleSheet(QString());
    m_error_key.clear();
    m_error->clear();
    m_error->hide();
}

QString ProfileEditorDialog::error_text() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

void ProfileEditorDialog::remember_draft()
{
    if (m_loading)
        return;
    // The raw widget contents: a draft may not even parse yet.
    nlohmann::json raw = nlohmann::json::object();
    for (auto it = m_lines.begin(); it != m_lines.end(); ++it)
        raw[it.key().toStdString()] = it.value()->text().toStdString();
    for (auto it = m_checks.begin(); it != m_checks.end(); ++it)
        raw[it.key().toStdString()] = it.value()->isChecked();
    for (auto it = m_combos.begin(); it != m_combos.end(); ++it)
        raw[it.key().toStdString()] = it.value()->currentText().toStdString();
    for (auto it = m_texts.begin(); it != m_texts.end(); ++it)
        raw[it.key().toStdString()] = it.value()->toPlainText().toStdString();
    const bool fresh = !m_drafts.contains(m_loaded_name);
    m_drafts.insert(m_loaded_name, raw);
    if (fresh)
        if (QListWidgetItem* i = m_list->currentItem())
            if (i->data(Qt::UserRole).toString() == m_loaded_name && !i->text().endsWith(QLatin1String(" *")))
                i->setText(i->text() + QStringLiteral(" *"));
}

void ProfileEditorDialog::load_selected()
{
    const QString name = current_name();
    clear_error();
    m_loaded_name = name;
    m_loading = true;
    if (m_drafts.contains(name)) {
        const nlohmann::json& raw = m_drafts[name];
        for (auto it = m_lines.begin(); it != m_lines.end(); ++it)
            it.value()->setText(qs(raw.value(it.key().toStdString(), std::string())));
        for (auto it = m_checks.begin(); it != m_checks.end(); ++it)
            it.value()->setChecked(raw.value(it.key().toStdString(), false));
        for (auto it = m_combos.begin(); it != m_combos.end(); ++it)
            it.value()->setEditText(qs(raw.value(it.key().toStdString(), std::string())));
        for (auto it = m_texts.begin(); it != m_texts.end(); ++it)
            it.value()->setPlainText(qs(raw.value(it.key().toStdString(), std::string())));
        m_loading = false;
        return;
    }
    try {
        if (const auto p = remote::ProfileStore(m_settings_file).load(name))
            set_form(*p);
        m_loading = false;
    } catch (const InputError& e) {
        // A hand-edited settings group that no longer validates: say so, and let the user type it again.
        ClusterProfile blank;
        blank.name = name.toStdString();
        set_form(blank);
        m_loading = false;
        show_error(qs(e.key()), qs(e.what()));
    }
}

bool ProfileEditorDialog::save()
{
    remote::ClusterProfile p;
    try {
        p = remote::profile_from_json(form_json(), "cluster profile");
    } catch (const InputError& e) {
        show_error(qs(e.key()), qs(e.what()));
        return false;
    }
    try {
        remote::ProfileStore store(m_settings_file);
        const QString name = qs(p.name);
        if (name != m_loaded_name && store.names().contains(name)) {
            show_error(QStringLiteral("name"),
                QStringLiteral("cluster profile: name: a profile '%1' is already stored; choose another name")
                    .arg(name));
            return false;
        }
        store.save(p);
        if (!m_loaded_name.isEmpty() && m_loaded_name != name)
            store.remove(m_loaded_name);
        m_drafts.remove(m_loaded_name);
        m_loaded_name = name;
    } catch (const InputError& e) {
        show_error(qs(e.key()), qs(e.what()));
        return false;
    }
    clear_error();
    reload_list(m_loaded_name);
    Q_EMIT profiles_changed(stored_names());
    return true;
}

bool ProfileEditorDialog::remove_current()
{
    const QString name = current_name();
    if (m_interactive) {
        const auto answer = QMessageBox::question(this, QStringLiteral("Remove profile"),
            name.isEmpty() ? QStringLiteral("Discard the new profile?")
                           : QStringLiteral("Remove the cluster profile '%1' from the settings? Runs sent with it keep "
                                            "their copy of it.")
                                 .arg(name),
            QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        if (answer != QMessageBox::Yes)
            return false;
    }
    m_drafts.remove(name);
    if (!name.isEmpty())
        remote::ProfileStore(m_settings_file).remove(name);
    clear_error();
    reload_list(QString());
    if (m_list->count() == 0)
        new_profile();
    else
        load_selected();
    Q_EMIT profiles_changed(stored_names());
    return true;
}

void ProfileEditorDialog::done(int r)
{
    if (m_interactive && !m_drafts.isEmpty()) {
        QStringList names;
        for (const QString& n : m_drafts.keys())
            names << (n.isEmpty() ? QLatin1String(kNewItem) : n);
        const auto answer = QMessageBox::question(this, QStringLiteral("Unsaved profiles"),
            QStringLiteral("Unsaved changes to %1. Discard them?").arg(names.join(QStringLiteral(", "))),
            QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Discard)
            return;
    }
    QDialog::done(r);
}

} // namespace parallax::views
