#include "runs/run_catalog.hpp"

#include "runs/run_report.hpp"
#include "store/run_store.hpp"

#include <QFileInfo>

#include <algorithm>

namespace parallax::remote {

RunCatalog::RunCatalog(const QString& store_path)
    : m_store(std::make_unique<RunStore>(store_path))
{
}

RunCatalog::~RunCatalog() = default;

QString RunCatalog::default_store_path()
{
    return RunStore::default_path();
}

bool RunCatalog::store_exists(const QString& store_path)
{
    return QFileInfo::exists(store_path);
}

std::vector<RunRecord> RunCatalog::runs(int limit) const
{
    return m_store->list(limit);
}

std::optional<RunRecord> RunCatalog::run(const std::string& id) const
{
    return m_store->get(id);
}

std::vector<RunRow> RunCatalog::rows(int limit) const
{
    std::vector<RunRow> out;
    for (const RunRecord& r : m_store->list(limit))
        out.push_back(run_row(r, m_store->steps(r.id)));
    return out;
}

std::optional<RunOverlay> RunCatalog::overlay(const std::string& id) const
{
    const auto run = m_store->get(id);
    if (!run)
        return std::nullopt;
    return make_run_overlay(*m_store, *run);
}

std::vector<StepRecord> RunCatalog::steps(const std::string& id) const
{
    return m_store->steps(id);
}

std::vector<StateTransition> RunCatalog::transitions(const std::string& id) const
{
    return m_store->transitions(id);
}

LogSlice RunCatalog::log_tail(const std::string& id, std::size_t max_bytes) const
{
    const auto run = m_store->get(id);
    const std::int64_t size = run ? run->log_bytes : 0;
    const std::int64_t from = std::max<std::int64_t>(0, size - static_cast<std::int64_t>(max_bytes));
    LogSlice out = log_from(id, from, max_bytes);
    out.truncated = from > 0;
    return out;
}

LogSlice RunCatalog::log_from(const std::string& id, std::int64_t offset, std::size_t max_bytes) const
{
    LogSlice out;
    out.from_byte = offset;
    out.text = m_store->log_from(id, offset, max_bytes);
    return out;
}

void RunCatalog::for_each_log_chunk(const std::string& id, const std::function<void(std::string_view)>& fn) const
{
    m_store->for_each_log_chunk(id, fn);
}

nlohmann::ordered_json RunCatalog::run_json(const RunRecord& run, bool detailed) const
{
    return run_to_json(*m_store, run, detailed);
}

std::string RunCatalog::summary_text(const RunRecord& run) const
{
    return run_summary_text(*m_store, run);
}

} // namespace parallax::remote
