#include "serving_mode/colocation_pool_canvas.hpp"

#include "style/view_style.hpp"

#include <QPainter>

#include <algorithm>

namespace parallax::views {

namespace {

constexpr int kCell = 40; // one GPU, in logical pixels
constexpr int kGap = 6;
constexpr int kMargin = 8;
constexpr int kHeader = 20; // a group's title line
constexpr int kLegendRow = 20;

} // namespace

ColocationPoolCanvas::ColocationPoolCanvas(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("colocation_pool"));
    setMinimumHeight(kCell + 2 * kMargin);
}

void ColocationPoolCanvas::set_evaluation(const ColocationEvaluation& e)
{
    m_eval = e;
    updateGeometry();
    update();
}

QSize ColocationPoolCanvas::sizeHint() const
{
    int width = 0, height = kMargin;
    for (const ColocationGridGroup& g : m_eval.grid) {
        width = std::max(width, g.gpus_per_node * (kCell + kGap));
        height += kHeader + g.nodes * (kCell + kGap) + kGap;
    }
    height += kLegendRow * static_cast<int>(m_eval.result.models.size() + 1);
    return { width + 2 * kMargin, height + kMargin };
}

QString ColocationPoolCanvas::model_at(int group, int gpu) const
{
    if (group < 0 || group >= static_cast<int>(m_eval.grid.size()))
        return {};
    const auto& cells = m_eval.grid[static_cast<std::size_t>(group)].model_of_gpu;
    if (gpu < 0 || gpu >= static_cast<int>(cells.size()) || cells[static_cast<std::size_t>(gpu)] < 0)
        return {};
    return QString::fromStdString(
        m_eval.result.models[static_cast<std::size_t>(cells[static_cast<std::size_t>(gpu)])].name);
}

void ColocationPoolCanvas::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    int top = kMargin;
    for (const ColocationGridGroup& g : m_eval.grid)
        top = paint_group(p, g, top);
    paint_legend(p, top);
}

int ColocationPoolCanvas::paint_group(QPainter& p, const ColocationGridGroup& g, int top) const
{
    const bool dark = is_dark(palette());
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(kMargin, top, width() - 2 * kMargin, kHeader), Qt::AlignLeft | Qt::AlignVCenter,
        QStringLiteral("%1 · %2 · %3 × %4 GPUs")
            .arg(QString::fromStdString(g.name), QString::fromStdString(g.gpu))
            .arg(g.nodes)
            .arg(g.gpus_per_node));
    top += kHeader;
    for (std::size_t i = 0; i < g.model_of_gpu.size(); ++i) {
        const int node = static_cast<int>(i) / g.gpus_per_node;
        const int col = static_cast<int>(i) % g.gpus_per_node;
        const QRect cell(kMargin + col * (kCell + kGap), top + node * (kCell + kGap), kCell, kCell);
        const int m = g.model_of_gpu[i];
        p.setPen(QPen(palette().color(QPalette::Mid), 1));
        if (m < 0) {
            p.setBrush(QBrush(palette().color(QPalette::Mid), Qt::BDiagPattern));
            p.drawRect(cell);
            continue;
        }
        const double residency = m_eval.result.models[static_cast<std::size_t>(m)].placement.residency;
        const QColor colour = group_colour(m, dark);
        p.setBrush(colour.lighter(170));
        p.drawRect(cell);
        const int filled = static_cast<int>(cell.height() * std::clamp(residency, 0.0, 1.0));
        p.fillRect(QRect(cell.left(), cell.bottom() - filled + 1, cell.width(), filled), colour);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(cell, Qt::AlignCenter,
            residency < 1 ? QStringLiteral("%1%").arg(100 * residency, 0, 'f', 0) : QString::number(m + 1));
    }
    return top + g.nodes * (kCell + kGap) + kGap;
}

void ColocationPoolCanvas::paint_legend(QPainter& p, int top) const
{
    const bool dark = is_dark(palette());
    for (std::size_t m = 0; m < m_eval.result.models.size(); ++m) {
        const PlacedModel& pm = m_eval.result.models[m];
        const QRect swatch(kMargin, top + 4, 12, 12);
        p.fillRect(swatch, group_colour(static_cast<long long>(m), dark));
        p.setPen(palette().color(QPalette::Text));
        const QString where = pm.placed ? QStringLiteral("TP %1 × %2 on %3, %4% resident")
                                              .arg(pm.placement.tp)
                                              .arg(pm.placement.replicas)
                                              .arg(QString::fromStdString(pm.gpu))
                                              .arg(100 * pm.placement.residency, 0, 'f', 0)
                                        : QStringLiteral("not placed");
        p.drawText(QRect(kMargin + 18, top, width() - kMargin - 18, kLegendRow), Qt::AlignLeft | Qt::AlignVCenter,
            QStringLiteral("%1  %2 — %3").arg(m + 1).arg(QString::fromStdString(pm.name), where));
        top += kLegendRow;
    }
    p.setBrush(QBrush(palette().color(QPalette::Mid), Qt::BDiagPattern));
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.drawRect(QRect(kMargin, top + 4, 12, 12));
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(kMargin + 18, top, width(), kLegendRow), Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("idle"));
}

} // namespace parallax::views
