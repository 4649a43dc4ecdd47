//! A channel-system run (a config with `[multichannel]`, seed 004): the units built and
//! preconditioned, the source replayed through the shared buffer, results.json written in
//! the same shape as a drive run's (`run`, `report`, `wall_time`) with the channel system's
//! report (docs/metrics.md, "Multichannel runs").

use crate::{Drive, Outcome, RunObserver, RunPlan, RunSpec, Source};
use ftlsim_core::error::SimError;
use ftlsim_core::multichannel::{ChannelSystem, McOptions};

/// What a channel-system run does not offer yet, refused by name.
fn refuse_unsupported(spec: &RunSpec) -> Result<(), SimError> {
    let no = |what: &str| {
        Err(SimError::Input(format!(
            "{what}: not available for a [multichannel] drive (its channel system runs from a fill or a steady state)"
        )))
    };
    if spec.power_cut.is_some() {
        return no("--power-cut");
    }
    if spec.load_state.is_some() || spec.save_state.is_some() {
        return no("drive snapshots (--load-state, --save-state)");
    }
    if spec.fill_offset != 0.0 {
        return no("--fill-offset");
    }
    Ok(())
}

/// Run a planned spec whose config has `[multichannel]`.
pub fn execute(spec: &RunSpec, p: &RunPlan, obs: &mut dyn RunObserver) -> Result<Outcome, SimError> {
    refuse_unsupported(spec)?;
    let started = std::time::Instant::now();
    let mut sys = ChannelSystem::new(&p.cfg, &ftlsim_ftl::build, spec.verify)?;
    let built_s = started.elapsed().as_secs_f64();
    let pre = &p.precondition;
    obs.notice(&format!(
        "channel system: {} units ({}), preconditioning: fill {:.0}%{}",
        sys.layout().units(),
        p.cfg.multichannel.as_ref().map_or("", |m| m.mode.name()),
        pre.fill * 100.0,
        if pre.steady_state { " + steady state" } else { "" }
    ));
    if let Some(m) = p.cfg.multichannel.as_ref().filter(|m| !m.mode.uses_spare_threshold()) {
        if m.spare_threshold != ftlsim_core::config::MultichannelConfig::default().spare_threshold {
            obs.notice(&format!(
                "multichannel.spare_threshold = {} is not used: N_s is the early-GC threshold of gca and cf, and {} \
                 collects only when a unit must",
                m.spare_threshold,
                m.mode.name()
            ));
        }
    }
    let t = std::time::Instant::now();
    sys.precondition(pre.fill, pre.steady_state, spec.seed)?;
    let precondition_s = t.elapsed().as_secs_f64();
    let opts = McOptions { interval_ns: spec.interval_ns, check_every: 0 };
    let logical = sys.logical_bytes();
    let t = std::time::Instant::now();
    let (report, trace_info) = match &spec.source {
        Source::Synthetic(_) => (sys.run(&mut crate::synthetic(p, logical, spec.seed, obs)?, &opts, obs)?, None),
        Source::Trace { path, options, .. } => {
            let mut src = crate::open_trace(path, options, p, logical, obs)?;
            (sys.run(&mut src, &opts, obs)?, Some(crate::trace_json(&src, options)))
        }
    };
    let replay_s = t.elapsed().as_secs_f64();
    if report.host.requests == 0 {
        return Err(SimError::Input(
            "the source gave no write request (a channel-system run replays writes only)".into(),
        ));
    }
    let requests = report.host.requests;
    let wall = serde_json::json!({
        "build_s": built_s,
        "precondition_s": precondition_s,
        "replay_s": replay_s,
        "total_s": started.elapsed().as_secs_f64(),
        "replay_requests_per_s": if replay_s > 0.0 { (requests as f64 / replay_s).round() } else { 0.0 },
        "peak_rss_bytes": crate::memory::peak_rss_bytes(),
    });
    let pre = serde_json::to_value(pre).expect("preconditioning serialises");
    let mut json = crate::result_json(p, spec.seed, pre, &report, wall);
    json["run"]["multichannel"] = serde_json::to_value(&p.cfg.multichannel).expect("config serialises");
    if let Drive::Preset(name) = &spec.drive {
        json["run"]["preset"] = name.clone().into();
    }
    if let Some(info) = trace_info {
        json["run"]["trace"] = info;
        json["run"]["workload"] = serde_json::Value::Null;
        json["run"]["workload_spec"] = serde_json::Value::Null;
    }
    Ok(Outcome { report: None, json })
}
