#pragma once
// The schedule program of the current plan as editable text (docs/schedule-programs.md): the plan's own
// program when its schedule is custom, otherwise its built-in schedule written as a program, a starting
// point. Every edit is parsed and checked (core's checker, which proves the program deadlock free); an
// error is shown under the text and its stage's line is underlined. Apply hands the checked program to
// the planner, which re-evaluates the plan with it.
#include "ir/schedule_program.hpp"
#include "spec/strategy.hpp"

#include <QString>
#include <QTimer>
#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace parallax::views {

class ScheduleProgramEditor : public QWidget {
    Q_OBJECT
public:
    explicit ScheduleProgramEditor(QWidget* parent = nullptr);
    // The plan the program is for; replaces the text unless the user has unapplied edits.
    void set_plan(const Strategy& s, long long microbatches);
    QString text() const;
    void set_text(const QString& text); // as if typed (tests)
    void check_now(); // skip the typing pause (tests)
    QString error() const { return m_error; } // empty when the text is a checked program that fits the plan
    int error_line() const { return m_error_line; } // 0-based line underlined, -1 for none
    bool can_apply() const;
    void apply();

signals:
    // The checked program, interned for the life of the process (strategies point at it).
    void program_applied(const parallax::ScheduleProgram* program);

private:
    void start_from(int index);
    void check_text();
    void show_result(const QString& status, bool ok);
    int line_of_stage(int stage) const;

    QPlainTextEdit* m_edit = nullptr;
    QLabel* m_status = nullptr;
    QComboBox* m_start = nullptr;
    QPushButton* m_apply = nullptr;
    QTimer m_pause;
    Strategy m_plan;
    long long m_microbatches = 0;
    bool m_dirty = false; // edited since the plan's program was shown
    bool m_setting = false; // the text is being replaced by the editor itself
    QString m_error;
    int m_error_line = -1;
    std::optional<ScheduleProgram> m_checked;
};

} // namespace parallax::views
