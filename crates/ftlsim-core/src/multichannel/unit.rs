//! One memory unit of the channel system: its flash, its FTL instance, its clock and where
//! its time went (seed 004 Fig. 9: writing host data, collecting garbage, idling).

use super::buffer::Dirty;
use crate::config::{SpareCount, Timing};
use crate::error::SimError;
use crate::flash::FlashArray;
use crate::ftl::{FlashCounts, FlashCtx, FlashTime, Ftl, GcNext, ManagedGc};
use crate::geometry::Lpn;
use crate::scheduler::{FlashOp, OpKind, Tag};

/// What a unit is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Nothing (waiting for dirty pages or for a condition).
    Idle,
    /// Programming buffered pages (with any GC the FTL did on the write's path).
    Host,
    /// A step of mandatory garbage collection (the FTL ran out of free space).
    MandatoryGc,
    /// A step of early garbage collection (GCA, or a CF follower).
    EarlyGc,
    /// A CF follower halted while the initiator erases (idle time).
    Halted,
}

/// Time by activity, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnitTime {
    /// Programming host data (and the reads of read-modify-write and block padding).
    pub host_ns: u64,
    /// Mandatory GC, with GC the FTL did on a host write's path.
    pub mandatory_gc_ns: u64,
    /// Early GC.
    pub early_gc_ns: u64,
    /// Halted as a CF follower (part of idle time).
    pub halted_ns: u64,
    /// Idle with no dirty page while the host waited for room.
    pub idle_no_dirty_ns: u64,
    /// Idle with dirty pages while the buffer was not full.
    pub idle_buffer_not_full_ns: u64,
    /// Idle as a CF follower waiting for the initiator's next step.
    pub idle_follower_ns: u64,
}

/// Counters of a unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnitCounts {
    /// Unit pages programmed from the buffer.
    pub pages_flushed: u64,
    /// Read-modify-write reads (a partial unit page's old data).
    pub rmw_reads: u64,
    /// BPLRU blocks flushed, and pages added to them by padding.
    pub blocks_flushed: u64,
    /// Pages read and written to pad BPLRU blocks.
    pub padded_pages: u64,
    /// Mandatory GC steps.
    pub mandatory_steps: u64,
    /// Early GC steps.
    pub early_steps: u64,
    /// Early GC episodes started (GCA).
    pub early_starts: u64,
    /// Early GC stopped with a victim part-way (at a preemption point).
    pub preemptions: u64,
    /// CF rounds followed.
    pub rounds_followed: u64,
    /// CF follower steps halted on the initiator's erase.
    pub halts: u64,
    /// CF follower copies made while its own drained victim waited for its erase (from the
    /// next-best victim).
    pub next_victims: u64,
    /// CF follower erases made while the initiator copied (no next-best victim to copy from).
    pub type_mismatches: u64,
    /// Suspended page-mapped collections resumed on a better victim (Sec. 3.2.2).
    pub repicks: u64,
    /// CF follower steps filling an initiator step still under way.
    pub fill_steps: u64,
    /// Returns to a CF round after its own mandatory GC.
    pub rejoins: u64,
    /// Mandatory GC started before a flush because the page's write needed it
    /// ([`ManagedGc::gc_due_for`]: FAST's partial merge of its SW block).
    pub write_due_collections: u64,
    /// Why CF followers left a round ([`FollowerExits`]).
    pub exits: FollowerExits,
}

/// Why CF followers left their rounds (each follower episode ends once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FollowerExits {
    /// The round ended: no unit was in mandatory GC any more (Table I's stop condition).
    pub round_ended: u64,
    /// The write-path merge that started the round ended.
    pub write_path_merge_ended: u64,
    /// Nothing left to collect.
    pub nothing_to_collect: u64,
    /// The follower ran out of free space itself and went on as mandatory GC.
    pub fell_due: u64,
}

/// Whether a unit collects because it must (mandatory GC) or ahead of need (early GC:
/// GCA's advancing, CF's rounds); the step's time counts as such.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GcUrgency {
    /// Mandatory: the unit is short of space.
    Due,
    /// Early GC.
    Early,
}

/// What one GC step may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GcMove {
    /// The victim's next page copy or its erase.
    Any,
    /// A page copy only: a CF follower's step while the initiator copies.
    CopyOnly,
}

/// A unit: flash, FTL, clock.
pub struct Unit {
    pub(crate) flash: FlashArray,
    pub(crate) ftl: Box<dyn Ftl>,
    /// When its current activity ends.
    pub(crate) free_at: u64,
    pub(crate) activity: Activity,
    /// GC time of the current activity (clipped at the run's end if it runs past it).
    pub(crate) gc_of_activity: u64,
    /// In an early-GC episode under GCA (it ends at a preemption point).
    pub(crate) early: bool,
    /// CF: a follower of the round under way, and the initiator's steps it has matched.
    pub(crate) following: bool,
    pub(crate) round_steps: u32,
    /// In a mandatory-GC episode (from its first step until its FTL is no longer due).
    pub(crate) collecting_mandatory: bool,
    /// A follower whose own mandatory GC interrupted it: it rejoins the round afterwards.
    pub(crate) rejoin: bool,
    /// The kind of its last mandatory step (a round passed on to it matches from there).
    pub(crate) last_kind: GcNext,
    /// Buffer slots held by the flush under way.
    pub(crate) in_flight: u32,
    pub(crate) time: UnitTime,
    pub(crate) counts: UnitCounts,
    pub(crate) flash_counts: FlashCounts,
    /// The unit has programmed host data since its last GC step: a suspended page-mapped
    /// collection may then resume on a better victim.
    wrote_since_gc: bool,
    ops: Vec<FlashOp>,
    /// The pages a flush writes, as (page, version) (kept to reuse its allocation).
    flushed: Vec<(Lpn, u32)>,
}

/// Durations of recorded operations: (non-GC ns, GC ns). Operations of a unit run one after
/// another (seed 004's channel model counts read, program and erase times only).
pub(super) fn cost(ops: &[FlashOp], t: &Timing) -> (u64, u64) {
    let copyback = t.t_copyback_ns.unwrap_or(t.t_r_ns + t.t_prog_ns);
    let (mut host, mut gc) = (0, 0);
    for op in ops {
        let ns = match op.kind {
            OpKind::Read | OpKind::ReadSpare => t.t_r_ns,
            OpKind::Program => t.t_prog_ns,
            OpKind::Erase => t.t_bers_ns,
            OpKind::Copyback => copyback,
            OpKind::Barrier => 0,
        };
        if op.tag == Tag::Gc {
            gc += ns;
        } else {
            host += ns;
        }
    }
    (host, gc)
}

impl Unit {
    pub(crate) fn new(flash: FlashArray, ftl: Box<dyn Ftl>) -> Unit {
        Unit {
            flash,
            ftl,
            free_at: 0,
            activity: Activity::Idle,
            gc_of_activity: 0,
            early: false,
            following: false,
            round_steps: 0,
            collecting_mandatory: false,
            rejoin: false,
            last_kind: GcNext::Nothing,
            in_flight: 0,
            time: UnitTime::default(),
            counts: UnitCounts::default(),
            flash_counts: FlashCounts::default(),
            wrote_since_gc: false,
            ops: Vec::new(),
            flushed: Vec::new(),
        }
    }

    /// A functional context (preconditioning, oracle reads): nothing recorded or timed.
    pub(crate) fn functional(&mut self) -> (&mut dyn Ftl, FlashCtx<'_>) {
        self.ops.clear();
        let ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.flash_counts, FlashTime::Functional);
        (self.ftl.as_mut(), ctx)
    }

    /// Spare blocks, for N_s ([`ManagedGc::spare_blocks`]).
    pub(crate) fn spare_blocks(&mut self, count: SpareCount) -> u64 {
        if count == SpareCount::FreeBlocks {
            return self.ftl.free_blocks();
        }
        let flash = &self.flash;
        self.ftl.managed_gc().expect("a unit's FTL has managed GC").spare_blocks(flash)
    }

    /// Writing `lpn` next would collect first ([`ManagedGc::gc_due_for`]; it arms that GC).
    pub(crate) fn gc_due_for(&mut self, lpn: Lpn) -> bool {
        let flash = &self.flash;
        self.ftl.managed_gc().expect("a unit's FTL has managed GC").gc_due_for(flash, lpn)
    }

    /// Its FTL's managed GC (checked when the channel system was built).
    fn managed(&mut self) -> &mut dyn ManagedGc {
        self.ftl.managed_gc().expect("a unit's FTL has managed GC (checked when the system was built)")
    }

    /// What its next GC step would do.
    pub(crate) fn gc_next(&mut self) -> GcNext {
        let flash = &self.flash;
        self.ftl.managed_gc().expect("a unit's FTL has managed GC").gc_next(flash, 0)
    }

    /// Its FTL is out of free space: the next write would collect first.
    pub(crate) fn gc_due(&mut self) -> bool {
        self.managed().gc_due()
    }

    /// A collection is part-way.
    pub(crate) fn gc_job_active(&mut self) -> bool {
        self.managed().gc_job_active(0)
    }

    fn start(&mut self, now: u64, activity: Activity, host_ns: u64, gc_ns: u64) {
        self.activity = activity;
        self.free_at = now + host_ns + gc_ns;
        self.gc_of_activity = gc_ns;
        self.time.host_ns += host_ns;
        match activity {
            Activity::EarlyGc => self.time.early_gc_ns += gc_ns,
            Activity::Halted => self.time.halted_ns += gc_ns,
            _ => self.time.mandatory_gc_ns += gc_ns,
        }
    }

    /// Idle until `until` as a halted CF follower.
    pub(crate) fn halt(&mut self, now: u64, until: u64) {
        self.counts.halts += 1;
        self.start(now, Activity::Halted, 0, until.saturating_sub(now));
    }

    /// One GC step, early or mandatory (`urgency`), any or a page copy only (`moves`);
    /// `false` when there was nothing to do.
    pub(crate) fn gc_step(
        &mut self,
        now: u64,
        urgency: GcUrgency,
        moves: GcMove,
        t: &Timing,
    ) -> Result<bool, SimError> {
        let gc = self.ftl.managed_gc().expect("a unit's FTL has managed GC");
        if std::mem::take(&mut self.wrote_since_gc) && gc.gc_repick(&self.flash, 0) {
            self.counts.repicks += 1;
        }
        self.ops.clear();
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.flash_counts, FlashTime::Timed);
        let did = match moves {
            GcMove::CopyOnly => gc.gc_copy_step(&mut ctx, 0)?,
            GcMove::Any => gc.gc_step(&mut ctx, 0)?,
        };
        if !did {
            return Ok(false);
        }
        let (host, gc) = cost(&self.ops, t);
        match urgency {
            GcUrgency::Early => {
                self.counts.early_steps += 1;
                self.start(now, Activity::EarlyGc, 0, host + gc);
            }
            GcUrgency::Due => {
                self.counts.mandatory_steps += 1;
                self.start(now, Activity::MandatoryGc, 0, host + gc);
            }
        }
        Ok(true)
    }

    /// Program the buffered pages `pages` (one page, or a BPLRU block in LPN order): a
    /// partial unit page first reads its old data (read-modify-write). `padding`, under
    /// BPLRU: (pages per block, padding threshold, the unit's logical pages); a block with at
    /// least the threshold's buffered pages is padded with its other written pages (read,
    /// then written with the rest, in LPN order). `full_mask`: every sector of a unit page.
    pub(crate) fn flush(
        &mut self,
        now: u64,
        pages: &[Dirty],
        full_mask: u128,
        padding: Option<(u32, u32, u32)>,
        t: &Timing,
    ) -> Result<(), SimError> {
        self.flushed.clear();
        self.ops.clear();
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.flash_counts, FlashTime::Timed);
        for d in pages {
            if d.mask != full_mask && self.ftl.read(&mut ctx, d.lpn)?.is_some() {
                self.counts.rmw_reads += 1;
            }
            self.flushed.push((d.lpn, d.version));
        }
        if let Some((block_pages, threshold, logical)) = padding {
            if pages.len() as u32 >= threshold && (pages.len() as u32) < block_pages {
                let base = pages[0].lpn / block_pages * block_pages;
                for lpn in base..(base + block_pages).min(logical) {
                    // A BPLRU block's pages come in LPN order.
                    if pages.binary_search_by_key(&lpn, |d| d.lpn).is_ok() {
                        continue;
                    }
                    if let Some(v) = self.ftl.read(&mut ctx, lpn)? {
                        self.flushed.push((lpn, v));
                        self.counts.padded_pages += 1;
                    }
                }
                self.flushed.sort_unstable_by_key(|p| p.0);
            }
        }
        for &(lpn, version) in &self.flushed {
            self.ftl.write(&mut ctx, lpn, version)?;
        }
        self.counts.pages_flushed += pages.len() as u64;
        self.wrote_since_gc = true;
        if padding.is_some() {
            self.counts.blocks_flushed += 1;
        }
        let (host, gc) = cost(&self.ops, t);
        // GC on the write's path (a merge the FTL could not leave to the manager) is
        // mandatory GC that the other units see.
        self.start(now, if gc > 0 { Activity::MandatoryGc } else { Activity::Host }, host, gc);
        Ok(())
    }

    /// The run ended at `end` while this unit was busy past it: its remaining time is not
    /// part of the run.
    pub(crate) fn clip(&mut self, end: u64) {
        if self.free_at <= end {
            return;
        }
        let over = self.free_at - end;
        let gc = over.min(self.gc_of_activity);
        match self.activity {
            Activity::EarlyGc => self.time.early_gc_ns -= gc,
            Activity::Halted => self.time.halted_ns -= gc,
            _ => self.time.mandatory_gc_ns -= gc,
        }
        // Host programs past the end: only a power cut ends a run with a flush under way.
        self.time.host_ns -= over - gc;
        self.free_at = end;
    }
}
