#include "gui/help.hpp"

#include <QAction>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtGlobal>

#ifndef PARALLAX_VERSION
#define PARALLAX_VERSION "dev"
#endif
#ifndef PARALLAX_LICENSE
#define PARALLAX_LICENSE ""
#endif

namespace parallax::app {

namespace {

QString plain_text(const QAction* a)
{
    QString t = a->text();
    t.remove(QRegularExpression(QStringLiteral("&(?!&)")));
    t.replace(QStringLiteral("&&"), QStringLiteral("&"));
    return t;
}

QString shortcut_text(const QAction* a)
{
    QStringList keys;
    for (const QKeySequence& k : a->shortcuts())
        if (!k.isEmpty())
            keys << k.toString(QKeySequence::NativeText);
    return keys.join(QStringLiteral(", "));
}

void collect_menu(const QMenu* menu, const QString& path, QList<ShortcutEntry>& out, QSet<const QAction*>& seen)
{
    for (QAction* a : menu->actions()) {
        if (a->isSeparator())
            continue;
        if (QMenu* sub = a->menu()) {
            collect_menu(sub, path + QStringLiteral(" > ") + plain_text(sub->menuAction()), out, seen);
            continue;
        }
        if (seen.contains(a))
            continue;
        seen.insert(a);
        const QString keys = shortcut_text(a);
        if (!keys.isEmpty())
            out.push_back({ path, plain_text(a), keys });
    }
}

QString library_licenses()
{
    return QStringLiteral("It is built on Qt %1 (LGPL-3.0), QCustomPlot (GPL-3.0), libssh (LGPL-2.1), "
                          "Eigen (MPL-2.0) and nlohmann/json (MIT).")
        .arg(QString::fromLatin1(qVersion()));
}

} // namespace

QList<ShortcutEntry> collect_shortcuts(const QMainWindow& window)
{
    QList<ShortcutEntry> out;
    QSet<const QAction*> seen;
    if (const QMenuBar* bar = window.menuBar()) {
        for (QAction* top : bar->actions())
            if (QMenu* menu = top->menu())
                collect_menu(menu, plain_text(top), out, seen);
    }
    // Actions outside the menus (a panel's or a toolbar's own) that still answer to a key.
    for (const QAction* a : window.findChildren<QAction*>()) {
        if (seen.contains(a) || a->isSeparator() || a->menu())
            continue;
        seen.insert(a);
        const QString keys = shortcut_text(a);
        if (!keys.isEmpty())
            out.push_back({ QString(), plain_text(a), keys });
    }
    return out;
}

QDialog* make_shortcuts_dialog(const QList<ShortcutEntry>& entries, QWidget* parent)
{
    auto* dialog = new QDialog(parent);
    dialog->setObjectName(QStringLiteral("shortcuts_dialog"));
    dialog->setWindowTitle(QStringLiteral("Keyboard shortcuts"));
    auto* layout = new QVBoxLayout(dialog);
    auto* table = new QTableWidget(static_cast<int>(entries.size()), 3, dialog);
    table->setObjectName(QStringLiteral("shortcuts_table"));
    table->setHorizontalHeaderLabels({ QStringLiteral("Shortcut"), QStringLiteral("Action"), QStringLiteral("Menu") });
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int row = 0; row < entries.size(); ++row) {
        const ShortcutEntry& e = entries.at(row);
        table->setItem(row, 0, new QTableWidgetItem(e.shortcuts));
        table->setItem(row, 1, new QTableWidgetItem(e.action));
        table->setItem(row, 2, new QTableWidgetItem(e.menu.isEmpty() ? QStringLiteral("(panel)") : e.menu));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(table);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog->resize(560, 520);
    return dialog;
}

QString about_text()
{
    const QString license = QStringLiteral(PARALLAX_LICENSE);
    const QUrl docs = documentation_url();
    QString text = QStringLiteral("<h3>Parallax %1</h3>"
                                  "<p>A planner for hybrid parallelism in large-model training: describe a model and a "
                                  "cluster, choose or search the parallelism degrees, and see the predicted step time, "
                                  "throughput, memory and power, down to a per-device timeline.</p>")
                       .arg(QStringLiteral(PARALLAX_VERSION));
    text += license.isEmpty() ? QStringLiteral("<p>License: none declared yet (the source has no license file).</p>")
                              : QStringLiteral("<p>License: %1.</p>").arg(license.toHtmlEscaped());
    text += QStringLiteral("<p>") + library_licenses().toHtmlEscaped() + QStringLiteral("</p>");
    if (docs.isValid())
        text += QStringLiteral("<p>Documentation: <a href=\"%1\">%2</a></p>")
                    .arg(docs.toString(QUrl::FullyEncoded), docs.toLocalFile().toHtmlEscaped());
    text += QStringLiteral("<p>Exported Chrome traces open in <a href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a>."
                           "</p>");
    return text;
}

QUrl documentation_url()
{
    QStringList candidates;
#ifdef PARALLAX_INSTALL_DOC_REL
    candidates << QDir(QCoreApplication::applicationDirPath())
                      .filePath(QStringLiteral(PARALLAX_INSTALL_DOC_REL) + QStringLiteral("/README.md"));
#endif
#ifdef PARALLAX_SOURCE_DIR
    candidates << QStringLiteral(PARALLAX_SOURCE_DIR) + QStringLiteral("/README.md");
#endif
    for (const QString& c : candidates)
        if (QFileInfo(c).isFile())
            return QUrl::fromLocalFile(QFileInfo(c).canonicalFilePath());
    return {};
}

} // namespace parallax::app
