#include "planner/layer_range_editor.hpp"

#include "io/layer_ranges_check.hpp"
#include "style/view_style.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

using Col = LayerRangeEditor::Column;

const QStringList kHeaders = { QStringLiteral("First"), QStringLiteral("Last"), QStringLiteral("Recompute"),
    QStringLiteral("TP"), QStringLiteral("Expert TP"), QStringLiteral("CP"), QStringLiteral("Precision"),
    QStringLiteral("Offload activations") };
const QStringList kRecompute
    = { QString(), QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("full") };
const QStringList kOffload = { QString(), QStringLiteral("yes"), QStringLiteral("no") };

QStringList precision_choices()
{
    QStringList out { QString() };
    for (std::string_view n : kPrecisionNames)
        out << QString::fromLatin1(n.data(), static_cast<int>(n.size()));
    return out;
}

QString optional_int(const std::optional<int>& v)
{
    return v ? QString::number(*v) : QString();
}

// A typed number as JSON: an integer when it reads as one, else the text, which the reader then names.
nlohmann::json number_or_text(const QString& text)
{
    bool ok = false;
    const long long v = text.trimmed().toLongLong(&ok);
    return ok ? nlohmann::json(v) : nlohmann::json(text.trimmed().toStdString());
}

} // namespace

LayerRangeEditor::LayerRangeEditor(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    auto* add = new QPushButton(QStringLiteral("Add range"), this);
    auto* remove = new QPushButton(QStringLiteral("Remove"), this);
    m_apply = new QPushButton(QStringLiteral("Apply"), this);
    m_apply->setObjectName(QStringLiteral("layers_apply"));
    m_apply->setToolTip(QStringLiteral("Use these ranges as the plan's strategy.layers (an empty table: none)"));
    for (QPushButton* b : { add, remove, m_apply })
        bar->addWidget(b);
    bar->addStretch(1);
    layout->addLayout(bar);
    m_table = new QTableWidget(0, Col::column_count, this);
    m_table->setObjectName(QStringLiteral("layers_table"));
    m_table->setHorizontalHeaderLabels(kHeaders);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setVisible(false);
    const QString regroup
        = QStringLiteral("The range's own %1: the stage's TP x CP x DP GPUs regrouped for its layers (data parallelism "
                         "TP*CP*DP / (TP'*CP')), with a relayout of the activation where it changes");
    m_table->horizontalHeaderItem(Col::tp)->setToolTip(regroup.arg(QStringLiteral("tensor parallel degree")));
    m_table->horizontalHeaderItem(Col::cp)->setToolTip(regroup.arg(QStringLiteral("context parallel degree")));
    m_table->setToolTip(QStringLiteral("Layers first..last (0-based, inclusive) and what they override; an empty "
                                       "cell keeps the strategy's value"));
    layout->addWidget(m_table, 1);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("layers_status"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    layout->addWidget(m_status);
    connect(add, &QPushButton::clicked, this, &LayerRangeEditor::add_range);
    connect(remove, &QPushButton::clicked, this, &LayerRangeEditor::remove_selected);
    connect(m_apply, &QPushButton::clicked, this, &LayerRangeEditor::apply);
    connect(m_table, &QTableWidget::itemChanged, this, [this] {
        if (!m_filling) {
            m_edited = true;
            check();
        }
    });
    m_apply->setEnabled(false);
}

void LayerRangeEditor::set_plan(const Scenario& s)
{
    m_scenario = s;
    m_has_plan = true;
    if (!m_edited)
        fill(s.strategy.layers);
    check();
}

void LayerRangeEditor::fill(const LayerRanges* ranges)
{
    m_filling = true;
    m_table->setRowCount(0);
    if (ranges)
        for (const LayerRange& r : ranges->ranges)
            add_row(r);
    m_filling = false;
}

void LayerRangeEditor::add_row(const LayerRange& r)
{
    const bool was_filling = m_filling;
    m_filling = true;
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    m_table->setItem(row, Col::first, new QTableWidgetItem(QString::number(r.first)));
    m_table->setItem(row, Col::last, new QTableWidgetItem(QString::number(r.last)));
    m_table->setItem(row, Col::tp, new QTableWidgetItem(optional_int(r.tp)));
    m_table->setItem(row, Col::expert_tp, new QTableWidgetItem(optional_int(r.expert_tp)));
    m_table->setItem(row, Col::cp, new QTableWidgetItem(optional_int(r.cp)));
    const auto combo = [&](int column, const QStringList& choices, const QString& current) {
        auto* box = new QComboBox(m_table);
        box->addItems(choices);
        box->setCurrentText(current);
        m_table->setCellWidget(row, column, box);
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            if (m_filling)
                return;
            m_edited = true;
            check();
        });
    };
    combo(Col::recompute, kRecompute, r.recompute ? QString::fromLatin1(to_string(*r.recompute).data()) : QString());
    combo(Col::precision, precision_choices(),
        r.precision
            ? QString::fromLatin1(to_string(*r.precision).data(), static_cast<int>(to_string(*r.precision).size()))
            : QString());
    combo(Col::offload, kOffload,
        r.offload_activations ? (*r.offload_activations ? kOffload[1] : kOffload[2]) : QString());
    m_filling = was_filling;
}

QString LayerRangeEditor::cell_text(int row, int column) const
{
    if (auto* box = qobject_cast<QComboBox*>(m_table->cellWidget(row, column)))
        return box->currentText();
    const QTableWidgetItem* item = m_table->item(row, column);
    return item ? item->text().trimmed() : QString();
}

nlohmann::json LayerRangeEditor::table_json() const
{
    nlohmann::json out = nlohmann::json::array();
    for (int row = 0; row < m_table->rowCount(); ++row) {
        nlohmann::json r;
        r["range"] = { number_or_text(cell_text(row, Col::first)), number_or_text(cell_text(row, Col::last)) };
        for (const auto& [column, key] :
            { std::pair { Col::tp, "tp" }, std::pair { Col::expert_tp, "expert_tp" }, std::pair { Col::cp, "cp" } })
            if (!cell_text(row, column).isEmpty())
                r[key] = number_or_text(cell_text(row, column));
        if (!cell_text(row, Col::recompute).isEmpty())
            r["recompute"] = cell_text(row, Col::recompute).toStdString();
        if (!cell_text(row, Col::precision).isEmpty())
            r["precision"] = cell_text(row, Col::precision).toStdString();
        if (!cell_text(row, Col::offload).isEmpty())
            r["offload_activations"] = cell_text(row, Col::offload) == kOffload[1];
        out.push_back(r);
    }
    return out;
}

void LayerRangeEditor::check()
{
    if (!m_has_plan)
        return;
    try {
        m_checked = checked_layer_ranges(table_json(), m_scenario);
        m_valid = true;
        m_error_row = -1;
        const int n = m_table->rowCount();
        m_status->setStyleSheet(QString());
        m_status->setText(n == 0 ? QStringLiteral("No ranges: every layer runs with the strategy's settings.")
                                 : QStringLiteral("%1 range%2, valid.%3")
                                       .arg(n)
                                       .arg(n == 1 ? QString() : QStringLiteral("s"))
                                       .arg(m_edited ? QStringLiteral(" Apply to use them.") : QString()));
    } catch (const InputError& e) {
        m_valid = false;
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("strategy\\.layers\\[(\\d+)\\]"))
                                              .match(QString::fromStdString(e.key()));
        show_error(QString::fromStdString(e.key() + ": " + e.rule()), m.hasMatch() ? m.captured(1).toInt() : -1);
    }
    m_apply->setEnabled(m_valid && m_edited);
    const QSignalBlocker quiet(m_table); // marking a row is not an edit
    for (int row = 0; row < m_table->rowCount(); ++row)
        for (int column : { Col::first, Col::last, Col::tp, Col::expert_tp, Col::cp })
            if (QTableWidgetItem* item = m_table->item(row, column)) {
                const bool bad = row == m_error_row;
                item->setBackground(bad ? QBrush(bad_colour(is_dark(palette())).lighter(170)) : QBrush());
            }
}

void LayerRangeEditor::show_error(const QString& message, int row)
{
    m_error_row = row;
    m_status->setStyleSheet(QStringLiteral("color: %1;").arg(bad_colour(is_dark(palette())).name()));
    m_status->setText(message);
}

void LayerRangeEditor::add_range()
{
    LayerRange r;
    const int layers = m_scenario.model.layers;
    const int rows = m_table->rowCount();
    r.first = rows > 0 ? std::min(layers - 1, cell_text(rows - 1, Col::last).toInt() + 1) : 0;
    r.last = layers - 1;
    r.recompute = Recompute::full;
    add_row(r);
    m_edited = true;
    check();
}

void LayerRangeEditor::remove_selected()
{
    const int row = m_table->currentRow();
    if (row < 0)
        return;
    m_table->removeRow(row);
    m_edited = true;
    check();
}

void LayerRangeEditor::apply()
{
    check();
    if (!m_valid)
        return;
    m_edited = false;
    m_apply->setEnabled(false);
    emit ranges_applied(m_checked);
}

QString LayerRangeEditor::status() const
{
    return m_status->text();
}

} // namespace parallax::views
