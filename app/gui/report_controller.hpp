#pragma once
// Writing the HTML report (gui/report_export.hpp): the page is built from values (numbers and PNG
// bytes taken on the GUI thread) and written atomically. write() does it now and says how it went;
// write_in_background() does it on a worker and report_written follows on the GUI thread.
#include "gui/report_export.hpp"

#include <QObject>
#include <QString>

namespace parallax::app {

class ReportController : public QObject {
    Q_OBJECT
public:
    explicit ReportController(QObject* parent = nullptr);

    bool write(const ReportInputs& in, const QString& path, QString* error = nullptr);
    void write_in_background(ReportInputs in, const QString& path);
    bool writing() const { return m_writing > 0; }

signals:
    // `error` is empty when the file was written.
    void report_written(const QString& path, const QString& error);

private:
    int m_writing = 0; // background writes not yet reported
};

} // namespace parallax::app
