#pragma once
// What every bar chart of the planner shares: the background and the "no plan" placeholder, a
// legend of coloured swatches, a value axis with round ticks and a grid, one slot per pipeline
// stage with thinned labels, stacked bars, dashed reference lines (capacity, power cap) and a
// tooltip per hovered part. A chart subclass says only what it draws: its legend, its bars and
// what its tooltip tells.
#include <QWidget>

#include <functional>
#include <vector>

namespace parallax::views {

class BarChart : public QWidget {
    Q_OBJECT
public:
    struct LegendEntry {
        QColor colour;
        QString label;
    };
    // One part of a stacked bar, drawn from the base outwards in the order given.
    struct Segment {
        double value = 0;
        QColor colour;
        QString label; // written inside the part when it fits; empty: none
    };
    // The horizontal layout of one bar per pipeline stage over a plot rectangle.
    struct StageSlots {
        double left = 0;
        double step = 1; // the width of one stage's slot
        double bar_w = 1; // the bar's width inside its slot
        int label_every = 1; // a stage label on every n-th slot, so that labels never overlap
        double bar_x(int i) const { return left + i * step + (step - bar_w) / 2; }
        double centre_x(int i) const { return left + i * step + step / 2; }
    };

    // A round axis step (1, 2 or 5 x 10^k) giving about `ticks` intervals over [0, range].
    static double nice_step(double range, int ticks);

protected:
    explicit BarChart(QWidget* parent = nullptr);

    virtual bool has_data() const = 0;
    // The legend, drawn whether or not there is data.
    virtual std::vector<LegendEntry> legend() const = 0;
    // Everything under the legend; called only when has_data().
    virtual void paint_chart(QPainter& p) = 0;
    // The rich-text tooltip for a point of the widget; empty: none.
    virtual QString tooltip_at(QPointF pos) const = 0;
    // What an empty chart says.
    virtual QString placeholder() const { return QStringLiteral("no plan"); }

    bool dark() const;
    QColor text_colour() const;
    // The legend's swatches left to right from `top_left`, wrapping at the widget's width when
    // `wrap`; returns the y under the last line.
    double draw_legend(QPainter& p, const std::vector<LegendEntry>& entries, QPointF top_left, bool wrap) const;
    // Horizontal grid lines and right-aligned labels left of `plot`, for values 0..max_value.
    void draw_value_axis(QPainter& p, const QRectF& plot, double max_value, int ticks,
        const std::function<QString(double)>& label) const;
    StageSlots stage_slots(const QRectF& plot, int stages, const QString& widest_label) const;
    // `text` centred under stage i's bar with its top at y, kept right of the axis and inside the widget.
    void draw_stage_label(QPainter& p, const StageSlots& columns, int i, double y, const QString& text) const;
    // The stage under x; -1 outside the slots.
    static int stage_at(const StageSlots& columns, int stages, double x);
    // A vertical stack from `base_y` upwards (scale: pixels per unit) or a horizontal one from x
    // rightwards; returns where the stack ends.
    double draw_column(QPainter& p, double x, double width, double base_y, double px_per_unit,
        const std::vector<Segment>& parts) const;
    double draw_row(
        QPainter& p, double x, double y, double height, double px_per_unit, const std::vector<Segment>& parts) const;
    // A dashed line across `plot` at y with its label right-aligned above it.
    void draw_reference_line(QPainter& p, const QRectF& plot, double y, const QColor& colour, const QString& label,
        Qt::PenStyle style = Qt::DashLine) const;

    void paintEvent(QPaintEvent*) final;
    bool event(QEvent* e) override;
};

} // namespace parallax::views
