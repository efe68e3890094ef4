#include "timeline/timeline_canvas.hpp"

#include "timeline/canvas_tooltip.hpp"
#include "timeline/label_runs.hpp"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentMap>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

namespace parallax::views {

namespace {

constexpr int kLabelWidth = 200; // left column: stage and stream names
constexpr int kAxisHeight = 26;
constexpr int kComputeRowHeight = 24; // at row scale 1
constexpr int kCommRowHeight = 12;
constexpr int kMeasuredRowHeight = 14;
constexpr int kGroupGap = 6; // between stages
constexpr int kBandHeight = 20; // "A (pinned) ..." section headers
constexpr double kMinRowScale = 0.02;
constexpr double kMaxRowScale = 4.0;
constexpr int kHorizontalScrollRange = 10000;
constexpr double kLabelMinRowHeight = 11; // smaller rows get no text
constexpr int kMinSeparatorPx = 4; // bars this wide get a border
constexpr std::size_t kMaxConnectors = 600; // critical-path connectors drawn at most (more is a smear)

int base_height(TimelineRowKind k)
{
    switch (k) {
    case TimelineRowKind::compute:
        return kComputeRowHeight;
    case TimelineRowKind::measured:
        return kMeasuredRowHeight;
    default:
        return kCommRowHeight;
    }
}

QRgb mix(QRgb fg, QRgb bg, double alpha)
{
    if (alpha >= 1.0)
        return fg;
    const int a = static_cast<int>(std::max(0.0, alpha) * 256.0);
    auto c = [&](int f, int b) { return b + (((f - b) * a + 128) >> 8); };
    return qRgb(c(qRed(fg), qRed(bg)), c(qGreen(fg), qGreen(bg)), c(qBlue(fg), qBlue(bg)));
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QString item_label(const TimelineData* d, const TimelineRow& row, const TimelineItem& it, const MeasuredTrace* m)
{
    if (!d) {
        if (m && it.op < m->names.size())
            return qs(m->names[it.op]);
        return {};
    }
    const ExecutionGraph& g = d->graph();
    const int mb = g.microbatch(it.op);
    QString s = QString::fromLatin1(short_name(it.kind));
    if (it.flags & TimelineItem::kCompanion || row.kind != TimelineRowKind::compute) {
        if (mb >= 0)
            s += QStringLiteral(" mb") + QString::number(mb);
        return s;
    }
    if (mb >= 0)
        s += QString::number(mb);
    return s;
}

void draw_arrow(QPainter& p, QPointF from, QPointF to, const QColor& c)
{
    p.setPen(QPen(c, 1.6));
    p.drawLine(from, to);
    const QPointF d = to - from;
    const double len = std::hypot(d.x(), d.y());
    if (len < 6)
        return;
    const QPointF u = d / len, n(-u.y(), u.x());
    QPolygonF head;
    head << to << to - u * 7 + n * 3.5 << to - u * 7 - n * 3.5;
    p.setBrush(c);
    p.setPen(Qt::NoPen);
    p.drawPolygon(head);
    p.setBrush(Qt::NoBrush);
}

} // namespace

TimelineCanvas::TimelineCanvas(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    m_map.x0_px = kLabelWidth;
    setMinimumSize(420, 200);
}

QRect TimelineCanvas::plot_rect() const
{
    const QRect v = viewport()->rect();
    return QRect(kLabelWidth, kAxisHeight, std::max(1, v.width() - kLabelWidth), std::max(1, v.height() - kAxisHeight));
}

int TimelineCanvas::rows_top() const
{
    return kAxisHeight - verticalScrollBar()->value();
}

double TimelineCanvas::full_begin() const
{
    double t = 0;
    if (m_measured)
        t = std::min(t, m_measured_offset);
    return t;
}

double TimelineCanvas::full_end() const
{
    double t = 0;
    if (m_data)
        t = std::max(t, m_data->makespan_s);
    if (m_baseline)
        t = std::max(t, m_baseline->makespan_s);
    if (m_measured)
        t = std::max(t, m_measured_offset + m_measured->span_s);
    return t > 0 ? t : 1.0;
}

void TimelineCanvas::set_data(std::shared_ptr<const TimelineData> data)
{
    const bool refit = !m_data || !data
        || std::fabs(data->makespan_s - m_data->makespan_s) > 0.05 * std::max(1e-12, m_data->makespan_s);
    m_data = std::move(data);
    if (!m_selected_in_baseline)
        m_selected.reset();
    relayout();
    if (refit)
        fit();
    else
        update_scrollbars();
    viewport()->update();
    emit selection_changed();
}

void TimelineCanvas::set_baseline(std::shared_ptr<const TimelineData> baseline)
{
    m_baseline = std::move(baseline);
    if (m_selected_in_baseline) {
        m_selected.reset();
        m_selected_in_baseline = false;
    }
    relayout();
    fit();
}

void TimelineCanvas::set_measured(std::shared_ptr<const MeasuredTrace> trace, double offset_s)
{
    m_measured = std::move(trace);
    m_measured_offset = offset_s;
    relayout();
    fit();
}

void TimelineCanvas::set_measured_offset(double offset_s)
{
    m_measured_offset = offset_s;
    relayout();
    viewport()->update();
}

void TimelineCanvas::set_show_communication_rows(bool on)
{
    m_show_comm = on;
    relayout();
    update_scrollbars();
    viewport()->update();
}

void TimelineCanvas::set_show_critical_path(bool on)
{
    m_show_critical = on;
    viewport()->update();
}

void TimelineCanvas::set_row_scale(double scale)
{
    m_row_scale = std::clamp(scale, kMinRowScale, kMaxRowScale);
    relayout();
    update_scrollbars();
    viewport()->update();
}

void TimelineCanvas::relayout()
{
    ++m_layout_generation;
    m_rows.clear();
    m_bands.clear();
    const double s = m_row_scale;
    const int gap = std::max(1, static_cast<int>(std::lround(kGroupGap * std::min(1.0, s))));
    int y = 0;
    const bool sections = (m_baseline && m_data) || m_measured;
    auto add_plan = [&](const TimelineData& d, Section sec, std::vector<int>& map) {
        if (sections) {
            QString text
                = sec == Section::baseline ? QStringLiteral("A (pinned)   ") : QStringLiteral("B (current)   ");
            if (!m_baseline)
                text = QStringLiteral("prediction   ");
            text += qs(d.info.title) + QStringLiteral("   step ") + qs(format_duration(d.makespan_s));
            m_bands.push_back({ y, kBandHeight, text, sec });
            y += kBandHeight;
        }
        map.assign(d.rows.size(), -1);
        for (std::size_t si = 0; si < d.stages.size(); ++si) {
            bool first = true;
            for (int ri : d.stages[si].rows) {
                const TimelineRow& row = d.rows[static_cast<std::size_t>(ri)];
                if (!m_show_comm && row.kind != TimelineRowKind::compute)
                    continue;
                DisplayRow r;
                r.row = &row;
                r.data = &d;
                r.section = sec;
                r.stage_index = static_cast<int>(si);
                r.first_in_group = first;
                r.y = y;
                r.h = std::max(1, static_cast<int>(std::lround(base_height(row.kind) * s)));
                for (const TimelineItem& it : row.items)
                    r.max_item_s = std::max(r.max_item_s, it.duration_s());
                map[static_cast<std::size_t>(ri)] = static_cast<int>(m_rows.size());
                m_rows.push_back(r);
                y += r.h;
                first = false;
            }
            y += gap;
        }
    };
    if (m_baseline && m_data)
        add_plan(*m_baseline, Section::baseline, m_row_of_baseline_row);
    else
        m_row_of_baseline_row.clear();
    if (m_data)
        add_plan(*m_data, Section::current, m_row_of_data_row);
    else
        m_row_of_data_row.clear();
    if (m_measured) {
        QString text = QStringLiteral("measured   ") + qs(m_measured->path) + QStringLiteral("   ")
            + QString::number(m_measured->events) + QStringLiteral(" events");
        if (m_measured->gpu_only)
            text += QStringLiteral(" (GPU kernels)");
        if (m_measured_offset != 0)
            text += QStringLiteral("   shifted ") + qs(format_duration(m_measured_offset));
        m_bands.push_back({ y, kBandHeight, text, Section::measured });
        y += kBandHeight;
        for (const TimelineRow& row : m_measured->rows) {
            DisplayRow r;
            r.row = &row;
            r.section = Section::measured;
            r.first_in_group = true;
            r.offset_s = m_measured_offset;
            r.y = y;
            r.h = std::max(1, static_cast<int>(std::lround(kMeasuredRowHeight * s)));
            for (const TimelineItem& it : row.items)
                r.max_item_s = std::max(r.max_item_s, it.duration_s());
            m_rows.push_back(r);
            y += r.h + gap;
        }
    }
}

int TimelineCanvas::content_height(double scale) const
{
    const int gap = std::max(1, static_cast<int>(std::lround(kGroupGap * std::min(1.0, scale))));
    int y = static_cast<int>(m_bands.size()) * kBandHeight;
    int last_group = -1;
    const TimelineData* last_data = nullptr;
    for (const DisplayRow& r : m_rows) {
        y += std::max(1, static_cast<int>(std::lround(base_height(r.row->kind) * scale)));
        if (r.first_in_group && (r.stage_index != last_group || r.data != last_data || r.section == Section::measured))
            y += gap;
        last_group = r.stage_index;
        last_data = r.data;
    }
    return y;
}

void TimelineCanvas::update_scrollbars()
{
    m_syncing_scrollbar = true;
    const QRect plot = plot_rect();
    const int content = m_rows.empty() ? 0 : m_rows.back().y + m_rows.back().h + kGroupGap;
    verticalScrollBar()->setRange(0, std::max(0, content - plot.height()));
    verticalScrollBar()->setPageStep(plot.height());
    verticalScrollBar()->setSingleStep(kComputeRowHeight);
    const double lo = full_begin(), hi = full_end();
    const double slack = 0.05 * (hi - lo);
    const double view = plot.width() / m_map.px_per_s;
    const double span = (hi + slack) - (lo - slack) - view;
    if (span > 0) {
        horizontalScrollBar()->setRange(0, kHorizontalScrollRange);
        horizontalScrollBar()->setPageStep(
            static_cast<int>(kHorizontalScrollRange * std::min(1.0, view / (hi - lo + 2 * slack))));
        horizontalScrollBar()->setValue(
            static_cast<int>(std::lround((m_map.t0_s - (lo - slack)) / span * kHorizontalScrollRange)));
    } else {
        horizontalScrollBar()->setRange(0, 0);
    }
    m_syncing_scrollbar = false;
}

void TimelineCanvas::scrollContentsBy(int dx, int)
{
    if (dx != 0 && !m_syncing_scrollbar) {
        const QRect plot = plot_rect();
        const double lo = full_begin(), hi = full_end();
        const double slack = 0.05 * (hi - lo);
        const double view = plot.width() / m_map.px_per_s;
        const double span = (hi + slack) - (lo - slack) - view;
        if (span > 0)
            m_map.t0_s = (lo - slack) + span * horizontalScrollBar()->value() / kHorizontalScrollRange;
        emit view_changed();
    }
    viewport()->update();
}

void TimelineCanvas::set_time_range(double t_begin, double t_end)
{
    m_map.x0_px = kLabelWidth;
    m_map.fit(t_begin, t_end, plot_rect().width());
    update_scrollbars();
    viewport()->update();
    emit view_changed();
}

void TimelineCanvas::fit()
{
    const QRect plot = plot_rect();
    // The largest row scale (at most 1) at which every row fits.
    double lo = kMinRowScale, hi = 1.0;
    if (content_height(hi) > plot.height()) {
        for (int i = 0; i < 30; ++i) {
            const double mid = 0.5 * (lo + hi);
            (content_height(mid) <= plot.height() ? lo : hi) = mid;
        }
        m_row_scale = lo;
    } else {
        m_row_scale = 1.0;
    }
    relayout();
    m_map.x0_px = kLabelWidth;
    m_map.fit(full_begin(), full_end(), plot.width(), 0.01);
    update_scrollbars();
    verticalScrollBar()->setValue(0);
    viewport()->update();
    emit view_changed();
}

void TimelineCanvas::zoom(double factor, std::optional<double> at_x)
{
    const QRect plot = plot_rect();
    m_map.zoom_at(at_x.value_or(plot.center().x()), factor);
    update_scrollbars();
    viewport()->update();
    emit view_changed();
}

void TimelineCanvas::pan_pixels(double dx)
{
    m_map.pan_px(dx);
    m_map.clamp_to(full_begin(), full_end(), plot_rect().width());
    update_scrollbars();
    viewport()->update();
    emit view_changed();
}

const TimelineRow* TimelineCanvas::display_row(int i) const
{
    return i >= 0 && i < static_cast<int>(m_rows.size()) ? m_rows[static_cast<std::size_t>(i)].row : nullptr;
}

QRect TimelineCanvas::display_row_rect(int i) const
{
    if (i < 0 || i >= static_cast<int>(m_rows.size()))
        return {};
    const DisplayRow& r = m_rows[static_cast<std::size_t>(i)];
    const QRect plot = plot_rect();
    return QRect(plot.left(), rows_top() + r.y, plot.width(), r.h);
}

std::vector<LodBin> TimelineCanvas::row_bins(int i) const
{
    std::vector<LodBin> bins;
    if (i < 0 || i >= static_cast<int>(m_rows.size()))
        return bins;
    const DisplayRow& r = m_rows[static_cast<std::size_t>(i)];
    const QRect plot = plot_rect();
    bins.resize(static_cast<std::size_t>(plot.width()));
    aggregate_row(*r.row, m_map.to_t(plot.left()) - r.offset_s, m_map.s_per_px(), bins);
    return bins;
}

std::vector<TimelineKind> TimelineCanvas::kinds_shown() const
{
    bool seen[kTimelineKindCount] = {};
    for (const DisplayRow& r : m_rows)
        for (const TimelineItem& it : r.row->items)
            seen[static_cast<int>(it.kind)] = true;
    std::vector<TimelineKind> out;
    for (int k = 0; k < kTimelineKindCount; ++k)
        if (seen[k])
            out.push_back(static_cast<TimelineKind>(k));
    return out;
}

// ---- painting ----------------------------------------------------------------------------------

void TimelineCanvas::paintEvent(QPaintEvent*)
{
    QPainter p(viewport());
    const bool vector = p.paintEngine() && p.paintEngine()->type() != QPaintEngine::Raster;
    paint_to(p, vector);
}

void TimelineCanvas::paint_to(QPainter& p, bool vector) const
{
    m_stats = {};
    const QRect all = viewport()->rect();
    const QRect plot = plot_rect();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.fillRect(all, m_palette.background);
    if (!m_data && !m_measured) {
        p.setPen(m_palette.muted_text);
        p.drawText(all, Qt::AlignCenter, tr("No simulated plan yet"));
        return;
    }
    const int rows_y0 = rows_top();
    m_stats.plot_width = plot.width();
    p.save();
    p.setClipRect(plot);
    if (vector)
        paint_rows_vector(p, plot, rows_y0);
    else
        paint_rows_raster(p, plot, rows_y0);
    paint_overlays(p, plot, rows_y0);
    p.restore();
    paint_labels(p, QRect(0, plot.top(), kLabelWidth, plot.height()), rows_y0);
    paint_axis(p, QRect(0, 0, all.width(), kAxisHeight), plot);
}

QRgb TimelineCanvas::bin_colour(const DisplayRow& r, const LodBin& b, double bin_s, QRgb background, bool& bubble) const
{
    const bool is_bubble = b.bubble_s > 0.5 * bin_s;
    bubble = false;
    if (b.ops == 0 && !(b.busy_s > 0)) {
        bubble = is_bubble;
        return is_bubble ? m_palette.bubble.rgb() : background;
    }
    const TimelineRow& row = *r.row;
    const int slot = b.dominant_slot();
    const TimelineItem* top = b.top_item < row.items.size() ? &row.items[b.top_item] : nullptr;
    TimelineKind kind = slot >= 0 && slot < static_cast<int>(row.kinds.size())
        ? row.kinds[static_cast<std::size_t>(slot)]
        : (top ? top->kind : TimelineKind::measured_other);
    const int shade = top && top->kind == kind ? top->shade : 0;
    const double coverage = std::clamp(b.busy_s / bin_s, 0.0, 1.0);
    // A bar narrower than the pixel still shows at half strength: nothing vanishes when zoomed out.
    return mix(
        TimelinePalette::kind_rgb(kind, shade), is_bubble ? m_palette.bubble.rgb() : background, 0.5 + 0.5 * coverage);
}

void TimelineCanvas::invalidate_cache()
{
    m_cache_valid = false;
}

namespace {
std::atomic<bool> g_parallel_rows { true };
} // namespace

void TimelineCanvas::set_parallel_rows(bool on)
{
    g_parallel_rows = on;
}

void TimelineCanvas::paint_rows_raster(QPainter& p, const QRect& plot, int rows_y0) const
{
    const CacheKey key { m_data.get(), m_baseline.get(), m_measured.get(), m_measured_offset, m_map.t0_s,
        m_map.px_per_s, m_map.x0_px, rows_y0, plot.size(), m_layout_generation, m_show_critical };
    if (!m_cache_valid || !(key == m_cache_key) || m_image.size() != plot.size()) {
        render_rows_image(plot, rows_y0);
        m_cache_key = key;
        m_cache_valid = true;
        m_cached_stats = m_stats;
    } else {
        m_stats = m_cached_stats;
    }
    p.drawImage(plot.topLeft(), m_image);
}

void TimelineCanvas::render_rows_image(const QRect& plot, int rows_y0) const
{
    const int w = plot.width(), h = plot.height();
    if (m_image.size() != QSize(w, h))
        m_image = QImage(w, h, QImage::Format_RGB32);
    m_image.fill(m_palette.background.rgb());
    const double t0 = m_map.to_t(plot.left());
    const double bin_s = m_map.s_per_px();
    uchar* bits = m_image.bits();
    const qsizetype stride = m_image.bytesPerLine();
    std::vector<int> visible;
    std::size_t work = 0;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        const DisplayRow& r = m_rows[i];
        const int top = rows_y0 + r.y - plot.top();
        if (top + r.h > 0 && top < h) {
            visible.push_back(static_cast<int>(i));
            work += r.row->items.size();
        }
    }
    struct RowResult {
        std::size_t visited = 0, written = 0;
    };
    std::vector<RowResult> results(visible.size());
    // One row: aggregate to one bin per pixel column, then write its scanlines (rows never share a
    // scanline, so rows can be drawn in parallel).
    auto draw_row = [&](std::size_t k) {
        const DisplayRow& r = m_rows[static_cast<std::size_t>(visible[k])];
        thread_local std::vector<LodBin> bins;
        thread_local std::vector<QRgb> line;
        thread_local std::vector<std::uint8_t> bubble_cols;
        bins.resize(static_cast<std::size_t>(w));
        line.resize(static_cast<std::size_t>(w));
        bubble_cols.resize(static_cast<std::size_t>(w));
        const int top = rows_y0 + r.y - plot.top();
        const int bottom = top + r.h;
        results[k].visited = aggregate_row(*r.row, t0 - r.offset_s, bin_s, bins);
        const bool compute = r.row->kind == TimelineRowKind::compute;
        const QRgb row_bg = m_palette.row_background.rgb();
        std::size_t written = 0;
        bool any_bubble = false, any_exposed = false, any_critical = false;
        for (int x = 0; x < w; ++x) {
            const LodBin& b = bins[static_cast<std::size_t>(x)];
            bool bubble = false;
            line[static_cast<std::size_t>(x)] = bin_colour(r, b, bin_s, row_bg, bubble);
            bubble_cols[static_cast<std::size_t>(x)] = compute && bubble;
            any_bubble = any_bubble || (compute && bubble);
            any_exposed = any_exposed || b.exposed_s > 0;
            any_critical = any_critical || b.critical;
            written += b.ops > 0 || b.busy_s > 0;
        }
        results[k].written = written;
        auto scan = [&](int y) { return reinterpret_cast<QRgb*>(bits + stride * y); };
        // Body: one scanline built, copied to the row's other lines; the last line stays a gap.
        const int body_end = r.h >= 4 ? bottom - 1 : bottom;
        const QRgb hatch = m_palette.bubble_hatch.rgb();
        for (int y = std::max(0, top); y < std::min(h, body_end); ++y) {
            QRgb* out = scan(y);
            std::memcpy(out, line.data(), sizeof(QRgb) * static_cast<std::size_t>(w));
            if (any_bubble)
                for (int x = 0; x < w; ++x)
                    if (bubble_cols[static_cast<std::size_t>(x)] && (x + y) % 6 < 2)
                        out[x] = hatch;
        }
        // Exposed communication: a red strip along the bottom of the row.
        if (any_exposed) {
            const QRgb exposed = m_palette.exposed.rgb();
            const int strip = r.h >= 10 ? 3 : (r.h >= 5 ? 2 : 1);
            const double inv_bin = 1.0 / bin_s;
            for (int x = 0; x < w; ++x) {
                const LodBin& b = bins[static_cast<std::size_t>(x)];
                if (b.exposed_s > 0)
                    line[static_cast<std::size_t>(x)] = mix(
                        exposed, line[static_cast<std::size_t>(x)], 0.55 + 0.45 * std::min(1.0, b.exposed_s * inv_bin));
            }
            for (int y = std::max(0, body_end - strip); y < std::min(h, body_end); ++y)
                std::memcpy(scan(y), line.data(), sizeof(QRgb) * static_cast<std::size_t>(w));
        }
        // Critical path: a dark strip along the top of compute rows.
        if (m_show_critical && any_critical && compute && r.h >= 6) {
            const QRgb critical = m_palette.critical.rgb();
            const int strip = r.h >= 16 ? 3 : 2;
            for (int y = std::max(0, top); y < std::min(h, top + strip); ++y) {
                QRgb* out = scan(y);
                for (int x = 0; x < w; ++x)
                    if (bins[static_cast<std::size_t>(x)].critical)
                        out[x] = critical;
            }
        }
    };
    // Rows in parallel once there is enough work to pay for the threads.
    constexpr std::size_t kParallelItems = 50000;
    if (g_parallel_rows && work >= kParallelItems && visible.size() > 1) {
        std::vector<std::size_t> idx(visible.size());
        for (std::size_t k = 0; k < idx.size(); ++k)
            idx[k] = k;
        QtConcurrent::blockingMap(idx, [&](std::size_t k) { draw_row(k); });
    } else {
        for (std::size_t k = 0; k < visible.size(); ++k)
            draw_row(k);
    }
    for (const RowResult& r : results) {
        ++m_stats.rows_drawn;
        m_stats.items_visited += r.visited;
        m_stats.primitives += r.written;
        m_stats.max_primitives_per_row = std::max(m_stats.max_primitives_per_row, r.written);
    }
}

void TimelineCanvas::paint_rows_vector(QPainter& p, const QRect& plot, int rows_y0) const
{
    // Runs of equal colour become one rectangle each: at most one per pixel column per row.
    const int w = plot.width();
    const double t0 = m_map.to_t(plot.left());
    const double bin_s = m_map.s_per_px();
    m_bins.resize(static_cast<std::size_t>(w));
    const QRgb row_bg = m_palette.row_background.rgb();
    QBrush hatch(m_palette.bubble_hatch, Qt::BDiagPattern);
    for (const DisplayRow& r : m_rows) {
        const int top = rows_y0 + r.y;
        if (top + r.h <= plot.top() || top >= plot.bottom())
            continue;
        ++m_stats.rows_drawn;
        m_stats.items_visited += aggregate_row(*r.row, t0 - r.offset_s, bin_s, m_bins);
        const bool compute = r.row->kind == TimelineRowKind::compute;
        const int body = r.h >= 4 ? r.h - 1 : r.h;
        std::size_t runs = 0;
        int x = 0;
        while (x < w) {
            bool bubble = false;
            const QRgb c = bin_colour(r, m_bins[static_cast<std::size_t>(x)], bin_s, row_bg, bubble);
            int e = x + 1;
            while (e < w) {
                bool b2 = false;
                if (bin_colour(r, m_bins[static_cast<std::size_t>(e)], bin_s, row_bg, b2) != c || b2 != bubble)
                    break;
                ++e;
            }
            const QRect rect(plot.left() + x, top, e - x, body);
            p.fillRect(rect, QColor::fromRgb(c));
            if (compute && bubble)
                p.fillRect(rect, hatch);
            ++runs;
            x = e;
        }
        // Exposed and critical strips, as runs too.
        for (int pass = 0; pass < 2; ++pass) {
            if (pass == 1 && (!m_show_critical || !compute || r.h < 6))
                break;
            int xs = 0;
            while (xs < w) {
                const LodBin& b = m_bins[static_cast<std::size_t>(xs)];
                const bool on = pass == 0 ? b.exposed_s > 0 : b.critical;
                if (!on) {
                    ++xs;
                    continue;
                }
                int e = xs + 1;
                while (e < w
                    && (pass == 0 ? m_bins[static_cast<std::size_t>(e)].exposed_s > 0
                                  : m_bins[static_cast<std::size_t>(e)].critical))
                    ++e;
                if (pass == 0) {
                    const int strip = r.h >= 10 ? 3 : (r.h >= 5 ? 2 : 1);
                    p.fillRect(QRect(plot.left() + xs, top + body - strip, e - xs, strip), m_palette.exposed);
                } else {
                    p.fillRect(QRect(plot.left() + xs, top, e - xs, r.h >= 16 ? 3 : 2), m_palette.critical);
                }
                ++runs;
                xs = e;
            }
        }
        m_stats.primitives += runs;
        m_stats.max_primitives_per_row = std::max(m_stats.max_primitives_per_row, runs);
    }
}

QRectF TimelineCanvas::item_rect(int display_row, const TimelineItem& it, int rows_y0, int) const
{
    const DisplayRow& r = m_rows[static_cast<std::size_t>(display_row)];
    const double x0 = m_map.to_x(it.start_s + r.offset_s);
    const double x1 = m_map.to_x(it.end_s + r.offset_s);
    return QRectF(x0, rows_y0 + r.y, std::max(1.0, x1 - x0), r.h >= 4 ? r.h - 1 : r.h);
}

int TimelineCanvas::display_row_of_op(std::uint32_t op, bool in_baseline) const
{
    const TimelineData* d = in_baseline ? m_baseline.get() : m_data.get();
    const std::vector<int>& map = in_baseline ? m_row_of_baseline_row : m_row_of_data_row;
    if (!d || op >= d->op_count() || d->op_row[op] == TimelineData::kNoRow || d->op_row[op] >= map.size())
        return -1;
    return map[d->op_row[op]];
}

QRectF TimelineCanvas::op_rect(std::uint32_t op, bool in_baseline) const
{
    const int dr = display_row_of_op(op, in_baseline);
    if (dr < 0)
        return {};
    const TimelineData* d = in_baseline ? m_baseline.get() : m_data.get();
    const TimelineItem& it = d->rows[d->op_row[op]].items[d->op_item[op]];
    return item_rect(dr, it, rows_top(), plot_rect().left());
}

void TimelineCanvas::paint_overlays(QPainter& p, const QRect& plot, int rows_y0) const
{
    QFont small = font();
    small.setPointSizeF(std::max(6.5, font().pointSizeF() - 1.5));
    p.setFont(small);
    const OverlayFrame f { plot, rows_y0, m_map.to_t(plot.left()), m_map.to_t(plot.right() + 1), QFontMetrics(small) };

    // Grid lines of the axis, faint, over the bars.
    QColor grid = m_palette.muted_text;
    grid.setAlpha(45);
    p.setPen(QPen(grid, 1));
    for (const AxisTick& t : axis_ticks(f.t_begin, f.t_end, m_map.s_per_px()))
        p.drawLine(QPointF(std::floor(m_map.to_x(t.t_s)) + 0.5, plot.top()),
            QPointF(std::floor(m_map.to_x(t.t_s)) + 0.5, plot.bottom()));

    // Borders and labels of bars wide enough to have them.
    for (std::size_t ri = 0; ri < m_rows.size(); ++ri) {
        const DisplayRow& r = m_rows[ri];
        const int top = rows_y0 + r.y;
        if (top + r.h <= plot.top() || top >= plot.bottom() || r.h < 6)
            continue;
        paint_label_runs(p, f, r);
        paint_bar_details(p, f, static_cast<int>(ri));
    }
    if (m_show_critical) {
        paint_critical_connectors(p, f, m_data.get(), false);
        paint_critical_connectors(p, f, m_baseline.get(), true);
    }
    paint_step_ends(p, f);
    paint_selection(p);
    if (m_banding) {
        QColor fill = m_palette.selection;
        fill.setAlpha(50);
        p.setPen(QPen(m_palette.selection, 1, Qt::DashLine));
        p.setBrush(fill);
        p.drawRect(QRect(m_zoom_pan.press_pos(), m_band_end).normalized());
        p.setBrush(Qt::NoBrush);
    }
}

void TimelineCanvas::paint_label_runs(QPainter& p, const OverlayFrame& f, const DisplayRow& r) const
{
    // Groups of narrow pieces of one pass get one label, when few bars are in view.
    const TimelineRow& row = *r.row;
    if (!r.data || r.h < kLabelMinRowHeight || row.kind != TimelineRowKind::compute)
        return;
    const int top = f.rows_y0 + r.y;
    const QFontMetrics& fm = f.fm;
    const std::size_t i0 = row.first_ending_after(f.t_begin - r.offset_s);
    const std::size_t i1 = row.first_ending_after(f.t_end - r.offset_s);
    if (i1 + 1 - i0 > static_cast<std::size_t>(f.plot.width()) / 3)
        return;
    for_each_label_run(*r.data, row, i0, std::min(row.items.size(), i1 + 1), m_map.px_per_s, kMinSeparatorPx * 6, 0,
        [&](const LabelRun& run) {
            const double x0 = m_map.to_x(row.items[run.first].start_s + r.offset_s);
            const double x1 = m_map.to_x(row.items[run.last].end_s + r.offset_s);
            const QString text = fitted_text(run, fm, x1 - x0);
            if (text.isEmpty())
                return;
            const QRectF band(x0, top, x1 - x0, r.h >= 4 ? r.h - 1 : r.h);
            QColor back = m_palette.background;
            back.setAlpha(200);
            const QRectF tr
                = QRectF(0, 0, fm.horizontalAdvance(text) + 6, fm.height())
                      .translated(band.center() - QPointF((fm.horizontalAdvance(text) + 6) / 2.0, fm.height() / 2.0));
            p.fillRect(tr, back);
            p.setPen(m_palette.text);
            p.drawText(tr, Qt::AlignCenter, text);
        });
}

void TimelineCanvas::paint_bar_details(QPainter& p, const OverlayFrame& f, int display_row) const
{
    const DisplayRow& r = m_rows[static_cast<std::size_t>(display_row)];
    if (r.max_item_s * m_map.px_per_s < kMinSeparatorPx)
        return;
    const TimelineRow& row = *r.row;
    const QFontMetrics& fm = f.fm;
    const double re = f.t_end - r.offset_s;
    std::size_t budget = static_cast<std::size_t>(f.plot.width()) * 4; // bars drawn per row at most
    const double min_s = kMinSeparatorPx * m_map.s_per_px();
    const std::size_t block = TimelineRow::kBlock;
    for (std::size_t i = row.first_ending_after(f.t_begin - r.offset_s); i < row.items.size() && budget > 0; ++i) {
        // Skip blocks of bars too narrow to get a border.
        if (i % block == 0 && i / block < row.block_max_s.size() && row.block_max_s[i / block] < min_s) {
            if (row.items[std::min(row.items.size(), i + block) - 1].start_s >= re)
                break;
            i += block - 1;
            continue;
        }
        const TimelineItem& it = row.items[i];
        if (it.start_s >= re)
            break;
        const double w = it.duration_s() * m_map.px_per_s;
        if (w < kMinSeparatorPx)
            continue;
        --budget;
        const QRectF rect = item_rect(display_row, it, f.rows_y0, f.plot.left());
        p.setPen(QPen(m_palette.background, 1));
        p.drawLine(
            QPointF(std::floor(rect.left()) + 0.5, rect.top()), QPointF(std::floor(rect.left()) + 0.5, rect.bottom()));
        if (r.h < kLabelMinRowHeight)
            continue;
        const QString text = item_label(r.data, row, it, m_measured.get());
        // Skip labels narrower than ~6 characters' room (STYLE.md): clutter, not information.
        if (!text.isEmpty() && w >= std::max(fm.horizontalAdvance(text) + 4, fm.averageCharWidth() * 3)) {
            const QRectF visible = rect.intersected(QRectF(f.plot));
            p.setPen(TimelinePalette::text_on(it.kind, it.shade));
            const int strip = (it.flags & TimelineItem::kCritical) && m_show_critical ? 2 : 0;
            p.drawText(visible.adjusted(2, strip, -2, 0), Qt::AlignCenter | Qt::TextSingleLine,
                fm.elidedText(text, Qt::ElideRight, static_cast<int>(visible.width()) - 2));
        }
    }
}

void TimelineCanvas::paint_critical_connectors(
    QPainter& p, const OverlayFrame& f, const TimelineData* dptr, bool base) const
{
    // Connectors between consecutive critical ops on different rows, when few enough are in view to
    // be read (zoomed out, the dark strip on the bars shows the path).
    if (!dptr)
        return;
    const auto& path = dptr->sim->result.critical_path;
    const auto& start = dptr->sim->result.start_s;
    const auto& end = dptr->sim->result.end_s;
    // The path runs forward in time: binary search for the part in view.
    auto first = std::lower_bound(
        path.begin(), path.end(), f.t_begin, [&](std::uint32_t op, double t) { return end[op] < t; });
    if (first != path.begin())
        --first;
    auto last = std::upper_bound(first, path.end(), f.t_end, [&](double t, std::uint32_t op) { return t < start[op]; });
    if (last != path.end())
        ++last;
    std::size_t switches = 0;
    std::uint32_t prev_row = TimelineData::kNoRow;
    for (auto it = first; it != last && switches <= kMaxConnectors; ++it) {
        const std::uint32_t r = dptr->op_row[*it];
        if (r == TimelineData::kNoRow)
            continue;
        switches += prev_row != TimelineData::kNoRow && r != prev_row;
        prev_row = r;
    }
    if (switches > kMaxConnectors)
        return;
    QColor c = m_palette.critical;
    c.setAlpha(170);
    p.setPen(QPen(c, 1.2, Qt::SolidLine));
    p.setRenderHint(QPainter::Antialiasing, true);
    QRectF prev;
    int prev_dr = -1;
    for (auto it = first; it != last; ++it) {
        const int dr = display_row_of_op(*it, base);
        if (dr < 0)
            continue;
        const QRectF rect = op_rect(*it, base);
        if (prev_dr >= 0 && dr != prev_dr)
            p.drawLine(QPointF(prev.right(), prev.center().y()), QPointF(rect.left(), rect.center().y()));
        prev = rect;
        prev_dr = dr;
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelineCanvas::paint_step_ends(QPainter& p, const OverlayFrame& f) const
{
    // Where each plan's pipeline drains (dashed) and its step ends (solid), over that plan's rows.
    auto marker = [&](const TimelineData& d, const QColor& c, int y0, int y1) {
        QPen pen(c, 1, Qt::DashLine);
        p.setPen(pen);
        const double xd = m_map.to_x(d.pipeline_end_s);
        p.drawLine(QPointF(xd, y0), QPointF(xd, y1));
        pen.setStyle(Qt::SolidLine);
        pen.setWidthF(1.5);
        p.setPen(pen);
        const double xs = m_map.to_x(d.makespan_s);
        p.drawLine(QPointF(xs, y0), QPointF(xs, y1));
    };
    const QRect& plot = f.plot;
    int a_top = plot.bottom(), a_bottom = plot.top(), b_top = plot.bottom(), b_bottom = plot.top();
    for (const DisplayRow& r : m_rows) {
        const int y = f.rows_y0 + r.y;
        if (r.section == Section::baseline) {
            a_top = std::min(a_top, y);
            a_bottom = std::max(a_bottom, y + r.h);
        } else if (r.section == Section::current) {
            b_top = std::min(b_top, y);
            b_bottom = std::max(b_bottom, y + r.h);
        }
    }
    if (m_baseline && m_data)
        marker(*m_baseline, QColor(0x6b, 0x72, 0x80), a_top, a_bottom);
    if (m_data)
        marker(*m_data, m_palette.text, b_top, b_bottom);
}

void TimelineCanvas::paint_selection(QPainter& p) const
{
    // The selected op, its predecessors (blue) and successors (green), with arrows.
    if (!m_selected)
        return;
    const bool base = m_selected_in_baseline;
    const TimelineData* d = base ? m_baseline.get() : m_data.get();
    if (!d || *m_selected >= d->op_count())
        return;
    const QRectF sel = op_rect(*m_selected, base);
    p.setRenderHint(QPainter::Antialiasing, true);
    auto outline = [&](const QRectF& r, const QColor& c) {
        p.setPen(QPen(c, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(r.adjusted(-1, -1, 1, 1));
    };
    for (std::uint32_t q : d->graph().deps(*m_selected)) {
        const QRectF r = op_rect(q, base);
        if (r.isEmpty())
            continue;
        outline(r, m_palette.predecessor);
        if (!sel.isEmpty())
            draw_arrow(
                p, QPointF(r.right(), r.center().y()), QPointF(sel.left(), sel.center().y()), m_palette.predecessor);
    }
    for (std::uint32_t q : d->successors(*m_selected)) {
        const QRectF r = op_rect(q, base);
        if (r.isEmpty())
            continue;
        outline(r, m_palette.successor);
        if (!sel.isEmpty())
            draw_arrow(
                p, QPointF(sel.right(), sel.center().y()), QPointF(r.left(), r.center().y()), m_palette.successor);
    }
    if (!sel.isEmpty()) {
        p.setPen(QPen(m_palette.selection, 3));
        p.drawRect(sel.adjusted(-1.5, -1.5, 1.5, 1.5));
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

void TimelineCanvas::paint_axis(QPainter& p, const QRect& axis, const QRect& plot) const
{
    p.fillRect(axis, m_palette.header_background);
    p.setPen(m_palette.grid);
    p.drawLine(axis.bottomLeft(), axis.bottomRight());
    QFont f = font();
    f.setPointSizeF(std::max(7.0, font().pointSizeF() - 1));
    p.setFont(f);
    const QFontMetrics fm(f);
    const double t_begin = m_map.to_t(plot.left()), t_end = m_map.to_t(plot.right() + 1);
    p.setPen(m_palette.text);
    for (const AxisTick& t : axis_ticks(t_begin, t_end, m_map.s_per_px())) {
        const double x = std::floor(m_map.to_x(t.t_s)) + 0.5;
        p.drawLine(QPointF(x, axis.bottom() - 5), QPointF(x, axis.bottom()));
        const QString label = qs(t.label);
        const int lw = fm.horizontalAdvance(label);
        const int lx = static_cast<int>(x) - lw / 2;
        if (lx >= plot.left() - 2 && lx + lw <= axis.right())
            p.drawText(QPoint(lx, axis.bottom() - 8), label);
    }
    // Corner: what the axis is.
    p.fillRect(QRect(0, 0, kLabelWidth, axis.height()), m_palette.header_background);
    p.setPen(m_palette.muted_text);
    const QString corner = tr("time since step start");
    p.drawText(QRect(6, 0, kLabelWidth - 10, axis.height() - 2), Qt::AlignVCenter | Qt::AlignLeft, corner);
}

void TimelineCanvas::paint_labels(QPainter& p, const QRect& labels, int rows_y0) const
{
    p.save();
    p.setClipRect(labels);
    p.fillRect(labels, m_palette.header_background);
    QFont bold = font();
    bold.setBold(true);
    QFont small = font();
    small.setPointSizeF(std::max(6.5, font().pointSizeF() - 1.5));
    const QFontMetrics fm_small(small);
    const QFontMetrics fm_bold(bold);
    int last_group_label_y = -1000;
    // Bands (sections) across the whole width.
    for (const Band& b : m_bands) {
        const int y = rows_y0 + b.y;
        if (y + b.h < labels.top() || y > labels.bottom())
            continue;
        p.setClipping(false);
        const QRect band(0, y, viewport()->width(), b.h);
        if (band.bottom() >= labels.top()) {
            p.fillRect(band.intersected(QRect(0, labels.top(), viewport()->width(), labels.height())),
                b.section == Section::baseline
                    ? QColor(0xe9, 0xec, 0xf2)
                    : (b.section == Section::measured ? QColor(0xf6, 0xec, 0xe3) : QColor(0xe6, 0xf0, 0xea)));
            p.setPen(m_palette.text);
            p.setFont(bold);
            p.drawText(band.adjusted(6, 0, -6, 0), Qt::AlignVCenter | Qt::AlignLeft, b.text);
        }
        p.setClipRect(labels);
    }
    for (const DisplayRow& r : m_rows) {
        const int y = rows_y0 + r.y;
        if (y + r.h < labels.top() || y > labels.bottom())
            continue;
        const TimelineRow& row = *r.row;
        if (r.first_in_group && y - last_group_label_y >= 12) {
            QString name;
            QString sub;
            if (r.section == Section::measured) {
                name = qs(row.label);
            } else {
                const TimelineStage& st = r.data->stages[static_cast<std::size_t>(r.stage_index)];
                if (st.members.size() > 1) {
                    name = QStringLiteral("stages ");
                    for (std::size_t k = 0; k < st.members.size() && k < 4; ++k)
                        name += (k ? QStringLiteral(",") : QString()) + QString::number(st.members[k]);
                    if (st.members.size() > 4)
                        name += QStringLiteral(",…");
                    name += QStringLiteral(" ×") + QString::number(st.members.size());
                } else {
                    name = QStringLiteral("stage ") + QString::number(st.stage);
                }
                sub = QString::number(st.gpus()) + QStringLiteral(" GPU")
                    + (st.gpus() == 1 ? QString() : QStringLiteral("s"));
                if (!st.gpu_types.empty()) // a mixed plan's stage names its GPU types
                    name += QStringLiteral(" · ") + qs(st.gpu_types);
                const double bubble_frac = r.data->makespan_s > 0 ? st.bubble_s / r.data->makespan_s * 100 : 0;
                sub += QStringLiteral(" · bubble ") + qs(format_duration(st.bubble_s)) + QStringLiteral(" (")
                    + QString::number(bubble_frac, 'f', 1) + QStringLiteral("%)");
                if (st.stage == r.data->slowest_stage && r.data->stages.size() > 1)
                    sub += QStringLiteral(" · slowest");
            }
            p.setPen(m_palette.text);
            p.setFont(r.section == Section::measured ? small : bold);
            const int line_h = fm_bold.height();
            const int text_y = std::max(y, labels.top());
            p.drawText(QRect(6, text_y, kLabelWidth - (r.section == Section::measured ? 8 : 60), line_h),
                Qt::AlignLeft | Qt::AlignVCenter,
                (r.section == Section::measured ? fm_small : fm_bold)
                    .elidedText(name, Qt::ElideRight, kLabelWidth - 66));
            // The stage's GPUs and bubble under its name when the group is tall enough.
            int group_h = 0;
            for (int ri : r.data ? r.data->stages[static_cast<std::size_t>(r.stage_index)].rows : std::vector<int> {}) {
                const std::vector<int>& map
                    = r.section == Section::baseline ? m_row_of_baseline_row : m_row_of_data_row;
                if (ri >= 0 && static_cast<std::size_t>(ri) < map.size() && map[static_cast<std::size_t>(ri)] >= 0)
                    group_h += m_rows[static_cast<std::size_t>(map[static_cast<std::size_t>(ri)])].h;
            }
            if (!sub.isEmpty() && group_h >= line_h + fm_small.height()) {
                p.setFont(small);
                p.setPen(m_palette.muted_text);
                p.drawText(QRect(6, text_y + line_h, kLabelWidth - 10, fm_small.height()),
                    Qt::AlignLeft | Qt::AlignVCenter, fm_small.elidedText(sub, Qt::ElideRight, kLabelWidth - 12));
            }
            last_group_label_y = y;
        }
        if (r.h >= kLabelMinRowHeight - 2 && r.section != Section::measured) {
            p.setFont(small);
            p.setPen(m_palette.muted_text);
            const bool name_line = r.first_in_group;
            const QRect right(kLabelWidth - 56, y, 52, r.h);
            if (!name_line || r.h >= fm_small.height())
                p.drawText(right, Qt::AlignRight | Qt::AlignVCenter, QString::fromLatin1(to_string(row.kind)));
        }
    }
    p.setPen(m_palette.grid);
    p.drawLine(labels.topRight(), labels.bottomRight());
    p.restore();
}

// ---- interaction -------------------------------------------------------------------------------

std::optional<TimelineCanvas::Hit> TimelineCanvas::hit(QPoint pos) const
{
    const QRect plot = plot_rect();
    const int y = pos.y() - rows_top();
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y, [](int v, const DisplayRow& r) { return v < r.y; });
    if (it == m_rows.begin())
        return std::nullopt;
    --it;
    if (y >= it->y + it->h)
        return std::nullopt;
    Hit h;
    h.display_row = static_cast<int>(it - m_rows.begin());
    if (pos.x() < plot.left())
        return h;
    const TimelineRow& row = *it->row;
    const double x = std::floor(static_cast<double>(pos.x()));
    LodBin bin;
    aggregate_row(row, m_map.to_t(x) - it->offset_s, m_map.s_per_px(), std::span<LodBin>(&bin, 1));
    h.bin = bin;
    h.crowded = bin.ops > 1;
    const double t = m_map.to_t(pos.x() + 0.5) - it->offset_s;
    std::size_t item = row.item_at(t);
    if (item == TimelineRow::npos) {
        // Thin bars: the nearest within 3 pixels.
        const double tol = 3 * m_map.s_per_px();
        const std::size_t k = row.first_ending_after(t - tol);
        if (k < row.items.size() && row.items[k].start_s <= t + tol)
            item = k;
    }
    if (item == TimelineRow::npos && bin.top_item < row.items.size())
        item = bin.top_item;
    h.item = item;
    return h;
}

QString TimelineCanvas::tooltip_at(QPoint pos) const
{
    const auto h = hit(pos);
    if (!h)
        return {};
    const DisplayRow& r = m_rows[static_cast<std::size_t>(h->display_row)];
    const TimelineRow& row = *r.row;
    if (pos.x() < plot_rect().left()) {
        if (!r.data)
            return qs(row.label) + QStringLiteral("\n") + QString::number(row.items.size())
                + QStringLiteral(" events, busy ") + qs(format_duration(row.busy_s));
        const TimelineStage& st = r.data->stages[static_cast<std::size_t>(r.stage_index)];
        QString s = QStringLiteral("stage ") + QString::number(st.stage);
        if (!st.hardware.empty())
            s += QStringLiteral(" on ") + qs(st.hardware);
        if (st.members.size() > 1) {
            s += QStringLiteral(" (identical stages collapsed:");
            for (int m : st.members)
                s += QStringLiteral(" ") + QString::number(m);
            s += QStringLiteral(")");
        }
        s += QStringLiteral("\n") + QString::number(st.gpus()) + QStringLiteral(" GPUs shown by this row (")
            + QString::number(st.gpus_per_stage)
            + QStringLiteral(" per stage: its TP x CP x DP replicas behave alike)");
        s += QStringLiteral("\ncompute ") + qs(format_duration(st.compute_s));
        if (st.recompute_s > 0)
            s += QStringLiteral(", recompute ") + qs(format_duration(st.recompute_s));
        s += QStringLiteral("\nbubble ") + qs(format_duration(st.bubble_s))
            + QStringLiteral(" (idle before the pipeline drains: filling and draining, and waiting on slower stages)")
            + QStringLiteral("\nwaiting on its own sends/gathers ") + qs(format_duration(st.comm_wait_s));
        if (st.stage == r.data->slowest_stage)
            s += QStringLiteral("\nthe slowest stage: the summary's bubble (")
                + qs(format_duration(r.data->prediction.time.bubble_s)) + QStringLiteral(") and exposed PP (")
                + qs(format_duration(r.data->prediction.time.exposed_pp_s))
                + QStringLiteral(") are its bubble and waits");
        s += QStringLiteral("\nafter the pipeline drains ") + qs(format_duration(st.tail_s))
            + QStringLiteral(" (optimizer ") + qs(format_duration(st.optimizer_s)) + QStringLiteral(")");
        s += QStringLiteral("\nexposed communication ") + qs(format_duration(st.exposed_comm_s));
        s += QStringLiteral("\nthis row: ") + QString::fromLatin1(to_string(row.kind)) + QStringLiteral(", ")
            + QString::number(row.items.size()) + QStringLiteral(" bars, busy ") + qs(format_duration(row.busy_s));
        return s;
    }
    QString s;
    const double bin_s = m_map.s_per_px();
    if (h->crowded) {
        s = QString::number(h->bin.ops) + QStringLiteral(" ops in this pixel column (") + qs(format_duration(bin_s))
            + QStringLiteral(" wide), busy ") + QString::number(std::min(100.0, h->bin.busy_s / bin_s * 100), 'f', 0)
            + QStringLiteral("%");
        const int slot = h->bin.dominant_slot();
        if (slot >= 0 && slot < static_cast<int>(row.kinds.size()))
            s += QStringLiteral(", mostly ") + QString::fromUtf8(to_string(row.kinds[static_cast<std::size_t>(slot)]));
        s += QStringLiteral("\nzoom in to tell them apart; the largest:\n\n");
    }
    if (h->item < row.items.size()) {
        const TimelineItem& it = row.items[h->item];
        if (r.data) {
            s += qs(r.data->describe(row, it));
        } else {
            const MeasuredTrace& m = *m_measured;
            s += (it.op < m.names.size() ? qs(m.names[it.op]) : QString()) + QStringLiteral("\n")
                + QString::fromUtf8(to_string(it.kind));
            s += QStringLiteral("\nstart ") + qs(format_duration(it.start_s)) + QStringLiteral("   end ")
                + qs(format_duration(it.end_s)) + QStringLiteral("   duration ") + qs(format_duration(it.duration_s()));
        }
    } else if (h->bin.bubble_s > 0 && r.data) {
        const TimelineStage& st = r.data->stages[static_cast<std::size_t>(r.stage_index)];
        s += QStringLiteral("bubble: stage ") + QString::number(st.stage)
            + QStringLiteral(" idle while the pipeline fills or drains\nthis stage's bubbles: ")
            + qs(format_duration(st.bubble_s));
    }
    if (h->bin.exposed_s > 0)
        s += QStringLiteral("\nexposed communication here: ") + qs(format_duration(h->bin.exposed_s));
    return s;
}

bool TimelineCanvas::select_at(QPoint pos)
{
    const auto h = hit(pos);
    if (!h || pos.x() < plot_rect().left() || h->item == TimelineRow::npos) {
        clear_selection();
        return false;
    }
    const DisplayRow& r = m_rows[static_cast<std::size_t>(h->display_row)];
    if (!r.data) {
        clear_selection();
        return false;
    }
    select_op(r.row->items[h->item].op, r.section == Section::baseline);
    return true;
}

void TimelineCanvas::select_op(std::uint32_t op, bool in_baseline)
{
    const TimelineData* d = in_baseline ? m_baseline.get() : m_data.get();
    if (!d || op >= d->op_count())
        return;
    m_selected = op;
    m_selected_in_baseline = in_baseline;
    viewport()->update();
    emit selection_changed();
}

void TimelineCanvas::clear_selection()
{
    if (!m_selected)
        return;
    m_selected.reset();
    m_selected_in_baseline = false;
    viewport()->update();
    emit selection_changed();
}

std::vector<std::uint32_t> TimelineCanvas::highlighted_predecessors() const
{
    const TimelineData* d = m_selected_in_baseline ? m_baseline.get() : m_data.get();
    if (!m_selected || !d)
        return {};
    const auto deps = d->graph().deps(*m_selected);
    return { deps.begin(), deps.end() };
}

std::vector<std::uint32_t> TimelineCanvas::highlighted_successors() const
{
    const TimelineData* d = m_selected_in_baseline ? m_baseline.get() : m_data.get();
    if (!m_selected || !d)
        return {};
    const auto s = d->successors(*m_selected);
    return { s.begin(), s.end() };
}

void TimelineCanvas::resizeEvent(QResizeEvent* e)
{
    QAbstractScrollArea::resizeEvent(e);
    update_scrollbars();
}

void TimelineCanvas::wheelEvent(QWheelEvent* e)
{
    if (e->modifiers() & Qt::ControlModifier) {
        set_row_scale(m_row_scale * std::pow(ZoomPanController::kWheelZoomBase, e->angleDelta().y()));
        e->accept();
        return;
    }
    m_zoom_pan.wheel(e);
}

void TimelineCanvas::drag_by_px(QPoint delta_px)
{
    m_map.pan_px(delta_px.x());
    m_map.clamp_to(full_begin(), full_end(), plot_rect().width());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - delta_px.y());
    update_scrollbars();
    viewport()->update();
    emit view_changed();
}

void TimelineCanvas::mousePressEvent(QMouseEvent* e)
{
    m_zoom_pan.press(e->position().toPoint());
    m_banding
        = e->button() == Qt::RightButton || (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
    m_band_end = m_zoom_pan.press_pos();
    e->accept();
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* e)
{
    const QPoint pos = e->position().toPoint();
    if (m_banding) {
        m_band_end = pos;
        viewport()->update();
    }
    // While a band is drawn the drag does not pan; the controller still follows the pointer.
    m_zoom_pan.move(pos, m_banding ? Qt::NoButton : e->buttons());
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent* e)
{
    const QPoint pos = e->position().toPoint();
    const bool click = m_zoom_pan.release();
    if (m_banding) {
        m_banding = false;
        zoom_to_band(QRect(m_zoom_pan.press_pos(), pos).normalized());
        viewport()->update();
    } else if (e->button() == Qt::LeftButton && click) {
        select_at(pos);
    }
}

void TimelineCanvas::zoom_to_band(const QRect& band)
{
    if (band.width() < 4)
        return;
    const QRect plot = plot_rect();
    const double t0 = m_map.to_t(std::max(band.left(), plot.left()));
    const double t1 = m_map.to_t(std::max(band.right(), plot.left() + 1));
    // Vertically, the band's rows fill the view (up to the readable row scale).
    if (band.height() >= 12 && band.height() < plot.height()) {
        const int content_top = band.top() - rows_top();
        const double factor = std::min(static_cast<double>(plot.height()) / band.height(), kMaxRowScale / m_row_scale);
        set_row_scale(m_row_scale * factor);
        verticalScrollBar()->setValue(static_cast<int>(content_top * factor));
    }
    set_time_range(t0, t1);
}

void TimelineCanvas::mouseDoubleClickEvent(QMouseEvent* e)
{
    if (e->button() == Qt::LeftButton && e->position().x() < plot_rect().left())
        fit();
}

void TimelineCanvas::keyPressEvent(QKeyEvent* e)
{
    if (m_zoom_pan.key(e))
        e->accept();
    else
        QAbstractScrollArea::keyPressEvent(e);
}

bool TimelineCanvas::viewportEvent(QEvent* e)
{
    if (show_canvas_tooltip(e, viewport(), [this](QPoint pos) { return tooltip_at(pos); }))
        return true;
    return QAbstractScrollArea::viewportEvent(e);
}

} // namespace parallax::views
