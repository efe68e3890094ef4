#include "io/import/import_report.hpp"

namespace parallax {

std::string_view to_string(ImportOutcome o)
{
    switch (o) {
    case ImportOutcome::mapped:
        return "mapped";
    case ImportOutcome::no_effect:
        return "no_effect";
    case ImportOutcome::not_modelled:
        return "not_modelled";
    case ImportOutcome::assumed:
        return "assumed";
    }
    return "mapped";
}

void ImportReport::mapped(std::string key, std::string value, std::string target, std::string note)
{
    m_entries.push_back(
        { ImportOutcome::mapped, std::move(key), std::move(value), std::move(target), std::move(note) });
}

void ImportReport::no_effect(std::string key, std::string value, std::string note)
{
    m_entries.push_back({ ImportOutcome::no_effect, std::move(key), std::move(value), {}, std::move(note) });
}

void ImportReport::not_modelled(std::string key, std::string value, std::string why)
{
    m_entries.push_back({ ImportOutcome::not_modelled, std::move(key), std::move(value), {}, std::move(why) });
}

void ImportReport::assumed(std::string target, std::string value, std::string why)
{
    m_entries.push_back({ ImportOutcome::assumed, {}, std::move(value), std::move(target), std::move(why) });
}

std::vector<const ImportEntry*> ImportReport::of(ImportOutcome o) const
{
    std::vector<const ImportEntry*> out;
    for (const ImportEntry& e : m_entries)
        if (e.outcome == o)
            out.push_back(&e);
    return out;
}

const ImportEntry* ImportReport::find(std::string_view key) const
{
    for (const ImportEntry& e : m_entries)
        if (e.key == key)
            return &e;
    return nullptr;
}

std::string ImportReport::source_of(std::string_view target) const
{
    for (auto it = m_entries.rbegin(); it != m_entries.rend(); ++it)
        if (it->outcome == ImportOutcome::mapped && it->target == target)
            return it->key;
    return {};
}

nlohmann::ordered_json import_report_to_json(const ImportReport& r)
{
    nlohmann::ordered_json j;
    j["format"] = r.format;
    j["file"] = r.file;
    for (ImportOutcome o :
        { ImportOutcome::mapped, ImportOutcome::no_effect, ImportOutcome::not_modelled, ImportOutcome::assumed }) {
        auto list = nlohmann::ordered_json::array();
        for (const ImportEntry* e : r.of(o)) {
            nlohmann::ordered_json item;
            if (o != ImportOutcome::assumed)
                item["key"] = e->key;
            if (o == ImportOutcome::mapped || o == ImportOutcome::assumed)
                item["to"] = e->target;
            item["value"] = e->value;
            if (o == ImportOutcome::not_modelled || o == ImportOutcome::assumed)
                item["why"] = e->note;
            else if (!e->note.empty())
                item["note"] = e->note;
            list.push_back(std::move(item));
        }
        j[std::string(to_string(o))] = std::move(list);
    }
    return j;
}

namespace {

std::string key_and_value(const ImportEntry& e)
{
    return e.value.empty() ? e.key : e.key + " " + e.value;
}

} // namespace

std::string import_report_to_text(const ImportReport& r)
{
    std::string out = r.file + ": imported as " + r.format + "\n";
    const auto mapped = r.of(ImportOutcome::mapped);
    out += "mapped (" + std::to_string(mapped.size()) + "):\n";
    for (const ImportEntry* e : mapped)
        out += "  " + key_and_value(*e) + " -> " + e->target + (e->note.empty() ? "" : "  (" + e->note + ")") + "\n";
    const auto assumed = r.of(ImportOutcome::assumed);
    out += "assumed (" + std::to_string(assumed.size()) + "; not in the file):\n";
    for (const ImportEntry* e : assumed)
        out += "  " + e->target + " = " + e->value + ": " + e->note + "\n";
    const auto missing = r.of(ImportOutcome::not_modelled);
    out += "not modelled (" + std::to_string(missing.size()) + "):\n";
    for (const ImportEntry* e : missing)
        out += "  " + key_and_value(*e) + ": " + e->note + "\n";
    const auto inert = r.of(ImportOutcome::no_effect);
    out += "does not affect the prediction (" + std::to_string(inert.size()) + "):";
    std::size_t column = 80;
    for (std::size_t i = 0; i < inert.size(); ++i) {
        const std::string item = inert[i]->key + (i + 1 < inert.size() ? "," : "");
        if (column + item.size() + 1 > 100) {
            out += "\n  ";
            column = 2;
        } else {
            out += ' ';
            ++column;
        }
        out += item;
        column += item.size();
    }
    out += "\n";
    return out;
}

} // namespace parallax
