#pragma once
// What "Calibrate from these runs" found: which runs were fitted and how far each lay from its
// prediction before (the shipped calibration) and after the fit, which runs were rejected and why, and
// the way to keep the calibration (save it, and use it in the planner). Shows values; the fit itself
// runs in remote/ on a worker, started by the planner's controller.
#include "plots/residual_bars.hpp"

#include <QDialog>
#include <QList>
#include <QPair>

class QLabel;
class QPushButton;
class QTreeWidget;

namespace parallax::views {

struct CalibrationFitSummary {
    QString headline; // "Fitted 5 runs of dgx-b200 on B200"; or why nothing was fitted
    QString details; // the calibration's source and name
    bool fitted = false; // a calibration exists and may be saved
    CalibrationResiduals residuals;
    QList<QPair<QString, QString>> rejected; // run id, reason
};

class CalibrationFitDialog : public QDialog {
    Q_OBJECT
public:
    explicit CalibrationFitDialog(QWidget* parent = nullptr);
    void set_summary(const CalibrationFitSummary& s);
    // The dialog's state while the fit runs (the previous result stays until the new one arrives).
    void set_running(const QString& text);

    ResidualBars* residual_bars() const { return m_bars; }
    QTreeWidget* rejected_list() const { return m_rejected; }
    QString headline() const;
    QPushButton* save_button() const { return m_save; }
    QPushButton* save_and_use_button() const { return m_save_and_use; }

Q_SIGNALS:
    // The user wants the calibration in a file; with `use`, the planner evaluates with it too.
    void save_requested(bool use);

private:
    QLabel* m_headline = nullptr;
    QLabel* m_details = nullptr;
    ResidualBars* m_bars = nullptr;
    QLabel* m_rejected_title = nullptr;
    QTreeWidget* m_rejected = nullptr;
    QPushButton* m_save = nullptr;
    QPushButton* m_save_and_use = nullptr;
};

} // namespace parallax::views
