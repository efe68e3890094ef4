#pragma once
// What an import did with every key of its input: mapped onto a scenario key, known not to affect
// the prediction (learning rate, paths, logging), not modelled (with the reason), or assumed (a scenario
// value the input does not give, with the rule that chose it). Nothing in the input is left out.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace parallax {

enum class ImportOutcome : unsigned char { mapped, no_effect, not_modelled, assumed };
std::string_view to_string(ImportOutcome o);

struct ImportEntry {
    ImportOutcome outcome = ImportOutcome::mapped;
    std::string key; // as the input spells it: "--tensor-model-parallel-size", "model.fp8",
                     // "parallelism.tensor_parallel_degree"
    std::string value; // as written; empty for a bare flag
    std::string target; // the scenario key it set ("strategy.tp"); for assumed entries the key it fills
    std::string note; // how it was converted, why it is not modelled, or the rule behind an assumption
};

class ImportReport {
public:
    std::string format; // "megatron-args", ...
    std::string file;

    void mapped(std::string key, std::string value, std::string target, std::string note = {});
    void no_effect(std::string key, std::string value, std::string note = {});
    void not_modelled(std::string key, std::string value, std::string why);
    void assumed(std::string target, std::string value, std::string why);

    const std::vector<ImportEntry>& entries() const { return m_entries; }
    std::vector<const ImportEntry*> of(ImportOutcome o) const;
    // The first entry for this input key (any outcome), or nullptr.
    const ImportEntry* find(std::string_view key) const;
    // The input key that set this scenario key ("strategy.tp" -> "--tensor-model-parallel-size"), or empty.
    std::string source_of(std::string_view target) const;

private:
    std::vector<ImportEntry> m_entries;
};

// {"format", "file", "mapped": [{"key","value","to"[,"note"]}], "no_effect": [{"key","value"[,"note"]}],
//  "not_modelled": [{"key","value","why"}], "assumed": [{"to","value","why"}]}
nlohmann::ordered_json import_report_to_json(const ImportReport& r);
// The same for a terminal: one line per mapped, not-modelled and assumed entry; the keys that do not
// affect the prediction listed together.
std::string import_report_to_text(const ImportReport& r);

} // namespace parallax
