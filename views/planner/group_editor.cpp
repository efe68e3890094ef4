#include "planner/group_editor.hpp"

#include "io/preset_catalog.hpp"
#include "spec/input_error.hpp"
#include "style/view_style.hpp"
#include "viewdata/group_edits.hpp"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace parallax::views {

namespace {

// Spin-box limits: the scenario reader's (io/input_limits) are far larger; these are what a form needs.
constexpr int kMostNodes = 100000;
constexpr int kMostGpusPerNode = 4096;
constexpr int kNameWidth = 90; // px: group names are short; the presets need the room

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QComboBox* preset_combo(PresetKind kind, const std::string& current, QWidget* parent)
{
    auto* c = new QComboBox(parent);
    for (const std::string& n : PresetCatalog::standard().names(kind))
        c->addItem(qs(n));
    if (c->findText(qs(current)) < 0) // an inline GPU or fabric: shown, kept until another is chosen
        c->addItem(qs(current.empty() ? std::string("(inline)") : current));
    c->setCurrentText(qs(current.empty() ? std::string("(inline)") : current));
    return c;
}

// The NIC column: a fabric preset, or the cluster's inter_node (no NIC of the group's own).
QComboBox* nic_combo(const NodeGroup& group, QWidget* parent)
{
    auto* c = preset_combo(PresetKind::fabrics, group.inter_node ? group.inter_node_ref : std::string(), parent);
    c->insertItem(0, GroupEditor::kClusterNic);
    if (!group.inter_node)
        c->setCurrentIndex(0);
    // preset_combo added "(inline)" for the empty reference: not a choice when the group has no NIC.
    if (const int inline_row = c->findText(QStringLiteral("(inline)")); !group.inter_node && inline_row > 0)
        c->removeItem(inline_row);
    c->setToolTip(QStringLiteral("What this group's nodes reach other nodes with. A transfer between two nodes "
                                 "moves at the slower of their NICs and the cluster's fabric between nodes."));
    return c;
}

} // namespace

const QString GroupEditor::kClusterNic = QStringLiteral("(cluster's)");

GroupEditor::GroupEditor(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("group_editor"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
    auto* note = new QLabel(QStringLiteral("Node groups of this mixed cluster. The fabric between nodes is the "
                                           "cluster's; a group may name its nodes' own NICs. Replicas name "
                                           "their group in the Stages panel."),
        this);
    note->setWordWrap(true);
    v->addWidget(note);
    m_table = new QTableWidget(0, column_count, this);
    m_table->setObjectName(QStringLiteral("group_table"));
    m_table->setHorizontalHeaderLabels({ QStringLiteral("Name"), QStringLiteral("GPU"), QStringLiteral("Nodes"),
        QStringLiteral("GPUs/node"), QStringLiteral("Inside a node"), QStringLiteral("Node NICs"), QString() });
    m_table->verticalHeader()->hide();
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    v->addWidget(m_table, 1);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("group_error"));
    m_error->setWordWrap(true);
    m_error->hide();
    v->addWidget(m_error);
    m_add = new QPushButton(QStringLiteral("Add group"), this);
    m_add->setObjectName(QStringLiteral("add_group"));
    connect(m_add, &QPushButton::clicked, this, &GroupEditor::add_group);
    v->addWidget(m_add);
}

void GroupEditor::set_scenario(const Scenario& s)
{
    const bool same_groups = m_scenario && m_scenario->cluster.groups.size() == s.cluster.groups.size();
    m_scenario = s;
    // Rebuilt only when groups come or go: an editor being typed in keeps its focus.
    if (same_groups)
        refresh_values();
    else
        rebuild();
    show_error();
}

void GroupEditor::rebuild()
{
    m_table->clearContents();
    const int groups = m_scenario ? static_cast<int>(m_scenario->cluster.groups.size()) : 0;
    m_table->setRowCount(groups);
    for (int g = 0; g < groups; ++g) {
        const NodeGroup& group = m_scenario->cluster.groups[static_cast<std::size_t>(g)];
        auto* name_edit = new QLineEdit(qs(group.name), m_table);
        connect(name_edit, &QLineEdit::editingFinished, this, [this, g, name_edit] { set_name(g, name_edit->text()); });
        m_table->setCellWidget(g, name, name_edit);
        auto* gpu_box = preset_combo(PresetKind::gpus, group.gpu_ref, m_table);
        connect(gpu_box, &QComboBox::activated, this, [this, g, gpu_box](int) {
            try {
                edit(with_group_gpu(*m_scenario, g, gpu_box->currentText().toStdString()),
                    QStringLiteral("group GPU ") + gpu_box->currentText());
            } catch (const InputError&) { // "(inline)": nothing to adopt
            }
        });
        m_table->setCellWidget(g, gpu, gpu_box);
        auto spin = [&](int column, int value, int most, auto&& apply) {
            auto* box = new QSpinBox(m_table);
            box->setRange(1, most);
            box->setValue(value);
            connect(box, &QSpinBox::valueChanged, this, apply);
            m_table->setCellWidget(g, column, box);
        };
        spin(nodes, group.nodes, kMostNodes, [this, g](int n) { set_nodes(g, n); });
        spin(gpus_per_node, group.gpus_per_node, kMostGpusPerNode, [this, g](int n) {
            edit(with_group_gpus_per_node(*m_scenario, g, n), QStringLiteral("group GPUs per node %1").arg(n));
        });
        auto* fabric_box = preset_combo(PresetKind::fabrics, group.intra_node_ref, m_table);
        connect(fabric_box, &QComboBox::activated, this, [this, g, fabric_box](int) {
            try {
                edit(with_group_fabric(*m_scenario, g, fabric_box->currentText().toStdString()),
                    QStringLiteral("group fabric ") + fabric_box->currentText());
            } catch (const InputError&) {
            }
        });
        m_table->setCellWidget(g, intra_node, fabric_box);
        auto* nic_box = nic_combo(group, m_table);
        connect(nic_box, &QComboBox::activated, this, [this, g, nic_box](int) { set_nic(g, nic_box->currentText()); });
        m_table->setCellWidget(g, nic, nic_box);
        auto* drop = new QToolButton(m_table);
        drop->setText(QStringLiteral("Remove"));
        drop->setObjectName(QStringLiteral("remove_group_%1").arg(g));
        drop->setEnabled(without_group(*m_scenario, g).has_value());
        drop->setToolTip(drop->isEnabled() ? QStringLiteral("Remove this group")
                                           : QStringLiteral("A replica runs on this group (or it is the only one): "
                                                            "move its replicas first"));
        connect(drop, &QToolButton::clicked, this, [this, g] { remove_group(g); });
        m_table->setCellWidget(g, remove, drop);
    }
    m_table->resizeColumnsToContents();
    m_table->setColumnWidth(name, std::min(m_table->columnWidth(name), kNameWidth));
}

void GroupEditor::refresh_values()
{
    for (int g = 0; g < m_table->rowCount(); ++g) {
        const NodeGroup& group = m_scenario->cluster.groups[static_cast<std::size_t>(g)];
        if (auto* e = qobject_cast<QLineEdit*>(m_table->cellWidget(g, name)); e && !e->hasFocus())
            e->setText(qs(group.name));
        for (auto [column, value] :
            { std::pair { nodes, group.nodes }, std::pair { gpus_per_node, group.gpus_per_node } })
            if (auto* box = qobject_cast<QSpinBox*>(m_table->cellWidget(g, column))) {
                const QSignalBlocker quiet(box);
                box->setValue(value);
            }
        if (auto* c = qobject_cast<QComboBox*>(m_table->cellWidget(g, gpu)); c && !group.gpu_ref.empty())
            c->setCurrentText(qs(group.gpu_ref));
        if (auto* c = qobject_cast<QComboBox*>(m_table->cellWidget(g, intra_node)); c && !group.intra_node_ref.empty())
            c->setCurrentText(qs(group.intra_node_ref));
        if (auto* c = qobject_cast<QComboBox*>(m_table->cellWidget(g, nic))) {
            const QString shown = group.inter_node
                ? qs(group.inter_node_ref.empty() ? std::string("(inline)") : group.inter_node_ref)
                : kClusterNic;
            if (c->findText(shown) < 0) // an inline fabric read from a file: shown, kept until another is chosen
                c->addItem(shown);
            c->setCurrentText(shown);
        }
        if (auto* b = m_table->cellWidget(g, remove))
            b->setEnabled(without_group(*m_scenario, g).has_value());
    }
}

// The first broken rule under the table, and its group's row tinted.
void GroupEditor::show_error()
{
    const std::optional<GroupEditError> e = m_scenario ? group_edit_error(*m_scenario) : std::nullopt;
    m_error_row = e ? e->group : -1;
    const QColor bad = bad_colour(is_dark(palette()));
    for (int g = 0; g < m_table->rowCount(); ++g) {
        const QString style
            = g == m_error_row ? QStringLiteral("background: %1;").arg(bad.lighter(170).name()) : QString();
        if (QWidget* w = m_table->cellWidget(g, name))
            w->setStyleSheet(style);
    }
    if (!e) {
        m_error->hide();
        return;
    }
    m_error->setText(QStringLiteral("<span style='color:%1'><code>%2</code>: %3</span>")
                         .arg(bad.name(), qs(e->key).toHtmlEscaped(), qs(e->message).toHtmlEscaped()));
    m_error->show();
}

QString GroupEditor::error_text() const
{
    return m_error->isVisibleTo(this) ? m_error->text() : QString();
}

void GroupEditor::edit(const Scenario& s, const QString& what)
{
    emit edit_requested(s, what, 0);
}

void GroupEditor::add_group()
{
    if (m_scenario)
        edit(with_added_group(*m_scenario), QStringLiteral("add a node group"));
}

void GroupEditor::remove_group(int g)
{
    if (!m_scenario)
        return;
    if (const std::optional<Scenario> s = without_group(*m_scenario, g))
        edit(*s, QStringLiteral("remove a node group"));
}

void GroupEditor::set_nodes(int g, int n)
{
    if (m_scenario)
        edit(with_group_nodes(*m_scenario, g, n), QStringLiteral("group nodes %1").arg(n));
}

void GroupEditor::set_nic(int g, const QString& preset)
{
    if (!m_scenario || g >= static_cast<int>(m_scenario->cluster.groups.size()) || preset == QStringLiteral("(inline)"))
        return;
    try {
        const bool cluster = preset == kClusterNic;
        edit(with_group_nic(*m_scenario, g, cluster ? std::string() : preset.toStdString()),
            cluster ? QStringLiteral("group NICs: the cluster's") : QStringLiteral("group NICs ") + preset);
    } catch (const InputError&) {
    }
}

void GroupEditor::set_name(int g, const QString& text)
{
    if (!m_scenario || g >= static_cast<int>(m_scenario->cluster.groups.size())
        || m_scenario->cluster.groups[static_cast<std::size_t>(g)].name == text.toStdString())
        return;
    edit(with_group_name(*m_scenario, g, text.toStdString()), QStringLiteral("rename a node group"));
}

} // namespace parallax::views
