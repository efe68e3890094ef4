#pragma once
// Validity rules of a serving scenario: the deployment must fit the model (heads, KV heads, layers,
// experts) and the cluster, and the workload must name exactly one load. Throws InputError naming the
// file, the key and the rule; parse_serving_scenario() calls it.
#include "serving/serving_spec.hpp"

#include <string>
#include <vector>

namespace parallax {

// `key` is the JSON path of the layout ("deployment", "deployment.disaggregated.prefill").
void check_instance_layout(
    const InstanceLayout& l, const ModelSpec& m, const ClusterSpec& c, const std::string& file, const std::string& key);
void check_serving_scenario(const ServingScenario& s, const std::string& file);

// What is legal but worth saying (a precision the GPU runs as weight-only, a TP group across nodes).
std::vector<std::string> serving_warnings(const ServingScenario& s);

} // namespace parallax
