//! The FTL interface and the context through which an FTL touches flash.
//!
//! An FTL never computes time. It changes flash state through [`FlashCtx`], which applies
//! each operation to the [`FlashArray`] at once (so NAND rules are checked at the moment of
//! the call) and records it for the scheduler, tagged host, GC or mapping. In functional
//! mode (preconditioning) nothing is recorded and no time passes.

use crate::config::GcScope;
use crate::error::{FlashError, SimError};
use crate::flash::{FlashArray, Oob};
use crate::geometry::{BlockId, Lpn, PlaneId, Ppn};
use crate::host::IoOp;
use crate::scheduler::{scope_code, FlashOp, OpKind, Scheduler, SimTime, Tag, NO_DEP, TAGS};
use serde::{Deserialize, Serialize};

/// Flash operation counts by tag (`[host, gc, mapping]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FlashCounts {
    /// Page reads to the controller.
    pub reads: [u64; TAGS],
    /// Page programs from the controller (copy-back destinations not included).
    pub programs: [u64; TAGS],
    /// Intra-plane copy-backs (each programs one destination page).
    pub copybacks: [u64; TAGS],
    /// Block erases.
    pub erases: [u64; TAGS],
}

impl FlashCounts {
    /// All pages programmed, copy-back destinations included.
    pub fn pages_programmed(&self) -> u64 {
        self.programs.iter().sum::<u64>() + self.copybacks.iter().sum::<u64>()
    }
    /// Difference `self - earlier`.
    pub fn since(&self, earlier: &FlashCounts) -> FlashCounts {
        let d = |a: &[u64; TAGS], b: &[u64; TAGS]| std::array::from_fn(|i| a[i] - b[i]);
        FlashCounts {
            reads: d(&self.reads, &earlier.reads),
            programs: d(&self.programs, &earlier.programs),
            copybacks: d(&self.copybacks, &earlier.copybacks),
            erases: d(&self.erases, &earlier.erases),
        }
    }
}

/// A recorded operation of the batch being built, for data dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpRef(u32);

/// The FTL's handle on the flash array for one call.
pub struct FlashCtx<'a> {
    flash: &'a mut FlashArray,
    ops: &'a mut Vec<FlashOp>,
    counts: &'a mut FlashCounts,
    record: bool,
    tag: Tag,
    sched: Option<&'a mut Scheduler>,
    buffer_load: Option<f64>,
    placement: u16,
    /// How many of `ops` the scheduler has counted into its plane loads for this context's
    /// batch ([`FlashCtx::least_loaded_plane`]); the batch only grows while the context lives.
    ops_counted: usize,
}

/// Whether an FTL call's flash operations take time: timed (recorded into the context's
/// operations for the scheduler, which the FTL may ask about plane load) or functional
/// (nothing recorded, no time passes: preconditioning, a hold-up flush, reads outside the run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashTime {
    /// Operations recorded for the scheduler: they take time.
    Timed,
    /// Nothing recorded: the flash changes, no time passes.
    Functional,
}

impl<'a> FlashCtx<'a> {
    /// A context counting into `counts` and, when `time` is timed, recording into `ops`.
    pub fn new(
        flash: &'a mut FlashArray,
        ops: &'a mut Vec<FlashOp>,
        counts: &'a mut FlashCounts,
        time: FlashTime,
    ) -> Self {
        let record = time == FlashTime::Timed;
        FlashCtx {
            flash,
            ops,
            counts,
            record,
            tag: Tag::Host,
            sched: None,
            buffer_load: None,
            placement: 0,
            ops_counted: 0,
        }
    }

    /// With the scheduler that will place the recorded operations, so that the FTL can ask
    /// how loaded each plane is ([`FlashCtx::least_loaded_plane`]).
    pub fn with_scheduler(mut self, sched: &'a mut Scheduler) -> Self {
        self.sched = Some(sched);
        self
    }

    /// With the FDP placement handle the host named for the request's writes (0 unless it
    /// named one; docs/fdp.md).
    pub fn with_placement(mut self, placement: u16) -> Self {
        self.placement = placement;
        self
    }

    /// The FDP placement handle of the writes under way (0: the default handle).
    #[inline]
    pub fn placement(&self) -> u16 {
        self.placement
    }

    /// With the write-behind buffer's utilisation (0-1, its moving average), for an FTL that
    /// picks its work by write pressure (rcFTL's mode selector, seed 003 Sec. IV-B).
    pub fn with_buffer_load(mut self, load: Option<f64>) -> Self {
        self.buffer_load = load;
        self
    }

    /// The write-behind buffer's mean utilisation (0-1) over its window, `None` without
    /// such a buffer (`host.write_buffer_policy = "write_behind"`).
    pub fn write_buffer_load(&self) -> Option<f64> {
        self.buffer_load
    }

    /// Read-only view of the flash state.
    #[inline]
    pub fn flash(&self) -> &FlashArray {
        self.flash
    }

    /// Tag for the operations that follow; returns the previous tag.
    pub fn set_tag(&mut self, tag: Tag) -> Tag {
        std::mem::replace(&mut self.tag, tag)
    }

    #[inline]
    fn push(&mut self, kind: OpKind, after: Option<OpRef>, addr: u32, addr2: u32) {
        if self.record {
            self.ops.push(FlashOp { kind, tag: self.tag, after: after.map_or(NO_DEP, |r| r.0), addr, addr2 });
        }
    }

    /// The operation recorded last in this batch (`None` when nothing is recorded, e.g. in
    /// functional mode), for a later one to wait for.
    pub fn last_op(&self) -> Option<OpRef> {
        (self.record && !self.ops.is_empty()).then(|| OpRef(self.ops.len() as u32 - 1))
    }

    /// Read a page.
    pub fn read(&mut self, ppn: Ppn) -> Result<Oob, FlashError> {
        self.read_after(ppn, None)
    }

    /// Read a page once `after` (e.g. the translation read that located it) has completed.
    pub fn read_after(&mut self, ppn: Ppn, after: Option<OpRef>) -> Result<Oob, FlashError> {
        self.read_kind(OpKind::Read, ppn, after)
    }

    /// Read a page's spare area alone (the array read, then only the spare bytes on the bus)
    /// once `after` has completed.
    pub fn read_spare_after(&mut self, ppn: Ppn, after: Option<OpRef>) -> Result<Oob, FlashError> {
        self.read_kind(OpKind::ReadSpare, ppn, after)
    }

    fn read_kind(&mut self, kind: OpKind, ppn: Ppn, after: Option<OpRef>) -> Result<Oob, FlashError> {
        let oob = self.flash.read(ppn)?;
        self.record_read(kind, ppn, after);
        Ok(oob)
    }

    /// Count and record a read of `ppn` (its state checked by the caller).
    #[inline]
    fn record_read(&mut self, kind: OpKind, ppn: Ppn, after: Option<OpRef>) {
        self.counts.reads[self.tag as usize] += 1;
        self.push(kind, after, ppn, 0);
    }

    /// Read a page's spare area during a scan (recovery): the OOB, or `None` for a page that
    /// holds nothing readable (erased, skipped or torn), which costs a read all the same.
    pub fn read_spare(&mut self, ppn: Ppn) -> Option<Oob> {
        self.record_read(OpKind::Read, ppn, None);
        self.flash.read(ppn).ok()
    }

    /// Read the page `ppn` a map gives for `lpn`, once `after` has completed, and return the
    /// version it holds; a page holding another LPN means the map is corrupt (panics).
    pub fn read_mapped(&mut self, ppn: Ppn, lpn: Lpn, after: Option<OpRef>) -> Result<u32, FlashError> {
        let oob = self.read_after(ppn, after)?;
        assert_eq!(oob.lpn, lpn, "page {ppn} mapped for lpn {lpn} holds lpn {}", oob.lpn);
        Ok(oob.version)
    }

    /// Program a page at its block's write pointer.
    pub fn program(&mut self, ppn: Ppn, oob: Oob) -> Result<(), FlashError> {
        self.program_after(ppn, oob, None)
    }

    /// Program a page once `after` (e.g. the read of the data it rewrites) has completed.
    pub fn program_after(&mut self, ppn: Ppn, oob: Oob, after: Option<OpRef>) -> Result<(), FlashError> {
        self.flash.program(ppn, oob)?;
        self.counts.programs[self.tag as usize] += 1;
        self.push(OpKind::Program, after, ppn, 0);
        Ok(())
    }

    /// Move a page's data to `dst`: intra-plane copy-back when `copyback`, otherwise a read
    /// out to the controller followed by a program (the program waits for the read).
    /// The source stays valid; the caller remaps and invalidates it.
    pub fn copy(&mut self, src: Ppn, dst: Ppn, copyback: bool) -> Result<Oob, FlashError> {
        if copyback {
            self.flash.copyback(src, dst)?;
            self.counts.copybacks[self.tag as usize] += 1;
            self.push(OpKind::Copyback, None, src, dst);
            return self.flash.read(dst);
        }
        let oob = self.flash.read(src)?;
        self.copy_read(src, oob, dst, false)?;
        Ok(oob)
    }

    /// [`FlashCtx::copy`] of a page whose OOB `oob` the caller has just read from the flash
    /// (GC reads it to find the page's owner): off-chip, a read and a program that waits for
    /// it are recorded without reading the page's state a second time (that second read was
    /// 5.5% of the benchmark's instructions, docs/performance.md).
    pub fn copy_read(&mut self, src: Ppn, oob: Oob, dst: Ppn, copyback: bool) -> Result<(), FlashError> {
        if copyback {
            return self.copy(src, dst, true).map(drop);
        }
        debug_assert_eq!(self.flash.read(src).ok(), Some(oob), "page {src} copied with another OOB");
        self.record_read(OpKind::Read, src, None);
        let read = self.last_op();
        self.program_after(dst, oob, read)
    }

    /// Erase a block.
    pub fn erase(&mut self, block: BlockId) -> Result<(), FlashError> {
        self.flash.erase(block)?;
        self.counts.erases[self.tag as usize] += 1;
        let first = self.flash.geometry().first_page(block);
        self.push(OpKind::Erase, None, first, 0);
        Ok(())
    }

    /// Invalidate a page (no flash operation: validity lives in controller memory).
    pub fn invalidate(&mut self, ppn: Ppn) -> Result<(), FlashError> {
        self.flash.invalidate(ppn)
    }

    /// Recovery found `ppn` to hold the live copy of its page (no flash operation).
    pub fn revalidate(&mut self, ppn: Ppn) -> Result<(), FlashError> {
        self.flash.revalidate(ppn)
    }

    /// Waste the erased page `ppn` at its block's write pointer (e.g. to keep copy-back
    /// parity); it is counted and never programmed.
    pub fn skip_page(&mut self, ppn: Ppn) -> Result<(), FlashError> {
        let g = self.flash.geometry();
        let (block, idx) = (g.block_of(ppn), g.page_in_block(ppn));
        if self.flash.write_pointer(block) != idx {
            return Err(FlashError::ProgramOutOfOrder { ppn, write_pointer: self.flash.write_pointer(block) });
        }
        self.flash.skip_to(block, idx + 1).map(|_| ())
    }

    /// Hold host I/O in `scope` around `plane` until the GC work recorded so far ends.
    pub fn block_scope(&mut self, plane: PlaneId, scope: GcScope) {
        if scope != GcScope::Plane {
            let first = self.flash.geometry().first_page(self.flash.geometry().first_block(plane));
            self.push(OpKind::Barrier, None, first, scope_code(scope));
        }
    }

    /// The scheduler's clock (timed mode only), for an FTL that watches time (WAFTL's idle
    /// prediction).
    pub fn now(&self) -> Option<SimTime> {
        self.sched.as_deref().map(|s| s.now())
    }

    /// Whether operations are recorded and timed (not functional mode).
    pub fn is_timed(&self) -> bool {
        self.record && self.sched.is_some()
    }

    /// Whether this context's operations take time (a measured run's) or are functional
    /// (preconditioning, a page given contents off the clock).
    pub fn time(&self) -> FlashTime {
        if self.record {
            FlashTime::Timed
        } else {
            FlashTime::Functional
        }
    }

    /// Of `planes` (tried in their order), the one whose queue frees first by the
    /// scheduler's estimate, the operations recorded so far counted
    /// ([`Scheduler::least_loaded`]); the first one on a tie. `None` without a scheduler
    /// (functional mode) or planes.
    pub fn least_loaded_plane(&mut self, planes: impl Iterator<Item = PlaneId>) -> Option<PlaneId> {
        let sched = self.sched.as_deref_mut()?;
        let from = self.ops_counted;
        assert!(from <= self.ops.len(), "a batch lost operations while its context lived");
        self.ops_counted = self.ops.len();
        // The first question of the context counts its batch from the start.
        sched.least_loaded(&self.ops[from..], from == 0, planes)
    }
}

/// How far ahead of a write a [`Ftl::prefetch_write`] hint comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchStage {
    /// Far ahead: fetch the mapping entry.
    Map,
    /// Near: the entry is cached now; fetch the state of the page it points to.
    OldPage,
}

/// The kind of the next step of garbage collection ([`Ftl::gc_next`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GcNext {
    /// Nothing to collect.
    Nothing,
    /// Move valid data: one page (page mapping) or one data block's merge (hybrid mapping,
    /// a copy of the block's pages and the erase of the old data block).
    Copy,
    /// Erase a victim left with no valid page.
    Erase,
}

/// What a time-series value of an FTL is ([`SeriesValue`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesKind {
    /// A level at the interval's end (blocks mapped one way, a queue's length).
    Level,
    /// A count since the FTL was built: the time series shows its increase over the interval.
    Count,
}

/// One column an FTL adds to the time series ([`Ftl::series`]): WAFTL's page- and
/// block-mapped blocks, rcFTL's victims by migration mode. The engine keeps the columns in
/// the order the FTL gives them, under their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesValue {
    /// Column name (snake case, unit last).
    pub name: &'static str,
    /// Its value now.
    pub value: u64,
    /// Level or count.
    pub kind: SeriesKind,
}

/// Garbage-collection counters every FTL reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcCounts {
    /// Victim blocks collected (erased) in the foreground, on a host request's path.
    pub foreground_collections: u64,
    /// Victim blocks collected in host idle time.
    pub background_collections: u64,
    /// Valid pages moved by GC.
    pub pages_moved: u64,
    /// GCs that had to fall back (FTL-specific, e.g. PCFTL's never-ending GC).
    pub fallbacks: u64,
}

impl GcCounts {
    /// All collections.
    pub fn collections(&self) -> u64 {
        self.foreground_collections + self.background_collections
    }
    /// Add `other` to these counts.
    pub fn add(&mut self, other: &GcCounts) {
        self.foreground_collections += other.foreground_collections;
        self.background_collections += other.background_collections;
        self.pages_moved += other.pages_moved;
        self.fallbacks += other.fallbacks;
    }
    /// Whether every count is at least `other`'s.
    pub fn covers(&self, other: &GcCounts) -> bool {
        self.foreground_collections >= other.foreground_collections
            && self.background_collections >= other.background_collections
            && self.pages_moved >= other.pages_moved
            && self.fallbacks >= other.fallbacks
    }
    /// Difference `self - earlier`.
    pub fn since(&self, e: &GcCounts) -> GcCounts {
        GcCounts {
            foreground_collections: self.foreground_collections - e.foreground_collections,
            background_collections: self.background_collections - e.background_collections,
            pages_moved: self.pages_moved - e.pages_moved,
            fallbacks: self.fallbacks - e.fallbacks,
        }
    }
}

/// A host command an FTL refused, with the NVMe status it completes with (a zoned namespace's
/// rules, docs/zns.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The status code (status code type 1h, command specific, for the zone statuses).
    pub code: u8,
    /// Its name in results.json (`zone_invalid_write`).
    pub name: &'static str,
}

/// What an FTL makes of a host command before any of it is done ([`Ftl::admit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Done as given.
    Take,
    /// Refused as a whole with this status: it completes at once, nothing done.
    Refused(Refusal),
    /// A zone append: its data is written from this sector on (the zone's write pointer).
    WriteAt(u64),
    /// A zone reset: the pages of `sectors` sectors from `offset_sector` (whole zones) are
    /// dropped as a trim drops them, and the FTL erases the zones.
    Reset {
        /// First sector.
        offset_sector: u64,
        /// Length in sectors.
        sectors: u64,
    },
    /// Done in full by the FTL: a change of zone state without flash work (open, close,
    /// finish).
    Done,
}

/// A flash translation layer.
pub trait Ftl {
    /// Registered name.
    fn name(&self) -> &'static str;
    /// What the FTL makes of the host command `op` on sectors `offset_sector..+sectors`, as a
    /// whole, before any of it is done: a zoned namespace refuses a write off its zone's write
    /// pointer with the NVMe status, places a zone append, takes zone management commands;
    /// an error stops the run. Default: reads, writes and trims are taken, the zoned command
    /// set is an error (no zones).
    fn admit(&mut self, op: IoOp, _offset_sector: u64, _sectors: u32) -> Result<Admission, SimError> {
        if op.is_zoned() {
            return Err(SimError::Request(format!(
                "a {} command needs a zoned namespace (--ftl zns); ftl {} has no zones",
                op.name(),
                self.name()
            )));
        }
        Ok(Admission::Take)
    }
    /// Read a logical page; returns the version found, or `None` if it was never written
    /// or was trimmed (no flash read is needed then).
    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError>;
    /// Write a whole logical page holding `version`.
    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError>;
    /// Write `lpn` as data the drive held before the run began: a page the host reads that
    /// was never written is given contents off the clock (`host.unmapped_read = "flash"`).
    /// The page belongs where a drive in service would hold it, not in a staging area on its
    /// way there (WAFTL's Buffer Zone, issue 34); the default is [`Ftl::write`].
    fn prewrite(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        self.write(ctx, lpn, version)
    }
    /// Write the whole logical pages `first..first + versions.len()` of one host request,
    /// page `first + i` holding `versions[i]`. A block-mapped FTL overrides it to rewrite
    /// each logical block once per request instead of once per page; page-at-a-time FTLs
    /// keep this default, which is [`Ftl::write`] in page order.
    fn write_run(&mut self, ctx: &mut FlashCtx, first: Lpn, versions: &[u32]) -> Result<(), SimError> {
        for (lpn, &version) in (first..).zip(versions) {
            self.write(ctx, lpn, version)?;
        }
        Ok(())
    }
    /// A hint that `lpn` will be written soon, for callers that know addresses ahead
    /// (preconditioning, and the replay loop for the request waiting to issue, read or
    /// write): at [`PrefetchStage::Map`] the FTL may prefetch the mapping entry, a few
    /// writes later at [`PrefetchStage::OldPage`] the state of the page it maps to.
    /// No effect on results.
    fn prefetch_write(&self, _flash: &FlashArray, _lpn: Lpn, _stage: PrefetchStage) {}
    /// Discard a logical page.
    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError>;
    /// One preemptible unit of idle-time work (one page copy or one erase); `false` when
    /// there is nothing worth doing.
    fn background_step(&mut self, ctx: &mut FlashCtx) -> Result<bool, SimError>;
    /// GC counters since creation.
    fn gc_counts(&self) -> GcCounts;
    /// Free blocks in the whole drive (time series).
    fn free_blocks(&self) -> u64;
    /// Controller SRAM used by the mapping, bytes.
    fn mapping_sram_bytes(&self) -> u64;
    /// The measured run starts: reset the counters behind [`Ftl::extra_metrics`] so they
    /// cover the run only (GC counts are differenced by the engine instead).
    fn begin_measurement(&mut self) {}
    /// The FTL's own time-series columns, in a fixed order, with their values now (none by
    /// default): called at every interval's end.
    fn series(&self) -> Vec<SeriesValue> {
        Vec::new()
    }
    /// FTL-specific metrics, by name with units in the names.
    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// Preconditioning has ended: finish, functionally, the deferred work a drive left idle
    /// would finish before the measured run (WAFTL drains a full zone and erases the blocks
    /// waiting for it), so that the run is not charged for the preconditioning's debts.
    /// Default: nothing deferred.
    fn settle(&mut self, _ctx: &mut FlashCtx) -> Result<(), SimError> {
        Ok(())
    }
    /// Whole-state consistency check against the flash (tests and debug builds).
    fn check_invariants(&self, flash: &FlashArray);
    /// The FTL's whole state, for a drive snapshot ([`crate::state::encode`] of itself).
    fn save_state(&self) -> Vec<u8>;
    /// Replace the state with one [`Ftl::save_state`] gave, from an FTL built for the same
    /// config; the message says what did not decode.
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String>;
    /// GC started, stepped and suspended from outside, for an FTL that can run as a unit of
    /// a channel system (seed 004); `None` (the default) for the others. The registry
    /// declares which FTLs give it (`channel_unit`), and a test checks the two agree.
    fn managed_gc(&mut self) -> Option<&mut dyn ManagedGc> {
        None
    }
    /// Recovery after a power cut, for an FTL that recovers; `None` (the default) for the
    /// others. Declared in the registry (`recovers`) as well, checked by a test.
    fn recovery(&mut self) -> Option<&mut dyn Recovery> {
        None
    }
}

/// GC driven from outside the FTL, one step at a time: the channel managers of seed 004
/// start it, step it at preemption points and suspend it by not calling again
/// ([`Ftl::managed_gc`]).
pub trait ManagedGc {
    /// Whether the FTL has run out of free space, so that its next host write would collect
    /// garbage first ("mandatory" GC, seed 004 Sec. 3.2.1). A manager steps GC until this is
    /// false before it writes, so that mandatory GC is seen by the other channels.
    fn gc_due(&self) -> bool;
    /// Whether writing `lpn` next would collect garbage first: [`ManagedGc::gc_due`], or GC
    /// that only this page's write needs (FAST's partial merge when `lpn` breaks the
    /// sequential log block's run). An FTL with such GC arms it here, so that `gc_due`,
    /// `gc_next` and `gc_step` then perform it as steps a manager sees, before the write
    /// (seed 004 Sec. 3.3: cycle filling starts on any mandatory GC). Default: `gc_due`.
    fn gc_due_for(&mut self, _flash: &FlashArray, _lpn: Lpn) -> bool {
        self.gc_due()
    }
    /// Spare blocks, as seed 004's N_s counts them (Table I, L168: "the runtime total number
    /// of spare blocks in each channel"): the free space, in blocks, the FTL can still write
    /// host data to before it must collect. A page-mapped FTL's free blocks; a hybrid FTL's
    /// free log space, since its free blocks beyond the log take no host data (so N_s means
    /// the same whatever the log's size).
    fn spare_blocks(&self, flash: &FlashArray) -> u64;
    /// What the next [`ManagedGc::gc_step`] on `plane` would do (cycle filling matches the
    /// initiator's operation type, seed 004 Sec. 3.3.2). `&mut`: finding the best victim may
    /// advance the victim index's cursor.
    fn gc_next(&mut self, flash: &FlashArray, plane: PlaneId) -> GcNext;
    /// Start or continue GC on `plane` by one step (one page copy or the erase), whatever
    /// its free-block count, if it has a block with an invalid page or a job under way.
    /// `false` when there was nothing to do.
    fn gc_step(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError>;
    /// Cycle filling's follower step while the initiator copies (seed 004 Sec. 3.3.2): move
    /// valid data, never erase. When the victim under way is drained, an FTL that can
    /// leaves it for a later erase ([`ManagedGc::gc_step`] erases it first) and copies from
    /// its next-best victim ("proceeds to its second-best victim"). `false` when no copy is
    /// possible. Default: a [`ManagedGc::gc_step`] when that would copy.
    fn gc_copy_step(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        if self.gc_next(ctx.flash(), plane) == GcNext::Copy {
            return self.gc_step(ctx, plane);
        }
        Ok(false)
    }
    /// A manager resumes GC on `plane` after the unit has written since its last step: a
    /// page-mapped FTL may drop the suspended victim for a better one (seed 004 Sec. 3.2.2:
    /// "the resumed garbage collection goes to the new victim block"); hybrid mapping resumes
    /// the same merge. Returns whether it switched. Default: keep it.
    fn gc_repick(&mut self, _flash: &FlashArray, _plane: PlaneId) -> bool {
        false
    }
    /// Whether a collection on `plane` is part-way (a victim taken and not yet erased):
    /// without preemption points, early GC runs until this is false (seed 004 Sec. 3.2.2).
    fn gc_job_active(&self, plane: PlaneId) -> bool;
}

/// Recovery after a power cut ([`Ftl::recovery`]; docs/power-loss.md).
pub trait Recovery {
    /// A clean shutdown: write everything the FTL keeps only in controller memory to flash,
    /// so that a later recovery starts from here (a demand FTL writes its modified entries
    /// back and rewrites every translation page, each then a backup point as new as the
    /// shutdown). Default: nothing to write (the page FTL has no map on flash).
    fn checkpoint(&mut self, _ctx: &mut FlashCtx) -> Result<(), SimError> {
        Ok(())
    }
    /// Recover after a power cut ([`FlashArray::restart`]). `self` is the FTL that was
    /// running when the power went; its controller memory is gone, so an implementation
    /// starts from an FTL built anew from `cfg` and takes over from `self` only what models
    /// flash contents the flash array does not hold (a demand FTL's translation-page
    /// entries). It reads what it must through `ctx` (counted and timed like any
    /// operation), re-validates the live pages and finishes what the cut interrupted. Each
    /// FTL documents the pages it reads (docs/power-loss.md).
    fn recover(&mut self, ctx: &mut FlashCtx, cfg: &crate::config::Resolved) -> Result<(), SimError>;
}
