//! The shape of results.json, shared by every front.

use crate::RunPlan;
use ftlsim_core::sim::WallTimes;
use serde_json::{json, Value};

/// Wall-clock time of a run by stage, with the replay rate (`wall_time` in results.json).
pub fn wall_time_json(w: &WallTimes, total_s: f64, requests: u64) -> Value {
    let mut v = serde_json::to_value(w).expect("wall times serialise");
    v["total_s"] = total_s.into();
    v["replay_requests_per_s"] = (if w.replay_s > 0.0 { (requests as f64 / w.replay_s).round() } else { 0.0 }).into();
    v
}

/// The JSON written to results.json: what was run, the report, and the wall time by stage
/// (the only part that differs between identical runs).
pub fn result_json(p: &RunPlan, seed: u64, precondition: Value, report: &impl serde::Serialize, wall: Value) -> Value {
    json!({
        "run": {
            "drive": p.cfg.name,
            "ftl": p.cfg.ftl.name,
            "workload": p.workload,
            "workload_spec": p.workload_text,
            "seed": seed,
            "precondition": precondition,
            "replay": p.opts.replay,
        },
        "report": report,
        "wall_time": wall,
    })
}
