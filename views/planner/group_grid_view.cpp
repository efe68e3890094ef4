#include "planner/group_grid_view.hpp"

#include "style/view_style.hpp"

#include <QPainter>

#include <algorithm>

namespace parallax::views {

namespace {

constexpr int kCell = 34; // px per GPU cell
constexpr int kLabelWidth = 80; // the node names left of the cells
constexpr int kLine = 18; // one line of text
constexpr int kIdleAlpha = 60; // an idle GPU: its type's colour, faded

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

GroupGridView::GroupGridView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("group_grid"));
    setMinimumHeight(120);
}

void GroupGridView::set_scenario(const Scenario& s)
{
    m_grid = group_grid(s);
    updateGeometry();
    update();
}

QColor GroupGridView::type_colour(int type) const
{
    return group_colour(type, is_dark(palette()));
}

QColor GroupGridView::cell_colour(int group, int node, int gpu) const
{
    const GroupGridGroup& g = m_grid.groups[static_cast<std::size_t>(group)];
    QColor c = type_colour(g.type);
    if (g.nodes[static_cast<std::size_t>(node)][static_cast<std::size_t>(gpu)].idle())
        c.setAlpha(kIdleAlpha);
    return c;
}

QStringList GroupGridView::legend() const
{
    QStringList out;
    for (const GroupGridType& t : m_grid.types)
        out << QStringLiteral("%1: %2 of %3 GPUs hold a replica").arg(qs(t.gpu)).arg(t.used).arg(t.gpus);
    return out;
}

QSize GroupGridView::sizeHint() const
{
    int rows = 0, widest = 1;
    for (const GroupGridGroup& g : m_grid.groups) {
        rows += 1 + static_cast<int>(g.nodes.size());
        widest = std::max(widest, g.gpus_per_node);
    }
    return { kLabelWidth + widest * kCell + 16, (static_cast<int>(m_grid.types.size()) + 1 + rows) * kLine * 2 };
}

int GroupGridView::paint_legend(QPainter& p, int y)
{
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(8, y + kLine - 4, QStringLiteral("Colour = GPU type; s1r0 = stage 1, replica 0; faded = idle"));
    y += kLine + 4;
    const QStringList lines = legend();
    for (int t = 0; t < lines.size(); ++t) {
        p.fillRect(8, y + 3, 14, 12, type_colour(t));
        p.drawText(28, y + kLine - 4, lines[t]);
        y += kLine;
    }
    return y + 6;
}

void GroupGridView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    int y = paint_legend(p, 4);
    const QColor text = palette().color(QPalette::WindowText);
    for (int gi = 0; gi < static_cast<int>(m_grid.groups.size()); ++gi) {
        const GroupGridGroup& g = m_grid.groups[static_cast<std::size_t>(gi)];
        p.setPen(text);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(8, y + kLine - 4,
            QStringLiteral("group %1 · %2 · %3 node(s) × %4 GPUs")
                .arg(qs(g.name), qs(g.gpu))
                .arg(g.nodes.size())
                .arg(g.gpus_per_node));
        p.setFont(font());
        y += kLine + 2;
        for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
            p.setPen(text);
            p.drawText(24, y + kCell / 2 + 5, QStringLiteral("node %1").arg(n));
            for (int k = 0; k < g.gpus_per_node; ++k) {
                const QRect cell(kLabelWidth + k * kCell, y, kCell - 2, kCell - 2);
                p.fillRect(cell, cell_colour(gi, n, k));
                const GroupGridGpu& gpu = g.nodes[static_cast<std::size_t>(n)][static_cast<std::size_t>(k)];
                if (!gpu.idle())
                    p.drawText(cell, Qt::AlignCenter, QStringLiteral("s%1r%2").arg(gpu.stage).arg(gpu.replica));
            }
            y += kCell;
        }
        y += 8;
    }
}

} // namespace parallax::views
