//! A power cut in a channel-system run (`--power-cut` with a `[multichannel]` drive), by the
//! drive's steps (crate::sim::power_cut) where the channel model allows:
//! 1. with `host.buffer_power_protected`, the hold-up energy flushes buffered pages through
//!    their units' FTLs, oldest first per unit and unit after unit in turn, at most
//!    `host.buffer_flush_budget_pages` of them;
//! 2. no operation is torn: the channel model performs a step's flash operations when the
//!    step starts and times them after, so at the cut they are complete (the drive runs of
//!    the same FTLs cover torn pages; docs/power-loss.md);
//! 3. what the buffer still holds is lost, each page counted as acknowledged or not (the
//!    request being admitted at the cut is not);
//! 4. every unit's flash restarts and its FTL recovers ([`crate::ftl::Recovery::recover`]),
//!    the units in parallel: recovery takes the longest unit's time;
//! 5. with the data oracle, every unit page is read back and held to it, as a drive's.
//!
//! The run ends at the cut: the requests after it are not replayed.

use super::unit::cost;
use super::ChannelSystem;
use crate::error::SimError;
use crate::ftl::{FlashCounts, FlashCtx, FlashTime};
use crate::geometry::Lpn;
use crate::metrics::r6;
use crate::scheduler::Tag;
use crate::sim::power_cut::{check_oracle_after_cut, read_untimed};
use crate::sim::{LostPages, PowerCutReport};
use std::collections::BTreeMap;

impl ChannelSystem {
    /// Every unit's flash keeps program stamps from now on: recovery after a cut reads them.
    pub fn keep_program_stamps(&mut self) {
        for u in &mut self.units {
            u.flash.keep_program_stamps();
        }
    }

    /// Whether every unit's flash keeps program stamps (a snapshot saved by a run without a
    /// power cut has none).
    pub fn keeps_program_stamps(&self) -> bool {
        self.units.iter().all(|u| u.flash.keeps_program_stamps())
    }

    /// A clean shutdown and power-up before the run: every unit's FTL writes what it holds
    /// only in controller memory to flash ([`crate::ftl::Recovery::checkpoint`]), untimed, as
    /// a drive's ([`crate::sim::Simulator::clean_shutdown`]). The buffer is empty then.
    pub fn clean_shutdown(&mut self) -> Result<(), SimError> {
        assert_eq!(self.buffer.used(), 0, "a clean shutdown comes before the run, with the buffer empty");
        for u in &mut self.units {
            let (ftl, mut ctx) = u.functional();
            if let Some(r) = ftl.recovery() {
                r.checkpoint(&mut ctx)?;
            }
        }
        Ok(())
    }

    /// Cut the power at `at_ns` (the run's time) and recover (module header).
    pub(super) fn power_cut(&mut self, at_ns: u64) -> Result<PowerCutReport, SimError> {
        let n = self.units.len();
        // Unit pages the request being admitted wrote: never acknowledged.
        let mut unacked: Vec<BTreeMap<Lpn, u32>> = vec![BTreeMap::new(); n];
        for p in &self.host.admitted {
            unacked[p.unit as usize].insert(p.unit_lpn, u32::MAX);
        }
        let in_flight = u64::from(!self.host.admitted.is_empty() || !self.host.pending.is_empty());

        // 1. Hold-up flush, oldest first per unit, the units in turn.
        let protected = self.cfg.host.buffer_power_protected;
        let budget = if protected { self.cfg.host.buffer_flush_budget_pages.map_or(u64::MAX, u64::from) } else { 0 };
        let (flushed, left) = self.hold_up_flush(budget)?;

        // 3. The buffer is lost.
        self.buffer.clear();
        self.host.pending.clear();

        // 4. Restart and recovery, the units in parallel, each by its unit's config.
        let r = self.recover_units()?;
        let (lost, lost_unacked, lost_pages) = self.lost_buffered_pages(&left, &unacked)?;
        // 5. The data oracle.
        let checked = self.check_oracle_after_cut(&unacked, &lost_pages)?;

        Ok(PowerCutReport {
            at_ns,
            requests_completed: self.host.stats.requests,
            requests_in_flight: in_flight,
            torn_operation: None,
            torn_page_kind: None,
            torn_pages: 0,
            // A channel system's units run one operation at a time: nothing waits queued.
            queued_operations_dropped: 0,
            buffer_power_protected: protected,
            buffer_flushed_pages: flushed,
            lost_acknowledged_pages: lost,
            lost_unacknowledged_pages: lost_unacked,
            recovery_pages_read: r.reads,
            recovery_pages_read_ratio: r6(r.reads as f64 / r.physical.max(1) as f64),
            recovery_pages_programmed: r.programmed,
            recovery_blocks_erased: r.erased,
            recovery_time_us: r6(r.longest_ns as f64 / 1e3),
            oracle_checked_pages: checked,
        })
    }

    /// Write up to `budget` buffered pages to their units, oldest first per unit, the
    /// units in turn; returns how many, and the pages left in the buffer as (unit, page,
    /// version).
    fn hold_up_flush(&mut self, mut budget: u64) -> Result<(u64, Vec<LeftPage>), SimError> {
        let mut flushed = 0u64;
        let mut victim = Vec::new();
        let mut left: Vec<LeftPage> = Vec::new();
        loop {
            let mut any = false;
            for u in 0..self.units.len() {
                if self.buffer.take_victim(u as u32, &mut victim) == 0 {
                    continue;
                }
                any = true;
                for d in &victim {
                    if budget > 0 {
                        budget -= 1;
                        flushed += 1;
                        let (ftl, mut ctx) = self.units[u].functional();
                        ftl.write(&mut ctx, d.lpn, d.version)?;
                    } else {
                        left.push((u, d.lpn, d.version));
                    }
                }
            }
            if !any {
                break;
            }
        }
        Ok((flushed, left))
    }

    /// Restart every unit and recover it by its unit's config; the units recover in
    /// parallel, so the recovery takes the longest unit's time.
    fn recover_units(&mut self) -> Result<UnitsRecovery, SimError> {
        let unit_cfg = self.layout.unit_config(&self.cfg)?;
        let mut r = UnitsRecovery::default();
        for u in &mut self.units {
            u.flash.restart();
            r.physical += u64::from(u.flash.geometry().pages());
            let mut counts = FlashCounts::default();
            let mut ops = Vec::new();
            {
                let mut ctx = FlashCtx::new(&mut u.flash, &mut ops, &mut counts, FlashTime::Timed);
                ctx.set_tag(Tag::Mapping);
                let name = u.ftl.name();
                let recovery = u.ftl.recovery().ok_or_else(|| {
                    SimError::Ftl(format!(
                        "{name}: this FTL does not recover from a power cut (`ftlsim ftls` says which do)"
                    ))
                })?;
                recovery.recover(&mut ctx, &unit_cfg)?;
            }
            let (host, gc) = cost(&ops, &self.timing);
            r.longest_ns = r.longest_ns.max(host + gc);
            r.reads += counts.reads.iter().sum::<u64>();
            r.programmed += counts.pages_programmed();
            r.erased += counts.erases.iter().sum::<u64>();
        }
        Ok(r)
    }

    /// The pages `left` in the buffer that their unit does not give back after recovery:
    /// acknowledged ones, the count of those the request being admitted wrote (`unacked`),
    /// and the newest version lost of each page, per unit.
    fn lost_buffered_pages(
        &mut self,
        left: &[LeftPage],
        unacked: &[BTreeMap<Lpn, u32>],
    ) -> Result<(LostPages, u64, Vec<PageVersions>), SimError> {
        let mut lost = LostPages::default();
        let mut lost_unacked = 0u64;
        let mut lost_pages: Vec<PageVersions> = vec![BTreeMap::new(); self.units.len()];
        for &(u, lpn, v) in left {
            if self.read_untimed(u, lpn)? == Some(v) {
                continue;
            }
            let newest = lost_pages[u].entry(lpn).or_insert(v);
            *newest = (*newest).max(v);
            if unacked[u].contains_key(&lpn) {
                lost_unacked += 1;
            } else {
                lost.write_buffer += 1;
            }
        }
        Ok((lost, lost_unacked, lost_pages))
    }

    /// With a data oracle, check every unit's pages after recovery; returns the pages
    /// checked.
    fn check_oracle_after_cut(
        &mut self,
        unacked: &[BTreeMap<Lpn, u32>],
        lost_pages: &[BTreeMap<Lpn, u32>],
    ) -> Result<u64, SimError> {
        let mut checked = 0u64;
        if let Some(mut oracle) = self.oracle.take() {
            let mut r = Ok(());
            for (u, o) in oracle.iter_mut().enumerate() {
                r = check_oracle_after_cut(o, &unacked[u], &lost_pages[u], |_| false, |lpn| self.read_untimed(u, lpn))
                    .map_err(|e| SimError::Ftl(format!("unit {u} after the power cut: {e}")));
                if r.is_err() {
                    break;
                }
                checked += o.len() as u64;
            }
            self.oracle = Some(oracle);
            r?;
            self.check_invariants();
        }
        Ok(checked)
    }

    /// The version unit `u`'s FTL gives for `lpn`, read outside the run.
    fn read_untimed(&mut self, u: usize, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let unit = &mut self.units[u];
        read_untimed(unit.ftl.as_mut(), &mut unit.flash, lpn)
    }
}

/// A page left in the buffer at the cut: (unit, page, version).
type LeftPage = (usize, Lpn, u32);

/// Pages of one unit, each with a version.
type PageVersions = BTreeMap<Lpn, u32>;

/// What recovering the units cost, summed over them.
#[derive(Default)]
struct UnitsRecovery {
    reads: u64,
    programmed: u64,
    erased: u64,
    /// The longest unit's recovery time, ns.
    longest_ns: u64,
    /// The units' physical pages.
    physical: u64,
}
