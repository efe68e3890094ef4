#include "gui/file_drop.hpp"

#include <QDragEnterEvent>
#include <QDragMoveEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QUrl>
#include <QWidget>

namespace parallax::app {

namespace {

// Scenarios are a few KiB; traces reach hundreds of MiB and are recognised by their first bytes.
constexpr qint64 kScenarioMaxBytes = 4 << 20;
constexpr qint64 kTraceHeadBytes = 64 << 10;

} // namespace

DroppedFileKind classify_dropped_file(const QString& path)
{
    QFile f(path);
    if (!QFileInfo(path).isFile() || !f.open(QIODevice::ReadOnly))
        return DroppedFileKind::other;
    const QByteArray head = f.peek(kTraceHeadBytes).trimmed();
    if (head.startsWith('['))
        return DroppedFileKind::chrome_trace; // the trace format's bare array of events
    if (!head.startsWith('{'))
        return DroppedFileKind::other;
    if (head.contains("\"traceEvents\""))
        return DroppedFileKind::chrome_trace;
    if (f.size() > kScenarioMaxBytes)
        return DroppedFileKind::other;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    const QJsonObject o = doc.object();
    if (o.contains(QStringLiteral("schema")) && o.contains(QStringLiteral("model")))
        return DroppedFileKind::scenario;
    return DroppedFileKind::other;
}

FileDropFilter::FileDropFilter(QWidget* window, Handler handler)
    : QObject(window)
    , m_handler(std::move(handler))
{
    window->setAcceptDrops(true);
    window->installEventFilter(this);
}

QString FileDropFilter::acceptable_file(const QList<QUrl>& urls, DroppedFileKind* kind)
{
    if (urls.size() != 1 || !urls.first().isLocalFile())
        return {};
    const QString path = urls.first().toLocalFile();
    if (path != m_last_path) {
        m_last_path = path;
        m_last_kind = classify_dropped_file(path);
    }
    *kind = m_last_kind;
    return m_last_kind == DroppedFileKind::other ? QString() : path;
}

bool FileDropFilter::eventFilter(QObject* watched, QEvent* event)
{
    switch (event->type()) {
    case QEvent::DragEnter:
        m_last_path.clear(); // a new drag: the file may have changed since the last one
        [[fallthrough]];
    case QEvent::DragMove: {
        auto* e = static_cast<QDragMoveEvent*>(event);
        DroppedFileKind kind = DroppedFileKind::other;
        if (acceptable_file(e->mimeData()->urls(), &kind).isEmpty())
            return false; // not ours: the window's own handler (if any) decides
        e->acceptProposedAction();
        return true;
    }
    case QEvent::Drop: {
        auto* e = static_cast<QDropEvent*>(event);
        DroppedFileKind kind = DroppedFileKind::other;
        const QString path = acceptable_file(e->mimeData()->urls(), &kind);
        if (path.isEmpty())
            return false;
        e->acceptProposedAction();
        m_handler(path, kind);
        return true;
    }
    default:
        return QObject::eventFilter(watched, event);
    }
}

} // namespace parallax::app
