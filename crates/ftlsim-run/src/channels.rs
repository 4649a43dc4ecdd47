//! A channel-system run (a config with `[multichannel]`, seed 004): the units built and
//! preconditioned, the source replayed through the shared buffer, results.json written in
//! the same shape as a drive run's (`run`, `report`, `wall_time`) with the channel system's
//! report (docs/metrics.md, "Multichannel runs").

use crate::{Drive, Outcome, RunObserver, RunPlan, RunSpec, Source};
use ftlsim_core::error::SimError;
use ftlsim_core::multichannel::{ChannelSystem, McOptions};

use crate::PowerCut;

/// What a channel-system run does not offer, refused by name.
fn refuse_unsupported(spec: &RunSpec) -> Result<(), SimError> {
    if let Some(PowerCut::Random(_)) = spec.power_cut {
        return Err(SimError::Input(
            "--power-cut random:N: not available for a [multichannel] drive (a channel-system run ends at its cut); \
             give one cut: --power-cut N (the N-th request) or --power-cut TIME"
                .into(),
        ));
    }
    Ok(())
}

/// Run a planned spec whose config has `[multichannel]`: build, precondition or load a
/// snapshot (and save one), replay, cut the power if asked, as a drive run does.
pub fn execute(spec: &RunSpec, p: &RunPlan, obs: &mut dyn RunObserver) -> Result<Outcome, SimError> {
    refuse_unsupported(spec)?;
    let started = std::time::Instant::now();
    let mut sys = ChannelSystem::new(&p.cfg, &ftlsim_ftl::build_for, spec.verify)?;
    let cut = match spec.power_cut {
        Some(PowerCut::At(at)) => Some(at),
        _ => None,
    };
    if cut.is_some() {
        // Recovery reads program stamps from the spare areas; they are written from the start.
        sys.keep_program_stamps();
    }
    let built_s = started.elapsed().as_secs_f64();
    let pre = &p.precondition;
    note_unused_spare_threshold(p, obs);
    let (_, save) = spec.outputs(p)?;
    let mut snapshot = None;
    let t = std::time::Instant::now();
    let precondition = match &spec.load_state {
        Some(path) => {
            let h = sys.load_state(path)?;
            if cut.is_some() && !sys.keeps_program_stamps() {
                return Err(crate::unstamped_snapshot(path));
            }
            obs.notice(&format!(
                "loaded channel-system state from {} (preconditioned: {})",
                path.display(),
                h.precondition
            ));
            serde_json::json!({ "loaded_from": path.display().to_string(), "saved_with": h.precondition })
        }
        None => {
            sys.precondition(pre, obs)?;
            let pre = serde_json::to_value(pre).expect("preconditioning serialises");
            if let Some(to) = &save {
                snapshot = Some(sys.stage_state(to, serde_json::json!({ "seed": spec.seed, "precondition": pre }))?);
                obs.notice(&format!(
                    "channel-system state written for {} (kept once the run succeeds)",
                    to.shown().display()
                ));
            }
            pre
        }
    };
    if cut.is_some() && spec.clean_shutdown {
        sys.clean_shutdown()?;
    }
    let precondition_s = t.elapsed().as_secs_f64();
    let opts = McOptions { interval_ns: spec.interval_ns, check_every: 0, power_cut: cut };
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
    if report.host.requests == 0 && report.power_cut.is_none() {
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
    let json = channel_json(spec, p, cut, &report, precondition, wall, trace_info, obs);
    Ok(Outcome { report: None, json, snapshot })
}

/// The notice that `multichannel.spare_threshold` is set where its mode has no use for it.
fn note_unused_spare_threshold(p: &RunPlan, obs: &mut dyn RunObserver) {
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
}

/// results.json of a channel-system run: a drive run's shape, with the cut, the
/// `[multichannel]` section and the trace.
#[allow(clippy::too_many_arguments)]
fn channel_json(
    spec: &RunSpec,
    p: &RunPlan,
    cut: Option<ftlsim_core::sim::CutAt>,
    report: &ftlsim_core::multichannel::report::McReport,
    precondition: serde_json::Value,
    wall: serde_json::Value,
    trace_info: Option<serde_json::Value>,
    obs: &mut dyn RunObserver,
) -> serde_json::Value {
    let mut json = crate::result_json(p, spec.seed, precondition, report, wall);
    if let Some(at) = cut {
        json["run"]["power_cut"] = serde_json::to_value(at).expect("cut serialises");
        json["run"]["power_cut_reached"] = report.power_cut.is_some().into();
        json["run"]["clean_shutdown"] = spec.clean_shutdown.into();
        if report.power_cut.is_none() {
            obs.notice("power cut: the run ended before the cut instant; nothing was cut");
        }
    }
    json["run"]["multichannel"] = serde_json::to_value(&p.cfg.multichannel).expect("config serialises");
    if let Drive::Preset(name) = &spec.drive {
        json["run"]["preset"] = name.clone().into();
    }
    if let Some(info) = trace_info {
        json["run"]["trace"] = info;
        json["run"]["workload"] = serde_json::Value::Null;
        json["run"]["workload_spec"] = serde_json::Value::Null;
    }
    json
}
