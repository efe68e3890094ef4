#pragma once
// A serving deployment as the engine's own launch command: `vllm serve`, SGLang's `launch_server`, or
// `trtllm-serve` with its LLM-API options file, with the deployment's degrees, the precision of weights
// and KV cache, and the engine limits the prediction assumed (engine_traits.hpp), so what runs is what was
// predicted. A script starts every replica on its own GPUs (or, disaggregated, the prefill and decode
// workers with the engine's transfer settings). Flag names were checked against vLLM 0.11 (EngineArgs),
// SGLang 0.5 (server_args.py) and TensorRT-LLM 1.1 (trtllm-serve, LlmArgs).
#include "io/export/launch_config.hpp"
#include "serving/serving_spec.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace parallax {

std::optional<ServingEngine> serving_launch_format_from_string(std::string_view s);
// The model's Hugging Face checkpoint for the shipped presets; empty for others (the script then asks for it).
std::string serving_checkpoint(const ModelSpec& m);

// The launch script (serve.sh) first, then its companions (TensorRT-LLM's options files). `engine` may
// differ from the scenario's (a note says the prediction assumed another engine).
LaunchConfig export_serving_launch(const ServingScenario& s, ServingEngine engine);

} // namespace parallax
