#!/usr/bin/python3
"""Parallax probe: measures a training plan on the machines that will run it.

Started once per rank (torchrun, srun, or by hand with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set),
it reads the plan written by Parallax (--plan probe_plan.json) and runs, with torch.distributed:

1. micro-benchmarks with the plan's shapes: the GEMMs of one transformer layer as a tensor-parallel
   rank runs them, the collectives of the plan's sizes over the plan's groups (TP all-reduce, DP
   gradient all-reduce, CP all-gather, EP all-to-all) and the pipeline p2p transfer;
2. a few real training steps of a small transformer laid out with the plan's TP, PP and DP degrees:
   Megatron-style column/row-parallel attention and MLP over the TP group, pipeline stages exchanging
   activations and gradients by send/recv (GPipe order: all forwards, then all backwards), gradients
   averaged over the DP group, then an optimizer step.

CUDA with NCCL where a GPU is visible, CPU with gloo otherwise. NVML board power where libnvidia-ml
is present. Rank 0 prints one `PARALLAX_PROBE {json}` line per result (the format is specified in
remote/log_parse/probe_format.md; parallax-cli parse-log reads it).

What the probe does not do (said in the "run" record so a reader knows): context parallelism in the
training steps (CP ranks train as extra data-parallel replicas; the CP all-gather is benchmarked),
expert layers (the EP all-to-all is benchmarked), ZeRO sharding, interleaved/zero-bubble schedules,
vocabulary-parallel embeddings (every TP rank holds the whole embedding and output layer).
"""

import argparse
import ctypes
import datetime
import json
import math
import os
import socket
import statistics
import sys
import threading
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn.functional as F

MARKER = "PARALLAX_PROBE "
PLAN_SCHEMA = 1
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}

# Benchmarks repeat an operation until this much time has passed or this many repetitions ran,
# after a few warm-up runs (first calls allocate, pick kernels, build NCCL rings).
BENCH_WARMUP = 2
BENCH_MIN_REPS = 3
BENCH_MAX_REPS = 20
BENCH_TARGET_S = 0.25


def emit(record):
    """Prints one probe record (rank 0 only). Non-finite numbers are left out, as the format says."""
    clean = {}
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            continue
        clean[key] = value
    print(MARKER + json.dumps(clean, separators=(",", ":")), flush=True)


def note(text):
    print("parallax_probe: " + text, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# Process group and the plan's rank layout


class Layout:
    """Maps global ranks onto the plan's dimensions in its rank order (innermost first)."""

    def __init__(self, strategy, world_size):
        self.tp = int(strategy.get("tp", 1))
        self.pp = int(strategy.get("pp", 1))
        self.cp = int(strategy.get("cp", 1))
        self.ep = int(strategy.get("ep", 1))
        self.dp = int(strategy.get("dp", 1))
        order = str(strategy.get("rank_order", "tp-cp-ep-dp-pp")).split("-")
        # EP reuses the DP x CP ranks (as in Megatron), so it is not a dimension of the layout.
        self.order = [d for d in order if d != "ep"]
        self.sizes = {"tp": self.tp, "cp": self.cp, "dp": self.dp, "pp": self.pp}
        if set(self.order) != set(self.sizes):
            raise ValueError("rank_order must name tp, cp, dp and pp: " + str(order))
        if self.tp * self.cp * self.dp * self.pp != world_size:
            raise ValueError(
                "the plan needs tp*cp*dp*pp = %d ranks but %d were started"
                % (self.tp * self.cp * self.dp * self.pp, world_size))
        self.world_size = world_size

    def coords(self, rank):
        out = {}
        for d in self.order:
            out[d] = rank % self.sizes[d]
            rank //= self.sizes[d]
        return out

    def rank_of(self, coords):
        rank = 0
        stride = 1
        for d in self.order:
            rank += coords[d] * stride
            stride *= self.sizes[d]
        return rank

    def groups(self, dims):
        """All groups that vary along `dims` (a list) with the other coordinates fixed, sorted."""
        seen = {}
        for r in range(self.world_size):
            c = self.coords(r)
            key = tuple(c[d] for d in self.order if d not in dims)
            seen.setdefault(key, []).append(r)
        return [sorted(v) for _, v in sorted(seen.items())]

    def ep_groups(self):
        """Expert-parallel groups: consecutive blocks of `ep` ranks within each (cp, dp) group."""
        out = []
        if self.ep <= 1:
            return out
        for g in self.groups(["cp", "dp"]):
            if len(g) % self.ep != 0:
                return []
            for i in range(0, len(g), self.ep):
                out.append(g[i:i + self.ep])
        return out


class Groups:
    """Process groups. Every rank creates every group in the same order (torch.distributed's rule)."""

    def __init__(self, layout, rank):
        self.layout = layout
        self.rank = rank
        self.c = layout.coords(rank)
        self.mine = {}
        self.members = {}
        for name, dims in (("tp", ["tp"]), ("cp", ["cp"]), ("dp", ["dp"]), ("pp", ["pp"]),
                           ("dp_cp", ["dp", "cp"])):
            for g in layout.groups(dims):
                handle = dist.new_group(g) if len(g) > 1 else None
                if rank in g:
                    self.mine[name] = handle
                    self.members[name] = g
        for g in layout.ep_groups():
            handle = dist.new_group(g)
            if rank in g:
                self.mine["ep"] = handle
                self.members["ep"] = g

    def group(self, name):
        return self.mine.get(name)

    def size(self, name):
        return len(self.members.get(name, [self.rank]))

    def stage(self):
        return self.c["pp"]

    def pp_neighbour(self, delta):
        c = dict(self.c)
        c["pp"] += delta
        if c["pp"] < 0 or c["pp"] >= self.layout.pp:
            return None
        return self.layout.rank_of(c)


def env_int(*names, default=None):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)
    return default


def init_distributed(device_kind):
    rank = env_int("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", default=0)
    world = env_int("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", default=1)
    local_rank = env_int("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", default=0)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        job = env_int("SLURM_JOB_ID", default=0)
        os.environ["MASTER_PORT"] = str(20000 + job % 20000)
    backend = "nccl" if device_kind == "cuda" else "gloo"
    if device_kind == "cuda":
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
    dist.init_process_group(backend=backend, init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=600))
    return rank, world, local_rank, backend


# ----------------------------------------------------------------------------------------------
# NVML board power (optional)


class PowerMeter:
    """Board power and energy of this rank's GPU over a training step; None when unavailable (CPU).

    Energy comes from NVML's total-energy counter (millijoules since the driver loaded, Volta and
    newer), as Megatron-LM's --log-energy reads it; power is energy / time. Without the counter the
    board power is sampled on a background thread (nvmlDeviceGetPowerUsage, or torch.cuda.power_draw
    where NVML cannot be loaded directly). NVML averages power over ~1 s on Ampere and newer, so the
    counter is the better measure of short steps.
    """

    SAMPLE_S = 0.02

    def __init__(self, device_index):
        self.lib = None
        self.torch_index = None
        self.handle = ctypes.c_void_p()
        self.samples = []
        self.running = False
        self.thread = None
        self.energy0 = None
        self.t0 = None
        self.has_energy = False
        if device_index is None:
            return
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                raise OSError("nvmlInit failed")
            if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(device_index), ctypes.byref(self.handle)) != 0:
                raise OSError("no NVML handle")
            self.lib = lib
            self.has_energy = self._energy_mJ() is not None
        except (OSError, AttributeError):
            self.lib = None
            # torch >= 2.1 reads the same NVML power through pynvml.
            try:
                if hasattr(torch.cuda, "power_draw") and torch.cuda.power_draw(device_index) is not None:
                    self.torch_index = device_index
            except Exception:  # pynvml missing or no permission: no power measurement
                self.torch_index = None

    def available(self):
        return self.lib is not None or self.torch_index is not None

    def _energy_mJ(self):
        mj = ctypes.c_ulonglong()
        if self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(mj)) == 0:
            return mj.value
        return None

    def _read(self):
        if self.lib is not None:
            mw = ctypes.c_uint()
            if self.lib.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(mw)) == 0:
                return mw.value / 1000.0
            return None
        try:
            return torch.cuda.power_draw(self.torch_index) / 1000.0
        except Exception:
            return None

    def _loop(self):
        while self.running:
            w = self._read()
            if w is not None:
                self.samples.append(w)
            time.sleep(self.SAMPLE_S)

    def start(self):
        if not self.available():
            return
        self.t0 = time.perf_counter()
        if self.has_energy:
            self.energy0 = self._energy_mJ()
            return
        self.samples = []
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def stop(self):
        """(mean watts, joules) since start(), or (None, None)."""
        if not self.available() or self.t0 is None:
            return None, None
        dt = time.perf_counter() - self.t0
        self.t0 = None
        if self.has_energy and self.energy0 is not None:
            e1 = self._energy_mJ()
            if e1 is not None and dt > 0:
                joules = (e1 - self.energy0) / 1000.0
                return joules / dt, joules
            return None, None
        if not self.thread:
            return None, None
        self.running = False
        self.thread.join()
        self.thread = None
        w = self._read()
        if w is not None:
            self.samples.append(w)
        if not self.samples:
            return None, None
        watts = statistics.fmean(self.samples)
        return watts, watts * dt


# ----------------------------------------------------------------------------------------------
# The model: a GPT/Llama-style decoder split Megatron-style over TP and PP


class _CopyToTP(torch.autograd.Function):
    """Megatron's f: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        if ctx.group is not None:
            grad = grad.contiguous()
            dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromTP(torch.autograd.Function):
    """Megatron's g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        if group is not None:
            x = x.contiguous()
            dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def causal_attention(q, k, v):
    """q, k, v: [batch, heads, seq, head_dim]."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    s = q.shape[-2]
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores.float(), dim=-1).to(v.dtype), v)


class Layer(torch.nn.Module):
    """One transformer layer as one TP rank holds it: heads and MLP columns split over `tp`."""

    def __init__(self, m, tp, tp_group):
        super().__init__()
        h = m["hidden"]
        self.heads = m["heads"] // tp
        kv_total = m.get("kv_heads") or m["heads"]
        # KV heads are split when they divide by tp, otherwise every rank keeps all of them (Megatron
        # replicates them the same way).
        self.kv_heads = kv_total // tp if kv_total % tp == 0 else kv_total
        self.head_dim = m.get("head_dim") or h // m["heads"]
        self.swiglu = m.get("ffn_act", "gelu") == "swiglu"
        ffn = m["ffn_hidden"] // tp
        norm = RMSNorm if self.swiglu else torch.nn.LayerNorm
        self.norm1 = norm(h)
        self.norm2 = norm(h)
        self.qkv = torch.nn.Linear(h, (self.heads + 2 * self.kv_heads) * self.head_dim, bias=not self.swiglu)
        self.proj = torch.nn.Linear(self.heads * self.head_dim, h, bias=False)
        self.fc1 = torch.nn.Linear(h, ffn * (2 if self.swiglu else 1), bias=not self.swiglu)
        self.fc2 = torch.nn.Linear(ffn, h, bias=False)
        self.tp_group = tp_group

    def forward(self, x):
        b, s, _ = x.shape
        y = _CopyToTP.apply(self.norm1(x), self.tp_group)
        q, k, v = self.qkv(y).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.kv_heads != self.heads:
            rep = self.heads // self.kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        a = causal_attention(q, k, v).transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        x = x + _ReduceFromTP.apply(self.proj(a), self.tp_group)
        y = _CopyToTP.apply(self.norm2(x), self.tp_group)
        z = self.fc1(y)
        if self.swiglu:
            gate, up = z.chunk(2, dim=-1)
            z = F.silu(gate) * up
        else:
            z = F.gelu(z)
        return x + _ReduceFromTP.apply(self.fc2(z), self.tp_group)


class Stage(torch.nn.Module):
    """The layers of one pipeline stage, plus the embedding (first) and the output head (last)."""

    def __init__(self, m, layers, first, last, tp, tp_group):
        super().__init__()
        h = m["hidden"]
        self.embed = torch.nn.Embedding(m["vocab"], h) if first else None
        self.layers = torch.nn.ModuleList([Layer(m, tp, tp_group) for _ in range(layers)])
        self.norm = (RMSNorm(h) if m.get("ffn_act") == "swiglu" else torch.nn.LayerNorm(h)) if last else None
        self.head = torch.nn.Linear(h, m["vocab"], bias=False) if last else None

    def forward(self, x):
        if self.embed is not None:
            x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        if self.head is not None:
            x = self.head(self.norm(x))
        return x


def model_flops_per_token(m, seq_len):
    """Training FLOPs per token counted as Megatron-LM reports them (Narayanan et al. 2021, App. A):
    3 x the forward matmuls, the attention core counted in full, no recompute."""
    h = m["hidden"]
    hd = m.get("head_dim") or h // m["heads"]
    kv = m.get("kv_heads") or m["heads"]
    ffn = m["ffn_hidden"] * (3 if m.get("ffn_act") == "swiglu" else 2)
    per_layer = 2 * h * (m["heads"] + 2 * kv) * hd  # QKV
    per_layer += 2 * 2 * seq_len * m["heads"] * hd  # scores and scores x V
    per_layer += 2 * m["heads"] * hd * h  # output projection
    per_layer += 2 * h * ffn  # MLP
    forward = m["layers"] * per_layer + 2 * h * m["vocab"]
    return 3 * forward


# ----------------------------------------------------------------------------------------------
# Micro-benchmarks


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(fn, device, group=None):
    """Median seconds of fn(). Without a group each rank times on its own; with one (fn is a collective
    over it), the members first agree on one repetition count, since a rank that stopped early would
    leave the others waiting in a collective for ever."""
    for _ in range(BENCH_WARMUP):
        fn()
    sync(device)
    times = []
    if group is None:
        start = time.perf_counter()
        while len(times) < BENCH_MAX_REPS and (len(times) < BENCH_MIN_REPS
                                                or time.perf_counter() - start < BENCH_TARGET_S):
            t0 = time.perf_counter()
            fn()
            sync(device)
            times.append(time.perf_counter() - t0)
    else:
        dist.barrier(group=group)
        t0 = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t0)
        slowest = torch.tensor([times[0]], dtype=torch.float64).to(device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX, group=group)
        reps = int(BENCH_TARGET_S / max(float(slowest.item()), 1e-9))
        reps = max(BENCH_MIN_REPS, min(BENCH_MAX_REPS, reps))
        for _ in range(reps - 1):
            dist.barrier(group=group)
            t0 = time.perf_counter()
            fn()
            sync(device)
            times.append(time.perf_counter() - t0)
    return torch.tensor([statistics.median(times)], dtype=torch.float64)


def gemm_shapes(m, tr, strategy):
    """(name, m, n, k) of one layer's forward GEMMs on one TP rank, with the plan's shapes."""
    tp = int(strategy.get("tp", 1))
    cp = int(strategy.get("cp", 1))
    h = m["hidden"]
    hd = m.get("head_dim") or h // m["heads"]
    kv = m.get("kv_heads") or m["heads"]
    tokens = tr["micro_batch"] * tr["seq_len"] // cp
    ffn = m["ffn_hidden"] * (2 if m.get("ffn_act") == "swiglu" else 1)
    return [
        ("qkv", tokens, (m["heads"] + 2 * kv) * hd // tp, h),
        ("attn_out", tokens, h, m["heads"] * hd // tp),
        ("fc1", tokens, ffn // tp, h),
        ("fc2", tokens, h, m["ffn_hidden"] // tp),
        ("logits", tokens, m["vocab"] // tp, h),
    ]


def bus_factor(op, n):
    """nccl-tests' bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md)."""
    if n <= 1:
        return 0.0
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def run_benchmarks(plan, groups, rank, device, compute_dtype, comm_dtype):
    m = plan["model"]
    tr = plan["training"]
    strategy = plan["strategy"]
    bench = plan.get("bench", {})
    max_bytes = int(bench.get("max_bytes", 64 << 20))

    def reduce_max(t):
        t = t.to(device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    # GEMMs: every rank runs them (they overlap on shared CPUs as they would on a busy node); the
    # slowest rank's median is reported.
    if bench.get("gemm", True):
        for name, mm, nn, kk in gemm_shapes(m, tr, strategy):
            if mm <= 0 or nn <= 0 or kk <= 0:
                continue
            a = torch.randn(mm, kk, device=device, dtype=compute_dtype)
            b = torch.randn(kk, nn, device=device, dtype=compute_dtype)
            t = reduce_max(timed(lambda: torch.matmul(a, b), device))
            if rank == 0:
                emit({"kind": "bench", "op": "gemm", "name": name, "m": mm, "n": nn, "k": kk,
                      "dtype": dtype_name(compute_dtype), "time_s": t, "tflops": 2.0 * mm * nn * kk / t / 1e12})
            del a, b

    h = m["hidden"]
    tokens = tr["micro_batch"] * tr["seq_len"]
    eb = DTYPE_BYTES[dtype_name(comm_dtype)]
    cp = int(strategy.get("cp", 1))
    kv = m.get("kv_heads") or m["heads"]
    hd = m.get("head_dim") or h // m["heads"]
    params_per_rank = plan.get("params_per_model_parallel_rank", 0)
    collectives = [
        # TP: one layer's activation all-reduce (twice per layer forward, Korthikanti et al. 2022).
        ("all_reduce", "tp", tokens // cp * h * eb),
        # DP: a gradient bucket (the plan's gradients per rank, capped).
        ("all_reduce", "dp", params_per_rank * 4 if params_per_rank else 0),
        # CP: the keys and values of one layer gathered around the ring.
        ("all_gather", "cp", tokens // cp * 2 * kv * hd * eb),
        # EP: tokens dispatched to their experts (top-k copies of the hidden state).
        ("all_to_all", "ep", tokens // cp * h * int((m.get("moe") or {}).get("top_k", 1)) * eb),
    ]
    for op, gname, nbytes in collectives:
        if gname == "ep" and "ep" not in groups.mine:
            continue  # every rank has the same group set, so all skip together
        size = groups.size(gname)
        if size <= 1 or nbytes <= 0:
            continue
        nbytes = min(nbytes, max_bytes)
        n = max(size, nbytes // eb // size * size)
        group = groups.group(gname)
        x = torch.ones(n, device=device, dtype=comm_dtype)
        if op == "all_reduce":
            fn = lambda: dist.all_reduce(x, group=group)  # noqa: E731
        elif op == "all_gather":
            chunks = list(torch.empty(n * size, device=device, dtype=comm_dtype).chunk(size))
            fn = lambda: dist.all_gather(chunks, x, group=group)  # noqa: E731
        else:
            if device.type != "cuda" and not hasattr(dist, "all_to_all_single"):
                continue
            out = torch.empty_like(x)
            fn = lambda: dist.all_to_all_single(out, x, group=group)  # noqa: E731
        try:
            t = reduce_max(timed(fn, device, group))
        except RuntimeError as e:  # gloo lacks all_to_all in some builds
            if rank == 0:
                note("%s over %s not benchmarked: %s" % (op, gname, str(e).splitlines()[0]))
            continue
        if rank == 0:
            algbw = n * eb / t / 1e9
            emit({"kind": "bench", "op": op, "group": gname, "ranks": size, "bytes": n * eb, "time_s": t,
                  "alg_GBps": algbw, "bus_GBps": algbw * bus_factor(op, size)})
        del x

    # Pipeline p2p: stage 0 sends one micro-batch's activation to stage 1 (first pipeline only), timed
    # on the sender after the receiver acknowledges.
    if groups.layout.pp > 1:
        nbytes = min(tokens // cp * h * eb, max_bytes)
        n = max(1, nbytes // eb)
        x = torch.ones(n, device=device, dtype=comm_dtype)
        first = groups.layout.rank_of({"tp": 0, "cp": 0, "dp": 0, "pp": 0})
        second = groups.layout.rank_of({"tp": 0, "cp": 0, "dp": 0, "pp": 1})
        times = []
        for i in range(BENCH_WARMUP + BENCH_MIN_REPS * 2):
            dist.barrier()
            t0 = time.perf_counter()
            if rank == first:
                dist.send(x, second)
                dist.recv(x[:1], second)
            elif rank == second:
                dist.recv(x, first)
                dist.send(x[:1], first)
            sync(device)
            if i >= BENCH_WARMUP:
                times.append(time.perf_counter() - t0)
        t = statistics.median(times)
        if rank == 0:
            emit({"kind": "bench", "op": "p2p", "group": "pp", "ranks": 2, "bytes": n * eb, "time_s": t,
                  "alg_GBps": n * eb / t / 1e9, "bus_GBps": n * eb / t / 1e9})
        del x


def dtype_name(dtype):
    return {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[dtype]


# ----------------------------------------------------------------------------------------------
# Training steps


def train(plan, groups, rank, world, device, compute_dtype, power):
    m = plan["model"]
    tr = plan["training"]
    layout = groups.layout
    stage = groups.stage()
    pp = layout.pp
    layers = int(m["layers"])
    if layers % pp != 0:
        raise ValueError("the probe model's %d layers do not divide into %d stages" % (layers, pp))
    first, last = stage == 0, stage == pp - 1
    torch.manual_seed(int(plan.get("seed", 1234)) + stage)
    model = Stage(m, layers // pp, first, last, layout.tp, groups.group("tp")).to(device)
    # Identical weights on every replica and every TP rank of a stage: broadcast from the stage's
    # first rank over the stage's (tp x dp x cp) ranks, as a checkpoint load would give.
    for g in layout.groups(["tp", "dp", "cp"]):
        if rank in g and len(g) > 1:
            for p in model.parameters():
                dist.broadcast(p.data, src=g[0], group=_STAGE_GROUPS[tuple(g)])
    opt_name = plan["strategy"].get("optimizer", "adam")
    if opt_name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=float(tr.get("lr", 1e-4)), momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=float(tr.get("lr", 1e-4)))
    mb, seq, nmicro = int(tr["micro_batch"]), int(tr["seq_len"]), int(tr["microbatches"])
    vocab = int(m["vocab"])
    replicas = layout.dp * layout.cp
    data_rank = layout.coords(rank)["dp"] + layout.dp * layout.coords(rank)["cp"]
    gen = torch.Generator().manual_seed(int(plan.get("seed", 1234)) * 7919 + data_rank)
    prev_rank, next_rank = groups.pp_neighbour(-1), groups.pp_neighbour(+1)
    global_tokens = mb * seq * nmicro * replicas
    global_samples = mb * nmicro * replicas
    flops_per_token = model_flops_per_token(m, seq)
    peak = float(plan.get("gpu", {}).get("peak_TFLOPs", 0) or 0)
    dp_group = groups.group("dp_cp")
    autocast = (torch.autocast(device_type="cuda", dtype=compute_dtype)
                if device.type == "cuda" and compute_dtype != torch.float32 else None)
    steps = int(tr["steps"])
    for step in range(1, steps + 1):
        batches = [torch.randint(0, vocab, (mb, seq + 1), generator=gen) for _ in range(nmicro)]
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        dist.barrier()
        sync(device)
        power.start()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        inputs, outputs, losses = [], [], []
        for i in range(nmicro):  # forward of every micro-batch (GPipe)
            tokens = batches[i].to(device)
            if first:
                x = tokens[:, :-1]
            else:
                x = torch.empty(mb, seq, m["hidden"], device=device, dtype=torch.float32)
                dist.recv(x, prev_rank)
                x.requires_grad_(True)
            if autocast is not None:
                with autocast:
                    y = model(x)
            else:
                y = model(x)
            if last:
                loss = F.cross_entropy(y.float().reshape(-1, vocab), tokens[:, 1:].reshape(-1)) / nmicro
                losses.append(loss.detach())
                outputs.append(loss)
            else:
                y = y.float()
                dist.send(y.detach().contiguous(), next_rank)
                outputs.append(y)
            inputs.append(x)
        for i in reversed(range(nmicro)):  # backward in reverse order
            if last:
                outputs[i].backward()
            else:
                g = torch.empty_like(outputs[i])
                dist.recv(g, next_rank)
                outputs[i].backward(g)
            if not first:
                dist.send(inputs[i].grad.contiguous(), prev_rank)
        if dp_group is not None:  # average gradients over the data-parallel replicas
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            flat = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(flat, group=dp_group)
            flat /= replicas
            offset = 0
            for g in grads:
                g.copy_(flat[offset:offset + g.numel()].view_as(g))
                offset += g.numel()
        opt.step()
        sync(device)
        dt = time.perf_counter() - t0
        watts, joules = power.stop()
        # Reduce over ranks: max step time, max memory, summed loss (only the last stage has one),
        # mean power and energy over the ranks that measured them.
        stats = torch.tensor([
            dt,
            torch.cuda.max_memory_reserved() / 2**30 if device.type == "cuda" else 0.0,
            float(sum(losses)) if last and layout.coords(rank)["tp"] == 0 else 0.0,
            watts if watts is not None else 0.0,
            1.0 if watts is not None else 0.0,
            joules if joules is not None else 0.0,
        ], dtype=torch.float64, device=device)
        mx = stats[:2].clone()
        sm = stats[2:].clone()
        dist.all_reduce(mx, op=dist.ReduceOp.MAX)
        dist.all_reduce(sm)
        if rank == 0:
            step_time = float(mx[0])
            record = {"kind": "step", "step": step, "step_time_s": step_time,
                      "tokens_per_s": global_tokens / step_time / world,
                      "samples_per_s": global_samples / step_time,
                      "loss": float(sm[0]) / (layout.dp * layout.cp)}
            # Per rank: on CPU a "GPU" is one rank's share of the cores.
            record["tflops_per_gpu"] = flops_per_token * global_tokens / step_time / world / 1e12
            if device.type == "cuda":
                if peak > 0:
                    record["mfu"] = record["tflops_per_gpu"] / peak
                record["memory_GiB"] = float(mx[1])
                if float(sm[2]) > 0:
                    record["power_W"] = float(sm[1]) / float(sm[2])
                    record["energy_J"] = float(sm[3]) / float(sm[2])
            emit(record)
    return steps


# The (tp x dp x cp) ranks of each stage, for the initial weight broadcast; created by every rank.
_STAGE_GROUPS = {}


def create_stage_groups(layout):
    for g in layout.groups(["tp", "dp", "cp"]):
        _STAGE_GROUPS[tuple(g)] = dist.new_group(g) if len(g) > 1 else None


# ----------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plan", required=True, help="probe_plan.json written by Parallax")
    ap.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    args = ap.parse_args()
    with open(args.plan, encoding="utf-8") as f:
        plan = json.load(f)
    if int(plan.get("schema", 0)) != PLAN_SCHEMA:
        raise SystemExit("parallax_probe: %s has schema %s, this probe reads %d"
                         % (args.plan, plan.get("schema"), PLAN_SCHEMA))
    device_kind = args.device
    if device_kind == "auto":
        device_kind = "cuda" if torch.cuda.is_available() else "cpu"
    rank, world, local_rank, backend = init_distributed(device_kind)
    device = torch.device("cuda", torch.cuda.current_device()) if device_kind == "cuda" else torch.device("cpu")
    precision = plan["training"].get("precision", "bf16")
    if device.type == "cuda":
        compute_dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    else:
        compute_dtype = torch.float32  # CPU matmuls in bf16 are emulated and slow
    comm_dtype = torch.float32 if device.type == "cpu" else compute_dtype
    exit_state = "ok"
    steps_done = 0
    try:
        layout = Layout(plan["strategy"], world)
        groups = Groups(layout, rank)
        create_stage_groups(layout)
        if rank == 0:
            record = {"kind": "run", "schema": 1, "run_id": plan.get("run_id", ""), "world_size": world,
                      "device": device.type, "backend": backend, "torch": torch.__version__,
                      "host": socket.gethostname(), "dtype": dtype_name(compute_dtype),
                      "strategy": {"tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "cp": layout.cp,
                                   "ep": layout.ep},
                      "schedule": "gpipe", "layers": m_layers(plan), "microbatches": plan["training"]["microbatches"],
                      "notes": "cp trains as data parallel; ep, zero, vpp benchmarked or not modelled"}
            if device.type == "cuda":
                record["gpu"] = torch.cuda.get_device_name(device)
            else:
                record["threads"] = torch.get_num_threads()
            emit(record)
        power = PowerMeter(device.index or 0 if device.type == "cuda" else None)
        run_benchmarks(plan, groups, rank, device, compute_dtype, comm_dtype)
        steps_done = train(plan, groups, rank, world, device, compute_dtype, power)
    except Exception as e:  # report, then fail the job
        exit_state = "error"
        traceback.print_exc()
        if rank == 0:
            emit({"kind": "done", "steps": steps_done, "exit": "error", "error": str(e)[:500]})
        sys.stdout.flush()
        os._exit(1)  # peers may be blocked in a collective; do not wait for them
    if rank == 0:
        emit({"kind": "done", "steps": steps_done, "exit": exit_state})
    dist.barrier()
    dist.destroy_process_group()


def m_layers(plan):
    return int(plan["model"]["layers"])


if __name__ == "__main__":
    main()
