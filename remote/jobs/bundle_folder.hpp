#pragma once
// Writes a run's files into a local folder for review (`run --out`, the dispatch dialog's "Save"), each
// with its bundle mode, so the owner-only env.sh stays owner-only on this machine too.
#include "jobs/job_bundle.hpp"

#include <QString>

namespace parallax::remote {

// Creates `dir` if needed; throws InputError naming the folder or file that cannot be written.
void write_bundle_folder(const JobBundle& bundle, const QString& dir);

} // namespace parallax::remote
