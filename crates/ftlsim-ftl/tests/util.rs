//! Helpers shared by the FTL integration tests.

use ftlsim_core::config::{DriveConfig, Resolved};
use ftlsim_core::error::RequestError;
use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, Report, RunOptions, Simulator};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use proptest::prelude::*;

/// A small drive: 2 channels x 1 chip x 1 die x 2 planes, `blocks` blocks of `ppb` pages of
/// 4 KiB, PCFTL-like timing, `share` over-provisioning; `extra` TOML lines are appended to
/// the `[ftl]`, `[timing]`, `[nand]` or `[host]` sections by prefixing them with the header.
pub fn small_config(blocks: u32, ppb: u32, share: f64, extra: &str) -> DriveConfig {
    let text = format!(
        r#"
name = "small"
source = "test"
[geometry]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = {blocks}
pages_per_block = {ppb}
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = {share}
[timing]
cmd_addr_ns = 100
channel_mb_per_s = 81.92
t_r_ns = 25000
t_prog_ns = 200000
t_bers_ns = 1500000
{extra}
"#
    );
    DriveConfig::from_toml(&text, "test config")
        .and_then(Resolved::validate)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .into_cfg()
}

/// `cfg` resolved as a run resolves it (`ftlsim_ftl::resolve`): what the constructors take.
pub fn resolved(cfg: &DriveConfig) -> Resolved {
    ftlsim_ftl::resolve(cfg.clone()).unwrap_or_else(|e| panic!("{e}"))
}

/// `cfg` with `KEY=VALUE` overrides, checked, as `--set` gives it.
pub fn overridden(
    cfg: &DriveConfig,
    sets: &[(String, String)],
) -> Result<DriveConfig, ftlsim_core::error::ConfigError> {
    cfg.with_overrides(sets, Resolved::validate).map(Resolved::into_cfg)
}

/// Set the dotted config key `key` to the TOML value `value`, as `--set` does.
pub fn set(cfg: &mut DriveConfig, key: &str, value: &str) {
    *cfg = overridden(cfg, &[(key.into(), value.into())]).unwrap_or_else(|e| panic!("{key} = {value}: {e}"));
}

/// The small drive of [`small_config`] (`blocks` blocks of `ppb` pages per plane) for the
/// registered FTL `f`, its `[ftl]` section continued by `ftl_lines` (which may open other
/// sections after it): the over-provisioning the blocks it keeps open need beside GC's room
/// (from its capabilities, never its name), a quarter of the drive at least; the drive
/// fitted to it (`fit_drive`); the reliability model where it needs one.
pub fn drive_for(f: &ftlsim_ftl::FtlInfo, blocks: u32, ppb: u32, ftl_lines: &str) -> DriveConfig {
    let text = format!("[ftl]\nname = \"{}\"\n{ftl_lines}", f.name);
    let open = (f.capabilities.open_blocks_per_plane)(&small_config(blocks, ppb, 0.25, &text));
    // The open blocks, the GC threshold, and a few to collect in.
    let spare = (open + 6).max(blocks / 4);
    let mut cfg = small_config(blocks, ppb, f64::from(spare) / f64::from(blocks), &text);
    (f.capabilities.fit_drive)(&mut cfg);
    if f.capabilities.needs_reliability && cfg.reliability.is_none() {
        cfg.reliability = Some(Default::default());
    }
    cfg
}

/// Read every logical page of 4 KiB once, in order, one page per request.
pub fn read_all(logical_pages: u32) -> impl Iterator<Item = Result<Request, RequestError>> {
    read_every_page(logical_pages, 8)
}

/// Read every logical page of `spp` sectors once, in order, one page per request.
pub fn read_every_page(logical_pages: u32, spp: u32) -> impl Iterator<Item = Result<Request, RequestError>> {
    (0..logical_pages).map(move |p| {
        Ok(Request {
            arrival_ns: 0,
            think_ns: 0,
            device: 0,
            offset_sector: u64::from(p * spp),
            sectors: spp,
            op: IoOp::Read,
        })
    })
}

/// One data-oracle run of a demand-based FTL with a tiny cache: a 64-block drive with
/// `page_size`-byte pages (small pages give several translation pages), filled to steady
/// state, then 3,000 requests of 1-8 sectors checked read by read and by the invariants,
/// then every page read back. `ftl` holds the `[ftl]` lines (name, cache, victim policy).
/// The run must write translation pages back, or the cache was not tiny.
pub fn run_demand(
    ftl: &str,
    page_size: u32,
    seed: u64,
    pattern: &str,
    read: f64,
    trim: f64,
    open_loop: bool,
) -> Result<(), String> {
    let cfg = small_config(64, 16, 0.3, &format!("[ftl]\n{ftl}\n[host]\nqueue_depth = 8"));
    run_demand_with(cfg, page_size, seed, pattern, read, trim, open_loop)
}

/// [`run_demand`] on a given drive config (its page size replaced by `page_size`).
pub fn run_demand_with(
    mut cfg: DriveConfig,
    page_size: u32,
    seed: u64,
    pattern: &str,
    read: f64,
    trim: f64,
    open_loop: bool,
) -> Result<(), String> {
    cfg.geometry.page_size_bytes = page_size;
    let logical = ftlsim_ftl::resolve(cfg.clone()).map_err(|e| e.to_string())?.derived().logical_pages;
    let mut sim = ftlsim_ftl::simulator(cfg, true).map_err(|e| e.to_string())?;
    sim.precondition(&Precondition {
        fill: 1.0,
        steady_state: true,
        max_overwrite_passes: 1.0,
        seed,
        fill_offset: 0.0,
        overwrite_span: 0.0,
        trim_to: None,
    })
    .map_err(|e| e.to_string())?;
    let arrival = if open_loop { "poisson:400us" } else { "closed:8" };
    let spec = WorkloadSpec::parse(&format!(
        "pattern={pattern},read={read},trim={trim},size=512@4|1k@1|4k@1,align=512,arrival={arrival},requests=3000"
    ))
    .map_err(|e| e.to_string())?;
    let bytes = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, bytes, seed).map_err(|e| e.to_string())?.map(Ok);
    let replay = if open_loop { Replay::Open { time_scale: 1.0 } } else { Replay::Closed { queue_depth: 8 } };
    let opts = RunOptions { replay, check_every: 53, interval_ns: 0, ..RunOptions::default() };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).map_err(|e| e.to_string())?;
    if r.host.writes > 100 && r.flash.programs.mapping == 0 {
        return Err("a tiny cache must write translation pages back".into());
    }
    sim.check_invariants();
    let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
    sim.run(&mut read_every_page(logical, page_size / 512), &back, &mut NoObserver).map_err(|e| e.to_string())?;
    sim.check_invariants();
    Ok(())
}

/// The workload and preconditioning of one randomised data-oracle run.
#[derive(Debug, Clone)]
pub struct Mix {
    pub seed: u64,
    pub open_loop: bool,
    pub read: f64,
    pub trim: f64,
    pub pattern: &'static str,
    pub fill: f64,
}

/// Mixed sizes (partial pages, single pages and multi-page runs), reads, trims, patterns,
/// open or closed loop, and a fill from empty to full (steady state above one half).
pub fn mix() -> impl Strategy<Value = Mix> {
    (
        any::<u64>(),
        (any::<bool>(), 0.0..0.5f64, 0.0..0.15f64),
        (prop::sample::select(vec!["uniform", "hotcold:0.8:0.2", "zipf:0.9", "sequential"]), 0.0..1.0f64),
    )
        .prop_map(|(seed, (open_loop, read, trim), (pattern, fill))| Mix {
            seed,
            open_loop,
            read,
            trim,
            pattern,
            fill,
        })
}

/// Precondition a verifying simulator of `cfg` as `m` says, run `requests` requests of `m`
/// at queue depth 8 (the drive's `host.queue_depth` for open loop) checking every read and
/// the invariants every 61 requests, then read every logical page back. Returns the
/// simulator and the report of the mixed run for further checks.
pub fn run_oracle(cfg: DriveConfig, m: &Mix, requests: u64) -> Result<(Simulator, Report), String> {
    oracle_on(ftlsim_ftl::simulator(cfg, true).map_err(|e| e.to_string())?, m, requests)
}

/// [`run_oracle`] on a verifying simulator already built (e.g. of an FTL no name gives).
pub fn oracle_on(mut sim: Simulator, m: &Mix, requests: u64) -> Result<(Simulator, Report), String> {
    let logical = sim.derived().logical_pages;
    sim.precondition(&Precondition {
        fill: m.fill,
        steady_state: m.fill > 0.5,
        max_overwrite_passes: 1.0,
        seed: m.seed,
        fill_offset: 0.0,
        overwrite_span: 0.0,
        trim_to: None,
    })
    .map_err(|e| e.to_string())?;
    let arrival = if m.open_loop { "poisson:300us" } else { "closed:8" };
    let spec = WorkloadSpec::parse(&format!(
        "pattern={},read={},trim={},size=512@1|4k@4|8k@2|12k@1|64k@0.3,arrival={arrival},requests={requests},align=512",
        m.pattern, m.read, m.trim
    ))
    .map_err(|e| e.to_string())?;
    let logical_bytes = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, logical_bytes, m.seed).map_err(|e| e.to_string())?.map(Ok);
    let replay = if m.open_loop { Replay::Open { time_scale: 1.0 } } else { Replay::Closed { queue_depth: 8 } };
    let opts = RunOptions { replay, check_every: 61, interval_ns: 1_000_000, ..RunOptions::default() };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).map_err(|e| e.to_string())?;
    if r.host.requests != requests {
        return Err(format!("{} of {requests} requests completed", r.host.requests));
    }
    sim.check_invariants();
    // Nothing acknowledged is lost: every page reads back its newest version.
    let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
    sim.run(&mut read_all(logical), &back, &mut NoObserver).map_err(|e| e.to_string())?;
    Ok((sim, r))
}

/// An FTL metric counter of a report, by name (panics naming it when absent).
pub fn metric(r: &Report, k: &str) -> u64 {
    r.ftl_metrics.get(k).and_then(|v| v.as_u64()).unwrap_or_else(|| panic!("no metric {k}"))
}

/// An observer keeping every time-series row.
#[derive(Default)]
pub struct Rows(pub Vec<ftlsim_core::metrics::IntervalRow>);

impl ftlsim_core::metrics::Observer for Rows {
    fn interval(&mut self, row: &ftlsim_core::metrics::IntervalRow) {
        self.0.push(row.clone());
    }
}

/// A zoned host's requests over `zones` zones of `zone_pages` pages: writes of 1-4 pages at the
/// write pointer of one of four zones it keeps open, a zone reset when one fills (or at random),
/// finishes, and reads of any page, `requests` of them from `seed`. Its write pointers are its
/// own idea: after a cut the drive's may differ, and what it refuses is counted, not fatal.
pub fn zoned_stream(
    zones: u64,
    zone_pages: u64,
    requests: u64,
    seed: u64,
) -> impl Iterator<Item = Result<Request, RequestError>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut wp = vec![0u64; zones as usize];
    let req = |op, first_page: u64, pages: u64| {
        Ok(Request {
            arrival_ns: 0,
            think_ns: 0,
            device: 0,
            offset_sector: first_page * 8,
            sectors: (pages * 8) as u32,
            op,
        })
    };
    (0..requests).map(move |_| {
        let z = rng.gen_range(0..4.min(zones));
        let zone_start = z * zone_pages;
        let roll: f64 = rng.gen();
        if roll < 0.55 {
            let n = rng.gen_range(1..=4u64);
            if wp[z as usize] + n > zone_pages {
                wp[z as usize] = 0;
                return req(IoOp::ZoneReset, zone_start, 0);
            }
            wp[z as usize] += n;
            req(IoOp::Write, zone_start + wp[z as usize] - n, n)
        } else if roll < 0.9 {
            req(IoOp::Read, rng.gen_range(0..zones * zone_pages), 1)
        } else if roll < 0.95 {
            wp[z as usize] = zone_pages;
            req(IoOp::ZoneFinish, zone_start, 0)
        } else {
            wp[z as usize] = 0;
            req(IoOp::ZoneReset, zone_start, 0)
        }
    })
}
