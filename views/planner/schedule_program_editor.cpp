#include "planner/schedule_program_editor.hpp"

#include "style/view_style.hpp"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTextBlock>
#include <QVBoxLayout>

namespace parallax::views {

namespace {

// Typing pause before a check: a long program's check takes milliseconds, but not every keystroke.
constexpr int kCheckPauseMs = 250;

struct Start {
    const char* label;
    Schedule schedule;
    bool dualpipe_reference = false;
};

constexpr Start kStarts[] = {
    { "1F1B", Schedule::one_f_one_b },
    { "GPipe", Schedule::gpipe },
    { "interleaved 1F1B", Schedule::interleaved },
    { "ZB-H1 (zero bubble)", Schedule::zb_h1 },
    { "DualPipe", Schedule::dualpipe },
    { "DualPipe, DeepSeek's static order", Schedule::dualpipe, true },
};

} // namespace

ScheduleProgramEditor::ScheduleProgramEditor(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(QStringLiteral("Start from"), this));
    m_start = new QComboBox(this);
    m_start->setObjectName(QStringLiteral("schedule_start"));
    m_start->addItem(QStringLiteral("the plan's schedule"));
    for (const Start& s : kStarts)
        m_start->addItem(QString::fromLatin1(s.label));
    m_start->setToolTip(QStringLiteral("Writes a built-in schedule as a program for this plan's pp, virtual "
                                       "stages and micro-batches, to edit from there"));
    bar->addWidget(m_start, 1);
    m_apply = new QPushButton(QStringLiteral("Apply"), this);
    m_apply->setObjectName(QStringLiteral("schedule_apply"));
    m_apply->setToolTip(QStringLiteral("Use this program as the plan's schedule (strategy.schedule_program)"));
    bar->addWidget(m_apply);
    layout->addLayout(bar);
    m_edit = new QPlainTextEdit(this);
    m_edit->setObjectName(QStringLiteral("schedule_text"));
    m_edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_edit->setToolTip(QStringLiteral("One line per stage: `stage N: F0.0 B0.0 W0.0 ...` (forward, backward-input, "
                                      "weight pass of micro-batch.chunk; BW, SEND:F, RECV:B, WAIT:X, `#` comments). "
                                      "docs/schedule-programs.md"));
    layout->addWidget(m_edit, 1);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("schedule_status"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    layout->addWidget(m_status);
    m_pause.setSingleShot(true);
    m_pause.setInterval(kCheckPauseMs);
    connect(&m_pause, &QTimer::timeout, this, &ScheduleProgramEditor::check_text);
    connect(m_edit, &QPlainTextEdit::textChanged, this, [this] {
        if (m_setting)
            return;
        m_dirty = true;
        m_pause.start();
    });
    connect(m_start, &QComboBox::activated, this, &ScheduleProgramEditor::start_from);
    connect(m_apply, &QPushButton::clicked, this, &ScheduleProgramEditor::apply);
}

void ScheduleProgramEditor::set_plan(const Strategy& s, long long microbatches)
{
    m_plan = s;
    m_microbatches = microbatches;
    if (!m_dirty)
        start_from(0);
    else
        check_text(); // the same text against the new plan
}

void ScheduleProgramEditor::start_from(int index)
{
    std::string text;
    try {
        if (index == 0 && m_plan.schedule == Schedule::custom && m_plan.program)
            text = schedule_program_text(*m_plan.program);
        else if (index == 0)
            text = schedule_program_text(
                builtin_schedule_program(m_plan.schedule, m_plan.pp, m_plan.vpp, m_microbatches));
        else {
            const Start& start = kStarts[index - 1];
            const int vpp = start.schedule == Schedule::interleaved ? std::max(2, m_plan.vpp) : 1;
            text = schedule_program_text(start.dualpipe_reference
                    ? dualpipe_reference_program(m_plan.pp, m_microbatches)
                    : builtin_schedule_program(start.schedule, m_plan.pp, vpp, m_microbatches));
        }
    } catch (const std::exception& e) {
        show_result(QStringLiteral("Cannot write it for this plan: %1").arg(QString::fromStdString(e.what())), false);
        return;
    }
    m_setting = true;
    m_edit->setPlainText(QString::fromStdString(text));
    m_setting = false;
    m_dirty = index != 0;
    m_start->setCurrentIndex(index);
    check_text();
}

QString ScheduleProgramEditor::text() const
{
    return m_edit->toPlainText();
}

void ScheduleProgramEditor::set_text(const QString& text)
{
    m_edit->setPlainText(text);
}

void ScheduleProgramEditor::check_now()
{
    m_pause.stop();
    check_text();
}

void ScheduleProgramEditor::check_text()
{
    m_checked.reset();
    try {
        ScheduleProgram p = parse_schedule_text(text().toStdString());
        check_schedule_program(p);
        if (static_cast<int>(p.stages.size()) != m_plan.pp || p.microbatches != m_microbatches) {
            show_result(
                QStringLiteral("Well formed, but it runs %1 stages and %2 micro-batches; the plan has pp %3 and %4.")
                    .arg(p.stages.size())
                    .arg(p.microbatches)
                    .arg(m_plan.pp)
                    .arg(m_microbatches),
                false);
            return;
        }
        QString peaks;
        for (long long k : p.peak_in_flight)
            peaks += (peaks.isEmpty() ? QString() : QStringLiteral(", ")) + QString::number(k);
        m_checked = std::move(p);
        show_result(
            QStringLiteral("Checked: no deadlock; in-flight micro-batch chunks per stage at the peak: %1.").arg(peaks),
            true);
    } catch (const ScheduleProgramError& e) {
        show_result(QString::fromStdString(e.what()), false);
    }
}

int ScheduleProgramEditor::line_of_stage(int stage) const
{
    const QRegularExpression re(QStringLiteral("^\\s*stage\\s+%1\\s*:").arg(stage));
    int line = 0;
    for (QTextBlock b = m_edit->document()->begin(); b.isValid(); b = b.next(), ++line)
        if (re.match(b.text()).hasMatch())
            return line;
    return -1;
}

void ScheduleProgramEditor::show_result(const QString& status, bool ok)
{
    m_error = ok ? QString() : status;
    m_error_line = -1;
    QList<QTextEdit::ExtraSelection> marks;
    if (!ok) {
        // The checker names the stage first ("stage 2, step 5 (B3.0) waits for ..."): underline its line.
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("stage (\\d+)")).match(status);
        if (m.hasMatch())
            m_error_line = line_of_stage(m.captured(1).toInt());
        if (m_error_line >= 0) {
            QTextEdit::ExtraSelection mark;
            mark.cursor = QTextCursor(m_edit->document()->findBlockByNumber(m_error_line));
            mark.cursor.select(QTextCursor::LineUnderCursor);
            mark.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
            mark.format.setUnderlineColor(bad_colour(is_dark(palette())));
            marks.push_back(mark);
        }
    }
    m_edit->setExtraSelections(marks);
    QPalette pal = m_status->palette();
    pal.setColor(QPalette::WindowText, ok ? palette().color(QPalette::WindowText) : bad_colour(is_dark(palette())));
    m_status->setPalette(pal);
    m_status->setText(status);
    m_apply->setEnabled(ok);
}

bool ScheduleProgramEditor::can_apply() const
{
    return m_checked.has_value();
}

void ScheduleProgramEditor::apply()
{
    if (!m_checked)
        return;
    const ScheduleProgram* program = intern_schedule_program(*m_checked);
    m_dirty = false;
    emit program_applied(program);
}

} // namespace parallax::views
