//! Multichannel SSDs with a shared write buffer and channel management (Chang & Wen, ACM
//! TECS 2014, seed 004): static RAID-0 channel binding with one FTL instance per channel
//! (Sec. 3.1), a write buffer shared by the channels or partitioned (Sec. 3.1, 4.4.1),
//! synchronized channels (SYNC, Sec. 2.2), independent channels (FI), garbage-collection
//! advancing (GCA, Sec. 3.2) and cycle filling (CF, Sec. 3.3), with GC preemption points
//! (Sec. 3.2.2, Fig. 5) and multi-plane chips (Sec. 3.3.3). docs/multichannel.md describes
//! the model and the choices the paper leaves open.
//!
//! The model is the paper's channel-time model (Sec. 4.1): a unit (channel, plane or, under
//! SYNC, the whole drive; [`layout`]) performs its flash operations one after another, each
//! costing tR, tPROG or tBERS, with no bus or host-interface time; the host keeps the buffer
//! full (one request outstanding, the next issued at the previous one's acknowledgement), so
//! IOPS measures the channel system. The buffer flushes only when it is full (the host is
//! waiting for room) or the source is exhausted; each idle unit with dirty pages then
//! programs its own oldest page (FIFO, LRU) or least recently written block (BPLRU), never
//! while it collects garbage. Mandatory GC (the FTL out of free space, [`Ftl::gc_due`]) and
//! early GC run as steps between preemption points ([`Ftl::gc_step`]), so the other units
//! see them and the managers of [`manager`] can start and stop early GC by Table I.
//!
//! Everything is integer nanoseconds and units are visited in index order, so runs are
//! deterministic.

pub mod buffer;
pub mod layout;
pub mod manager;
mod power_cut;
pub mod report;
mod snapshot;
mod unit;

use crate::config::{BufferSharing, ChannelMode, DriveConfig, MultichannelConfig, Resolved, Timing, WriteBufferPolicy};
use crate::error::{RequestError, SimError};
use crate::flash::FlashArray;
use crate::ftl::{Ftl, GcNext};
use crate::geometry::Lpn;
use crate::host::{IoOp, Request};
use crate::metrics::{LatencyHistogram, Observer};
use buffer::{Admit, ChannelBuffer, Dirty};
use layout::{Place, StripeLayout};
use manager::{cf_follows, follower_move, gca_starts, gca_stops, FollowerMove, GcaView};
use report::*;
use std::collections::VecDeque;
use unit::{Activity, GcMove, GcUrgency, Unit};

pub use unit::{FollowerExits, UnitCounts, UnitTime};

/// Makes a unit's FTL from the unit's config (`ftlsim_ftl::build`).
pub type FtlBuilder = dyn Fn(&Resolved) -> Result<Box<dyn Ftl>, crate::error::ConfigError>;

/// Samples kept of the dirty-page series before its interval doubles.
const MAX_SAMPLES: usize = 2048;

/// Options of a channel-system run.
#[derive(Debug, Clone)]
pub struct McOptions {
    /// Dirty-page sample interval, ns (0: 100 ms).
    pub interval_ns: u64,
    /// Check the buffer and every FTL against the flash every this many flushes (0: never).
    pub check_every: u64,
    /// Cut the power here; the run ends at the cut and the units recover ([`power_cut`]).
    pub power_cut: Option<crate::sim::CutAt>,
}

impl Default for McOptions {
    fn default() -> Self {
        McOptions { interval_ns: 100_000_000, check_every: 0, power_cut: None }
    }
}

/// A CF round: the initiator's mandatory GC, step by step.
#[derive(Debug)]
struct Round {
    initiator: u32,
    /// Kind and end time of each initiator step so far.
    kinds: Vec<GcNext>,
    ends: Vec<u64>,
    /// A round started by GC on the initiator's write path (a FAST merge of its SW block),
    /// which the manager cannot step: followers collect until this time instead of step
    /// for step.
    until: Option<u64>,
}

/// The host's side of the replay: the request being admitted page by page.
#[derive(Debug, Default)]
struct Host {
    pending: VecDeque<(Place, u128)>,
    /// Pages of the request being admitted that are in the buffer (unacknowledged).
    admitted: Vec<Place>,
    /// Write requests issued.
    issued: u64,
    /// The power cut's request came: stop.
    cut: bool,
    issued_ns: u64,
    /// Write-through: the admitted request waits for its pages' programs.
    awaiting_flush: bool,
    source_done: bool,
    blocked_since: Option<u64>,
    stats: McHost,
    latency: LatencyHistogram,
    blocked_ns: u64,
}

/// The channel system: units, buffer, managers.
pub struct ChannelSystem {
    cfg: DriveConfig,
    mc: MultichannelConfig,
    layout: StripeLayout,
    units: Vec<Unit>,
    buffer: ChannelBuffer,
    timing: Timing,
    /// Sectors per flash page and per unit page.
    spp: u32,
    unit_sectors: u32,
    unit_logical_pages: u32,
    host_pages: u64,
    full_mask: u128,
    /// BPLRU: (pages per block, padding threshold, a unit's logical pages).
    padding: Option<(u32, u32, u32)>,
    /// Per unit, the newest version of each unit page (verify mode).
    oracle: Option<Vec<Vec<u32>>>,
    round: Option<Round>,
    rounds: u64,
    /// What preconditioning did (a snapshot's header keeps it).
    precondition: Option<crate::sim::PreconditionReport>,
    /// Rounds passed on to a unit that fell due during them ([`ChannelSystem::pass_round_on`]).
    round_extensions: u64,
    write_path_rounds: u64,
    /// GC time on a write's path that initiates a CF round: half a block's page copies.
    round_min_gc_ns: u64,
    next_version: u32,
    victim: Vec<Dirty>,
    host: Host,
    series: McDirtySeries,
}

impl crate::sim::Preconditioned for ChannelSystem {
    fn logical_pages(&self) -> u64 {
        u64::from(self.unit_logical_pages) * self.units.len() as u64
    }

    fn write_page(&mut self, lpn: Lpn) -> Result<(), SimError> {
        let n = self.units.len() as u32;
        let (u, ulpn) = ((lpn % n) as usize, lpn / n);
        let version = self.next_version;
        self.next_version += 1;
        let (ftl, mut ctx) = self.units[u].functional();
        ftl.write(&mut ctx, ulpn, version)?;
        if let Some(o) = self.oracle.as_mut() {
            o[u][ulpn as usize] = version;
        }
        Ok(())
    }

    fn trim_page(&mut self, _lpn: Lpn) -> Result<(), SimError> {
        unreachable!("ChannelSystem::precondition refuses trim_to")
    }

    fn pages_programmed(&self) -> u64 {
        self.units.iter().map(|u| u.flash_counts.pages_programmed()).sum()
    }

    fn collections(&self) -> u64 {
        self.units.iter().map(|u| u.ftl.gc_counts().collections()).sum()
    }
}

impl ChannelSystem {
    /// A channel system for a config with a `[multichannel]` section; `build` makes each
    /// unit's FTL from the unit's config ([`StripeLayout::unit_config`]).
    pub fn new(cfg: &Resolved, build: &FtlBuilder, verify: bool) -> Result<ChannelSystem, SimError> {
        let mc = cfg.multichannel.clone().ok_or_else(|| {
            SimError::Input(format!("{}: a channel-system run needs a [multichannel] section", cfg.name))
        })?;
        let g = &cfg.geometry;
        let layout = StripeLayout::new(g.channels, g.planes_per_die, mc.mode);
        let ucfg = layout.unit_config(cfg)?;
        let unit_logical_pages = ucfg.derived().logical_pages;
        let k = layout.pages_per_unit_page();
        let mut units = Vec::new();
        for _ in 0..layout.units() {
            let mut ftl = build(&ucfg)?;
            if ftl.managed_gc().is_none() {
                return Err(SimError::Input(format!(
                    "ftl.name = {}: this FTL cannot run as a unit of a channel system: its GC cannot be driven \
                     step by step from outside (`ftlsim ftls` says which FTLs can)",
                    ftl.name()
                )));
            }
            units.push(Unit::new(FlashArray::for_config(&ucfg)?, ftl));
        }
        let unit_bytes = u64::from(ucfg.geometry.page_size_bytes);
        let buffer_bytes = cfg.host.write_buffer_bytes.unwrap_or(0);
        let capacity = u32::try_from(buffer_bytes / unit_bytes).unwrap_or(u32::MAX);
        if buffer_bytes > 0 && capacity == 0 {
            return Err(SimError::Input(format!(
                "host.write_buffer_bytes = {buffer_bytes}: smaller than one unit page ({unit_bytes} bytes under {}); \
                 use 0 for write-through or at least one unit page",
                mc.mode.name()
            )));
        }
        if mc.buffer == BufferSharing::Partitioned && capacity > 0 && capacity < layout.units() {
            return Err(SimError::Input(format!(
                "host.write_buffer_bytes = {buffer_bytes}: a partitioned buffer needs a unit page for each of the {} units",
                layout.units()
            )));
        }
        let ppb = ucfg.geometry.pages_per_block;
        let block_pages = cfg.host.bplru_block_pages.unwrap_or(ppb).max(1);
        let buffer = ChannelBuffer::new(capacity, layout.units(), cfg.host.write_buffer_policy, mc.buffer, block_pages);
        let padding = (cfg.host.write_buffer_policy == WriteBufferPolicy::Bplru)
            .then(|| (block_pages, cfg.host.bplru_padding_pages.unwrap_or(u32::MAX), unit_logical_pages));
        let spp = g.sectors_per_page();
        let unit_sectors = spp * k;
        let full_mask = if unit_sectors >= 128 { u128::MAX } else { (1u128 << unit_sectors) - 1 };
        let oracle = verify.then(|| vec![vec![0u32; unit_logical_pages as usize]; layout.units() as usize]);
        let n = layout.units() as usize;
        Ok(ChannelSystem {
            cfg: cfg.cfg().clone(),
            mc,
            layout,
            units,
            buffer,
            timing: cfg.timing.clone(),
            spp,
            unit_sectors,
            unit_logical_pages,
            host_pages: u64::from(unit_logical_pages) * u64::from(k) * n as u64,
            full_mask,
            padding,
            oracle,
            round: None,
            rounds: 0,
            precondition: None,
            round_extensions: 0,
            write_path_rounds: 0,
            round_min_gc_ns: u64::from(ppb / 2) * (cfg.timing.t_r_ns + cfg.timing.t_prog_ns),
            next_version: 1,
            victim: Vec::new(),
            host: Host::default(),
            series: McDirtySeries { per_unit: vec![Vec::new(); n], ..McDirtySeries::default() },
        })
    }

    /// Host-visible capacity, bytes.
    pub fn logical_bytes(&self) -> u64 {
        self.host_pages * u64::from(self.spp) * 512
    }

    /// The stripe layout.
    pub fn layout(&self) -> StripeLayout {
        self.layout
    }

    /// Precondition functionally (no time) by the drive simulator's rules
    /// ([`crate::sim::precondition_target`]: a sequential fill, then with `steady_state`
    /// random overwrites until the WAF settles), over the unit pages in stripe order (unit
    /// page `i` is page `i / units` of unit `i % units`), so every unit is filled alike.
    /// Counters are then reset so that the run measures only itself.
    pub fn precondition(
        &mut self,
        p: &crate::sim::Precondition,
        obs: &mut dyn Observer,
    ) -> Result<crate::sim::PreconditionReport, SimError> {
        if let Some(share) = p.trim_to {
            return Err(crate::error::invalid(
                "precondition.trim_to",
                share,
                "is not supported on a channel system, which ignores trims (docs/multichannel.md)",
            )
            .into());
        }
        let (rep, _) = crate::sim::precondition_target(self, p, obs)?;
        for u in &mut self.units {
            let (ftl, mut ctx) = u.functional();
            ftl.settle(&mut ctx)?;
            u.ftl.begin_measurement();
            u.flash_counts = Default::default();
        }
        self.precondition = Some(rep.clone());
        Ok(rep)
    }

    /// Replay `source` (write requests; reads and trims are counted and skipped, Sec. 4.1)
    /// until it ends and the buffer is empty.
    pub fn run(
        &mut self,
        source: &mut dyn Iterator<Item = Result<Request, RequestError>>,
        opts: &McOptions,
        obs: &mut dyn Observer,
    ) -> Result<McReport, SimError> {
        let mut sample_ns = if opts.interval_ns == 0 { 100_000_000 } else { opts.interval_ns };
        let mut next_sample = 0u64;
        let mut flushes = 0u64;
        let mut now = 0u64;
        let mut same_instant = 0u32;
        let end = loop {
            self.finish_activities(now);
            if let Some(crate::sim::CutAt::TimeNs(t)) = opts.power_cut {
                if now >= t {
                    self.host.cut = true;
                }
            }
            if !self.host.cut {
                self.admit(now, source, opts.power_cut, obs)?;
            }
            if self.host.cut {
                break now;
            }
            if self.host.source_done
                && self.host.pending.is_empty()
                && !self.host.awaiting_flush
                && self.buffer.used() == 0
            {
                break now;
            }
            while now >= next_sample {
                self.sample(next_sample);
                next_sample += sample_ns;
                if self.series.time_ns.len() >= MAX_SAMPLES {
                    self.decimate();
                    sample_ns *= 2;
                    next_sample = self.series.time_ns.last().map_or(0, |t| t + sample_ns);
                }
            }
            let flush_allowed = !self.host.pending.is_empty() || self.host.source_done || self.buffer.write_through();
            self.decide_mandatory(now)?;
            flushes += self.decide_others(now, flush_allowed)?;
            self.follow_late(now)?;
            if opts.check_every > 0 && flushes >= opts.check_every {
                flushes = 0;
                self.check_invariants();
            }
            let busy_now = self.units.iter().any(|u| u.activity != Activity::Idle && u.free_at <= now);
            if busy_now {
                // A step that took no time (an erase of a never-written block): decide again.
                same_instant += 1;
                assert!(same_instant < 1_000_000, "channel system makes no progress at {now} ns");
                continue;
            }
            same_instant = 0;
            match self.units.iter().filter(|u| u.activity != Activity::Idle).map(|u| u.free_at).min() {
                Some(t) => {
                    // A cut at a time comes at that time, not at the next event after it.
                    let t = match opts.power_cut {
                        Some(crate::sim::CutAt::TimeNs(cut)) if cut > now => t.min(cut),
                        _ => t,
                    };
                    self.book_idle(t - now, flush_allowed);
                    now = t
                }
                None => {
                    return Err(SimError::Ftl(format!(
                        "channel system stalled at {now} ns: {} buffered pages, {} host pages waiting, no unit busy",
                        self.buffer.used(),
                        self.host.pending.len()
                    )))
                }
            }
        };
        for u in &mut self.units {
            u.clip(end);
        }
        self.series.interval_ns = sample_ns;
        // The report first: the oracle's reads go through the FTLs (a demand FTL's cache).
        let mut report = self.report(end);
        if self.host.cut {
            report.power_cut = Some(self.power_cut(end)?);
            return Ok(report);
        }
        if self.oracle.is_some() {
            self.verify_all()?;
        }
        self.check_invariants_if_verifying();
        Ok(report)
    }

    /// Idle units until the next event, `dt` from now, by what they wait for.
    fn book_idle(&mut self, dt: u64, flush_allowed: bool) {
        for (i, u) in self.units.iter_mut().enumerate() {
            if u.activity != Activity::Idle {
                continue;
            }
            let t = &mut u.time;
            if u.following {
                t.idle_follower_ns += dt;
            } else if self.buffer.dirty(i as u32) > 0 {
                if !flush_allowed {
                    t.idle_buffer_not_full_ns += dt;
                }
            } else if !self.host.pending.is_empty() {
                t.idle_no_dirty_ns += dt;
            }
        }
    }

    /// Activities that have ended by `now`: free their buffer slots.
    fn finish_activities(&mut self, now: u64) {
        for (i, u) in self.units.iter_mut().enumerate() {
            if u.activity != Activity::Idle && u.free_at <= now {
                if u.in_flight > 0 {
                    self.buffer.release(i as u32, u.in_flight);
                    u.in_flight = 0;
                }
                u.activity = Activity::Idle;
            }
        }
    }

    /// Admit host pages while the buffer has room; acknowledge the requests that are in.
    fn admit(
        &mut self,
        now: u64,
        source: &mut dyn Iterator<Item = Result<Request, RequestError>>,
        cut: Option<crate::sim::CutAt>,
        obs: &mut dyn Observer,
    ) -> Result<(), SimError> {
        if self.host.awaiting_flush {
            if self.buffer.used() > 0 {
                return Ok(());
            }
            self.host.awaiting_flush = false;
            self.acknowledge(now, obs)?;
        }
        loop {
            while let Some(&(place, mask)) = self.host.pending.front() {
                let version = self.next_version;
                match self.buffer.insert(place.unit, place.unit_lpn, mask, version) {
                    Admit::Full => {
                        self.host.blocked_since.get_or_insert(now);
                        return Ok(());
                    }
                    Admit::Hit => self.host.stats.page_writes_absorbed += 1,
                    Admit::Added => {}
                }
                self.next_version += 1;
                self.host.stats.page_writes += 1;
                if let Some(o) = self.oracle.as_mut() {
                    o[place.unit as usize][place.unit_lpn as usize] = version;
                }
                self.host.pending.pop_front();
                self.host.admitted.push(place);
                if self.host.pending.is_empty() {
                    if self.buffer.write_through() {
                        self.host.awaiting_flush = true;
                        return Ok(());
                    }
                    self.acknowledge(now, obs)?;
                }
            }
            if let Some(t) = self.host.blocked_since.take() {
                self.host.blocked_ns += now - t;
            }
            if self.host.source_done || !self.next_request(now, source)? {
                return Ok(());
            }
            if let Some(crate::sim::CutAt::Request(n)) = cut {
                if self.host.issued == n {
                    // The power goes as the n-th write request is issued: none of it is in.
                    self.host.cut = true;
                    return Ok(());
                }
            }
        }
    }

    /// The request admitted last is acknowledged at `now`.
    fn acknowledge(&mut self, now: u64, obs: &mut dyn Observer) -> Result<(), SimError> {
        self.host.admitted.clear();
        self.host.latency.record(now - self.host.issued_ns);
        self.host.stats.requests += 1;
        self.host.issued_ns = now;
        if self.host.stats.requests.is_multiple_of(1024) {
            obs.progress(self.host.stats.requests);
            if obs.interrupted() {
                return Err(SimError::Interrupted);
            }
        }
        Ok(())
    }

    /// Take the next write request into `pending`; `false` when the source is done.
    fn next_request(
        &mut self,
        now: u64,
        source: &mut dyn Iterator<Item = Result<Request, RequestError>>,
    ) -> Result<bool, SimError> {
        let sectors_total = self.host_pages * u64::from(self.spp);
        loop {
            let Some(r) = source.next() else {
                self.host.source_done = true;
                return Ok(false);
            };
            let r = r?;
            match r.op {
                IoOp::Read => {
                    self.host.stats.reads_ignored += 1;
                    continue;
                }
                IoOp::Trim => {
                    self.host.stats.trims_ignored += 1;
                    continue;
                }
                IoOp::Write => {}
                op => {
                    return Err(SimError::Request(format!(
                        "request {}: a {} command needs a zoned namespace (--ftl zns); [multichannel] has no zones",
                        self.host.stats.requests + 1,
                        op.name()
                    )))
                }
            }
            crate::host::check_bounds(r.offset_sector, r.sectors, sectors_total, || {
                format!(
                    "write request {} (sector {}, {} sectors)",
                    self.host.stats.requests + 1,
                    r.offset_sector,
                    r.sectors
                )
            })?;
            self.host.issued_ns = now;
            self.host.issued += 1;
            self.host.stats.sectors_written += u64::from(r.sectors);
            let spp = u64::from(self.spp);
            let (first, end) = (r.offset_sector, r.offset_sector + u64::from(r.sectors));
            let mut s = first;
            while s < end {
                let page = s / spp;
                let page_end = ((page + 1) * spp).min(end);
                let (lo, n) = ((s % spp) as u32, (page_end - s) as u32);
                let place = self.layout.place(page);
                let shift = place.sub * self.spp + lo;
                let ones = if n >= 128 { u128::MAX } else { (1u128 << n) - 1 };
                self.host.pending.push_back((place, ones << shift));
                s = page_end;
            }
            return Ok(true);
        }
    }

    /// Pass 1: units whose FTL is out of free space collect (mandatory GC); under CF the
    /// first of them initiates a round and the others with at most N_s spare blocks follow.
    /// When the initiator is no longer out of space, a unit still in mandatory GC carries
    /// the round on; with none left, it ends.
    fn decide_mandatory(&mut self, now: u64) -> Result<(), SimError> {
        let ns = self.mc.spare_threshold;
        let initiator = self.round.as_ref().map(|r| r.initiator as usize);
        for (i, u) in self.units.iter_mut().enumerate() {
            if u.collecting_mandatory && u.activity == Activity::Idle && !u.gc_due() {
                u.collecting_mandatory = false;
                // A follower whose own mandatory GC interrupted its early GC goes back to the
                // round: Table I's stop condition (the initiator finishing) has not been met.
                // (A round passed on to it is its own: nothing to go back to.)
                let other_round = initiator.is_some_and(|r| r != i);
                if std::mem::take(&mut u.rejoin) && other_round && self.mc.follower_rejoin {
                    let has_garbage = u.gc_next() != GcNext::Nothing;
                    if cf_follows(u.spare_blocks(self.mc.spare_count), ns, has_garbage) {
                        u.following = true;
                        u.round_steps = 0;
                        u.counts.rejoins += 1;
                    }
                }
            }
        }
        if let Some(r) = &self.round {
            let init = &mut self.units[r.initiator as usize];
            // A write-path round's initiator that must now collect goes on as its initiator.
            if init.activity == Activity::Idle && !init.collecting_mandatory && !init.gc_due() {
                self.pass_round_on(now);
            }
        }
        for i in 0..self.units.len() {
            if self.units[i].activity == Activity::Idle && self.units[i].gc_due() {
                self.mandatory_step(i, now)?;
            }
        }
        Ok(())
    }

    /// One step of mandatory GC on unit `i` (out of free space, or GC its next page's write
    /// needs): it leaves any round it followed, and under CF initiates one if none is on.
    fn mandatory_step(&mut self, i: usize, now: u64) -> Result<(), SimError> {
        let u = &mut self.units[i];
        if u.following {
            u.following = false;
            u.rejoin = true;
            u.counts.exits.fell_due += 1;
        }
        u.early = false;
        u.collecting_mandatory = true;
        if self.mc.mode == ChannelMode::Cf && self.round.is_none() {
            self.start_round(i, None);
        }
        let initiator = self.round.as_ref().is_some_and(|r| r.initiator == i as u32);
        if initiator {
            // A write-path round whose initiator now collects step by step.
            self.round.as_mut().expect("round checked").until = None;
        }
        let u = &mut self.units[i];
        let kind = u.gc_next();
        if !u.gc_step(now, GcUrgency::Due, GcMove::Any, &self.timing)? {
            return Err(SimError::Ftl(format!(
                "unit {i}: out of free space with nothing to collect (every block fully valid); raise the over-provisioning"
            )));
        }
        u.last_kind = kind;
        if let Some(r) = self.round.as_mut().filter(|_| initiator) {
            r.kinds.push(kind);
            r.ends.push(self.units[i].free_at);
        }
        Ok(())
    }

    /// Unit `i` initiates mandatory GC: a CF round, with every other unit that has at most
    /// N_s spare blocks and something to collect as a follower.
    fn start_round(&mut self, i: usize, until: Option<u64>) {
        self.rounds += 1;
        self.write_path_rounds += u64::from(until.is_some());
        self.round = Some(Round { initiator: i as u32, kinds: Vec::new(), ends: Vec::new(), until });
        self.recruit(i);
    }

    /// Every unit other than the initiator `i` that is not collecting, has at most N_s spare
    /// blocks and something to collect follows the round (Table I, CF start).
    fn recruit(&mut self, i: usize) {
        let (ns, sc) = (self.mc.spare_threshold, self.mc.spare_count);
        for (j, v) in self.units.iter_mut().enumerate() {
            if j != i && !v.following && !v.collecting_mandatory && !v.gc_due() {
                let has_garbage = v.gc_next() != GcNext::Nothing;
                if cf_follows(v.spare_blocks(sc), ns, has_garbage) {
                    v.following = true;
                    v.round_steps = 0;
                    v.counts.rounds_followed += 1;
                }
            }
        }
    }

    /// The initiator's mandatory GC is over. If another unit is still in mandatory GC (it
    /// fell due during the round), the round goes on with it as the initiator, as GCA's
    /// condition (3) would keep early GC going; followers match its steps from the one under
    /// way, and units that now qualify join. Otherwise the round ends.
    fn pass_round_on(&mut self, now: u64) {
        let next = self.units.iter().position(|u| u.collecting_mandatory).filter(|_| self.mc.round_handover);
        let Some(next) = next else {
            self.end_round();
            return;
        };
        let u = &self.units[next];
        let r = self.round.as_mut().expect("a round to pass on");
        r.initiator = next as u32;
        r.until = None;
        r.kinds.clear();
        r.ends.clear();
        if u.activity == Activity::MandatoryGc && u.free_at > now {
            r.kinds.push(u.last_kind);
            r.ends.push(u.free_at);
        }
        self.round_extensions += 1;
        for v in &mut self.units {
            v.round_steps = 0;
        }
        self.recruit(next);
    }

    /// The CF round ends (no unit is in mandatory GC): followers stop at their current
    /// step's end, a preemption point aligned with it.
    fn end_round(&mut self) {
        self.round = None;
        for u in &mut self.units {
            u.rejoin = false;
            if u.following {
                u.following = false;
                u.counts.exits.round_ended += 1;
                if u.gc_job_active() {
                    u.counts.preemptions += 1;
                }
            }
        }
    }

    /// Pass 2: followers, early GC, flushes. Returns the flushes started.
    fn decide_others(&mut self, now: u64, flush_allowed: bool) -> Result<u64, SimError> {
        let mut flushes = 0;
        let ns = self.mc.spare_threshold;
        for i in 0..self.units.len() {
            if self.units[i].activity != Activity::Idle {
                continue;
            }
            let unit = i as u32;
            if self.units[i].following && self.follow(i, now)? {
                continue;
            }
            if self.blocked_by_sibling(unit) {
                continue;
            }
            let dirty = self.buffer.dirty(unit);
            let u = &mut self.units[i];
            if u.early {
                let has_garbage = u.gc_next() != GcNext::Nothing;
                let active = u.gc_job_active();
                if gca_stops(self.mc.preemption, dirty, active, u.spare_blocks(self.mc.spare_count), ns, has_garbage) {
                    u.early = false;
                    if active && dirty > 0 {
                        u.counts.preemptions += 1;
                    }
                } else if u.gc_step(now, GcUrgency::Early, GcMove::Any, &self.timing)? {
                    continue;
                } else {
                    u.early = false;
                }
            }
            if flush_allowed && dirty > 0 {
                let lpn = self.buffer.next_victim_lpn(unit).expect("a unit with dirty pages has a victim");
                if self.mc.write_due_gc && self.units[i].gc_due_for(lpn) {
                    // GC this page's write needs goes first, as mandatory GC the others see.
                    self.units[i].counts.write_due_collections += 1;
                    self.mandatory_step(i, now)?;
                    continue;
                }
                let n = self.buffer.take_victim(unit, &mut self.victim);
                let u = &mut self.units[i];
                u.flush(now, &self.victim, self.full_mask, self.padding, &self.timing)?;
                u.in_flight = self.victim.len() as u32;
                debug_assert!(n >= 1);
                flushes += 1;
                // A merge on the write path of at least half a block's copies initiates a round
                // (an erase alone, FAST's switch merge, does not: no follower step fits in it).
                if self.mc.mode == ChannelMode::Cf && self.round.is_none() && u.gc_of_activity >= self.round_min_gc_ns {
                    let until = u.free_at;
                    self.start_round(i, Some(until));
                }
                continue;
            }
            if self.mc.mode == ChannelMode::Gca {
                let other = self.units.iter().enumerate().any(|(j, v)| j != i && v.activity == Activity::MandatoryGc);
                let u = &mut self.units[i];
                let view = GcaView {
                    buffer_full: !self.host.pending.is_empty(),
                    dirty_pages: dirty,
                    other_in_mandatory_gc: other,
                    spare_blocks: u.spare_blocks(self.mc.spare_count),
                    spare_threshold: ns,
                    has_garbage: u.gc_next() != GcNext::Nothing,
                };
                if gca_starts(&view) && u.gc_step(now, GcUrgency::Early, GcMove::Any, &self.timing)? {
                    u.early = true;
                    u.counts.early_starts += 1;
                }
            }
        }
        Ok(flushes)
    }

    /// Followers of a round that a write-path merge started during pass 2, for the units the
    /// pass had visited already.
    fn follow_late(&mut self, now: u64) -> Result<(), SimError> {
        for i in 0..self.units.len() {
            if self.units[i].activity == Activity::Idle && self.units[i].following {
                self.follow(i, now)?;
            }
        }
        Ok(())
    }

    /// A CF follower's move for the initiator's next step it has not matched yet. `true`
    /// when the follower is occupied (a step, a halt, or waiting for the initiator's next
    /// step); `false` when it has left the round.
    fn follow(&mut self, i: usize, now: u64) -> Result<bool, SimError> {
        let Some(r) = self.round.as_ref() else {
            self.units[i].following = false;
            return Ok(false);
        };
        let u = &mut self.units[i];
        if let Some(until) = r.until {
            if now >= until {
                u.following = false;
                u.counts.exits.write_path_merge_ended += 1;
                return Ok(false);
            }
            if u.gc_next() == GcNext::Nothing || !u.gc_step(now, GcUrgency::Early, GcMove::Any, &self.timing)? {
                u.following = false;
                u.counts.exits.nothing_to_collect += 1;
                return Ok(false);
            }
            return Ok(true);
        }
        let mut filling = false;
        loop {
            let k = u.round_steps as usize;
            let (kind, step_end) = if k < r.kinds.len() {
                u.round_steps += 1;
                (r.kinds[k], r.ends[k])
            } else {
                match (r.kinds.last(), r.ends.last()) {
                    // Matched every initiator step so far and the last is still under way:
                    // fill it with another step of its type (its cycle, Sec. 3.3).
                    (Some(&kind), Some(&end)) if end > now && self.mc.fill_steps => {
                        filling = true;
                        (kind, end)
                    }
                    // Wait for the initiator's next step.
                    _ => return Ok(true),
                }
            };
            if step_end <= now {
                // That initiator step is over (the follower joined late or lagged): match the
                // one under way, so the two stay aligned in time.
                continue;
            }
            let mv = follower_move(kind, u.gc_next());
            let started = match mv {
                FollowerMove::Leave => false,
                FollowerMove::Halt => {
                    u.halt(now, step_end);
                    true
                }
                FollowerMove::Step => {
                    let moves = if kind == GcNext::Copy { GcMove::CopyOnly } else { GcMove::Any };
                    u.gc_step(now, GcUrgency::Early, moves, &self.timing)?
                }
                FollowerMove::NextVictim => {
                    if u.gc_step(now, GcUrgency::Early, GcMove::CopyOnly, &self.timing)? {
                        u.counts.next_victims += 1;
                        true
                    } else {
                        u.counts.type_mismatches += 1;
                        u.gc_step(now, GcUrgency::Early, GcMove::Any, &self.timing)?
                    }
                }
            };
            if !started {
                u.following = false;
                u.counts.exits.nothing_to_collect += 1;
            } else if filling && mv != FollowerMove::Halt {
                u.counts.fill_steps += 1;
            }
            return Ok(started);
        }
    }

    /// Under CF with multi-plane chips, a plane that takes no part in the round idles while
    /// another plane of its chip collects: the chip's planes perform one operation type at a
    /// time (Sec. 3.3.3; "the chip can switch back to one-plane commands").
    fn blocked_by_sibling(&self, unit: u32) -> bool {
        let Some(r) = self.round.as_ref() else { return false };
        self.layout.siblings(unit).any(|s| s != unit && (s == r.initiator || self.units[s as usize].following))
    }

    fn sample(&mut self, t: u64) {
        self.series.time_ns.push(t);
        for u in 0..self.units.len() {
            self.series.per_unit[u].push(self.buffer.dirty(u as u32));
        }
    }

    /// Keep every other sample (the series is full; its interval doubles).
    fn decimate(&mut self) {
        fn halve<T: Copy>(v: &mut Vec<T>) {
            *v = v.iter().step_by(2).copied().collect();
        }
        halve(&mut self.series.time_ns);
        for s in &mut self.series.per_unit {
            halve(s);
        }
    }

    /// The data oracle: every unit page reads back its newest version, from the buffer or
    /// through its unit's FTL.
    fn verify_all(&mut self) -> Result<(), SimError> {
        let Some(oracle) = self.oracle.take() else { return Ok(()) };
        for (u, want) in oracle.iter().enumerate() {
            for (lpn, &v) in want.iter().enumerate() {
                if v == 0 || self.buffer.get(u as u32, lpn as u32) == Some(v) {
                    continue;
                }
                let counts = self.units[u].flash_counts.clone();
                let (ftl, mut ctx) = self.units[u].functional();
                let got = ftl.read(&mut ctx, lpn as u32)?;
                // The oracle's reads are not the run's.
                self.units[u].flash_counts = counts;
                if got != Some(v) {
                    return Err(SimError::Ftl(format!(
                        "data oracle: unit {u} page {lpn} reads version {got:?}, newest written is {v}"
                    )));
                }
            }
        }
        self.oracle = Some(oracle);
        Ok(())
    }

    fn check_invariants_if_verifying(&self) {
        if self.oracle.is_some() {
            self.check_invariants();
        }
    }

    /// The buffer and every unit's FTL against its flash.
    pub fn check_invariants(&self) {
        self.buffer.check_invariants();
        for u in &self.units {
            u.ftl.check_invariants(&u.flash);
        }
    }

    fn report(&self, end: u64) -> McReport {
        let h = &self.host;
        let bytes = h.stats.sectors_written * 512;
        McReport {
            drive: self.drive_summary(),
            host: McHost {
                mean_request_bytes: if h.stats.requests > 0 { bytes as f64 / h.stats.requests as f64 } else { 0.0 },
                ..h.stats.clone()
            },
            performance: self.performance(end),
            channel_time: self.channel_time(end),
            gc: self.gc_summary(),
            buffer: McBuffer {
                pages_flushed: self.unit_count(|x| x.pages_flushed),
                rmw_reads: self.unit_count(|x| x.rmw_reads),
                blocks_flushed: self.unit_count(|x| x.blocks_flushed),
                padded_pages: self.unit_count(|x| x.padded_pages),
                host_blocked_ns: h.blocked_ns,
            },
            flash: self.flash_summary(),
            dirty_pages: self.series.clone(),
            precondition: self.precondition.clone(),
            power_cut: None,
        }
    }

    /// A unit quantity summed over the units.
    fn unit_sum(&self, f: impl Fn(&Unit) -> u64) -> u64 {
        self.units.iter().map(f).sum()
    }

    /// A unit counter summed over the units.
    fn unit_count(&self, f: impl Fn(&UnitCounts) -> u64) -> u64 {
        self.units.iter().map(|u| f(&u.counts)).sum()
    }

    fn drive_summary(&self) -> McDrive {
        let g = &self.cfg.geometry;
        McDrive {
            name: self.cfg.name.clone(),
            ftl: self.cfg.ftl.name.clone(),
            mode: self.mc.mode.name(),
            channels: g.channels,
            planes_per_channel: g.planes_per_die,
            units: self.units.len() as u32,
            unit_page_bytes: self.unit_sectors * 512,
            logical_bytes: self.logical_bytes(),
            buffer_bytes: self.cfg.host.write_buffer_bytes.unwrap_or(0),
            buffer_unit_pages: self.buffer.capacity(),
            buffer_policy: format!("{:?}", self.cfg.host.write_buffer_policy).to_lowercase(),
            buffer_sharing: format!("{:?}", self.mc.buffer).to_lowercase(),
            bplru_padding_pages: self.cfg.host.bplru_padding_pages,
            preemption: self.mc.preemption,
            spare_threshold: self.mc.mode.uses_spare_threshold().then_some(self.mc.spare_threshold),
        }
    }

    /// IOPS, throughput and response times over the `end` ns simulated.
    fn performance(&self, end: u64) -> McPerformance {
        let h = &self.host;
        let secs = end as f64 / 1e9;
        let iops = if secs > 0.0 { h.stats.requests as f64 / secs } else { 0.0 };
        let bytes = h.stats.sectors_written * 512;
        let lat = h.latency.stats();
        McPerformance {
            simulated_time_ns: end,
            iops,
            throughput_mb_per_s: if secs > 0.0 { bytes as f64 / secs / 1e6 } else { 0.0 },
            response_inverse_iops_us: if iops > 0.0 { 1e6 / iops } else { 0.0 },
            response_mean_us: lat.mean_ns as f64 / 1e3,
            response_p99_us: lat.p99_ns as f64 / 1e3,
            response_max_us: lat.max_ns as f64 / 1e3,
        }
    }

    /// Where the channels' time went over the `end` ns simulated.
    fn channel_time(&self, end: u64) -> McChannelTime {
        let total = (end as f64) * self.units.len() as f64;
        let share = |ns: u64| if total > 0.0 { ns as f64 / total } else { 0.0 };
        let host_ns = self.unit_sum(|u| u.time.host_ns);
        let mand = self.unit_sum(|u| u.time.mandatory_gc_ns);
        let early = self.unit_sum(|u| u.time.early_gc_ns);
        let halted = self.unit_sum(|u| u.time.halted_ns);
        let idle: Vec<u64> = self
            .units
            .iter()
            .map(|u| end.saturating_sub(u.time.host_ns + u.time.mandatory_gc_ns + u.time.early_gc_ns))
            .collect();
        let all_idle: u64 = idle.iter().sum();
        let nd = self.unit_sum(|u| u.time.idle_no_dirty_ns);
        let nf = self.unit_sum(|u| u.time.idle_buffer_not_full_ns);
        let fw = self.unit_sum(|u| u.time.idle_follower_ns);
        McChannelTime {
            host_write_share: share(host_ns),
            gc_share: share(mand + early),
            mandatory_gc_share: share(mand),
            early_gc_share: share(early),
            idle_share: share(all_idle),
            halted_share: share(halted),
            idle: McIdle {
                no_dirty_pages_share: share(nd),
                buffer_not_full_share: share(nf),
                follower_waiting_share: share(fw),
                other_share: share(all_idle.saturating_sub(nd + nf + fw + halted)),
            },
            per_unit_host_write_ns: self.units.iter().map(|u| u.time.host_ns).collect(),
            per_unit_mandatory_gc_ns: self.units.iter().map(|u| u.time.mandatory_gc_ns).collect(),
            per_unit_early_gc_ns: self.units.iter().map(|u| u.time.early_gc_ns).collect(),
            per_unit_idle_ns: idle,
        }
    }

    /// GC steps and CF rounds, summed over the units, and the units' FTL counters.
    fn gc_summary(&self) -> McGc {
        let c = |f: fn(&UnitCounts) -> u64| self.unit_count(f);
        McGc {
            mandatory_steps: c(|x| x.mandatory_steps),
            early_steps: c(|x| x.early_steps),
            early_starts: c(|x| x.early_starts),
            preemptions: c(|x| x.preemptions),
            cf_rounds: self.rounds,
            cf_write_path_rounds: self.write_path_rounds,
            cf_round_extensions: self.round_extensions,
            cf_followers: c(|x| x.rounds_followed),
            cf_rejoins: c(|x| x.rejoins),
            cf_fill_steps: c(|x| x.fill_steps),
            cf_follower_exits: self.units.iter().fold(FollowerExits::default(), |a, u| {
                let e = u.counts.exits;
                FollowerExits {
                    round_ended: a.round_ended + e.round_ended,
                    write_path_merge_ended: a.write_path_merge_ended + e.write_path_merge_ended,
                    nothing_to_collect: a.nothing_to_collect + e.nothing_to_collect,
                    fell_due: a.fell_due + e.fell_due,
                }
            }),
            write_due_collections: c(|x| x.write_due_collections),
            cf_halts: c(|x| x.halts),
            cf_next_victims: c(|x| x.next_victims),
            cf_type_mismatches: c(|x| x.type_mismatches),
            victim_repicks: c(|x| x.repicks),
            erases: self.unit_sum(|u| u.flash_counts.erases.iter().sum::<u64>()),
            per_unit_mandatory_steps: self.units.iter().map(|u| u.counts.mandatory_steps).collect(),
            ftl: self.ftl_metrics(),
        }
    }

    /// The units' FTL counters, summed by name (counts only).
    fn ftl_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut ftl = serde_json::Map::new();
        for u in &self.units {
            for (key, v) in u.ftl.extra_metrics() {
                if let Some(x) = v.as_u64() {
                    let e = ftl.entry(key).or_insert(0u64.into());
                    *e = (e.as_u64().unwrap_or(0) + x).into();
                }
            }
        }
        ftl
    }

    /// Pages read and programmed, in pages of the geometry, and the write amplification.
    fn flash_summary(&self) -> McFlash {
        let k = u64::from(self.layout.pages_per_unit_page());
        let reads = self.unit_sum(|u| u.flash_counts.reads.iter().sum::<u64>()) * k;
        let programmed = self.unit_sum(|u| u.flash_counts.pages_programmed()) * k;
        let host_pages = self.host.stats.sectors_written as f64 / f64::from(self.spp);
        McFlash {
            pages_read: reads,
            pages_programmed: programmed,
            write_amplification: if host_pages > 0.0 { programmed as f64 / host_pages } else { 0.0 },
        }
    }
}
