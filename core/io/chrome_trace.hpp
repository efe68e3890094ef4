#pragma once
// Chrome trace / Perfetto JSON of a simulated step: one process per pipeline stage, one track per
// stream (compute, NVLink, network, and the TP/CP/EP collectives that run under compute ops), op
// names that say the pass, layers and micro-batch ("F L0-9 mb3"); the critical path as flow arrows and
// each stage's power per GPU as a counter track. Every event is serialised by nlohmann_json, so any
// title (tabs, quotes, any length, invalid UTF-8) gives valid JSON.
#include "sim/simulated_model.hpp"
#include "spec/model_spec.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace parallax {

nlohmann::json chrome_trace(const SimulatedPlan& sim, const std::string& title);
// Streams the trace to a file without building the whole JSON tree (10^6 ops stay cheap).
void write_chrome_trace(const SimulatedPlan& sim, const std::string& title, const std::string& path);

} // namespace parallax
