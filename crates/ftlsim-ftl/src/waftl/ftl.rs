//! The WAFTL FTL on the flash model (seed 002 Secs. III-B to III-E).
//!
//! - Every host write is logged into the Buffer Zone (`zone`): a set of whole blocks written
//!   in order, lent out of the block manager, youngest first (Sec. III-E: "we reserve top
//!   youngest blocks for future Buffer Zone allocation"), spread evenly over the planes. A
//!   read the zone does not serve is copied into it as a clean page (L137).
//! - When the zone is full its block nodes migrate by Algorithm 1 (`zone::plan`): page-mapped
//!   data goes through the page-mapped part, a DFTL (`crate::dftl`) with the same mapping
//!   cache as DFTL gets (Table II: 256 KB), whose data blocks are the PMBs and whose
//!   translation pages are the PMT on mapping blocks with its cached part (CPMT) and
//!   directory; block-mapped data goes to BMBs, whole blocks lent like the zone's, each page
//!   at its offset. The GMT (SRAM) says which, per logical block. The emptied zone is a Dirty
//!   Buffer Zone waiting for erasure, as is a BMB a rewrite replaced.
//! - Offline GC (Sec. III-D) erases those in idle time, at most Eq. 4's budget per idle period
//!   predicted by Eq. 3, one erase per step so a request arriving stops it between erases
//!   (counted as an interruption). Online GC, when a plane is down to its GC threshold and a
//!   block must be lent, erases the plane's waiting blocks first, and only then lets the
//!   page-mapped part collect its own blocks (PMBs and mapping blocks, the most invalid first).
//!
//! Zone pages are programmed `Staged` (host data logged on its way home), BMB and PMB pages
//! `Data`: what lets power-loss recovery (beyond the paper, which has none; `recovery`) tell
//! the Buffer Zone from the data blocks in a full scan.

mod recovery;

use super::draining::DrainingZone;
use super::erase_queue::EraseQueue;
use super::idle::IdlePredictor;
use super::mapping_size;
use super::options::{MigrationStep, Prewrite, ReadMissCopy, WaftlOptions, ZoneMigration};
use super::threshold::{DynamicThreshold, Threshold};
use super::zone::{plan, BlockNode, Bzmt, Home, Plan};
use super::zone_log::{Next, ZoneLog};
use crate::block::pools::skip_to;
use crate::demand::GcMode;
use crate::dftl::{Dftl, Flavour};
use crate::options::Options;
use ftlsim_core::config::{Allocation, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts, Recovery, SeriesKind, SeriesValue};
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, Ppn, NONE};
use ftlsim_core::scheduler::{SimTime, Tag};
use serde::{Deserialize, Serialize};

/// GMT value of a page-mapped logical block (the paper's -1).
const PAGE_MAPPED: u32 = u32::MAX - 1;

/// `run_blocks` flags.
const RUN_ACCESSED: u8 = 1;
const RUN_MIGRATED: u8 = 2;

/// What WAFTL counts (`extra_metrics`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Counts {
    migrations: u64,
    bmb_rewrites: u64,
    pmb_updates: u64,
    new_popular_to_pmb: u64,
    new_to_pmb: u64,
    new_to_bmb: u64,
    dropped_clean: u64,
    read_miss_copies: u64,
    /// Read misses not copied: `read_miss_copy` left them out.
    read_misses_not_copied: u64,
    /// Pages programmed by migration (zone pages and a replaced BMB's pages moved home).
    migration_programs: u64,
    /// Never-written pages a read asked for, put at home before the run (`prewrite`).
    prewrites_home: u64,
    offline_erases: u64,
    online_erases: u64,
    offline_interruptions: u64,
    idle_periods: u64,
    bmb_to_pmb: u64,
    short_zones: u64,
    nodes_migrated_idle: u64,
    nodes_migrated_paced: u64,
    nodes_migrated_at_full_zone: u64,
    /// BMB rewrites a power cut stopped part-way, finished by recovery.
    rewrites_finished_by_recovery: u64,
}

/// A block node part-way through its migration: its pages move one per step while the node
/// stays in the draining zone, so that reads and writes still find those not yet moved.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct InFlight {
    lbn: u32,
    to: Destination,
}

/// Where a node in flight goes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum Destination {
    /// The page-mapped part (the GMT entry says so from the node's start).
    Pmb,
    /// The BMB `new`, replacing `old` if any, written in offset order up to `next_off` (the
    /// GMT points at `new` once every offset is passed).
    Bmb { new: BlockId, old: Option<BlockId>, next_off: u32 },
}

/// Why a block node of a full zone migrates now.
#[derive(Debug, Clone, Copy)]
enum MigrationCause {
    /// In idle time (background).
    Idle,
    /// With a write into the new zone, which would otherwise fill first.
    Paced,
    /// The new zone is full (or `migration = "foreground"`): in the request that found it so.
    ZoneFull,
}

/// WAFTL.
#[derive(Serialize, Deserialize)]
pub struct Waftl {
    geo: Geometry,
    ppb: u32,
    logical_pages: u32,
    /// The page-mapped part: PMBs, mapping blocks, CPMT.
    pm: Dftl,
    /// Per logical block: NONE (never migrated), PAGE_MAPPED, or its BMB (`set_gmt`).
    gmt: Vec<u32>,
    /// GMT entries that are PAGE_MAPPED, and BMBs.
    mapped: (u64, u64),
    /// Per logical block, since the measured run began: RUN_ACCESSED (the host wrote or read
    /// it), RUN_MIGRATED (and a migration has placed it since); of the latter, the ones now
    /// page-mapped and block-mapped: Fig. 15's shares on a drive preconditioned through WAFTL
    /// (the fill's blocks still in the zone when the run starts are not the workload's).
    run_blocks: Vec<u8>,
    run_mapped: (u64, u64),
    bzmt: Bzmt,
    /// The zone's blocks, written round the planes.
    zone: ZoneLog,
    /// A full zone whose block nodes still move out (incremental migration).
    draining: DrainingZone,
    /// The draining zone's node whose pages are moving.
    in_flight: Option<InFlight>,
    migration: ZoneMigration,
    migration_step: MigrationStep,
    read_miss_copy: ReadMissCopy,
    prewrite: Prewrite,
    /// Lent blocks with no valid page, waiting for an erase (Dirty Buffer Zones, replaced BMBs).
    to_erase: EraseQueue,
    threshold: Threshold,
    idle: IdlePredictor,
    /// The idle period under way: when it began and the erases it may still do.
    idle_since: Option<SimTime>,
    idle_budget: u32,
    t_erase_ns: u64,
    /// Free blocks a plane keeps for the page-mapped part's GC.
    gc_threshold: u32,
    /// Host pages and runs written, for the average request size of the dynamic threshold.
    pages_seen: u64,
    runs_seen: u64,
    counts: Counts,
    gc: GcCounts,
}

/// Copy `src` (a zone page, or a page of a BMB being replaced) to its offset `dst` in a BMB:
/// a read out to the controller and a program, what `FlashCtx::copy` costs without copy-back,
/// with the spare area saying the page is home (a zone page is `Staged`).
fn copy_home(ctx: &mut FlashCtx, src: Ppn, dst: Ppn) -> Result<(), SimError> {
    let oob = ctx.read(src)?;
    let read = ctx.last_op();
    ctx.program_after(dst, Oob { kind: PageKind::Data, ..oob }, read)?;
    Ok(())
}

/// The page-mapped part: the DFTL engine with per-plane GC, its CMT the CPMT.
fn page_mapped_part(cfg: &Resolved) -> Result<Dftl, ConfigError> {
    Dftl::build(
        cfg,
        Flavour {
            name: "waftl",
            second_level: false,
            gc: GcMode::per_plane(cfg)?,
            allocation: Allocation::RoundRobin,
            plane_info: false,
            remake: page_mapped_part,
        },
    )
}

impl Waftl {
    /// Build for a validated config (`[ftl.waftl]`).
    pub fn new(cfg: &Resolved) -> Result<Waftl, ConfigError> {
        let d = cfg.derived();
        let g = &cfg.geometry;
        let w = &WaftlOptions::of(cfg)?;
        let ppb = g.pages_per_block;
        let block_bytes = u64::from(ppb) * u64::from(g.page_size_bytes);
        let zone_blocks = w.buffer_zone_bytes / block_bytes;
        let per_plane = (zone_blocks / u64::from(g.planes())).max(1) as u32;
        // The zone and one BMB rewrite in flight must fit beside the page-mapped part's
        // own room for GC; the data itself lives in the logical space's share.
        let spare = g.blocks_per_plane.saturating_sub(d.logical_pages.div_ceil(ppb).div_ceil(g.planes()));
        let zones = match w.migration {
            ZoneMigration::Incremental => 2, // the new zone beside the one draining
            ZoneMigration::Foreground => 1,
        };
        let need = zones * per_plane + d.gc_threshold_blocks + 4;
        if spare < need {
            return Err(ConfigError::Invalid {
                key: "ftl.waftl.buffer_zone_bytes".into(),
                value: w.buffer_zone_bytes.to_string(),
                rule: format!(
                    "{zones} zone(s) of {per_plane} blocks per plane (migration = {:?}), the GC threshold ({}) and 4 \
                     blocks of room need {need} spare blocks per plane, the drive has {spare}: raise \
                     overprovisioning.share, shrink the zone or migrate in the foreground",
                    w.migration, d.gc_threshold_blocks
                ),
            });
        }
        let pm = page_mapped_part(cfg)?;
        let threshold_pages = if w.threshold_pages == 0 { ppb } else { w.threshold_pages };
        Ok(Waftl {
            geo: g.clone(),
            ppb,
            logical_pages: d.logical_pages,
            pm,
            gmt: vec![NONE; d.logical_pages.div_ceil(ppb) as usize],
            mapped: (0, 0),
            run_blocks: vec![0; d.logical_pages.div_ceil(ppb) as usize],
            run_mapped: (0, 0),
            bzmt: Bzmt::new(ppb),
            zone: ZoneLog::new(ppb, g.planes(), per_plane * g.planes()),
            draining: DrainingZone::new(ppb),
            in_flight: None,
            migration: w.migration,
            migration_step: w.migration_step,
            read_miss_copy: w.read_miss_copy,
            prewrite: w.prewrite,
            to_erase: EraseQueue::new(g.planes()),
            threshold: match w.dynamic_d {
                Some(dd) => Threshold::Dynamic(DynamicThreshold::new(dd, ppb)),
                None => Threshold::Static(threshold_pages),
            },
            idle: IdlePredictor::new(w.idle_alpha),
            idle_since: None,
            idle_budget: 0,
            t_erase_ns: cfg.timing.t_bers_ns.max(1),
            gc_threshold: d.gc_threshold_blocks.max(1),
            pages_seen: 0,
            runs_seen: 0,
            counts: Counts::default(),
            gc: GcCounts::default(),
        })
    }

    /// A migration of the measured run starts on `lbn`: if the run accessed it, it counts
    /// among the blocks the run migrated (Fig. 15's shares), with its mapping as it is; the
    /// migration's `set_gmt` then moves it to its new kind.
    fn note_run_migration(&mut self, lbn: u32) {
        let flags = &mut self.run_blocks[lbn as usize];
        if *flags & RUN_ACCESSED != 0 && *flags & RUN_MIGRATED == 0 {
            *flags |= RUN_MIGRATED;
            match self.gmt[lbn as usize] {
                NONE => {}
                PAGE_MAPPED => self.run_mapped.0 += 1,
                _ => self.run_mapped.1 += 1,
            }
        }
    }

    /// Point `lbn`'s GMT entry at `v`, keeping the count of each kind, over the drive and
    /// over the blocks the measured run migrated.
    fn set_gmt(&mut self, lbn: u32, v: u32) {
        let kind = |e: u32| match e {
            NONE => (0, 0),
            PAGE_MAPPED => (1, 0),
            _ => (0, 1),
        };
        let (old, new) = (kind(self.gmt[lbn as usize]), kind(v));
        self.mapped = (self.mapped.0 + new.0 - old.0, self.mapped.1 + new.1 - old.1);
        let flags = &mut self.run_blocks[lbn as usize];
        if *flags & RUN_ACCESSED != 0 {
            let was = if *flags & RUN_MIGRATED != 0 { old } else { (0, 0) };
            *flags |= RUN_MIGRATED;
            self.run_mapped = (self.run_mapped.0 + new.0 - was.0, self.run_mapped.1 + new.1 - was.1);
        }
        self.gmt[lbn as usize] = v;
    }

    fn home(&self, lbn: u32) -> Home {
        match self.gmt[lbn as usize] {
            NONE => Home::Unmapped,
            PAGE_MAPPED => Home::PageMapped,
            b => Home::BlockMapped(b),
        }
    }

    /// A host operation arrives: an idle period under way ends (Eq. 3 learns its length; an
    /// offline GC that had budget and work left was interrupted).
    fn host_activity(&mut self, ctx: &FlashCtx) {
        if let Some(since) = self.idle_since.take() {
            let now = ctx.now().unwrap_or(since);
            self.idle.observe(now.saturating_sub(since));
            self.counts.idle_periods += 1;
            if self.idle_budget > 0 && !self.to_erase.is_empty() {
                self.counts.offline_interruptions += 1;
            }
        }
    }

    /// The next zone page (round the planes), migrating the zone first when it is full and
    /// lending a block when a plane's open one is.
    fn zone_page(&mut self, ctx: &mut FlashCtx) -> Result<Ppn, SimError> {
        while self.draining.behind(self.zone.used(), self.zone.capacity()) {
            self.migration_step(ctx, MigrationCause::Paced)?;
        }
        loop {
            match self.zone.next(&self.geo, ctx.flash()) {
                Next::Page(p) => return Ok(p),
                Next::Lend(slot) => match self.lend(ctx, slot, true)? {
                    Some(b) => self.zone.opened(slot, b),
                    // The drive is short of room (block-mapped data below a full block leaves
                    // pages unused): a smaller zone, migrated sooner, rather than a halt.
                    None if !self.zone.is_empty() => {
                        self.counts.short_zones += 1;
                        self.zone.cut_short();
                    }
                    None => return Err(self.no_room(ctx.flash())),
                },
                Next::Full => self.zone_full(ctx)?,
            }
        }
    }

    /// The error of a drive with no block to lend and nothing to reclaim on any plane.
    fn no_room(&self, f: &FlashArray) -> SimError {
        let valid: u64 = (0..self.geo.blocks()).map(|b| u64::from(f.valid_count(b))).sum();
        let pages = u64::from(self.geo.blocks()) * u64::from(self.ppb);
        SimError::Ftl(format!(
            "waftl: no plane has a free block for the Buffer Zone or anything to reclaim \
             ({valid} of the drive's {pages} pages valid): raise overprovisioning.share or shrink ftl.waftl.buffer_zone_bytes"
        ))
    }

    /// Lend a block (for the zone: `youngest`; for a BMB) from the roomiest plane near
    /// `preferred`, else from any plane whose GC can make room: the roomiest by free and
    /// waiting blocks may hold nothing but valid data while another plane's PMBs hold stale
    /// pages. `None` when no plane can lend.
    fn lend(&mut self, ctx: &mut FlashCtx, preferred: u32, youngest: bool) -> Result<Option<BlockId>, SimError> {
        let planes = self.geo.planes();
        let first = self.roomiest_plane(preferred);
        let others = (0..planes).map(|i| (preferred + i) % planes).filter(|&p| p != first);
        for plane in std::iter::once(first).chain(others) {
            if let Some(b) = self.try_lend(ctx, plane, youngest)? {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }

    /// Lend a free block of `plane`, or `None` when it has none and nothing to reclaim. While
    /// the plane is down to its GC threshold (the page-mapped part's GC needs those blocks to
    /// relocate into), online GC makes room: first the plane's blocks waiting for an erase
    /// (Dirty Buffer Zones, replaced BMBs), then the page-mapped part's collection (Sec.
    /// III-D: PMB GC last).
    /// `youngest`: the block with the fewest erases (the zone's, Sec. III-E: "we reserve top
    /// youngest blocks for future Buffer Zone allocation"); otherwise (a BMB) the block the
    /// plane would allocate next, leaving the youngest to the zone.
    fn try_lend(&mut self, ctx: &mut FlashCtx, plane: u32, youngest: bool) -> Result<Option<BlockId>, SimError> {
        for _ in 0..=self.geo.blocks_per_plane * self.ppb {
            if self.pm.block_manager().free_blocks(plane) > self.gc_threshold {
                let bm = self.pm.block_manager();
                let b = if youngest { bm.lend_youngest(ctx.flash(), plane) } else { bm.lend_next(plane) };
                return Ok(Some(b.expect("the plane has free blocks")));
            }
            if let Some(b) = self.to_erase.pop_plane(plane) {
                self.erase_lent(ctx, b)?;
                self.counts.online_erases += 1;
                continue;
            }
            if !ftlsim_core::ftl::ManagedGc::gc_step(&mut self.pm, ctx, plane)? {
                break;
            }
        }
        Ok(None)
    }

    /// Erase a lent block with no valid page (GC work: a Dirty Buffer Zone's, a replaced BMB).
    fn erase_lent(&mut self, ctx: &mut FlashCtx, b: BlockId) -> Result<(), SimError> {
        debug_assert_eq!(ctx.flash().valid_count(b), 0, "block {b} erased with valid pages");
        let prev = ctx.set_tag(Tag::Gc);
        let erased = ctx.erase(b);
        ctx.set_tag(prev);
        erased?;
        self.pm.block_manager().give_back(ctx.flash(), b);
        Ok(())
    }

    /// The zone is full: Algorithm 1 starts over its block nodes, which drain behind the
    /// next zone (incremental) or all move now (foreground). A zone still draining when the
    /// next one fills finishes first.
    fn zone_full(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        while self.migrating() {
            self.migration_step(ctx, MigrationCause::ZoneFull)?;
        }
        self.finish_if_drained(ctx.flash());
        self.counts.migrations += 1;
        let popular = self.bzmt.most_popular();
        let nodes = std::mem::replace(&mut self.bzmt, Bzmt::new(self.ppb)).take();
        self.draining.start(nodes, self.zone.take(), popular);
        self.finish_if_drained(ctx.flash());
        if self.migration == ZoneMigration::Foreground {
            while self.migrating() {
                self.migration_step(ctx, MigrationCause::ZoneFull)?;
            }
            self.finish_if_drained(ctx.flash());
        }
        Ok(())
    }

    /// A draining zone has a node left to move, or one part-way.
    fn migrating(&self) -> bool {
        self.in_flight.is_some() || !self.draining.is_empty()
    }

    /// One unit of migration (`[ftl.waftl] migration_step`): one page copy of the node under
    /// way, starting the next node when none is (a node whose plan moves no page, a clean
    /// node dropped, completes at once); or a whole node. GC-tagged: it is the FTL's own work,
    /// not the host's (issue 34), so a request waits for it only as it waits for GC.
    fn migration_step(&mut self, ctx: &mut FlashCtx, cause: MigrationCause) -> Result<(), SimError> {
        let prev = ctx.set_tag(Tag::Gc);
        let done = self.migrate_page(ctx, cause);
        if done.is_ok() && self.migration_step == MigrationStep::BlockNode {
            while self.in_flight.is_some() {
                self.migrate_page(ctx, cause)?;
            }
        }
        ctx.set_tag(prev);
        self.finish_if_drained(ctx.flash());
        done
    }

    /// Start the next node if none is under way, then move one of its pages.
    fn migrate_page(&mut self, ctx: &mut FlashCtx, cause: MigrationCause) -> Result<(), SimError> {
        if self.in_flight.is_none() {
            let Some(lbn) = self.draining.first() else { return Ok(()) };
            match cause {
                MigrationCause::Idle => self.counts.nodes_migrated_idle += 1,
                MigrationCause::Paced => self.counts.nodes_migrated_paced += 1,
                MigrationCause::ZoneFull => self.counts.nodes_migrated_at_full_zone += 1,
            }
            self.start_node(ctx, lbn)?;
        }
        let Some(f) = self.in_flight else { return Ok(()) };
        match f.to {
            Destination::Pmb => match self.draining.take_first_page(f.lbn) {
                Some((off, zp)) => self.migrate_to_pmb(ctx, f.lbn * self.ppb + off, zp.ppn)?,
                None => self.in_flight = None,
            },
            Destination::Bmb { new, old, .. } => self.bmb_page(ctx, f.lbn, new, old)?,
        }
        Ok(())
    }

    /// Algorithm 1's plan for the draining zone's node of `lbn`, and the work that takes no
    /// page copy: dropping clean pages, the GMT entry of a block turning page-mapped, lending
    /// a BMB.
    fn start_node(&mut self, ctx: &mut FlashCtx, lbn: u32) -> Result<(), SimError> {
        self.note_run_migration(lbn);
        let node = self.draining.node(lbn).expect("the draining zone's first node");
        let count = node.page_count();
        let p = plan(self.home(lbn), node, self.draining.popular == Some(lbn), self.threshold.pages());
        let pmb = Some(InFlight { lbn, to: Destination::Pmb });
        match p {
            Plan::Drop => {
                self.counts.dropped_clean += 1;
                for (_, zp) in self.draining.take_node(lbn).expect("the node").pages() {
                    ctx.invalidate(zp.ppn)?;
                }
            }
            Plan::UpdatePmb => {
                self.counts.pmb_updates += 1;
                let clean: Vec<(u32, Ppn)> =
                    node.pages().filter(|(_, zp)| !zp.dirty).map(|(off, zp)| (off, zp.ppn)).collect();
                for (off, ppn) in clean {
                    ctx.invalidate(ppn)?;
                    self.draining.remove(lbn * self.ppb + off);
                }
                self.in_flight = pmb;
            }
            Plan::NewToPmb { most_popular } => {
                if most_popular {
                    self.counts.new_popular_to_pmb += 1;
                } else {
                    self.counts.new_to_pmb += 1;
                }
                if let Threshold::Dynamic(d) = &mut self.threshold {
                    d.record_new_block(count);
                }
                self.set_gmt(lbn, PAGE_MAPPED);
                self.in_flight = pmb;
            }
            Plan::NewToBmb => {
                self.counts.new_to_bmb += 1;
                if let Threshold::Dynamic(d) = &mut self.threshold {
                    d.record_new_block(count);
                    d.record_bmb(false);
                }
                self.start_bmb(ctx, lbn, None)?;
            }
            Plan::RewriteBmb { old } => {
                self.counts.bmb_rewrites += 1;
                if let Threshold::Dynamic(d) = &mut self.threshold {
                    d.record_bmb(true);
                }
                self.start_bmb(ctx, lbn, Some(old))?;
            }
        }
        Ok(())
    }

    /// Every node of the draining zone has moved (or been superseded by writes): its blocks
    /// wait for their erase, and the dynamic threshold learns from the migration.
    fn finish_if_drained(&mut self, flash: &FlashArray) {
        if self.migrating() || self.draining.blocks.is_empty() {
            return;
        }
        for b in std::mem::take(&mut self.draining.blocks) {
            assert_eq!(flash.valid_count(b), 0, "zone block {b} still holds valid pages after migration");
            self.to_erase.push(self.geo.plane_of_block(b), b);
        }
        if let Threshold::Dynamic(d) = &mut self.threshold {
            let avg = self.pages_seen.checked_div(self.runs_seen).unwrap_or(1).max(1) as u32;
            d.update(avg);
        }
    }

    /// Move the zone page `zone_ppn` of `lpn` into the page-mapped part.
    fn migrate_to_pmb(&mut self, ctx: &mut FlashCtx, lpn: Lpn, zone_ppn: Ppn) -> Result<(), SimError> {
        self.online_erase(ctx)?;
        let oob = ctx.read(zone_ppn)?;
        ctx.invalidate(zone_ppn)?;
        self.counts.migration_programs += 1;
        self.pm.write(ctx, lpn, oob.version)
    }

    /// Online GC's first step (Sec. III-D) before the page-mapped part allocates: on every
    /// plane close to its GC threshold, erase waiting blocks until it is above it again
    /// (L233: "Online garbage collection erases invalid blocks until free block number reaches
    /// the threshold"; the page-mapped part's own GC cannot reclaim them: they are lent). The
    /// rest wait for idle time.
    fn online_erase(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        if self.to_erase.is_empty() {
            return Ok(());
        }
        // Plane by plane in order, as long as one waiting plane is low (no list per call: this
        // runs before every page the page-mapped part writes).
        let low = self.gc_threshold + 1;
        loop {
            let next = self.to_erase.planes_waiting().find(|&p| self.pm.block_manager().free_blocks(p) <= low);
            let Some(p) = next else { break };
            let b = self.to_erase.pop_plane(p).expect("a waiting plane has a block");
            self.erase_lent(ctx, b)?;
            self.counts.online_erases += 1;
        }
        Ok(())
    }

    /// Lend the BMB for `lbn` (replacing `old`, if any); its pages then come one per step
    /// (`bmb_page`). With no block to lend the logical block turns page-mapped at once.
    fn start_bmb(&mut self, ctx: &mut FlashCtx, lbn: u32, old: Option<BlockId>) -> Result<(), SimError> {
        let preferred = old.map_or(lbn % self.geo.planes(), |b| self.geo.plane_of_block(b));
        match self.lend(ctx, preferred, false)? {
            Some(new) => {
                self.in_flight = Some(InFlight { lbn, to: Destination::Bmb { new, old, next_off: 0 } });
            }
            None => {
                let node = self.draining.take_node(lbn).expect("the node");
                self.bmb_to_pmb(ctx, lbn, &node, old)?;
            }
        }
        Ok(())
    }

    /// The next page of the BMB `new` being written for `lbn`: from the zone, else from
    /// `old` (the BMB it replaces), at its offset. Past the last offset, `old` waits for its
    /// erase and the GMT points at `new`.
    fn bmb_page(&mut self, ctx: &mut FlashCtx, lbn: u32, new: BlockId, old: Option<BlockId>) -> Result<(), SimError> {
        let Some(InFlight { to: Destination::Bmb { next_off, .. }, .. }) = self.in_flight.as_mut() else {
            unreachable!("a BMB under way")
        };
        while *next_off < self.ppb {
            let off = *next_off;
            *next_off += 1;
            let lpn = lbn * self.ppb + off;
            // The zone's copy leaves the draining zone as it is taken.
            let src = match (self.draining.remove(lpn), old) {
                (Some(z), _) => Some(z.ppn),
                (None, Some(o)) => {
                    let p = self.geo.first_page(o) + off;
                    (off < ctx.flash().write_pointer(o) && ctx.flash().is_valid(p)).then_some(p)
                }
                (None, None) => None,
            };
            let Some(src) = src else { continue };
            skip_to(ctx, new, off)?;
            copy_home(ctx, src, self.geo.first_page(new) + off)?;
            self.counts.migration_programs += 1;
            ctx.invalidate(src)?;
            return Ok(());
        }
        self.in_flight = None;
        debug_assert!(self.draining.node(lbn).is_none(), "lbn {lbn}: zone pages left behind its BMB");
        if let Some(o) = old {
            for p in ctx.flash().valid_pages(o).collect::<Vec<_>>() {
                ctx.invalidate(p)?;
            }
            self.to_erase.push(self.geo.plane_of_block(o), o);
        }
        if ctx.flash().write_pointer(new) == 0 {
            // Nothing to hold (every page trimmed): the logical block is unmapped again.
            self.pm.block_manager().give_back(ctx.flash(), new);
            self.set_gmt(lbn, NONE);
        } else {
            self.set_gmt(lbn, new);
        }
        Ok(())
    }

    /// The BMB under way for `lbn` and the offsets it has passed, if any.
    fn bmb_in_flight(&self, lbn: u32) -> Option<(BlockId, u32)> {
        match self.in_flight {
            Some(InFlight { lbn: l, to: Destination::Bmb { new, next_off, .. } }) if l == lbn => Some((new, next_off)),
            _ => None,
        }
    }

    /// The plane for a lent block (a BMB, a zone block): `preferred` if it has a free block
    /// beyond its GC threshold, else the plane with the most free blocks and blocks waiting
    /// for an erase (a BMB is found through the GMT and a zone block through the zone's list
    /// wherever they are; a plane full of valid data must not stop a migration).
    fn roomiest_plane(&mut self, preferred: u32) -> u32 {
        if self.pm.block_manager().free_blocks(preferred) > self.gc_threshold {
            return preferred;
        }
        // Blocks waiting for an erase count as room: `lend` erases them first (online GC).
        let planes = self.geo.planes();
        let (waiting, bm) = (&self.to_erase, self.pm.block_manager());
        (0..planes)
            .map(|i| (preferred + i) % planes)
            .max_by_key(|&p| {
                (bm.free_blocks(p) + waiting.on_plane(p) as u32, std::cmp::Reverse((p + planes - preferred) % planes))
            })
            .unwrap_or(preferred)
    }

    /// No plane can lend a block for a BMB (block-mapped data below a full block leaves its
    /// block's other pages unused, and the lent blocks are no GC candidates): the logical
    /// block becomes page-mapped instead, its zone pages and the old BMB's other valid pages
    /// written to the PMB, the old BMB then waiting for its erase. A departure: the paper
    /// never runs out (its drive's spare space is not given); counted as `waftl_bmb_to_pmb`.
    fn bmb_to_pmb(
        &mut self,
        ctx: &mut FlashCtx,
        lbn: u32,
        node: &BlockNode,
        old: Option<BlockId>,
    ) -> Result<(), SimError> {
        self.counts.bmb_to_pmb += 1;
        self.set_gmt(lbn, PAGE_MAPPED);
        let mut in_zone = vec![false; self.ppb as usize];
        for (off, zp) in node.pages() {
            in_zone[off as usize] = true;
            self.migrate_to_pmb(ctx, lbn * self.ppb + off, zp.ppn)?;
        }
        if let Some(o) = old {
            let first = self.geo.first_page(o);
            for off in 0..ctx.flash().write_pointer(o) {
                let p = first + off;
                if !ctx.flash().is_valid(p) {
                    continue;
                }
                if in_zone[off as usize] {
                    ctx.invalidate(p)?;
                } else {
                    self.migrate_to_pmb(ctx, lbn * self.ppb + off, p)?;
                }
            }
            self.to_erase.push(self.geo.plane_of_block(o), o);
        }
        Ok(())
    }

    /// The page of `lpn` outside the zone, if any, and whether it is in a BMB.
    fn outside(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        if let Some((new, _)) = self.bmb_in_flight(lbn).filter(|&(_, passed)| off < passed) {
            // Moved into the BMB under way (or nothing was there to move); the old BMB's copy,
            // if still valid, is older than the zone copy that went to `new`.
            let p = self.geo.first_page(new) + off;
            let held = off < ctx.flash().write_pointer(new) && ctx.flash().is_valid(p);
            return if held { Ok(Some(ctx.read_mapped(p, lpn, None)?)) } else { Ok(None) };
        }
        match self.home(lbn) {
            Home::Unmapped => Ok(None),
            Home::PageMapped => self.pm.read(ctx, lpn),
            Home::BlockMapped(b) => {
                let p = self.geo.first_page(b) + off;
                if off < ctx.flash().write_pointer(b) && ctx.flash().is_valid(p) {
                    Ok(Some(ctx.read_mapped(p, lpn, None)?))
                } else {
                    Ok(None)
                }
            }
        }
    }

    /// Log a host write of `lpn` into the zone.
    fn log_host_write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        assert!(lpn < self.logical_pages, "lpn {lpn} beyond the {} logical pages", self.logical_pages);
        self.host_activity(ctx);
        self.run_blocks[(lpn / self.ppb) as usize] |= RUN_ACCESSED;
        self.bzmt.touch(lpn);
        let ppn = self.zone_page(ctx)?;
        ctx.program(ppn, Oob { lpn, version, kind: PageKind::Staged })?;
        if let Some(old) = self.bzmt.log_write(lpn, ppn) {
            ctx.invalidate(old)?;
        }
        if let Some(old) = self.draining.remove(lpn) {
            ctx.invalidate(old.ppn)?;
        }
        Ok(())
    }

    /// Valid pages in lent blocks (the zones' and the BMBs').
    fn lent_valid(&self, flash: &FlashArray) -> u64 {
        let in_flight = self.in_flight.and_then(|f| match f.to {
            Destination::Bmb { new, .. } => Some(new),
            Destination::Pmb => None,
        });
        let zone: u64 = self
            .zone
            .blocks
            .iter()
            .chain(&self.draining.blocks)
            .chain(&in_flight)
            .map(|&b| u64::from(flash.valid_count(b)))
            .sum();
        let bmbs: u64 =
            self.gmt.iter().filter(|&&b| b != NONE && b != PAGE_MAPPED).map(|&b| u64::from(flash.valid_count(b))).sum();
        zone + bmbs
    }
}

impl Ftl for Waftl {
    fn name(&self) -> &'static str {
        "waftl"
    }

    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        self.host_activity(ctx);
        self.run_blocks[(lpn / self.ppb) as usize] |= RUN_ACCESSED;
        if let Some(zp) = self.bzmt.lookup(lpn).or_else(|| self.draining.lookup(lpn)) {
            self.bzmt.touch(lpn);
            return Ok(Some(ctx.read_mapped(zp.ppn, lpn, None)?));
        }
        let found = self.outside(ctx, lpn)?;
        if let Some(version) = found {
            // A read miss counts as an access of its block (L127) and is copied into the zone
            // as a clean page (L137) where `read_miss_copy` says so. The copy is WAFTL's own
            // work after the read, not the host's: GC-tagged, so the read completes with its
            // data (issue 34).
            self.bzmt.touch(lpn);
            let copy = match self.read_miss_copy {
                ReadMissCopy::All => true,
                ReadMissCopy::ZoneBlocks => {
                    let lbn = lpn / self.ppb;
                    self.home(lbn) != Home::PageMapped && self.bzmt.holds_written(lbn)
                }
                ReadMissCopy::Off => false,
            };
            if copy {
                let read = ctx.last_op();
                let prev = ctx.set_tag(Tag::Gc);
                let copied = self.zone_page(ctx).and_then(|ppn| {
                    ctx.program_after(ppn, Oob { lpn, version, kind: PageKind::Staged }, read)?;
                    Ok(ppn)
                });
                ctx.set_tag(prev);
                self.bzmt.log_read_miss(lpn, copied?);
                self.counts.read_miss_copies += 1;
            } else {
                self.counts.read_misses_not_copied += 1;
            }
        }
        Ok(found)
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        self.write_run(ctx, lpn, &[version])
    }

    /// A never-written page goes home (`[ftl.waftl] prewrite = "home"`): at its offset in
    /// the logical block's BMB when that offset is still free, else into the page-mapped part
    /// (a BMB whose offset is passed turns page-mapped first, as when no BMB can be lent).
    fn prewrite(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        if self.prewrite == Prewrite::Zone {
            return self.write(ctx, lpn, version);
        }
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        while self.in_flight.is_some_and(|f| f.lbn == lbn) {
            self.migration_step(ctx, MigrationCause::Idle)?;
        }
        self.counts.prewrites_home += 1;
        self.online_erase(ctx)?;
        match self.home(lbn) {
            Home::BlockMapped(b) if off >= ctx.flash().write_pointer(b) => {
                skip_to(ctx, b, off)?;
                ctx.program(self.geo.first_page(b) + off, Oob { lpn, version, kind: PageKind::Data })?;
                Ok(())
            }
            Home::BlockMapped(b) => {
                self.bmb_to_pmb(ctx, lbn, &BlockNode::default(), Some(b))?;
                self.pm.write(ctx, lpn, version)
            }
            Home::Unmapped => {
                self.set_gmt(lbn, PAGE_MAPPED);
                self.pm.write(ctx, lpn, version)
            }
            Home::PageMapped => self.pm.write(ctx, lpn, version),
        }
    }

    fn write_run(&mut self, ctx: &mut FlashCtx, first: Lpn, versions: &[u32]) -> Result<(), SimError> {
        self.pages_seen += versions.len() as u64;
        self.runs_seen += 1;
        for (lpn, &v) in (first..).zip(versions) {
            self.log_host_write(ctx, lpn, v)?;
        }
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        self.host_activity(ctx);
        for zp in [self.bzmt.remove(lpn), self.draining.remove(lpn)].into_iter().flatten() {
            ctx.invalidate(zp.ppn)?;
        }
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        if let Some((new, _)) = self.bmb_in_flight(lbn).filter(|&(_, passed)| off < passed) {
            let p = self.geo.first_page(new) + off;
            if off < ctx.flash().write_pointer(new) && ctx.flash().is_valid(p) {
                ctx.invalidate(p)?;
            }
        }
        match self.home(lbn) {
            Home::Unmapped => Ok(()),
            Home::PageMapped => self.pm.trim(ctx, lpn),
            Home::BlockMapped(b) => {
                let p = self.geo.first_page(b) + off;
                if off < ctx.flash().write_pointer(b) && ctx.flash().is_valid(p) {
                    ctx.invalidate(p)?;
                }
                Ok(())
            }
        }
    }

    /// Offline GC: one erase of a Dirty Buffer Zone block or a replaced BMB per step, within
    /// Eq. 4's budget for the idle period (set at its first step from Eq. 3's prediction);
    /// then, beyond the paper, one block node of a draining zone per step.
    fn background_step(&mut self, ctx: &mut FlashCtx) -> Result<bool, SimError> {
        if self.idle_since.is_none() {
            self.idle_since = Some(ctx.now().unwrap_or(0));
            self.idle_budget = self.idle.erases_for(self.t_erase_ns);
        }
        if self.idle_budget > 0 {
            if let Some(b) = self.to_erase.pop_any() {
                self.erase_lent(ctx, b)?;
                self.idle_budget -= 1;
                self.counts.offline_erases += 1;
                self.gc.background_collections += 1;
                return Ok(true);
            }
        }
        if !self.migrating() {
            return Ok(false);
        }
        self.migration_step(ctx, MigrationCause::Idle)?;
        Ok(true)
    }

    fn gc_counts(&self) -> GcCounts {
        let mut g = self.pm.gc_counts();
        g.background_collections += self.gc.background_collections;
        g
    }

    fn free_blocks(&self) -> u64 {
        self.pm.free_blocks()
    }

    /// Logical blocks page- and block-mapped by the measured run's migrations (Fig. 15's
    /// shares over time).
    fn series(&self) -> Vec<SeriesValue> {
        vec![
            SeriesValue { name: "page_mapped_blocks", value: self.run_mapped.0, kind: SeriesKind::Level },
            SeriesValue { name: "block_mapped_blocks", value: self.run_mapped.1, kind: SeriesKind::Level },
        ]
    }

    fn mapping_sram_bytes(&self) -> u64 {
        // The CPMT (DFTL's cache budget) and the GMT: 4 bytes per logical block.
        self.pm.mapping_sram_bytes() + self.gmt.len() as u64 * mapping_size::ENTRY_BYTES
    }

    fn begin_measurement(&mut self) {
        self.pm.begin_measurement();
        self.counts = Counts::default();
        self.run_blocks.fill(0);
        self.run_mapped = (0, 0);
    }

    /// After preconditioning: the zone and the zone draining move out and every waiting block
    /// is erased, so that the run starts with the data in data blocks (issue 34: a drive in
    /// service, not one whose preconditioning left its last zone for the run to migrate).
    fn settle(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        if !self.zone.is_empty() {
            self.zone_full(ctx)?;
        }
        while self.migrating() {
            self.migration_step(ctx, MigrationCause::Idle)?;
        }
        while let Some(b) = self.to_erase.pop_any() {
            self.erase_lent(ctx, b)?;
        }
        Ok(())
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.pm.extra_metrics();
        let c = &self.counts;
        let (pmb, bmb) = self.mapped;
        m.insert("waftl_migrations".into(), c.migrations.into());
        m.insert("waftl_bmb_rewrites".into(), c.bmb_rewrites.into());
        m.insert("waftl_pmb_updates".into(), c.pmb_updates.into());
        m.insert("waftl_new_most_popular_to_pmb".into(), c.new_popular_to_pmb.into());
        m.insert("waftl_new_to_pmb".into(), c.new_to_pmb.into());
        m.insert("waftl_new_to_bmb".into(), c.new_to_bmb.into());
        m.insert("waftl_dropped_clean_blocks".into(), c.dropped_clean.into());
        m.insert("waftl_read_miss_copies".into(), c.read_miss_copies.into());
        m.insert("waftl_read_misses_not_copied".into(), c.read_misses_not_copied.into());
        m.insert("waftl_migration_programs".into(), c.migration_programs.into());
        m.insert("waftl_prewrites_home".into(), c.prewrites_home.into());
        m.insert("waftl_offline_erases".into(), c.offline_erases.into());
        m.insert("waftl_online_erases".into(), c.online_erases.into());
        m.insert("waftl_offline_interruptions".into(), c.offline_interruptions.into());
        m.insert("waftl_idle_periods".into(), c.idle_periods.into());
        m.insert("waftl_bmb_to_pmb".into(), c.bmb_to_pmb.into());
        m.insert("waftl_short_zones".into(), c.short_zones.into());
        m.insert("waftl_nodes_migrated_idle".into(), c.nodes_migrated_idle.into());
        m.insert("waftl_nodes_migrated_paced".into(), c.nodes_migrated_paced.into());
        m.insert("waftl_nodes_migrated_at_full_zone".into(), c.nodes_migrated_at_full_zone.into());
        m.insert("waftl_recovery_rewrites_finished".into(), c.rewrites_finished_by_recovery.into());
        m.insert("waftl_idle_prediction_error_ns".into(), self.idle.mean_abs_error_ns().into());
        m.insert("waftl_block_mapped_blocks".into(), bmb.into());
        m.insert("waftl_page_mapped_blocks".into(), pmb.into());
        m.insert("waftl_run_page_mapped_blocks".into(), self.run_mapped.0.into());
        m.insert("waftl_run_block_mapped_blocks".into(), self.run_mapped.1.into());
        m.insert("waftl_threshold_pages".into(), self.threshold.pages().into());
        m.insert(
            "waftl_mapping_table_bytes".into(),
            mapping_size::waftl_bytes(self.gmt.len() as u64, pmb, u64::from(self.ppb)).into(),
        );
        m
    }

    fn recovery(&mut self) -> Option<&mut dyn Recovery> {
        Some(self)
    }

    fn save_state(&self) -> Vec<u8> {
        ftlsim_core::state::encode(self)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut loaded: Waftl = ftlsim_core::state::decode(bytes)?;
        crate::demand::DemandFtl::restore_unsaved(&mut loaded.pm, &self.pm);
        *self = loaded;
        Ok(())
    }

    fn check_invariants(&self, flash: &FlashArray) {
        self.pm.check_with_lent(flash, self.lent_valid(flash));
        for (lbn, &b) in self.gmt.iter().enumerate() {
            if b == NONE || b == PAGE_MAPPED {
                continue;
            }
            for p in flash.valid_pages(b) {
                let lpn = lbn as u32 * self.ppb + self.geo.page_in_block(p);
                assert_eq!(flash.owner(p), lpn, "BMB {b} of lbn {lbn}: page {p} holds another lpn");
            }
        }
        if let Some(InFlight { lbn, to: Destination::Bmb { new, next_off, .. } }) = self.in_flight {
            for p in flash.valid_pages(new) {
                let off = self.geo.page_in_block(p);
                assert!(off < next_off, "BMB {new} under way: page {p} beyond the offsets passed");
                assert_eq!(flash.owner(p), lbn * self.ppb + off, "BMB {new} under way: page {p} holds another lpn");
            }
        }
        for b in self.to_erase.iter() {
            assert_eq!(flash.valid_count(b), 0, "block {b} waits for its erase with valid pages");
        }
        let pmb = self.gmt.iter().filter(|&&b| b == PAGE_MAPPED).count() as u64;
        let bmb = self.gmt.iter().filter(|&&b| b != NONE && b != PAGE_MAPPED).count() as u64;
        assert_eq!(self.mapped, (pmb, bmb), "GMT counts (page-mapped, block-mapped) drifted");
        let (mut run_pmb, mut run_bmb) = (0, 0);
        for (&e, _) in self.gmt.iter().zip(&self.run_blocks).filter(|(_, &f)| f & RUN_MIGRATED != 0) {
            match e {
                NONE => {}
                PAGE_MAPPED => run_pmb += 1,
                _ => run_bmb += 1,
            }
        }
        assert_eq!(self.run_mapped, (run_pmb, run_bmb), "the run's GMT counts drifted");
        assert_eq!(
            self.zone.blocks.iter().map(|&b| u64::from(flash.valid_count(b))).sum::<u64>(),
            u64::from(self.bzmt.pages()),
            "zone valid pages and BZMT pages disagree"
        );
        assert_eq!(
            self.draining.blocks.iter().map(|&b| u64::from(flash.valid_count(b))).sum::<u64>(),
            u64::from(self.draining.pages()),
            "draining zone valid pages and its nodes' pages disagree"
        );
    }
}

/// Recovery by a full scan (`recovery`); a clean shutdown writes the page-mapped part's
/// changed translation pages (the zone and the BMBs are on flash as they are).
impl Recovery for Waftl {
    fn checkpoint(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        Recovery::checkpoint(&mut self.pm, ctx)
    }

    fn recover(&mut self, ctx: &mut FlashCtx, cfg: &Resolved) -> Result<(), SimError> {
        self.recover_by_scan(ctx, cfg)
    }
}
