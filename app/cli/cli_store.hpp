#pragma once
// Opening the run store named by --store (or the default) from a command. A file that is not a run
// store is the user's mistake (exit 2), not an internal error; reading commands never create one.
#include "runs/run_catalog.hpp"

#include <QString>

#include <memory>

namespace parallax::cli {

// Opens the store at `path`, creating it when missing (`run` sends a run into it). Throws InputError
// naming the path when it is a directory, a device or not a run store.
std::unique_ptr<remote::RunCatalog> open_run_store(const QString& path);
// As open_run_store, but nullptr when no store exists yet: looking creates nothing.
std::unique_ptr<remote::RunCatalog> open_existing_run_store(const QString& path);

} // namespace parallax::cli
