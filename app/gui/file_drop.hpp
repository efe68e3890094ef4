#pragma once
// Files dropped on the planner window: a scenario opens (as File > Open), a Chrome / Perfetto trace is drawn
// under the timeline (as the timeline's "Measured trace..."). The filter sits on the window and takes only
// these two kinds; any other file is left to the window's own drop handling, if it has any (e.g. importing a
// launch configuration), and is otherwise refused.
#include <QList>
#include <QObject>
#include <QString>
#include <QUrl>

#include <functional>

class QWidget;

namespace parallax::app {

enum class DroppedFileKind { scenario, chrome_trace, other };

// Judged by content, not by name: a JSON object with "schema" and "model" is a scenario; a JSON array, or an
// object with "traceEvents", is a Chrome trace. Reads at most the start of a large file.
DroppedFileKind classify_dropped_file(const QString& path);

class FileDropFilter : public QObject {
    Q_OBJECT
public:
    // Opens one dropped file of a kind the filter takes; returns whether it worked (it reports its own errors).
    using Handler = std::function<bool(const QString& path, DroppedFileKind kind)>;
    // Installs itself on `window` (and lets it accept drops); owned by the window.
    FileDropFilter(QWidget* window, Handler handler);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // The local file a drag carries when it is exactly one file of a kind the filter takes; empty otherwise.
    // The last answer is kept: a drag asks on every mouse move.
    QString acceptable_file(const QList<QUrl>& urls, DroppedFileKind* kind);

    Handler m_handler;
    QString m_last_path;
    DroppedFileKind m_last_kind = DroppedFileKind::other;
};

} // namespace parallax::app
