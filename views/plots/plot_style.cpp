#include "plots/plot_style.hpp"

#include "plots/qcustomplot_include.hpp"

namespace parallax::views {

void style_plot(QCustomPlot* plot)
{
    const QPalette& pal = plot->palette();
    const QColor text = pal.color(QPalette::Text);
    QColor grid = text;
    grid.setAlphaF(0.15f);
    plot->setBackground(pal.brush(QPalette::Base));
    for (QCPAxis* a : plot->axisRect()->axes()) {
        a->setBasePen(QPen(text));
        a->setTickPen(QPen(text));
        a->setSubTickPen(QPen(text));
        a->setTickLabelColor(text);
        a->setLabelColor(text);
        a->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        a->grid()->setZeroLinePen(Qt::NoPen);
    }
    if (plot->legend) {
        plot->legend->setBrush(pal.brush(QPalette::Base));
        plot->legend->setTextColor(text);
        plot->legend->setBorderPen(QPen(grid));
    }
}

void legend_above_axes(QCustomPlot* plot, const QFont& font)
{
    plot->legend->setVisible(true);
    plot->legend->setFont(font);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
}

} // namespace parallax::views
