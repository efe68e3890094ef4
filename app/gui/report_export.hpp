#pragma once
// The HTML report for design reviews: the current plan, or pinned plan A against current plan B,
// with the numbers and their assumptions (fidelity, calibration, stated defaults), the strategy,
// the time and memory breakdowns, why the numbers differ, and pictures of the panels (plots,
// timeline) embedded as data URIs, so the one file can be attached to a review.
#include "viewdata/plan_evaluation.hpp"

#include <QByteArray>
#include <QString>

#include <memory>
#include <vector>

namespace parallax::app {

struct ReportImage {
    QString title;
    QByteArray png;
};

struct ReportInputs {
    std::shared_ptr<const PlanEvaluation> current; // required
    std::shared_ptr<const PlanEvaluation> pinned; // optional: plan A
    QString current_label;
    QString pinned_label;
    QString fidelity; // "analytic, no calibration (...)"
    QString version;
    std::vector<ReportImage> images;
};

QString report_html(const ReportInputs& in);

} // namespace parallax::app
