#include "io/import/import_draft.hpp"

#include <vector>

namespace parallax {

namespace {

// The parts of "model.moe.experts".
std::vector<std::string> split_target(std::string_view target)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = target.find('.', start);
        parts.emplace_back(target.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos)
            return parts;
        start = dot + 1;
    }
}

} // namespace

void ImportDraft::set(
    std::string_view target, nlohmann::json value, std::string input_key, std::string input_value, std::string note)
{
    put(target, std::move(value));
    report.mapped(std::move(input_key), std::move(input_value), std::string(target), std::move(note));
}

void ImportDraft::put(std::string_view target, nlohmann::json value)
{
    nlohmann::json* node = &parts;
    for (const std::string& part : split_target(target)) {
        if (!node->is_object())
            *node = nlohmann::json::object();
        node = &(*node)[part];
    }
    *node = std::move(value);
}

const nlohmann::json* ImportDraft::get(std::string_view target) const
{
    const nlohmann::json* node = &parts;
    for (const std::string& part : split_target(target)) {
        if (!node->is_object())
            return nullptr;
        const auto it = node->find(part);
        if (it == node->end())
            return nullptr;
        node = &*it;
    }
    return node;
}

long long ImportDraft::get_int(std::string_view target, long long fallback) const
{
    const nlohmann::json* v = get(target);
    return v && v->is_number_integer() ? v->get<long long>() : fallback;
}

} // namespace parallax
