#include "plots/plot_export.hpp"

#include "plots/qcustomplot_include.hpp"

#include <QBuffer>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace parallax::views {

namespace {

void render_svg(QWidget* w, QIODevice* device, const QString& title)
{
    QSvgGenerator svg;
    svg.setOutputDevice(device);
    svg.setSize(w->size());
    svg.setViewBox(QRect(QPoint(0, 0), w->size()));
    svg.setTitle(title);
    if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
        QCPPainter painter;
        painter.begin(&svg);
        plot->toPainter(&painter, w->width(), w->height());
        painter.end();
    } else {
        QPainter painter(&svg);
        w->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    }
}

} // namespace

bool write_text_atomically(const QString& path, const QString& text, QString* error)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error)
            *error = path + QStringLiteral(": ") + f.errorString();
        return false;
    }
    f.write(text.toUtf8());
    if (!f.commit()) {
        if (error)
            *error = path + QStringLiteral(": ") + f.errorString();
        return false;
    }
    return true;
}

bool export_image(QWidget* w, const QString& path, QString* error, double scale)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    auto fail = [&](const QString& why) {
        if (error)
            *error = path + QStringLiteral(": ") + why;
        return false;
    };
    if (ext == QStringLiteral("png")) {
        QSaveFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return fail(f.errorString());
        f.write(png_bytes(w, scale));
        return f.commit() || fail(f.errorString());
    }
    if (ext == QStringLiteral("svg")) {
        QSaveFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return fail(f.errorString());
        render_svg(w, &f, QFileInfo(path).completeBaseName());
        return f.commit() || fail(f.errorString());
    }
    if (ext == QStringLiteral("pdf")) {
        QSaveFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return fail(f.errorString());
        {
            QPdfWriter pdf(&f);
            pdf.setResolution(96);
            pdf.setPageSize(QPageSize(QSizeF(w->width(), w->height()), QPageSize::Point));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            const double sx = pdf.width() / static_cast<double>(std::max(1, w->width()));
            const double sy = pdf.height() / static_cast<double>(std::max(1, w->height()));
            if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
                QCPPainter painter(&pdf);
                painter.setMode(QCPPainter::pmVectorized);
                painter.setMode(QCPPainter::pmNoCaching);
                painter.scale(sx, sy);
                plot->toPainter(&painter, w->width(), w->height());
            } else {
                QPainter painter(&pdf);
                painter.scale(sx, sy);
                w->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
            }
        }
        return f.commit() || fail(f.errorString());
    }
    return fail(QStringLiteral("unknown picture format \"%1\" (use .png, .svg or .pdf)").arg(ext));
}

QByteArray png_bytes(QWidget* w, double scale)
{
    QImage image((w->size() * scale), QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(w->palette().color(QPalette::Window));
    if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
        QCPPainter painter(&image);
        plot->toPainter(&painter, w->width(), w->height());
    } else {
        QPainter painter(&image);
        w->render(&painter, QPoint(), QRegion(), QWidget::DrawWindowBackground | QWidget::DrawChildren);
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

QByteArray svg_bytes(QWidget* w)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    render_svg(w, &buffer, w->objectName());
    return bytes;
}

void install_export_menu(QWidget* w, const QString& base_name, std::function<QString()> csv)
{
    w->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(w, &QWidget::customContextMenuRequested, w, [w, base_name, csv](const QPoint& pos) {
        QMenu menu(w);
        QAction* image = menu.addAction(QStringLiteral("Export image (PNG, SVG, PDF)..."));
        QAction* data = menu.addAction(QStringLiteral("Export data as CSV..."));
        QAction* chosen = menu.exec(w->mapToGlobal(pos));
        QString error;
        if (chosen == image) {
            const QString path
                = QFileDialog::getSaveFileName(w, QStringLiteral("Export image"), base_name + QStringLiteral(".png"),
                    QStringLiteral("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"));
            if (!path.isEmpty() && !export_image(w, path, &error))
                QMessageBox::warning(w, QStringLiteral("Export failed"), error);
        } else if (chosen == data) {
            const QString path = QFileDialog::getSaveFileName(
                w, QStringLiteral("Export data"), base_name + QStringLiteral(".csv"), QStringLiteral("CSV (*.csv)"));
            if (!path.isEmpty() && !write_text_atomically(path, csv(), &error))
                QMessageBox::warning(w, QStringLiteral("Export failed"), error);
        }
    });
}

} // namespace parallax::views
