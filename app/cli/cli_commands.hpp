#pragma once
// One function per parallax-cli command; each parses its own options and returns an exit code.
#include <QStringList>

namespace parallax::cli {

int run_predict(const QStringList& args);
int run_presets(const QStringList& args);
int run_validate(const QStringList& args);
int run_timeline(const QStringList& args);
int run_search(const QStringList& args);
int run_sweep(const QStringList& args);
int run_calibrate(const QStringList& args);
int run_error_bands(const QStringList& args);
int run_parse_log(const QStringList& args);
int run_run(const QStringList& args);
int run_runs(const QStringList& args);
int run_clocks(const QStringList& args);
int run_import(const QStringList& args);
int run_export(const QStringList& args);

} // namespace parallax::cli
