#!/usr/bin/env python3
"""Add the pre-training rows of Megatron-Bridge's performance pages to the MoE validation file.

usage: scripts/import-mbridge-tables.py PAGE.md [PAGE.md ...] [--into FILE] [--containers 26.04,26.06]
                                       [--recipes MEGATRON_BRIDGE_GIT_DIR]

PAGE.md: NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md or docs/performance-summary-archive.md.
Reads the containers laid out one table per model ("#### Model: NAME", 26.02 and later) and appends a row
per table line whose model has a preset and whose id the file does not hold yet. Rows already in the file keep
what they say; with --recipes, one that states none of the recipe settings below gains them. Prints what it
skipped and why.

With --recipes (a clone of NVIDIA-NeMo/Megatron-Bridge), a row also gets the MoE runtime settings of the
recipe that ran it: scripts/performance/configs/<family>/*_workload_base_configs.py at the release the
container shipped (RELEASE_OF_CONTAINER), the config of the row's GPU and precision whose parallel layout
matches the row. Its token dispatcher, CUDA graphs, expert-communication overlap, recomputed modules and
activation offload become the row's moe_dispatcher, cuda_graphs, ep_overlap, recompute_modules and
activation_offload_layers; the row's notes name the config and the tag.
"""

import argparse
import json
import re
import subprocess
import sys

# The model blocks the existing rows use, by the page's model heading. Nemotron 3 (hybrid Mamba layers),
# DeepSeek-V4 and Kimi K2 (trained with Muon here; the model prices Adam's state and step) are not modelled.
MODELS = {
    "LLAMA3_70B": ("Llama 3 70B", "llama3-70b", 8192),
    "LLAMA3.1_405B": ("Llama 3.1 405B", "llama3.1-405b", 8192),
    "DeepSeekV3": ("DeepSeek-V3", "deepseekv3", 4096),
    "GPT OSS 120B": ("GPT-OSS-120B", "gpt-oss-120b", 4096),
    "Qwen3_30B_a3B": ("Qwen3-30B-A3B", "qwen3-30b-a3b", 4096),
    "Qwen3_235B_a22B": ("Qwen3-235B-A22B", "qwen3-235b-a22b", 4096),
}

SYSTEMS = {
    "DGX-GB300": ("dgx-gb300", "GB300 NVL72 (B300-class GPU)"),
    "DGX-GB200": ("dgx-gb200", "GB200 NVL72 (B200-class GPU)"),
    "DGX-B300": ("dgx-b300", "B300 (DGX B300)"),
    "DGX-B200": ("dgx-b200", "B200 (DGX B200)"),
    "DGX-H100": ("dgx-h100", "H100-SXM5-80GB (DGX H100)"),
}

# The precision column as the reader (core/calibration/published_runs.cpp) understands it. Megatron-Bridge's
# FP8 is its fp8_cs recipe (_perf_precision in perf_recipes/_common.py).
PRECISIONS = {
    "BF16": ("bf16", "bf16"),
    "FP8": ("fp8", "fp8 (current scaling, per-tensor)"),
    "MXFP8": ("mxfp8", "mxfp8 (32-element block scales)"),
    "NVFP4": ("nvfp4", "nvfp4 (16-element block scales, fp8 scales)"),
}

# The Megatron-Bridge release inside each NeMo container (the newest container its docs/performance-summary.md
# lists at the tag). 26.08 ships the flat perf_recipes, which port v0.5's configs (PR #5061).
RELEASE_OF_CONTAINER = {
    "26.02": "v0.3.0", "26.02.01": "v0.3.1", "26.04": "v0.4.0", "26.04.01": "v0.4.2",
    "26.06": "v0.5.0", "26.06.01": "v0.5.1", "26.08": "v0.5.1",
}
RECIPE_FILES = {
    "DeepSeekV3": ("deepseek/deepseek", "DEEPSEEK_V3"),
    "GPT OSS 120B": ("gpt_oss/gpt_oss", "GPT_OSS_120B"),
    "LLAMA3_70B": ("llama/llama3", "LLAMA3_70B"),
    "LLAMA3.1_405B": ("llama/llama31", "LLAMA31_405B"),
    "Qwen3_30B_a3B": ("qwen/qwen3", "QWEN3_30B_A3B"),
    "Qwen3_235B_a22B": ("qwen/qwen3", "QWEN3_235B_A22B"),
}
RECIPE_KEYS = ("moe_dispatcher", "cuda_graphs", "ep_overlap")
RECIPE_PRECISION = {"BF16": "BF16", "FP8": "FP8_CS", "MXFP8": "FP8_MX", "NVFP4": "NVFP4"}

CONTAINER = re.compile(r"^## (\d\d)\.(\d\d)(\.\d+)? NeMo Container")
MOE_NOTE = "MoE benchmarks force-balance the token distribution among experts and are token-dropless"


def number(cell):
    cell = re.sub(r"\[\^[^\]]*\]", "", cell).strip()
    return None if cell in ("n/a", "") else int(cell)


def template_blocks(rows):
    models, hardware = {}, {}
    for r in rows:
        models.setdefault(r["model"]["name"], r["model"])
        hardware.setdefault(r["hardware"]["gpu_type"], r["hardware"])
    return models, hardware


def page_tables(path):
    """Yields (container "26.04.01", section, model heading, {column: cell}) for every table line."""
    container = section = model = header = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            m = CONTAINER.match(line)
            if m:
                container, section, model, header = m.group(1) + "." + m.group(2) + (m.group(3) or ""), None, None, None
            elif line.startswith("### "):
                section, model, header = line[4:].strip(), None, None
            elif line.startswith("#### Model: "):
                model, header = line[len("#### Model: "):].strip(), None
            elif line.startswith("#### "):
                model, header = None, None  # the older per-system layout, entered by hand
            elif line.startswith("|") and container and model:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if header is None:
                    header = cells
                elif not set(line) <= set("|-: "):
                    yield container, section, model, dict(zip(header, cells))


# Footnotes a table cell may carry, and what they say about the row.
FOOTNOTES = {
    "gpt-oss-note": "the page footnotes this number as a known performance regression "
    "(NVIDIA/cudnn-frontend issue 256), to be resolved in the next container",
}


def make_row(container, page, table, cells, models, hardware):
    name, slug, _ = MODELS[table]
    system, gpu_type = SYSTEMS[cells["System"]]
    prec_slug, prec = PRECISIONS[cells["Precision"]]
    gpus = number(cells["#-GPUs"])
    tp, pp, cp = number(cells["TP"]), number(cells["PP"]), number(cells["CP"])
    fsdp = number(cells.get("FSDP", "0")) or 0
    tag = container.replace(".", "")
    row_id = f"mbridge{tag}_{system}_{slug}_{gpus}gpu_{prec_slug}" + ("_fsdp" if fsdp else "")
    model = dict(models[name])
    model["seq_len"] = number(cells["Sequence Length"])
    hw = dict(hardware[gpu_type])
    hw["n_gpus"] = gpus
    tokens = number(cells["Tokens / sec / GPU"])
    notes = [MOE_NOTE] if models[name].get("n_experts") else []
    notes += [text for mark, text in FOOTNOTES.items() if f"[^{mark}]" in "".join(cells.values())]
    return {
        "id": row_id,
        "source": f"NVIDIA-NeMo/Megatron-Bridge docs/{page} (Megatron-Bridge performance recipes, "
        f"scripts/performance), {container} NeMo container, {cells['System']} row of the {table} table",
        "source_type": "framework-benchmark-table",
        "year": 2000 + int(container[:2]),
        "model": model,
        "hardware": hw,
        "strategy": {
            "tp": tp, "pp": pp, "dp": gpus // (tp * pp * cp), "cp": cp, "ep": number(cells["EP"]) or 1,
            "vp": number(cells["VP"]), "micro_batch_size": number(cells["MBS"]),
            "global_batch_size": number(cells["GBS"]), "activation_recompute": None,
            "sequence_parallel": None, "zero_stage_or_fsdp": f"fsdp ({fsdp} GPUs)" if fsdp else None,
            "distributed_optimizer": True, "precision": prec,
        },
        "result": {
            "tflops_per_gpu": number(cells["Model TFLOP / sec / GPU"]),
            "tflops_kind": "model TFLOP/s per GPU (Megatron-Bridge's own FLOP count)",
            "mfu": None, "hfu": None, "tokens_per_sec": None, "tokens_per_sec_per_gpu": tokens,
            "sec_per_iter": None, "peak_memory_gib": None, "other": None,
        },
        "derived_fields": ["dp = n_gpus / (tp * pp * cp)"],
        "notes": "; ".join(notes) or None,
    }


class RecipeConfig:
    """Stands in for WorkloadBaseConfig: the settings a config names, unset ones absent."""

    def __init__(self, **settings):
        self.settings = settings


def recipe_replace(base, **changes):
    return RecipeConfig(**{**base.settings, **changes})


_recipe_cache = {}


def recipe_configs(git_dir, tag, family_file):
    key = (tag, family_file)
    if key not in _recipe_cache:
        path = f"scripts/performance/configs/{family_file}_workload_base_configs.py"
        text = subprocess.run(["git", "-C", git_dir, "show", f"{tag}:{path}"], capture_output=True, text=True,
                              check=True).stdout
        text = text.replace("from dataclasses import replace", "").replace(
            "from utils.utils import WorkloadBaseConfig", "")
        scope = {"replace": recipe_replace, "WorkloadBaseConfig": RecipeConfig}
        exec(compile(text, f"{tag}:{path}", "exec"), scope)  # the configs are plain assignments
        _recipe_cache[key] = {k: v for k, v in scope.items() if isinstance(v, RecipeConfig)}
    return _recipe_cache[key]


def matching_recipe(git_dir, container, table, cells, row):
    """(config name, tag, settings) of the recipe config that ran the row, or None."""
    tag = RELEASE_OF_CONTAINER.get(container)
    if not tag or table not in RECIPE_FILES:
        return None
    family_file, prefix = RECIPE_FILES[table]
    gpu = cells["System"].replace("DGX-", "")
    stem = f"{prefix}_PRETRAIN_CONFIG_{gpu}_{RECIPE_PRECISION[cells['Precision']]}_V"
    st = row["strategy"]
    want = {"num_gpus": row["hardware"]["n_gpus"], "tensor_model_parallel_size": st["tp"],
            "pipeline_model_parallel_size": st["pp"], "context_parallel_size": st["cp"],
            "expert_model_parallel_size": st["ep"], "virtual_pipeline_model_parallel_size": st["vp"],
            "micro_batch_size": st["micro_batch_size"], "global_batch_size": st["global_batch_size"]}
    defaults = {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "context_parallel_size": 1,
                "expert_model_parallel_size": 1, "virtual_pipeline_model_parallel_size": None,
                "micro_batch_size": 1}
    for name, cfg in sorted(recipe_configs(git_dir, tag, family_file).items()):
        if not name.startswith(stem):
            continue
        got = {**defaults, **cfg.settings}
        if all(got.get(k) == v for k, v in want.items()):
            return name, tag, cfg.settings
    return None


def apply_recipe(row, recipe):
    name, tag, cfg = recipe
    st = row["strategy"]
    backend = cfg.get("moe_flex_dispatcher_backend")
    if row["model"].get("n_experts"):
        st["moe_dispatcher"] = backend or "alltoall"
        st["ep_overlap"] = bool(cfg.get("moe_a2a_overlap"))
    graphs = cfg.get("cuda_graph_impl")
    st["cuda_graphs"] = ("full-iteration" if graphs == "full_iteration"
                         else "layers" if graphs in ("local", "transformer_engine") else "none")
    if cfg.get("recompute_modules"):
        st["recompute_modules"] = list(cfg["recompute_modules"])
    if cfg.get("cpu_offloading_num_layers"):
        st["activation_offload_layers"] = int(cfg["cpu_offloading_num_layers"])
    said = [f"moe_dispatcher={st['moe_dispatcher']}", f"ep_overlap={st['ep_overlap']}"] if "moe_dispatcher" in st else []
    said.append(f"cuda_graphs={st['cuda_graphs']} ({graphs or 'unset'}, scope {cfg.get('cuda_graph_scope')})")
    for extra in ("recompute_modules", "cutedsl_fused_grouped_mlp", "fp8_dot_product_attention", "use_megatron_fsdp",
                  "cpu_offloading_num_layers", "pp_layout"):
        if cfg.get(extra):
            said.append(f"{extra}={cfg[extra]}")
    note = (f"recipe settings {', '.join(said)} from {name} in NVIDIA-NeMo/Megatron-Bridge "
            f"scripts/performance/configs at {tag}")
    row["notes"] = f"{row['notes']}; {note}" if row["notes"] else note


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="+")
    ap.add_argument("--into", default="validation/published-moe-and-long-context-runs.json")
    ap.add_argument("--recipes", help="a Megatron-Bridge git clone: fill each row's recipe settings")
    ap.add_argument("--containers", default="", help="comma-separated; default: every container found")
    args = ap.parse_args()
    wanted = set(filter(None, args.containers.split(",")))

    with open(args.into, encoding="utf-8") as f:
        rows = json.load(f)
    models, hardware = template_blocks(rows)
    by_id = {r["id"]: r for r in rows}
    this_run = set()
    added = filled = 0
    for path in args.pages:
        page = path.rsplit("/", 1)[-1]
        for container, section, table, cells in page_tables(path):
            where = f"{page}: {container} {table} {cells.get('System')} {cells.get('Precision')}"
            if wanted and container not in wanted:
                continue
            if section != "Pre-Training Performance":
                continue
            if table not in MODELS:
                print(f"skipped {where}: no model preset for '{table}'", file=sys.stderr)
                continue
            row = make_row(container, page, table, cells, models, hardware)
            if row["id"] in this_run:
                row["id"] += f"_gbs{row['strategy']['global_batch_size']}"  # two batches in one table
            if row["id"] in by_id:
                existing = by_id[row["id"]]
                if args.recipes and not set(RECIPE_KEYS) & set(existing["strategy"]):
                    recipe = matching_recipe(args.recipes, container, table, cells, existing)
                    if recipe:
                        apply_recipe(existing, recipe)
                        filled += 1
                continue
            if args.recipes:
                recipe = matching_recipe(args.recipes, container, table, cells, row)
                if recipe:
                    apply_recipe(row, recipe)
                else:
                    print(f"no recipe config matches {where} ({row['id']})", file=sys.stderr)
            rows.append(row)
            by_id[row["id"]] = row
            this_run.add(row["id"])
            added += 1
    with open(args.into, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"added {added} rows, gave {filled} rows their recipe settings; {args.into} holds {len(rows)}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
