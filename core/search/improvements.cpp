#include "search/improvements.hpp"

#include "model/analytic_model.hpp"
#include "model/data_path.hpp"
#include "power/clock_planner.hpp"
#include "spec/framework_support.hpp"

#include <cmath>

namespace parallax {

namespace {

// A choice must move the step or the energy by more than this fraction to be listed (below: noise).
constexpr double kListedFraction = 1e-3;

struct Outcome {
    Prediction prediction;
    double energy_J = 0;
};

Outcome predict(const Scenario& sc, const Calibration& cal)
{
    const PlanContext ctx(sc.model, sc.training, sc.cluster, cal);
    Outcome o;
    o.prediction = AnalyticModel(ctx).predict(sc.strategy);
    o.energy_J = o.prediction.power.energy_J_per_step;
    return o;
}

class Waterfall {
public:
    Waterfall(const Scenario& sc, const Calibration& cal)
        : m_cal(cal)
    {
        m_out.improved = sc;
        m_current = predict(sc, cal);
        m_out.baseline_step_time_s = m_current.prediction.step_time_s;
        m_out.baseline_energy_J = m_current.energy_J;
        m_out.baseline_feasible = m_current.prediction.feasible;
    }

    const Scenario& scenario() const { return m_out.improved; }
    const Prediction& current() const { return m_current.prediction; }

    // Applies `next` when it is feasible and moves something (or makes an infeasible plan fit); the
    // listed step, or nullptr.
    Improvement* apply(const Scenario& next, std::string name, std::string change, std::string note)
    {
        Outcome o = predict(next, m_cal);
        if (!o.prediction.feasible)
            return nullptr;
        const bool fits_now = !m_current.prediction.feasible;
        const double dt = m_current.prediction.step_time_s - o.prediction.step_time_s;
        const double de = m_current.energy_J - o.energy_J;
        if (!fits_now && std::fabs(dt) <= kListedFraction * m_current.prediction.step_time_s
            && std::fabs(de) <= kListedFraction * m_current.energy_J)
            return nullptr;
        Improvement i;
        i.name = std::move(name);
        i.change = std::move(change);
        i.step_time_s_saved = fits_now ? 0 : dt;
        i.energy_J_saved = fits_now ? 0 : de;
        i.step_time_s = o.prediction.step_time_s;
        i.energy_J = o.energy_J;
        i.note = std::move(note);
        m_out.steps.push_back(std::move(i));
        m_out.improved = next;
        m_current = std::move(o);
        return &m_out.steps.back();
    }

    // A choice the plan already makes and needs: listed with its price, nothing changes.
    void price(std::string name, double step_s, double energy_J, std::string note)
    {
        Improvement i;
        i.name = std::move(name);
        i.step_time_s_saved = -step_s;
        i.energy_J_saved = -energy_J;
        i.step_time_s = m_current.prediction.step_time_s;
        i.energy_J = m_current.energy_J;
        i.note = std::move(note);
        m_out.steps.push_back(std::move(i));
    }

    ImprovementWaterfall take() { return std::move(m_out); }

private:
    const Calibration& m_cal;
    ImprovementWaterfall m_out;
    Outcome m_current;
};

void better_loader(Waterfall& w, const Calibration& cal)
{
    const Scenario& sc = w.scenario();
    if (!w.current().feasible || !(w.current().time.data_stall_s > 0))
        return;
    const PlanContext ctx(sc.model, sc.training, sc.cluster, cal);
    const double gpu_step = w.current().step_time_s - w.current().time.data_stall_s;
    const DataPathCost d = data_path_cost(ctx, sc.strategy, gpu_step, w.current().time.offload_s);
    if (d.workers_to_hide <= sc.training.data.workers)
        return; // storage- or copy-bound, or the node lacks the cores: more workers do not help
    Scenario next = sc;
    next.training.data.workers = d.workers_to_hide;
    w.apply(next, "better loader",
        "training.data.workers " + std::to_string(sc.training.data.workers) + " -> "
            + std::to_string(d.workers_to_hide),
        "tokenisation kept up with the GPUs by more loader workers");
}

void optimizer_offload(Waterfall& w)
{
    const Scenario& sc = w.scenario();
    Scenario next = sc;
    next.strategy.offload_optimizer = !sc.strategy.offload_optimizer;
    const Prediction& p = w.current();
    const double gpus = static_cast<double>(sc.strategy.total_gpus());
    if (sc.strategy.offload_optimizer) {
        if (!w.apply(next, "optimizer offload", "strategy.offload_optimizer true -> false",
                "the plan fits in GPU memory without it: no PCIe copies or CPU Adam step")
            && p.feasible && p.time.offload_s > 0)
            w.price("optimizer offload", p.time.offload_s, p.time.offload_s * p.power.avg_W_per_gpu * gpus,
                "needed: without it the plan does not fit in GPU memory");
        return;
    }
    if (w.current().feasible || sc.strategy.zero < 1)
        return;
    Improvement* i = w.apply(next, "optimizer offload", "strategy.offload_optimizer false -> true",
        "makes the plan fit: optimizer states in host memory, updated by CPU Adam");
    if (!i)
        return;
    // The price, against the same plan were its memory enough: the offload's share of the step.
    const Prediction& fitted = w.current();
    i->step_time_s_saved = -fitted.time.offload_s;
    i->energy_J_saved = -fitted.time.offload_s * fitted.power.avg_W_per_gpu * gpus;
}

// One offload to host memory beyond the optimizer's (activations, parameters): off when the plan fits
// without it; on, with its price, when only it makes the plan fit.
struct HostOffloadChoice {
    const char* name; // "activation offload"
    const char* key; // "strategy.offload_activations"
    bool Strategy::*flag;
    bool runs; // the plan and its framework can take it
    const char* fits_note; // what it does when it makes the plan fit
};

void host_offload(Waterfall& w, const Calibration& cal, const HostOffloadChoice& c)
{
    const Scenario& sc = w.scenario();
    Scenario next = sc;
    const bool on = sc.strategy.*c.flag;
    next.strategy.*c.flag = !on;
    const double gpus = static_cast<double>(sc.strategy.total_gpus());
    const std::string change = std::string(c.key) + (on ? " true -> false" : " false -> true");
    if (on) {
        const Prediction p = w.current();
        const double price = p.step_time_s - predict(next, cal).prediction.step_time_s;
        if (!w.apply(next, c.name, change, "the plan fits in GPU memory without it: no host copies") && p.feasible
            && price > 0)
            w.price(c.name, price, price * p.power.avg_W_per_gpu * gpus,
                "needed: without it the plan does not fit in GPU memory");
        return;
    }
    if (w.current().feasible || !c.runs)
        return;
    const double without_s = w.current().step_time_s;
    Improvement* i = w.apply(next, c.name, change, c.fits_note);
    if (!i)
        return;
    // The price, against the same plan were its memory enough.
    const Prediction& fitted = w.current();
    i->step_time_s_saved = without_s - fitted.step_time_s;
    i->energy_J_saved = i->step_time_s_saved * fitted.power.avg_W_per_gpu * gpus;
}

void host_offloads(Waterfall& w, const Calibration& cal)
{
    const Strategy& s = w.scenario().strategy;
    const FrameworkRelease f = w.scenario().training.framework;
    host_offload(w, cal,
        { "activation offload", "strategy.offload_activations", &Strategy::offload_activations,
            framework_supports_activation_offload(f, s.pp, s.recompute),
            "makes the plan fit: each layer's activations go to host memory until its backward" });
    const Strategy& t = w.scenario().strategy;
    host_offload(w, cal,
        { "parameter offload", "strategy.offload_params", &Strategy::offload_params,
            t.zero >= 3 && framework_supports_param_offload(f),
            "makes the plan fit: parameters, gradients and optimizer states in host memory (ZeRO-Infinity)" });
}

void fused_tp_overlap(Waterfall& w)
{
    const Scenario& sc = w.scenario();
    if (sc.strategy.tp <= 1 || sc.strategy.tp_comm_overlap || !w.current().feasible
        || !framework_supports_tp_comm_overlap(sc.training.framework))
        return;
    Scenario next = sc;
    next.strategy.tp_comm_overlap = true;
    const char* how = sc.training.framework == Framework::megatron
        ? "Transformer Engine userbuffers split each TP collective into tiles under its GEMM"
        : "PyTorch async TP fuses the all-gather / reduce-scatter with the matmuls around them";
    w.apply(next, "fused TP overlap", "strategy.tp_comm_overlap false -> true", how);
}

void fused_ep_overlap(Waterfall& w)
{
    const Scenario& sc = w.scenario();
    if (!sc.model.is_moe() || sc.strategy.ep <= 1 || sc.strategy.ep_tile_overlap || !w.current().feasible
        || !framework_supports_ep_tile_overlap(sc.training.framework))
        return;
    Scenario next = sc;
    next.strategy.ep_tile_overlap = true;
    w.apply(next, "fused EP overlap", "strategy.ep_tile_overlap false -> true",
        "the expert dispatch and combine move tile by tile under the grouped GEMMs (Comet)");
}

void stage_clocks(Waterfall& w, const Calibration& cal)
{
    const Scenario& sc = w.scenario();
    if (!w.current().feasible || sc.strategy.pp <= 1 || !(sc.cluster.gpu.clock_MHz > 0)
        || !sc.training.stage_clock_MHz.empty())
        return;
    ClockPlanOptions o;
    o.verify_simulated = false;
    o.calibration = &cal;
    const ClockPlan plan = plan_stage_clocks(sc, o);
    if (plan.moves == 0)
        return;
    Scenario next = sc;
    next.training.stage_clock_MHz = plan.stage_clock_MHz;
    std::string clocks;
    for (double c : plan.stage_clock_MHz)
        clocks += (clocks.empty() ? "" : ", ") + std::to_string(static_cast<long long>(std::lround(c)));
    w.apply(next, "per-stage clocks", "training.stage_clock_MHz [" + clocks + "]",
        "stages off the critical path run slower and arrive just in time (Perseus)");
}

} // namespace

ImprovementWaterfall plan_improvements(const Scenario& sc, const Calibration& calibration)
{
    Waterfall w(sc, calibration);
    better_loader(w, calibration);
    optimizer_offload(w);
    host_offloads(w, calibration);
    fused_tp_overlap(w);
    fused_ep_overlap(w);
    stage_clocks(w, calibration);
    return w.take();
}

} // namespace parallax
