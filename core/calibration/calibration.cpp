#include "calibration/calibration.hpp"

#include "io/json_reader.hpp"
#include "spec/input_error.hpp"

#include <cmath>

namespace parallax {

Calibration::Calibration()
{
    gemm_scale.fill(1.0);
    attention_scale.fill(1.0);
    framework_scale.fill(1.0);
}

bool Calibration::is_identity() const
{
    for (double v : gemm_scale)
        if (v != 1.0)
            return false;
    for (double v : attention_scale)
        if (v != 1.0)
            return false;
    for (double v : framework_scale)
        if (v != 1.0)
            return false;
    return true;
}

const Calibration& no_calibration()
{
    static const Calibration c;
    return c;
}

std::string calibration_not_applied(const Calibration& c, const std::string& gpu)
{
    if (c.gpu.empty() || c.gpu == gpu)
        return {};
    return "calibration " + c.name + " was fitted on " + c.gpu + " runs and is not applied to " + gpu
        + "; the shipped calibration is used instead";
}

namespace {

const GpuArchitecture kArchitectures[] = { GpuArchitecture::generic, GpuArchitecture::volta, GpuArchitecture::ampere,
    GpuArchitecture::hopper, GpuArchitecture::blackwell, GpuArchitecture::cdna2, GpuArchitecture::cdna3 };
const Framework kFrameworks[]
    = { Framework::megatron, Framework::torchtitan, Framework::torchtitan_compile, Framework::megatron_deepspeed };

} // namespace

nlohmann::json calibration_to_json(const Calibration& c)
{
    nlohmann::json j;
    j["schema"] = 1;
    j["name"] = c.name;
    j["source"] = c.source;
    if (!c.gpu.empty())
        j["gpu"] = c.gpu;
    if (!c.provenance.is_null())
        j["provenance"] = c.provenance;
    nlohmann::json g = nlohmann::json::object(), a = nlohmann::json::object(), f = nlohmann::json::object();
    for (GpuArchitecture arch : kArchitectures) {
        if (c.gemm(arch) != 1.0)
            g[std::string(to_string(arch))] = c.gemm(arch);
        if (c.attention(arch) != 1.0)
            a[std::string(to_string(arch))] = c.attention(arch);
    }
    for (Framework fw : kFrameworks)
        if (c.framework(fw) != 1.0)
            f[std::string(to_string(fw))] = c.framework(fw);
    j["gemm_scale"] = g;
    j["attention_scale"] = a;
    j["framework_scale"] = f;
    return j;
}

Calibration calibration_from_json(const nlohmann::json& j, const std::string& file)
{
    JsonObjectReader r(j, file, "");
    Calibration c;
    const long long schema = r.get_int("schema", 1, 1);
    (void)schema;
    c.name = r.get_string("name", std::string("custom"));
    c.source = r.get_string("source", std::string());
    c.gpu = r.get_string("gpu", std::string());
    if (const nlohmann::json* p = r.raw("provenance"))
        c.provenance = *p;
    auto read_scales = [&](const char* key, auto&& set) {
        const nlohmann::json* v = r.raw(key);
        if (!v)
            return;
        JsonObjectReader s(*v, file, key);
        if (v->is_object())
            for (auto it = v->begin(); it != v->end(); ++it)
                set(s, it.key());
        s.finish();
    };
    read_scales("gemm_scale", [&](JsonObjectReader& s, const std::string& k) {
        GpuArchitecture a;
        if (!architecture_from_string(k, a))
            s.fail(k, "unknown GPU architecture");
        c.gemm_scale[static_cast<int>(a)] = s.get_number(k, 0.05, 20);
    });
    read_scales("attention_scale", [&](JsonObjectReader& s, const std::string& k) {
        GpuArchitecture a;
        if (!architecture_from_string(k, a))
            s.fail(k, "unknown GPU architecture");
        c.attention_scale[static_cast<int>(a)] = s.get_number(k, 0.05, 20);
    });
    read_scales("framework_scale", [&](JsonObjectReader& s, const std::string& k) {
        Framework f;
        if (!framework_from_string(k, f))
            s.fail(k, "unknown framework");
        c.framework_scale[static_cast<int>(f)] = s.get_number(k, 0.05, 20);
    });
    r.finish();
    return c;
}

} // namespace parallax
