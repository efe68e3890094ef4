#pragma once
// The scenario an importer builds key by key from one input file, with the report of what it did with
// every input key. import_scenario.hpp completes it (model preset, cluster, GPU count, defaults) and
// validates it.
#include "io/import/import_report.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace parallax {

struct ImportDraft {
    ImportReport report;
    // {"model": {...}, "training": {...}, "strategy": {...}} in scenario key names; only what the input says.
    nlohmann::json parts = { { "model", nlohmann::json::object() }, { "training", nlohmann::json::object() },
        { "strategy", nlohmann::json::object() } };
    std::string model_preset; // a model the input names (torchtitan flavour); empty: parts["model"]
    std::string model_key; // the input key that names or describes the model, for errors
    // A name the input gives that may be a Parallax model preset (a torchtitan flavour registered under a
    // preset's name, as `export` asks for models torchtitan lacks); used when the catalogue has it.
    std::string model_preset_candidate;
    // The vocabulary when only the tokenizer says it; Megatron-LM pads it to a multiple of
    // vocab_pad_multiple x TP (--make-vocab-size-divisible-by), which a preset may already include.
    std::string vocab_key; // the input key that would give the vocabulary (named when it is unknown)
    int vocab_pad_multiple = 0;
    // Cluster size when the input gives it (a launcher's node and GPU counts).
    std::optional<long long> nodes;
    std::optional<long long> gpus_per_node;
    std::optional<long long> total_gpus; // when only the product is known (DeepSpeed's batch arithmetic)
    std::string seq_len_key; // the input key that gives the sequence length, named when it is missing
    // Sequences per data-parallel rank and step when the global batch is not given (torchtitan's
    // local_batch_size); unset: the micro-batch (Megatron-LM's default global batch is micro-batch x dp).
    std::optional<long long> batch_per_dp_rank;
    // Gradient-accumulation steps when the micro-batch is not given (DeepSpeed derives it: global batch /
    // (accumulation x dp)).
    std::optional<long long> accumulation_steps;
    // Layers per virtual pipeline stage when only that is given (torchtitan's
    // pipeline_parallel_layers_per_stage): vpp = layers / (pp x this) once the model is known.
    std::optional<long long> layers_per_pipeline_chunk;
    std::string layers_per_pipeline_chunk_key;
    // torchtitan counts the embedding and the output layer as one layer each when it splits stages
    // (pipeline_parallel_first/last_stage_less_layers, default 1).
    int pipeline_extra_layers = 0;
    bool model_only = false; // the input holds only a model: training and cluster are the documented defaults

    // Sets `target` ("strategy.tp", "model.moe.experts") and reports "input_key input_value -> target".
    void set(std::string_view target, nlohmann::json value, std::string input_key, std::string input_value,
        std::string note = {});
    // Sets `target` without a report entry (derived values the caller reports itself).
    void put(std::string_view target, nlohmann::json value);
    const nlohmann::json* get(std::string_view target) const; // nullptr when not set
    bool has(std::string_view target) const { return get(target) != nullptr; }
    long long get_int(std::string_view target, long long fallback) const;
};

} // namespace parallax

namespace parallax {

// What the caller adds to the input file: the cluster, the GPU count and the model when the file
// lacks them (or to replace them).
struct ImportOptions {
    std::string cluster; // a cluster preset; empty: kDefaultImportCluster
    std::optional<long long> gpus; // total GPUs; replaces the file's node and GPU counts
    std::string model; // a model preset name or a Hugging Face config.json; replaces the file's model
    std::optional<long long> seq_len; // for files without one (a DeepSpeed config); replaces the file's
};

// The cluster an import assumes when neither the file nor --cluster names one: DGX H100 nodes (NVLink 4
// in a node, NDR InfiniBand between nodes), the most common training system of the published runs.
inline constexpr const char* kDefaultImportCluster = "dgx-h100-superpod";
// GPUs an import assumes when the file does not say: the default scenario's 64 (8 nodes of 8), rounded up
// to a multiple of the model-parallel degrees.
inline constexpr long long kDefaultImportGpus = 64;

} // namespace parallax
