#include "cli/cli_store.hpp"

#include "io/input_limits.hpp"
#include "spec/input_error.hpp"
#include "store/run_record.hpp" // StoreError

#include <QFileInfo>

namespace parallax::cli {

std::unique_ptr<remote::RunCatalog> open_run_store(const QString& path)
{
    const std::string file = path.toStdString();
    if (QFileInfo::exists(path))
        require_regular_file(file, "a run store (SQLite)");
    try {
        return std::make_unique<remote::RunCatalog>(path);
    } catch (const remote::StoreError& e) {
        throw InputError(file, "--store", std::string("is not a usable run store: ") + e.what());
    }
}

std::unique_ptr<remote::RunCatalog> open_existing_run_store(const QString& path)
{
    if (!remote::RunCatalog::store_exists(path))
        return nullptr;
    return open_run_store(path);
}

} // namespace parallax::cli
