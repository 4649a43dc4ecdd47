//! Preconditioning: a sequential fill, then optional random overwrites until the write
//! amplification settles. Functional (no timing), through the FTL's own write path.

use super::Simulator;
use crate::error::SimError;
use crate::ftl::PrefetchStage;
use crate::geometry::Lpn;
use crate::metrics::{r6, Observer};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Preconditioning: a sequential fill, then optional random overwrites until the write
/// amplification settles. Functional (no timing), through the FTL's own write path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Precondition {
    /// Share of the logical space written sequentially, [0, 1].
    pub fill: f64,
    /// Share of the logical space, from its start, the fill leaves unwritten before it starts
    /// (`fill + fill_offset <= 1`): a workload addressing that region starts on a full drive
    /// with its own first writes new.
    pub fill_offset: f64,
    /// Overwrite the filled range uniformly at random until WAF settles.
    pub steady_state: bool,
    /// Cap on random overwrites, as a multiple of the filled pages.
    pub max_overwrite_passes: f64,
    /// Seed of the overwrite addresses.
    pub seed: u64,
}

impl Default for Precondition {
    fn default() -> Self {
        Precondition { fill: 0.0, fill_offset: 0.0, steady_state: false, max_overwrite_passes: 4.0, seed: 0 }
    }
}

/// What preconditioning did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PreconditionReport {
    /// Pages written by the sequential fill.
    pub fill_pages: u64,
    /// Pages written by random overwrites.
    pub overwrite_pages: u64,
    /// WAF of the last overwrite window.
    pub final_window_waf: f64,
    /// Whether the WAF settled (else the overwrite cap was reached).
    pub settled: bool,
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
        let logical = u64::from(self.d.logical_pages);
        let filled = (logical as f64 * p.fill) as u64;
        let start = ((logical as f64 * p.fill_offset) as u64).min(logical - filled);
        let mut rep = PreconditionReport { fill_pages: filled, ..Default::default() };
        let most = filled + if p.steady_state { (filled as f64 * p.max_overwrite_passes) as u64 } else { 0 };
        for lpn in start..start + filled {
            let v = self.version();
            self.unbuffer(lpn as Lpn);
            self.ftl_write(lpn as Lpn, v, false)?;
            if lpn % 65_536 == 0 {
                obs.precondition(lpn, most);
            }
        }
        if p.steady_state && filled > 0 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(p.seed ^ 0x5eed_c0de);
            let window = (filled / 16).max(1024);
            let cap = (filled as f64 * p.max_overwrite_passes) as u64;
            let mut last = 0.0f64;
            let mut stable = 0;
            const AHEAD: u64 = 16;
            let mut ring = [0 as Lpn; AHEAD as usize];
            for r in ring.iter_mut() {
                *r = (start + rng.gen_range(0..filled)) as Lpn;
            }
            let mut i = 0u64;
            while rep.overwrite_pages < cap {
                let before = self.dev.counts.pages_programmed();
                let gc_before = self.ftl.gc_counts().collections();
                for _ in 0..window {
                    // Addresses are drawn AHEAD writes early so the FTL can prefetch their
                    // state (the sequence of addresses is the same).
                    let lpn = ring[(i % AHEAD) as usize];
                    let next = (start + rng.gen_range(0..filled)) as Lpn;
                    ring[(i % AHEAD) as usize] = next;
                    self.ftl.prefetch_write(&self.dev.flash, next, PrefetchStage::Map);
                    self.ftl.prefetch_write(
                        &self.dev.flash,
                        ring[((i + AHEAD / 4) % AHEAD) as usize],
                        PrefetchStage::OldPage,
                    );
                    i += 1;
                    let v = self.version();
                    self.unbuffer(lpn);
                    self.ftl_write(lpn, v, false)?;
                }
                rep.overwrite_pages += window;
                obs.precondition(filled + rep.overwrite_pages, most);
                let waf = (self.dev.counts.pages_programmed() - before) as f64 / window as f64;
                rep.final_window_waf = r6(waf);
                let gc_active = self.ftl.gc_counts().collections() > gc_before;
                if gc_active && rep.overwrite_pages >= filled / 2 && (waf - last).abs() <= 0.01 * waf {
                    stable += 1;
                    if stable >= 3 {
                        rep.settled = true;
                        break;
                    }
                } else {
                    stable = 0;
                }
                last = waf;
            }
        }
        self.precondition = Some(rep.clone());
        Ok(rep)
    }
}
