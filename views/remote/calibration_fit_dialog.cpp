#include "remote/calibration_fit_dialog.hpp"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace parallax::views {

CalibrationFitDialog::CalibrationFitDialog(QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("calibration_fit_dialog"));
    setWindowTitle(QStringLiteral("Calibrate from runs"));
    auto* v = new QVBoxLayout(this);
    m_headline = new QLabel(this);
    m_headline->setObjectName(QStringLiteral("calibration_fit_headline"));
    m_headline->setWordWrap(true);
    m_details = new QLabel(this);
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(m_headline);
    v->addWidget(m_details);

    // The residuals on top (what the fit changed), the rejected runs under them (what it could not use).
    auto* split = new QSplitter(Qt::Vertical, this);
    m_bars = new ResidualBars(split);
    auto* rejected_box = new QWidget(split);
    auto* rv = new QVBoxLayout(rejected_box);
    rv->setContentsMargins(0, 0, 0, 0);
    m_rejected_title = new QLabel(rejected_box);
    m_rejected = new QTreeWidget(rejected_box);
    m_rejected->setObjectName(QStringLiteral("rejected_runs"));
    m_rejected->setColumnCount(2);
    m_rejected->setHeaderLabels({ QStringLiteral("Run"), QStringLiteral("Not fitted because") });
    m_rejected->setRootIsDecorated(false);
    m_rejected->setWordWrap(true);
    m_rejected->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_rejected->header()->setStretchLastSection(true);
    rv->addWidget(m_rejected_title);
    rv->addWidget(m_rejected, 1);
    split->addWidget(m_bars);
    split->addWidget(rejected_box);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    v->addWidget(split, 1);

    auto* buttons = new QDialogButtonBox(this);
    m_save = buttons->addButton(QStringLiteral("Save calibration..."), QDialogButtonBox::ActionRole);
    m_save->setObjectName(QStringLiteral("save_calibration"));
    m_save_and_use = buttons->addButton(QStringLiteral("Save and use in the planner..."), QDialogButtonBox::AcceptRole);
    m_save_and_use->setObjectName(QStringLiteral("save_and_use_calibration"));
    buttons->addButton(QDialogButtonBox::Close);
    connect(m_save, &QPushButton::clicked, this, [this] { Q_EMIT save_requested(false); });
    connect(m_save_and_use, &QPushButton::clicked, this, [this] { Q_EMIT save_requested(true); });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    v->addWidget(buttons);
    resize(720, 560);
    set_running(QString());
}

void CalibrationFitDialog::set_running(const QString& text)
{
    if (!text.isEmpty())
        m_headline->setText(text);
    m_save->setEnabled(false);
    m_save_and_use->setEnabled(false);
}

void CalibrationFitDialog::set_summary(const CalibrationFitSummary& s)
{
    m_headline->setText(QStringLiteral("<b>") + s.headline.toHtmlEscaped() + QStringLiteral("</b>"));
    m_details->setText(s.details);
    m_details->setVisible(!s.details.isEmpty());
    m_bars->set_residuals(s.residuals);
    m_rejected->clear();
    for (const auto& [run, reason] : s.rejected) {
        auto* item = new QTreeWidgetItem(m_rejected, { run, reason });
        item->setToolTip(1, reason);
    }
    m_rejected_title->setText(s.rejected.isEmpty() ? QStringLiteral("No run was rejected.")
            : s.rejected.size() == 1               ? QStringLiteral("1 run was not fitted:")
                                                   : QStringLiteral("%1 runs were not fitted:").arg(s.rejected.size()));
    m_save->setEnabled(s.fitted);
    m_save_and_use->setEnabled(s.fitted);
}

QString CalibrationFitDialog::headline() const
{
    return m_headline->text();
}

} // namespace parallax::views
