#pragma once
// The read side of the run store, as values: the GUI and the CLI list runs, show one, draw its overlay and
// read its log through this and never open the store (store/run_store.hpp) themselves. What comes back is a
// copy (records, rows, overlays, log slices) that may travel to any thread.
//
// A RunCatalog is one connection to the store and, like the store, belongs to the thread that made it; a
// background read makes its own (the file is in WAL mode, so it reads while a worker writes).
//
//   if (RunCatalog::store_exists(path)) {
//       RunCatalog catalog(path);                 // throws StoreError
//       for (const RunRow& row : catalog.rows(500)) ...
//   }
#include "runs/run_overlay.hpp"
#include "runs/run_row.hpp"
#include "store/run_record.hpp"

#include <QString>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallax::remote {

class RunStore;

// A piece of a run's stored log.
struct LogSlice {
    std::string text;
    std::int64_t from_byte = 0; // where `text` starts in the log
    bool truncated = false; // bytes before from_byte were left out
};

class RunCatalog {
public:
    // Opens (creating when missing) the store at `store_path`. Throws StoreError.
    explicit RunCatalog(const QString& store_path);
    ~RunCatalog();
    RunCatalog(const RunCatalog&) = delete;
    RunCatalog& operator=(const RunCatalog&) = delete;

    // ~/.local/share/parallax/runs.sqlite, or $PARALLAX_RUN_STORE.
    static QString default_store_path();
    // Looking creates nothing: the store file appears with the first run sent.
    static bool store_exists(const QString& store_path);

    // Newest first; `limit` 0 = all.
    std::vector<RunRecord> runs(int limit = 0) const;
    std::optional<RunRecord> run(const std::string& id) const;
    // The table's rows, newest first; `limit` 0 = all.
    std::vector<RunRow> rows(int limit = 0) const;
    // What the planner draws of the run; nullopt when there is no such run.
    std::optional<RunOverlay> overlay(const std::string& id) const;
    std::vector<StepRecord> steps(const std::string& id) const;
    std::vector<StateTransition> transitions(const std::string& id) const;

    // The last `max_bytes` of the run's log (truncated says whether anything came before).
    LogSlice log_tail(const std::string& id, std::size_t max_bytes) const;
    // Up to `max_bytes` of the log from byte `offset` on (a live view reads only what is new).
    LogSlice log_from(const std::string& id, std::int64_t offset, std::size_t max_bytes) const;
    // The whole log, chunk by chunk, in order (a log can be large).
    void for_each_log_chunk(const std::string& id, const std::function<void(std::string_view)>& fn) const;

    // The run as `parallax-cli runs --json` prints it (run_report.hpp: run_to_json).
    nlohmann::ordered_json run_json(const RunRecord& run, bool detailed) const;
    // A few lines for a terminal (run_report.hpp: run_summary_text).
    std::string summary_text(const RunRecord& run) const;

private:
    std::unique_ptr<RunStore> m_store;
};

} // namespace parallax::remote
