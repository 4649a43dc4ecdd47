//! A power cut in a measured run and the recovery after it (issue 15; seed 001 Ch. 8).
//!
//! The replay stops issuing at the cut instant ([`CutAt`]); the run so far is reported as
//! usual. Then, in order:
//! 1. with `host.buffer_power_protected`, the controller spends its hold-up energy flushing
//!    the volatile buffers to flash, oldest page first, at most
//!    `host.buffer_flush_budget_pages` pages (all of them when unset);
//! 2. the flash operation under way at the cut is torn: the first program, copy-back or
//!    erase of the request that was being dispatched (a read-only request tears nothing);
//! 3. whatever the write buffer and the merge buffer still hold is lost, each page counted
//!    as acknowledged (its request had completed) or not (its request was in flight);
//! 4. the flash restarts ([`crate::flash::FlashArray::restart`]: controller memory gone,
//!    flash contents and spare areas kept) and the FTL recovers
//!    ([`crate::ftl::Ftl::recover`]), its flash operations timed from the cut instant;
//! 5. under `verify`, every logical page is read back and checked against the data oracle:
//!    each acknowledged write reads its version, unless the page is counted lost; a page
//!    written by a request in flight, or lost, reads an older version or the new one, never
//!    something newer or never written.
//!
//! The requests in flight at the cut never complete (the host sees them fail); the run
//! continues with the next request of the source ([`super::Simulator::run`] again), issued
//! from the end of recovery on (the host waits for the drive to come back), so performance
//! after recovery is measured on its own.

use super::FlashTime;
use super::Simulator;
use crate::error::{FlashError, SimError};
use crate::flash::{PageKind, TornOp};
use crate::ftl::FlashCounts;
use crate::geometry::Lpn;
use crate::host::{pages, IoOp, Request};
use crate::metrics::r6;
use crate::scheduler::{SimTime, Tag};
use crate::write_buffer::WriteBuffer;
use serde::Serialize;
use std::collections::BTreeMap;

/// When the power goes in a measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CutAt {
    /// At this simulated time after the run's first request, ns.
    TimeNs(u64),
    /// Just as the n-th request (from 1) is dispatched.
    Request(u64),
}

/// Acknowledged pages lost at a cut, by the buffer that held them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LostPages {
    /// Pages whose newest data was only in the DRAM write buffer.
    pub write_buffer: u64,
    /// Partial pages whose newest sectors were only in the merge buffer.
    pub merge_buffer: u64,
}

/// What a power cut did and what recovery cost (results.json `report.power_cut`,
/// docs/metrics.md).
#[derive(Debug, Clone, Serialize)]
pub struct PowerCutReport {
    /// The cut instant, ns after the run's first request.
    pub at_ns: u64,
    /// Requests completed before the cut.
    pub requests_completed: u64,
    /// Requests dispatched and not completed at the cut (they fail).
    pub requests_in_flight: u64,
    /// The flash operation the cut tore: `program`, `copyback`, `erase`, or `null`.
    pub torn_operation: Option<&'static str>,
    /// What a torn program or copy-back was writing: `data`, `translation`, `log`, `meta`.
    pub torn_page_kind: Option<&'static str>,
    /// Pages unreadable after the cut (torn programs, every page of a torn erase).
    pub torn_pages: u64,
    /// Flash operations queued behind others (`read_first`, GC preemption) that had not
    /// started at the cut and never ran: their requests fail; the FTL's state holds them as it
    /// holds operations the cut found under way (docs/power-loss.md).
    pub queued_operations_dropped: u64,
    /// Whether the volatile buffers were power-protected (`host.buffer_power_protected`).
    pub buffer_power_protected: bool,
    /// Pages flushed from the buffers on the hold-up energy.
    pub buffer_flushed_pages: u64,
    /// Acknowledged pages lost, by buffer.
    pub lost_acknowledged_pages: LostPages,
    /// Pages of requests in flight that were in a buffer and are lost (never acknowledged).
    pub lost_unacknowledged_pages: u64,
    /// Pages read by recovery.
    pub recovery_pages_read: u64,
    /// Recovery pages read over all pages of the flash (RP, seed 001 Eq. 4.6).
    pub recovery_pages_read_ratio: f64,
    /// Pages recovery programmed (copy-back destinations included).
    pub recovery_pages_programmed: u64,
    /// Blocks recovery erased.
    pub recovery_blocks_erased: u64,
    /// From the cut until recovery's last flash operation ends, us (power returns at once).
    pub recovery_time_us: f64,
    /// Logical pages read back against the data oracle after recovery (0 without `verify`).
    pub oracle_checked_pages: u64,
}

/// The volatile buffer a page was in.
#[derive(Clone, Copy)]
enum Buffer {
    Write,
    Merge,
}

/// A request in flight at the cut: what it wrote, if it wrote.
pub(super) struct InFlight {
    pub op: IoOp,
    pub offset_sector: u64,
    pub sectors: u32,
}

impl Simulator {
    /// Cut the power at `at` while `next` (if any) was being dispatched, with `in_flight`
    /// dispatched and not completed; recover. See the module header.
    pub(super) fn power_cut(
        &mut self,
        at: SimTime,
        at_rel: u64,
        next: Option<Request>,
        mut in_flight: Vec<InFlight>,
    ) -> Result<PowerCutReport, SimError> {
        let requests_completed = self.host.requests;
        if let Some(r) = &next {
            in_flight.push(InFlight { op: r.op, offset_sector: r.offset_sector, sectors: r.sectors });
        }
        let unacked = self.unacknowledged_pages(&in_flight);
        let mut dropped = self.dev.sched.cut_power(at);
        let now = at.max(self.dev.sched.now());

        // 1. Hold-up energy flushes the buffers, oldest first.
        let protected = self.cfg.host.buffer_power_protected;
        let budget = if protected { self.cfg.host.buffer_flush_budget_pages.unwrap_or(u32::MAX) } else { 0 };
        let flushed = self.flush_buffers(budget)?;
        self.dev.ops.clear();
        let buffered = self.buffered_pages();
        // 2. The operation under way is torn; what the torn request queued before it never runs.
        let (torn_op, torn_kind) = self.tear(next.as_ref(), now)?;
        dropped += self.dev.sched.cut_power(now);
        // 3. The volatile buffers are lost (which of their pages flash lacks is known once
        // the drive has recovered).
        self.lose_buffers();
        // 4. Restart and recovery.
        self.dev.flash.restart();
        let torn_pages = self.dev.flash.torn_pages();
        let (c, end) = self.recover(now)?;
        let (lost, lost_unacked, lost_pages) = self.lost_buffered_pages(&buffered, &unacked)?;
        // 5. The data oracle.
        let checked = self.check_after_cut(&unacked, &lost_pages)?;

        let reads: u64 = c.reads.iter().sum();
        Ok(PowerCutReport {
            at_ns: at_rel,
            requests_completed,
            requests_in_flight: in_flight.len() as u64,
            torn_operation: torn_op.map(torn_op_name),
            torn_page_kind: torn_kind.filter(|_| torn_op != Some(TornOp::Erase)).map(page_kind_name),
            torn_pages,
            queued_operations_dropped: dropped,
            buffer_power_protected: protected,
            buffer_flushed_pages: flushed,
            lost_acknowledged_pages: lost,
            lost_unacknowledged_pages: lost_unacked,
            recovery_pages_read: reads,
            recovery_pages_read_ratio: r6(reads as f64 / f64::from(self.cfg.derived().physical_pages)),
            recovery_pages_programmed: c.pages_programmed(),
            recovery_blocks_erased: c.erases.iter().sum(),
            recovery_time_us: r6(end.saturating_sub(now) as f64 / 1e3),
            oracle_checked_pages: checked,
        })
    }

    /// The pages the writes `in_flight` touch, each with the newest version it had before
    /// the cut (unknown yet: `u32::MAX`): recovery may give the new one or an older one.
    fn unacknowledged_pages(&self, in_flight: &[InFlight]) -> BTreeMap<Lpn, u32> {
        let spp = self.cfg.geometry.sectors_per_page();
        let mut unacked = BTreeMap::new();
        for r in in_flight.iter().filter(|r| r.op == IoOp::Write) {
            for span in pages(r.offset_sector, r.sectors, spp) {
                unacked.insert(span.lpn, u32::MAX);
            }
        }
        unacked
    }

    /// What the buffers hold now: acknowledged unless a request in flight wrote it; the torn
    /// dispatch may evict some of it towards flash and lose it on the way.
    fn buffered_pages(&self) -> Vec<(Lpn, u32, Buffer)> {
        let mut buffered = Vec::new();
        if let Some(w) = self.wbuf.as_ref() {
            buffered.extend(w.iter_recent().map(|(l, v)| (l, v, Buffer::Write)));
        }
        if let Some(m) = self.merge.as_ref() {
            buffered.extend(m.entries().map(|(l, v)| (l, v, Buffer::Merge)));
        }
        buffered
    }

    /// Dispatch `next` at `now` with the power already gone: the first flash operation it
    /// reaches is torn. Returns what was torn.
    fn tear(&mut self, next: Option<&Request>, now: SimTime) -> Result<(Option<TornOp>, Option<PageKind>), SimError> {
        self.dev.flash.arm_power_cut(0);
        if let Some(req) = next {
            match self.dispatch_in_slot(req, now) {
                Ok(_) | Err(SimError::Flash(FlashError::PowerLost)) => {}
                Err(e) => return Err(e),
            }
        }
        self.request = None;
        self.run.clear();
        self.dev.ops.clear();
        Ok((self.dev.flash.torn_op(), self.dev.flash.torn_kind()))
    }

    /// Empty the volatile buffers.
    fn lose_buffers(&mut self) {
        if let Some(w) = self.wbuf.as_mut() {
            *w = WriteBuffer::new(w.capacity_pages(), self.cfg.host.write_buffer_policy);
        }
        if let Some(m) = self.merge.as_mut() {
            while m.oldest().is_some() {}
        }
    }

    /// The FTL recovers from `now`; returns the flash operations it took and when the
    /// drive is back, which is when the host issues again.
    fn recover(&mut self, now: SimTime) -> Result<(FlashCounts, SimTime), SimError> {
        let before = self.dev.counts.clone();
        {
            let mut ctx = self.dev.ctx(FlashTime::Timed);
            ctx.set_tag(Tag::Mapping);
            let name = self.ftl.name();
            let r = self.ftl.recovery().ok_or_else(|| {
                SimError::Ftl(format!(
                    "{name}: this FTL does not recover from a power cut (`ftlsim ftls` says which do)"
                ))
            })?;
            r.recover(&mut ctx, &self.cfg)?;
        }
        let end = self.dev.schedule(now, None).end;
        self.dev.sched.drain_all();
        self.dev.sched.set_now(end.max(now));
        // An FTL rebuilt by recovery counts its GC from 0: the GC that materializing pages
        // triggered before the cut is in its counters no more, and nothing is kept apart.
        if !self.ftl.gc_counts().covers(&self.materialized.gc) {
            self.materialized.gc = crate::ftl::GcCounts::default();
        }
        Ok((self.dev.counts.since(&before), end))
    }

    /// The `buffered` pages flash does not give back after recovery: acknowledged ones by
    /// buffer, the count of those a request in flight wrote (`unacked`), and the newest
    /// version lost of each page.
    fn lost_buffered_pages(
        &mut self,
        buffered: &[(Lpn, u32, Buffer)],
        unacked: &BTreeMap<Lpn, u32>,
    ) -> Result<(LostPages, u64, BTreeMap<Lpn, u32>), SimError> {
        let mut lost = LostPages::default();
        let mut lost_unacked = 0u64;
        let mut lost_pages: BTreeMap<Lpn, u32> = BTreeMap::new();
        for &(lpn, v, buffer) in buffered {
            if self.read_untimed(lpn)? == Some(v) {
                continue;
            }
            let newest = lost_pages.entry(lpn).or_insert(v);
            *newest = (*newest).max(v);
            match (unacked.contains_key(&lpn), buffer) {
                (true, _) => lost_unacked += 1,
                (false, Buffer::Write) => lost.write_buffer += 1,
                (false, Buffer::Merge) => lost.merge_buffer += 1,
            }
        }
        Ok((lost, lost_unacked, lost_pages))
    }

    /// Write up to `budget` buffered pages through the FTL, untimed, oldest first: the write
    /// buffer's, then the merge buffer's (read-modify-write); returns how many. A hold-up
    /// flush at a cut and a clean shutdown both do this.
    pub(super) fn flush_buffers(&mut self, budget: u32) -> Result<u64, SimError> {
        let mut flushed = 0u64;
        if let Some(w) = self.wbuf.as_ref() {
            let oldest_first: Vec<(Lpn, u32)> = w.iter_recent().collect::<Vec<_>>().into_iter().rev().collect();
            for (lpn, v) in oldest_first.into_iter().take(budget as usize) {
                self.wbuf.as_mut().expect("buffer exists").remove(lpn);
                self.ftl_write(lpn, v, FlashTime::Functional)?;
                flushed += 1;
            }
        }
        while flushed < u64::from(budget) {
            let Some((lpn, v)) = self.merge.as_mut().and_then(|m| m.oldest()) else { break };
            self.ftl_read(lpn)?;
            self.ftl_write(lpn, v, FlashTime::Functional)?;
            flushed += 1;
        }
        self.dev.ops.clear();
        Ok(flushed)
    }

    fn read_untimed(&mut self, lpn: Lpn) -> Result<Option<u32>, SimError> {
        read_untimed(self.ftl.as_mut(), &mut self.dev.flash, lpn)
    }

    /// Read every logical page back (untimed, uncounted) and hold it to the oracle
    /// ([`check_oracle_after_cut`]). Returns the pages checked (0 without an oracle).
    fn check_after_cut(&mut self, unacked: &BTreeMap<Lpn, u32>, lost: &BTreeMap<Lpn, u32>) -> Result<u64, SimError> {
        let Some(mut oracle) = self.oracle.take() else { return Ok(0) };
        let trimmed = self.trimmed.clone();
        let was_trimmed = |lpn: Lpn| trimmed[lpn as usize / 64] & (1 << (lpn % 64)) != 0;
        let r = check_oracle_after_cut(&mut oracle, unacked, lost, was_trimmed, |lpn| self.read_untimed(lpn));
        let n = oracle.len() as u64;
        self.oracle = Some(oracle);
        r?;
        self.check_invariants();
        Ok(n)
    }
}

/// The version `ftl` gives for `lpn`, read outside the run (untimed, uncounted): what a
/// drive's or a channel unit's flash holds after a cut.
pub(crate) fn read_untimed(
    ftl: &mut dyn crate::ftl::Ftl,
    flash: &mut crate::flash::FlashArray,
    lpn: Lpn,
) -> Result<Option<u32>, SimError> {
    let mut scratch = FlashCounts::default();
    let mut ops = Vec::new();
    let mut ctx = crate::ftl::FlashCtx::new(flash, &mut ops, &mut scratch, FlashTime::Functional);
    ftl.read(&mut ctx, lpn)
}

/// Hold every logical page `read` gives back after a cut to `oracle`; pages of writes in
/// flight (`unacked`) and lost pages may read an older version, and the oracle takes what
/// they read. Versions grow with time, so an excused page reads its newest version or an
/// older one, never one nobody wrote. Drives and channel systems (per unit) share it.
pub(crate) fn check_oracle_after_cut(
    oracle: &mut [u32],
    unacked: &BTreeMap<Lpn, u32>,
    lost: &BTreeMap<Lpn, u32>,
    was_trimmed: impl Fn(Lpn) -> bool,
    mut read: impl FnMut(Lpn) -> Result<Option<u32>, SimError>,
) -> Result<(), SimError> {
    for lpn in 0..oracle.len() as Lpn {
        let found = read(lpn)?;
        let want = oracle[lpn as usize];
        let excused = unacked.contains_key(&lpn) || lost.contains_key(&lpn) || (want == 0 && was_trimmed(lpn));
        if excused {
            let newest = lost.get(&lpn).copied().unwrap_or(want).max(want);
            if unacked.contains_key(&lpn) || found.is_none_or(|f| f <= newest) || want == 0 {
                oracle[lpn as usize] = found.unwrap_or(0);
                continue;
            }
        }
        if found != (want != 0).then_some(want) {
            return Err(SimError::DataMismatch { lpn, expected: (want != 0).then_some(want), found });
        }
    }
    Ok(())
}

/// A torn operation's name in the report.
fn torn_op_name(op: TornOp) -> &'static str {
    match op {
        TornOp::Program => "program",
        TornOp::Copyback => "copyback",
        TornOp::Erase => "erase",
    }
}

/// A torn page's kind in the report.
fn page_kind_name(kind: PageKind) -> &'static str {
    match kind {
        PageKind::Data => "data",
        PageKind::Translation => "translation",
        PageKind::Log => "log",
        PageKind::Meta => "meta",
        PageKind::Staged => "staged",
    }
}
