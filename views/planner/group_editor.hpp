#pragma once
// The cluster editor of a mixed cluster: one row per node group (name, GPU preset, nodes, GPUs per node,
// the fabric inside a node, the nodes' own NICs) with buttons to add and remove groups, and the first rule the plan
// breaks shown in place (the group's row tinted, the sentence under the table). Edits are whole scenarios
// (core/viewdata/group_edits.hpp), applied through the window's document and its undo stack.
#include "spec/scenario.hpp"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QTableWidget;

namespace parallax::views {

class GroupEditor : public QWidget {
    Q_OBJECT
public:
    explicit GroupEditor(QWidget* parent = nullptr);

    void set_scenario(const Scenario& s);
    QTableWidget* table() const { return m_table; }
    QString error_text() const;
    int error_row() const { return m_error_row; } // -1: none, or the plan as a whole
    // What the editors do, callable from tests.
    void add_group();
    void remove_group(int g);
    void set_nodes(int g, int nodes);
    void set_name(int g, const QString& name);
    void set_nic(int g, const QString& preset); // kClusterNic: the cluster's inter_node alone
    static const QString kClusterNic;

    enum Column { name, gpu, nodes, gpus_per_node, intra_node, nic, remove, column_count };

signals:
    void edit_requested(const parallax::Scenario& s, const QString& what, int drag);

private:
    void rebuild();
    void refresh_values();
    void show_error();
    void edit(const Scenario& s, const QString& what);

    std::optional<Scenario> m_scenario;
    QTableWidget* m_table = nullptr;
    QLabel* m_error = nullptr;
    QPushButton* m_add = nullptr;
    int m_error_row = -1;
};

} // namespace parallax::views
