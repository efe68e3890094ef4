#pragma once
// Export of any plot or panel: the picture as PNG, SVG or PDF (chosen by the file's extension) and
// its data as CSV, both written atomically (QSaveFile). QCustomPlot widgets use their own vector
// output; other widgets are rendered through QPainter.
#include <QString>

#include <functional>

class QWidget;

namespace parallax::views {

// Renders `w` to `path` (.png, .svg or .pdf). PNGs are drawn at `scale` x the widget's size.
bool export_image(QWidget* w, const QString& path, QString* error = nullptr, double scale = 2.0);
bool write_text_atomically(const QString& path, const QString& text, QString* error = nullptr);
// PNG bytes of the widget at `scale` (the HTML report embeds them).
QByteArray png_bytes(QWidget* w, double scale = 1.0);
// SVG text of the widget (the HTML report embeds plots as vector pictures).
QByteArray svg_bytes(QWidget* w);

// A context menu on `w` with "Export image..." and "Export data as CSV...".
void install_export_menu(QWidget* w, const QString& base_name, std::function<QString()> csv);

} // namespace parallax::views
