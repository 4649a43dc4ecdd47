//! Preconditioning: a sequential fill, then optional random overwrites until the write
//! amplification settles. Functional (no timing), through the FTL's own write path.
//!
//! Steady state (docs/metrics.md, `precondition`): the overwrites are measured in windows
//! of half a pass over the filled range; the drive has settled when, after at least one
//! whole pass, the WAF of the last two windows differ by at most 1% of the last one and GC
//! ran in both. Half a pass is long enough that the bursts of a foreground GC (several
//! victims at once on the `default` drive) fall evenly into every window, and one pass
//! means every page was rewritten at least once on average, so the fill's sequential layout
//! is gone. A drive that has not settled when `max_overwrite_passes` is reached says so.
//!
//! `trim_to` then trims pages of the written range, in a seeded random order, until that
//! share of the logical space holds data: the thesis's general case (seed 001 L1394-1396), a
//! drive written over "thoroughly several times" whose file system has since freed space, so
//! every translation page has been written and the valid share is what the run asks.

use super::FlashTime;
use super::Simulator;
use crate::error::SimError;
use crate::ftl::PrefetchStage;
use crate::geometry::Lpn;
use crate::metrics::{r6, Observer};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Preconditioning: a sequential fill, then optional random overwrites until the write
/// amplification settles. Functional (no timing), through the FTL's own write path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    /// Share of the logical space written sequentially, [0, 1].
    pub fill: f64,
    /// Share of the logical space, from its start, the fill leaves unwritten before it starts
    /// (`fill + fill_offset <= 1`): a workload addressing that region starts on a full drive
    /// with its own first writes new.
    pub fill_offset: f64,
    /// Overwrite the filled range uniformly at random until WAF settles.
    pub steady_state: bool,
    /// Share of the logical space, from its start, that the steady-state overwrites address
    /// instead of the filled range; 0 = the filled range. Passes and windows count in its
    /// pages. With `fill_offset` equal to it, a workload's region is written by random writes
    /// alone (as the workload itself would have written it: WAFTL then holds it page-mapped)
    /// and aged, beside cold data written sequentially.
    #[serde(default)]
    pub overwrite_span: f64,
    /// Cap on random overwrites, as a multiple of the filled pages.
    pub max_overwrite_passes: f64,
    /// After the fill and overwrites, trim written pages at random until this share of the
    /// logical space is valid; `None`: trim nothing.
    #[serde(default)]
    pub trim_to: Option<f64>,
    /// Seed of the overwrite addresses.
    pub seed: u64,
}

impl Default for Precondition {
    fn default() -> Self {
        Precondition {
            fill: 0.0,
            fill_offset: 0.0,
            steady_state: false,
            overwrite_span: 0.0,
            max_overwrite_passes: 4.0,
            trim_to: None,
            seed: 0,
        }
    }
}

/// Overwrites per window, as a share of the filled pages.
const WINDOW_PASSES: f64 = 0.5;
/// Overwrite passes before the drive may be called settled.
const MIN_PASSES: f64 = 1.0;
/// Largest relative difference of the last two windows' WAF for steady state.
const SETTLE_TOLERANCE: f64 = 0.01;

/// What preconditioning did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PreconditionReport {
    /// Pages written by the sequential fill.
    pub fill_pages: u64,
    /// Pages written by random overwrites.
    pub overwrite_pages: u64,
    /// Overwrite passes: overwrite pages / fill pages.
    pub overwrite_passes: f64,
    /// Overwrites per measurement window (half a pass).
    pub window_pages: u64,
    /// WAF (pages programmed / pages written) of each window, in order.
    pub window_waf: Vec<f64>,
    /// WAF of the last window; 0 without overwrites.
    pub final_waf: f64,
    /// Whether the WAF settled; false if the overwrite cap came first (or there were no
    /// overwrites).
    pub settled: bool,
    /// Pages trimmed by `trim_to`.
    #[serde(default)]
    pub trimmed_pages: u64,
}

impl PreconditionReport {
    /// Whether windows `a` then `b` (WAF, and whether GC ran in each) show steady state.
    fn steady(a: (f64, bool), b: (f64, bool)) -> bool {
        a.1 && b.1 && (b.0 - a.0).abs() <= SETTLE_TOLERANCE * b.0
    }
}

/// What preconditioning writes through: a drive ([`Simulator`]) or a channel system's units
/// ([`crate::multichannel::ChannelSystem`]), so both age by the same fill and steady-state
/// test.
pub trait Preconditioned {
    /// Logical pages of the address space preconditioning covers.
    fn logical_pages(&self) -> u64;
    /// Write `lpn` once more, functionally, through the FTL's own write path.
    fn write_page(&mut self, lpn: Lpn) -> Result<(), SimError>;
    /// Trim `lpn`, functionally, through the FTL's own trim path.
    fn trim_page(&mut self, lpn: Lpn) -> Result<(), SimError>;
    /// `lpn` will be written soon: the FTL may fetch its state ahead (`stage`).
    fn prefetch(&self, _lpn: Lpn, _stage: PrefetchStage) {}
    /// Pages programmed so far, all flash.
    fn pages_programmed(&self) -> u64;
    /// GC collections so far.
    fn collections(&self) -> u64;
}

/// Wall time of the two phases, seconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreconditionWall {
    /// The sequential fill.
    pub fill_s: f64,
    /// The steady-state overwrites and the trims after them.
    pub steady_state_s: f64,
}

/// Precondition `t` by `p` (module header), reporting pages written to `obs`.
pub fn precondition_target<T: Preconditioned + ?Sized>(
    t: &mut T,
    p: &Precondition,
    obs: &mut dyn Observer,
) -> Result<(PreconditionReport, PreconditionWall), SimError> {
    check(p)?;
    let logical = t.logical_pages();
    let filled = (logical as f64 * p.fill) as u64;
    let start = ((logical as f64 * p.fill_offset) as u64).min(logical - filled);
    let (aged_from, aged) = if p.overwrite_span > 0.0 {
        (0, ((logical as f64 * p.overwrite_span) as u64).clamp(1, logical))
    } else {
        (start, filled)
    };
    let mut rep = PreconditionReport { fill_pages: filled, ..Default::default() };
    let mut wall = PreconditionWall::default();
    let cap = if p.steady_state && aged > 0 { (aged as f64 * p.max_overwrite_passes) as u64 } else { 0 };
    let most = filled + cap;
    let t0 = Instant::now();
    for lpn in start..start + filled {
        t.write_page(lpn as Lpn)?;
        if lpn % 65_536 == 0 {
            obs.precondition(lpn - start, most);
            if obs.interrupted() {
                return Err(SimError::Interrupted);
            }
        }
    }
    wall.fill_s = t0.elapsed().as_secs_f64();
    if cap > 0 {
        let t0 = Instant::now();
        overwrite_until_steady(t, p, aged_from, aged, cap, &mut rep, obs)?;
        wall.steady_state_s = t0.elapsed().as_secs_f64();
    }
    if let Some(share) = p.trim_to {
        let t0 = Instant::now();
        // The written pages: the fill's range and the overwrites' span (they may differ).
        let mut written: Vec<Lpn> = (start..start + filled).map(|l| l as Lpn).collect();
        if cap > 0 {
            written.extend((aged_from..aged_from + aged).map(|l| l as Lpn));
            written.sort_unstable();
            written.dedup();
        }
        let keep = (logical as f64 * share) as u64;
        rep.trimmed_pages = trim_at_random(t, written, keep, p.seed)?;
        wall.steady_state_s += t0.elapsed().as_secs_f64();
    }
    Ok((rep, wall))
}

/// Trim the `written` pages in a seeded random order (a partial Fisher-Yates shuffle) until
/// `keep` of them are left; the pages trimmed.
fn trim_at_random<T: Preconditioned + ?Sized>(
    t: &mut T,
    mut order: Vec<Lpn>,
    keep: u64,
    seed: u64,
) -> Result<u64, SimError> {
    let trim = (order.len() as u64).saturating_sub(keep);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x7217_0ff5);
    for i in 0..trim as usize {
        let j = rng.gen_range(i..order.len());
        order.swap(i, j);
        t.trim_page(order[i])?;
    }
    Ok(trim)
}

fn check(p: &Precondition) -> Result<(), SimError> {
    if !(0.0..=1.0).contains(&p.fill) {
        return Err(crate::error::invalid("precondition.fill", p.fill, "must be in [0, 1]").into());
    }
    if !(0.0..=1.0 - p.fill).contains(&p.fill_offset) {
        return Err(crate::error::invalid(
            "precondition.fill_offset",
            p.fill_offset,
            format!("must be in [0, 1 - fill] = [0, {}]", 1.0 - p.fill),
        )
        .into());
    }
    if !(p.max_overwrite_passes >= 0.0 && p.max_overwrite_passes.is_finite()) {
        return Err(
            crate::error::invalid("precondition.max_overwrite_passes", p.max_overwrite_passes, "must be >= 0").into()
        );
    }
    if !(0.0..=1.0).contains(&p.overwrite_span) {
        return Err(crate::error::invalid("precondition.overwrite_span", p.overwrite_span, "must be in [0, 1]").into());
    }
    if let Some(share) = p.trim_to {
        if !(0.0..=1.0).contains(&share) {
            return Err(crate::error::invalid("precondition.trim_to", share, "must be in [0, 1]").into());
        }
    }
    Ok(())
}

/// Overwrite `start..start + pages` (the filled range, or the first `overwrite_span` of the
/// logical space) uniformly at random in windows of half a pass until the WAF settles
/// (module header) or `cap` pages were written.
fn overwrite_until_steady<T: Preconditioned + ?Sized>(
    t: &mut T,
    p: &Precondition,
    start: u64,
    pages: u64,
    cap: u64,
    rep: &mut PreconditionReport,
    obs: &mut dyn Observer,
) -> Result<(), SimError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(p.seed ^ 0x5eed_c0de);
    let window = ((pages as f64 * WINDOW_PASSES) as u64).max(1024).min(cap);
    rep.window_pages = window;
    // Addresses are drawn AHEAD writes early so the FTL can prefetch their state; the
    // sequence of addresses is the same.
    const AHEAD: u64 = 16;
    let mut ring = [0 as Lpn; AHEAD as usize];
    for r in ring.iter_mut() {
        *r = (start + rng.gen_range(0..pages)) as Lpn;
    }
    let mut i = 0u64;
    let mut last: Option<(f64, bool)> = None;
    while rep.overwrite_pages + window <= cap {
        let programs = t.pages_programmed();
        let collections = t.collections();
        for _ in 0..window {
            let lpn = ring[(i % AHEAD) as usize];
            let next = (start + rng.gen_range(0..pages)) as Lpn;
            ring[(i % AHEAD) as usize] = next;
            t.prefetch(next, PrefetchStage::Map);
            t.prefetch(ring[((i + AHEAD / 4) % AHEAD) as usize], PrefetchStage::OldPage);
            i += 1;
            if i.is_multiple_of(65_536) {
                obs.precondition(pages + i, pages + cap);
                if obs.interrupted() {
                    return Err(SimError::Interrupted);
                }
            }
            t.write_page(lpn)?;
        }
        rep.overwrite_pages += window;
        obs.precondition(pages + rep.overwrite_pages, pages + cap);
        if obs.interrupted() {
            return Err(SimError::Interrupted);
        }
        let waf = (t.pages_programmed() - programs) as f64 / window as f64;
        let this = (waf, t.collections() > collections);
        rep.window_waf.push(r6(waf));
        rep.final_waf = r6(waf);
        rep.overwrite_passes = r6(rep.overwrite_pages as f64 / pages as f64);
        if rep.overwrite_pages as f64 >= MIN_PASSES * pages as f64
            && last.is_some_and(|l| PreconditionReport::steady(l, this))
        {
            rep.settled = true;
            break;
        }
        last = Some(this);
    }
    Ok(())
}

impl Preconditioned for Simulator {
    fn logical_pages(&self) -> u64 {
        u64::from(self.cfg.derived().logical_pages)
    }

    fn write_page(&mut self, lpn: Lpn) -> Result<(), SimError> {
        let v = self.version();
        self.unbuffer(lpn);
        self.ftl_write(lpn, v, FlashTime::Functional)
    }

    fn trim_page(&mut self, lpn: Lpn) -> Result<(), SimError> {
        self.unbuffer(lpn);
        self.ftl_trim(lpn, FlashTime::Functional)
    }

    fn prefetch(&self, lpn: Lpn, stage: PrefetchStage) {
        self.ftl.prefetch_write(&self.dev.flash, lpn, stage);
    }

    fn pages_programmed(&self) -> u64 {
        self.dev.counts.pages_programmed()
    }

    fn collections(&self) -> u64 {
        self.ftl.gc_counts().collections()
    }
}

impl Simulator {
    /// Precondition functionally; counters are then reset so that the run measures only
    /// itself (erase counts stay, as wear).
    pub fn precondition(&mut self, p: &Precondition) -> Result<PreconditionReport, SimError> {
        self.precondition_observed(p, &mut crate::metrics::NoObserver)
    }

    /// [`Simulator::precondition`], reporting pages written to `obs` as it goes.
    pub fn precondition_observed(
        &mut self,
        p: &Precondition,
        obs: &mut dyn Observer,
    ) -> Result<PreconditionReport, SimError> {
        let (rep, wall) = precondition_target(self, p, obs)?;
        self.wall.fill_s += wall.fill_s;
        self.wall.steady_state_s += wall.steady_state_s;
        self.ftl.settle(&mut self.dev.ctx(FlashTime::Functional))?;
        self.precondition = Some(rep.clone());
        Ok(rep)
    }
}

#[cfg(test)]
mod tests {
    use super::PreconditionReport;

    #[test]
    fn steady_needs_gc_in_both_windows_and_one_percent() {
        assert!(PreconditionReport::steady((8.20, true), (8.25, true)));
        assert!(!PreconditionReport::steady((8.0, true), (8.25, true)), "3% apart");
        assert!(!PreconditionReport::steady((1.0, false), (1.0, false)), "no GC: not a steady state yet");
        assert!(!PreconditionReport::steady((1.0, false), (1.0, true)));
    }
}
