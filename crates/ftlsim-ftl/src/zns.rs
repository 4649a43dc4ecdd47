//! A zoned namespace (NVMe Zoned Namespace Command Set 1.1, TP4053; docs/zns.md): the
//! logical space cut into zones of sequential-write-required blocks, each zone mapped to one
//! erase block on every plane (a superblock), so that the device never collects garbage and
//! writes each page once (write amplification 1 by construction, tested).
//!
//! - A zone's **write pointer** is the next logical page it takes; a write must start there
//!   (Zone Invalid Write, BCh), stay in its zone (Zone Boundary Error, B8h) and find the zone
//!   not full (Zone Is Full, B9h). Page `o` of a zone is page `o / planes` of its block on
//!   plane `o % planes`: sequential writes stripe over the planes and program every block in
//!   order.
//! - **Zone capacity** (ZNS 2.1.1): the first `zone_capacity_pages` pages of a zone are
//!   writable (all of them by default); a write past them is Zone Boundary Error, the rest of
//!   the zone reads as zeros, and a zone is Full when written to its capacity.
//! - **Zone states** (ZNS Sec. 2.1.1, Fig. 7): Empty, Implicitly Opened (by a write),
//!   Explicitly Opened (by Open Zone), Closed, Full. Writing an Empty zone or opening it needs
//!   an active resource (Too Many Active Zones, BDh, at `max_active_zones`) and, as for a Closed
//!   one, an open resource: at `max_open_zones` the controller closes the implicitly opened
//!   zone written least recently, as ZNS 2.5.1 allows (QEMU does the same); when every open
//!   zone was opened explicitly, none may be closed so: Too Many Open Zones (BEh).
//! - **Zone append** (ZNS 4.3): a write whose address is its zone's first page (ZSLBA;
//!   otherwise Invalid Field); the drive writes it at the zone's write pointer, under the
//!   rules of a write there.
//! - **Zone Management Send** (ZNS 4.4): Open, Close, Finish and Reset of the zone starting at
//!   the command's address (otherwise Invalid Field), with the state transitions of ZNS
//!   Fig. 7; one the figure does not allow (closing an Empty zone, opening a Full one) is
//!   Invalid Zone State Transition (BFh). Finish makes a zone Full where its write pointer is,
//!   programming nothing (the rest reads as zeros). Reset drops the zone's pages and erases its
//!   blocks; a trim of whole zones is a reset too (part of a zone: Invalid Field). A write or
//!   trim that is not whole pages is Invalid Field (02h): the zone's logical block is a page.
//! - A refused command completes at once with its status and changes nothing; the statuses are
//!   counted (`ftl_metrics.zns`), or the run stops at the first one
//!   (`ftl.zns.on_refused = "stop"`).
//!
//! - After a power cut the zones' write pointers and states come from flash (recovery.rs).
//!
//! Not modelled: read-only and offline zones, zone random write areas, the Zone Append Size
//! Limit, zone descriptor extensions.

mod recovery;

use crate::options::Options;
use ftlsim_core::config::{DriveConfig, PartialWrite, Resolved, UnmappedRead};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{Admission, FlashCtx, Ftl, GcCounts, Recovery, Refusal};
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, Ppn};
use ftlsim_core::host::IoOp;
use serde::{Deserialize, Serialize};

/// The zoned namespace's options (`[ftl.zns]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZnsOptions {
    /// Zones open at once at most (MOR + 1; 0: no limit).
    pub max_open_zones: u32,
    /// Zones open or closed at once at most (MAR + 1; 0: no limit).
    pub max_active_zones: u32,
    /// What a refused command does: `"count"` (completes with its status, counted) or
    /// `"stop"` (the run stops with an error naming it).
    pub on_refused: OnRefused,
    /// Writable pages of a zone (ZCAP), from its start; 0: the whole zone (one block on every
    /// plane).
    pub zone_capacity_pages: u32,
}

/// What a refused command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnRefused {
    /// It completes with its status; `ftl_metrics.zns` counts it.
    #[default]
    Count,
    /// The run stops with an error.
    Stop,
}

impl Default for ZnsOptions {
    fn default() -> Self {
        ZnsOptions { max_open_zones: 14, max_active_zones: 14, on_refused: OnRefused::Count, zone_capacity_pages: 0 }
    }
}

impl Options for ZnsOptions {
    const SECTION: &'static str = "zns";

    fn check(&self, cfg: &DriveConfig) -> Result<(), ConfigError> {
        let size = cfg.geometry.planes() * cfg.geometry.pages_per_block;
        if self.zone_capacity_pages > size {
            return Err(crate::options::invalid(
                "zns",
                "zone_capacity_pages",
                self.zone_capacity_pages,
                format!("must be <= the zone size, {size} pages (a block on each of {} planes)", cfg.geometry.planes()),
            ));
        }
        if self.max_active_zones != 0 && self.max_open_zones > self.max_active_zones {
            return Err(crate::options::invalid(
                "zns",
                "max_open_zones",
                self.max_open_zones,
                format!("must be <= ftl.zns.max_active_zones = {} (an open zone is active)", self.max_active_zones),
            ));
        }
        if self.max_active_zones != 0 && self.max_open_zones == 0 {
            return Err(crate::options::invalid(
                "zns",
                "max_open_zones",
                0,
                "must be set (>= 1) when ftl.zns.max_active_zones is (an open zone is active)",
            ));
        }
        Ok(())
    }
}

/// Fit a drive made for another FTL to a zoned namespace (the benchmark's and the test
/// suite's drives): whole zones, a sixteenth of the blocks spare (8 at least), unwritten blocks read as
/// zeros, no buffer.
pub fn fit_drive(cfg: &mut DriveConfig) {
    let extra = (cfg.geometry.blocks_per_plane / 16).max(8);
    cfg.overprovisioning = ftlsim_core::config::OverProvisioning {
        share: None,
        extra_blocks_per_plane: Some(extra),
        ..cfg.overprovisioning.clone()
    };
    cfg.host.unmapped_read = UnmappedRead::Zero;
    cfg.host.write_buffer_bytes = None;
    if cfg.host.partial_write == PartialWrite::Merge {
        cfg.host.partial_write = PartialWrite::default();
    }
}

/// A zone's state (ZNS Fig. 7; the states this model reaches: no Read Only or Offline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum ZoneState {
    Empty,
    ImplicitlyOpened,
    ExplicitlyOpened,
    Closed,
    Full,
}

impl ZoneState {
    fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened)
    }
    fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

/// The statuses a command may be refused with (NVMe base 1.4 Fig. 128, ZNS Fig. 25).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    InvalidField,
    ZoneBoundaryError,
    ZoneIsFull,
    ZoneInvalidWrite,
    TooManyActiveZones,
    TooManyOpenZones,
    InvalidZoneStateTransition,
}

impl Status {
    /// Every status, in the order of the counters and of results.json.
    const ALL: [Status; 7] = [
        Status::InvalidField,
        Status::ZoneBoundaryError,
        Status::ZoneIsFull,
        Status::ZoneInvalidWrite,
        Status::TooManyActiveZones,
        Status::TooManyOpenZones,
        Status::InvalidZoneStateTransition,
    ];

    /// Its NVMe status code and its name in results.json.
    fn refusal(self) -> Refusal {
        let (code, name) = match self {
            Status::InvalidField => (0x02, "invalid_field"),
            Status::ZoneBoundaryError => (0xB8, "zone_boundary_error"),
            Status::ZoneIsFull => (0xB9, "zone_is_full"),
            Status::ZoneInvalidWrite => (0xBC, "zone_invalid_write"),
            Status::TooManyActiveZones => (0xBD, "too_many_active_zones"),
            Status::TooManyOpenZones => (0xBE, "too_many_open_zones"),
            Status::InvalidZoneStateTransition => (0xBF, "invalid_zone_state_transition"),
        };
        Refusal { code, name }
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ZnsCounts {
    refused: [u64; Status::ALL.len()],
    appends: u64,
    opens: u64,
    closes: u64,
    finishes: u64,
    resets: u64,
    auto_closed: u64,
}

/// The zoned FTL.
#[derive(Serialize, Deserialize)]
pub struct ZnsFtl {
    geo: Geometry,
    opts: ZnsOptions,
    /// Pages per zone (its logical size): one block on every plane.
    size: u32,
    /// Writable pages per zone, from its start (ZCAP).
    cap: u32,
    wp: Vec<u32>,
    state: Vec<ZoneState>,
    /// When each zone was last written (a write count), for the controller's choice of zone
    /// to close.
    last_write: Vec<u64>,
    writes: u64,
    open: u32,
    active: u32,
    counts: ZnsCounts,
}

impl ZnsFtl {
    /// Build for a validated config: its logical space must be whole zones.
    pub fn new(cfg: &Resolved) -> Result<ZnsFtl, ConfigError> {
        let d = cfg.derived();
        let g = &cfg.geometry;
        let opts = ZnsOptions::of(cfg)?;
        let size = g.planes() * g.pages_per_block;
        if !d.logical_pages.is_multiple_of(size) {
            let zones = d.logical_pages / size;
            return Err(ConfigError::Invalid {
                key: "overprovisioning".into(),
                value: format!("{} logical pages", d.logical_pages),
                rule: format!(
                    "a zoned namespace is whole zones of {size} pages (a block on each of {} planes): set \
                     overprovisioning.extra_blocks_per_plane = {} for {zones} zones",
                    g.planes(),
                    g.blocks_per_plane - zones
                ),
            });
        }
        if cfg.host.write_buffer_bytes.unwrap_or(0) > 0 || cfg.host.partial_write == PartialWrite::Merge {
            return Err(ConfigError::Invalid {
                key: "host.write_buffer_bytes".into(),
                value: cfg.host.write_buffer_bytes.unwrap_or(0).to_string(),
                rule: "must be 0, and host.partial_write not \"merge\", for a zoned namespace: a buffer writes its \
                       pages out of the order the host gave them"
                    .into(),
            });
        }
        if cfg.host.unmapped_read != UnmappedRead::Zero {
            return Err(ConfigError::Invalid {
                key: "host.unmapped_read".into(),
                value: "\"flash\"".into(),
                rule: "must be \"zero\" for a zoned namespace: a block past a zone's write pointer reads as zeros, \
                       and cannot be written out of order to give it contents"
                    .into(),
            });
        }
        let zones = (d.logical_pages / size) as usize;
        let cap = if opts.zone_capacity_pages == 0 { size } else { opts.zone_capacity_pages };
        Ok(ZnsFtl {
            geo: g.clone(),
            opts,
            size,
            cap,
            wp: vec![0; zones],
            state: vec![ZoneState::Empty; zones],
            last_write: vec![0; zones],
            writes: 0,
            open: 0,
            active: 0,
            counts: ZnsCounts::default(),
        })
    }

    fn zones(&self) -> u32 {
        self.wp.len() as u32
    }

    /// The block of zone `z` on `plane`.
    fn block(&self, z: u32, plane: u32) -> BlockId {
        self.geo.first_block(plane) + z
    }

    /// Where page `o` of zone `z` lies.
    fn ppn(&self, z: u32, o: u32) -> Ppn {
        let planes = self.geo.planes();
        self.geo.first_page(self.block(z, o % planes)) + o / planes
    }

    /// The command refused with `status`, counted (or the run stopped).
    fn refuse(&mut self, status: Status, op: IoOp, first: u64, sectors: u32) -> Result<Admission, SimError> {
        let r = status.refusal();
        if self.opts.on_refused == OnRefused::Stop {
            return Err(SimError::Request(format!(
                "a {} of sectors [{first}, {}) refused by the zoned namespace: {} ({:02X}h); \
                 ftl.zns.on_refused = \"count\" completes such commands with their status and counts them",
                op.name(),
                first + u64::from(sectors),
                r.name,
                r.code
            )));
        }
        self.counts.refused[status as usize] += 1;
        Ok(Admission::Refused(r))
    }

    /// A write of pages `first..=last`: its status, if refused, after the controller closed a
    /// zone to open this one where it may.
    fn admit_write(&mut self, first: u32, last: u32) -> Option<Status> {
        // In QEMU's order (nvme_check_zone_write): the zone's state, its pointer, its end.
        let zi = (first / self.size) as usize;
        match self.state[zi] {
            ZoneState::Full => Some(Status::ZoneIsFull),
            _ if first % self.size != self.wp[zi] => Some(Status::ZoneInvalidWrite),
            _ if last / self.size != first / self.size || last % self.size >= self.cap => {
                Some(Status::ZoneBoundaryError)
            }
            ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened => None,
            ZoneState::Empty | ZoneState::Closed => self.make_room(zi),
        }
    }

    /// Zone `zi` to state `to`, the counts of open and active zones with it: every change of
    /// a zone's state goes through here (check_invariants recounts them).
    fn set_state(&mut self, zi: usize, to: ZoneState) {
        let from = self.state[zi];
        self.open = self.open + u32::from(to.is_open()) - u32::from(from.is_open());
        self.active = self.active + u32::from(to.is_active()) - u32::from(from.is_active());
        self.state[zi] = to;
    }

    /// Make room to open Empty or Closed zone `zi`: an active resource for an Empty one, and
    /// an open one, closing the implicitly opened zone written least recently when every open
    /// resource is taken (ZNS 2.5.1); the status when there is none to be had.
    fn make_room(&mut self, zi: usize) -> Option<Status> {
        let o = &self.opts;
        if self.state[zi] == ZoneState::Empty && o.max_active_zones != 0 && self.active >= o.max_active_zones {
            return Some(Status::TooManyActiveZones);
        }
        if o.max_open_zones != 0 && self.open >= o.max_open_zones {
            // Only an implicitly opened zone may be closed so; explicitly opened ones stay.
            let Some(c) = (0..self.zones() as usize)
                .filter(|&i| self.state[i] == ZoneState::ImplicitlyOpened)
                .min_by_key(|&i| self.last_write[i])
            else {
                return Some(Status::TooManyOpenZones);
            };
            self.set_state(c, ZoneState::Closed);
            self.counts.auto_closed += 1;
        }
        None
    }

    /// Open Zone on `zi`: its status, if refused.
    fn open_zone(&mut self, zi: usize) -> Option<Status> {
        match self.state[zi] {
            ZoneState::ExplicitlyOpened => {}
            ZoneState::ImplicitlyOpened => self.set_state(zi, ZoneState::ExplicitlyOpened),
            ZoneState::Full => return Some(Status::InvalidZoneStateTransition),
            ZoneState::Empty | ZoneState::Closed => {
                if let Some(status) = self.make_room(zi) {
                    return Some(status);
                }
                self.set_state(zi, ZoneState::ExplicitlyOpened);
            }
        }
        self.counts.opens += 1;
        None
    }

    /// Close Zone on `zi`: its status, if refused.
    fn close_zone(&mut self, zi: usize) -> Option<Status> {
        match self.state[zi] {
            ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened => self.set_state(zi, ZoneState::Closed),
            ZoneState::Closed => {}
            ZoneState::Empty | ZoneState::Full => return Some(Status::InvalidZoneStateTransition),
        }
        self.counts.closes += 1;
        None
    }

    /// Finish Zone on `zi`: Full where its write pointer stands, nothing programmed.
    fn finish_zone(&mut self, zi: usize) {
        self.set_state(zi, ZoneState::Full);
        self.counts.finishes += 1;
    }

    /// Reset zone `z`: its written pages dropped, its blocks erased.
    fn reset(&mut self, ctx: &mut FlashCtx, z: u32) -> Result<(), SimError> {
        let zi = z as usize;
        let written = self.wp[zi];
        for o in 0..written {
            let ppn = self.ppn(z, o);
            if ctx.flash().is_valid(ppn) {
                ctx.invalidate(ppn)?;
            }
        }
        // Every block the zone programmed: its written pages, and a page a cut tore.
        for plane in 0..self.geo.planes() {
            let b = self.block(z, plane);
            if ctx.flash().write_pointer(b) > 0 {
                ctx.erase(b)?;
            }
        }
        self.set_state(zi, ZoneState::Empty);
        self.wp[zi] = 0;
        self.counts.resets += 1;
        Ok(())
    }
}

impl Ftl for ZnsFtl {
    fn name(&self) -> &'static str {
        "zns"
    }

    fn admit(&mut self, op: IoOp, offset_sector: u64, sectors: u32) -> Result<Admission, SimError> {
        if op == IoOp::Read {
            return Ok(Admission::Take);
        }
        let spp = u64::from(self.geo.sectors_per_page());
        // A reset's length plays no part (it resets the zone it names).
        let length_ok = op == IoOp::ZoneReset || u64::from(sectors).is_multiple_of(spp);
        if !offset_sector.is_multiple_of(spp) || !length_ok {
            return self.refuse(Status::InvalidField, op, offset_sector, sectors);
        }
        // The replay checked the command lies in the logical space, which is whole zones.
        let first = (offset_sector / spp) as u32;
        let pages = (u64::from(sectors) / spp) as u32;
        let zi = (first / self.size) as usize;
        let at_zone_start = first.is_multiple_of(self.size);
        let whole_zones = at_zone_start && pages.is_multiple_of(self.size);
        let status = match op {
            IoOp::Write => self.admit_write(first, first + pages - 1),
            IoOp::ZoneAppend if !at_zone_start => Some(Status::InvalidField),
            // Checked here: a full zone's pointer is the next zone's start.
            IoOp::ZoneAppend if self.state[zi] == ZoneState::Full => Some(Status::ZoneIsFull),
            IoOp::ZoneAppend => {
                let at = first + self.wp[zi];
                match self.admit_write(at, at + pages - 1) {
                    None => {
                        self.counts.appends += 1;
                        return Ok(Admission::WriteAt(u64::from(at) * spp));
                    }
                    status => status,
                }
            }
            IoOp::Trim | IoOp::ZoneResetAll if !whole_zones => Some(Status::InvalidField),
            IoOp::Trim => None,
            IoOp::ZoneResetAll => return Ok(Admission::Reset { offset_sector, sectors: u64::from(sectors) }),
            // One zone, named by its first block; open, close and finish name no other length
            // than none or the zone's.
            _ if !at_zone_start => Some(Status::InvalidField),
            IoOp::ZoneOpen | IoOp::ZoneClose | IoOp::ZoneFinish if pages != 0 && pages != self.size => {
                Some(Status::InvalidField)
            }
            IoOp::ZoneReset => return Ok(Admission::Reset { offset_sector, sectors: u64::from(self.size) * spp }),
            IoOp::ZoneOpen => self.open_zone(zi),
            IoOp::ZoneClose => self.close_zone(zi),
            IoOp::ZoneFinish => {
                self.finish_zone(zi);
                None
            }
            // Taken above.
            IoOp::Read => None,
        };
        match status {
            Some(status) => self.refuse(status, op, offset_sector, sectors),
            None if op.is_zone_management() => Ok(Admission::Done),
            None => Ok(Admission::Take),
        }
    }

    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let (z, o) = (lpn / self.size, lpn % self.size);
        if z >= self.zones() || o >= self.wp[z as usize] {
            return Ok(None);
        }
        Ok(Some(ctx.read_mapped(self.ppn(z, o), lpn, None)?))
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        let (z, o) = (lpn / self.size, lpn % self.size);
        let zi = z as usize;
        if z >= self.zones() || self.state[zi] == ZoneState::Full || o != self.wp[zi] || o >= self.cap {
            return Err(SimError::Ftl(format!(
                "zns: lpn {lpn} is not at its zone's write pointer (zone {z}, pointer {}): only sequential writes \
                 from a zone's start reach a zoned namespace (precondition with a sequential fill only)",
                self.wp.get(zi).copied().unwrap_or(0)
            )));
        }
        if matches!(self.state[zi], ZoneState::Empty | ZoneState::Closed) {
            self.set_state(zi, ZoneState::ImplicitlyOpened);
        }
        ctx.program(self.ppn(z, o), Oob { lpn, version, kind: PageKind::Data })?;
        self.wp[zi] += 1;
        self.writes += 1;
        self.last_write[zi] = self.writes;
        if self.wp[zi] == self.cap {
            self.set_state(zi, ZoneState::Full);
        }
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        // Admission took whole zones only: the zone resets at its last page.
        let (z, o) = (lpn / self.size, lpn % self.size);
        if z < self.zones() && o + 1 == self.size {
            self.reset(ctx, z)?;
        }
        Ok(())
    }

    fn background_step(&mut self, _ctx: &mut FlashCtx) -> Result<bool, SimError> {
        Ok(false)
    }

    fn gc_counts(&self) -> GcCounts {
        GcCounts::default()
    }

    fn free_blocks(&self) -> u64 {
        let empty = self.state.iter().filter(|&&s| s == ZoneState::Empty).count() as u64;
        empty * u64::from(self.geo.planes())
    }

    fn mapping_sram_bytes(&self) -> u64 {
        // A write pointer per zone: the mapping is arithmetic.
        4 * u64::from(self.zones())
    }

    fn begin_measurement(&mut self) {
        self.counts = ZnsCounts::default();
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut refused = serde_json::Map::new();
        for (status, n) in Status::ALL.iter().zip(self.counts.refused) {
            refused.insert(status.refusal().name.into(), n.into());
        }
        let count = |s: ZoneState| self.state.iter().filter(|&&x| x == s).count() as u64;
        let mut m = serde_json::Map::new();
        m.insert(
            "zns".into(),
            serde_json::json!({
                "zones": self.zones(),
                "zone_size_pages": self.size,
                "zone_capacity_pages": self.cap,
                "refused": refused,
                "refused_total": self.counts.refused.iter().sum::<u64>(),
                "appends": self.counts.appends,
                "opens": self.counts.opens,
                "closes": self.counts.closes,
                "finishes": self.counts.finishes,
                "resets": self.counts.resets,
                "auto_closed": self.counts.auto_closed,
                "zones_empty": count(ZoneState::Empty),
                "zones_implicitly_opened": count(ZoneState::ImplicitlyOpened),
                "zones_explicitly_opened": count(ZoneState::ExplicitlyOpened),
                "zones_closed": count(ZoneState::Closed),
                "zones_full": count(ZoneState::Full),
            }),
        );
        m
    }

    fn check_invariants(&self, flash: &FlashArray) {
        let planes = self.geo.planes();
        let (mut open, mut active) = (0, 0);
        for z in 0..self.zones() {
            let (wp, s) = (self.wp[z as usize], self.state[z as usize]);
            assert!(wp <= self.cap, "zone {z}: write pointer {wp} past its capacity");
            // Written to capacity is Full; Full below it was finished. Empty has nothing written.
            assert!(wp < self.cap || s == ZoneState::Full, "zone {z}: {s:?} at write pointer {wp}, its capacity");
            assert!(s != ZoneState::Empty || wp == 0, "zone {z}: Empty at write pointer {wp}");
            open += u32::from(s.is_open());
            active += u32::from(s.is_active());
            let mut torn = 0;
            for plane in 0..planes {
                // Each block holds exactly the zone's pages written on its plane, all valid, and
                // in a Full zone below its capacity perhaps one page a cut tore past them
                // (recovery finished the zone there).
                let written = wp / planes + u32::from(plane < wp % planes);
                let b = self.block(z, plane);
                let past = flash.write_pointer(b) - written.min(flash.write_pointer(b));
                assert!(
                    flash.write_pointer(b) >= written && past <= u32::from(s == ZoneState::Full && wp < self.cap),
                    "zone {z} plane {plane}: block {b} write pointer {} for {written} pages written",
                    flash.write_pointer(b)
                );
                torn += past;
                assert_eq!(flash.valid_count(b), written, "zone {z} plane {plane}: block {b} valid pages");
            }
            assert!(torn <= 1, "zone {z}: {torn} pages past its write pointer");
        }
        assert_eq!((open, active), (self.open, self.active), "open and active zones counted");
        if self.opts.max_open_zones != 0 {
            assert!(open <= self.opts.max_open_zones, "{open} zones open");
        }
        if self.opts.max_active_zones != 0 {
            assert!(active <= self.opts.max_active_zones, "{active} zones active");
        }
    }

    fn recovery(&mut self) -> Option<&mut dyn Recovery> {
        Some(self)
    }

    fn save_state(&self) -> Vec<u8> {
        ftlsim_core::state::encode(self)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let opts = self.opts.clone();
        *self = ftlsim_core::state::decode(bytes)?;
        self.opts = opts;
        Ok(())
    }
}
