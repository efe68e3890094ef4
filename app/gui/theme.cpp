#include "gui/theme.hpp"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

namespace parallax::app {

QPalette light_palette()
{
    QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"));
    QPalette p = fusion ? fusion->standardPalette() : QPalette();
    delete fusion;
    p.setColor(QPalette::Highlight, QColor(0x2a, 0x6f, 0xdb));
    p.setColor(QPalette::Link, QColor(0x2a, 0x6f, 0xdb));
    return p;
}

QPalette dark_palette()
{
    QPalette p;
    const QColor window(0x26, 0x28, 0x2c);
    const QColor base(0x1d, 0x1f, 0x22);
    const QColor text(0xe6, 0xe6, 0xe6);
    const QColor disabled(0x7f, 0x7f, 0x7f);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x2b, 0x2e, 0x33));
    p.setColor(QPalette::ToolTipBase, QColor(0x33, 0x36, 0x3b));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x31, 0x34, 0x39));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Light, QColor(0x3c, 0x3f, 0x45));
    p.setColor(QPalette::Midlight, QColor(0x34, 0x37, 0x3c));
    p.setColor(QPalette::Mid, QColor(0x24, 0x26, 0x2a));
    p.setColor(QPalette::Dark, QColor(0x17, 0x18, 0x1a));
    p.setColor(QPalette::Shadow, QColor(0x0b, 0x0b, 0x0c));
    p.setColor(QPalette::Highlight, QColor(0x4c, 0x8d, 0xf6));
    p.setColor(QPalette::HighlightedText, QColor(0xff, 0xff, 0xff));
    p.setColor(QPalette::Link, QColor(0x6a, 0xa9, 0xff));
    for (QPalette::ColorRole r : { QPalette::WindowText, QPalette::Text, QPalette::ButtonText })
        p.setColor(QPalette::Disabled, r, disabled);
    return p;
}

void apply_theme(Theme t)
{
    QApplication::setStyle(QStringLiteral("Fusion"));
    switch (t) {
    case Theme::dark:
        QApplication::setPalette(dark_palette());
        break;
    case Theme::light:
        QApplication::setPalette(light_palette());
        break;
    case Theme::system:
        QApplication::setPalette(QApplication::style()->standardPalette());
        break;
    }
}

} // namespace parallax::app
