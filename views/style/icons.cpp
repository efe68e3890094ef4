#include "style/icons.hpp"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

#include <functional>

namespace parallax::views {

namespace {

constexpr int kSize = 16;

QPixmap draw(const std::function<void(QPainter&)>& paint, qreal dpr)
{
    QPixmap pm(static_cast<int>(kSize * dpr), static_cast<int>(kSize * dpr));
    pm.setDevicePixelRatio(dpr);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    paint(p);
    return pm;
}

QIcon icon_of(const std::function<void(QPainter&)>& on, const std::function<void(QPainter&)>& off)
{
    QIcon icon;
    for (qreal dpr : { 1.0, 2.0, 3.0 }) {
        icon.addPixmap(draw(off, dpr), QIcon::Normal, QIcon::Off);
        icon.addPixmap(draw(on, dpr), QIcon::Normal, QIcon::On);
    }
    return icon;
}

void lock_body(QPainter& p, const QColor& c, bool closed)
{
    p.setPen(QPen(c, 1.6));
    p.setBrush(Qt::NoBrush);
    QPainterPath shackle;
    if (closed) {
        shackle.moveTo(4.5, 7.5);
        shackle.lineTo(4.5, 5);
        shackle.arcTo(QRectF(4.5, 1.5, 7, 7), 180, -180);
        shackle.lineTo(11.5, 7.5);
    } else {
        shackle.moveTo(4.5, 7.5);
        shackle.lineTo(4.5, 4);
        shackle.arcTo(QRectF(4.5, 0.5, 7, 7), 180, -180);
    }
    p.drawPath(shackle);
    p.setPen(Qt::NoPen);
    p.setBrush(c);
    p.drawRoundedRect(QRectF(2.5, 7.5, 11, 7.5), 1.5, 1.5);
}

} // namespace

QIcon lock_icon(const QColor& colour)
{
    QColor faint = colour;
    faint.setAlphaF(0.45f);
    return icon_of(
        [colour](QPainter& p) { lock_body(p, colour, true); }, [faint](QPainter& p) { lock_body(p, faint, false); });
}

QIcon absorb_icon(const QColor& colour)
{
    QColor faint = colour;
    faint.setAlphaF(0.35f);
    auto arrows = [](QPainter& p, const QColor& c) {
        p.setPen(QPen(c, 1.6, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p.drawLine(QPointF(2, 5), QPointF(13, 5));
        p.drawPolyline(QPolygonF({ QPointF(10, 2), QPointF(13, 5), QPointF(10, 8) }));
        p.drawLine(QPointF(14, 11), QPointF(3, 11));
        p.drawPolyline(QPolygonF({ QPointF(6, 8), QPointF(3, 11), QPointF(6, 14) }));
    };
    return icon_of(
        [colour, arrows](QPainter& p) { arrows(p, colour); }, [faint, arrows](QPainter& p) { arrows(p, faint); });
}

QIcon pin_icon(const QColor& colour)
{
    auto pin = [](QPainter& p, const QColor& c, bool filled) {
        p.setPen(QPen(c, 1.4, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p.setBrush(filled ? c : QColor(Qt::transparent));
        p.drawEllipse(QRectF(4, 1.5, 8, 8));
        p.drawLine(QPointF(8, 9.5), QPointF(8, 15));
    };
    QColor faint = colour;
    faint.setAlphaF(0.6f);
    return icon_of(
        [colour, pin](QPainter& p) { pin(p, colour, true); }, [faint, pin](QPainter& p) { pin(p, faint, false); });
}

} // namespace parallax::views
