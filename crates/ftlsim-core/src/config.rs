//! Drive configuration: geometry, over-provisioning, NAND rules, timing, FTL policy and host
//! interface, loaded from TOML and validated as a whole before any simulation starts.
//!
//! Over-provisioning has two conventions because the source papers use both:
//! - `share`: the reserved share of all physical pages (the thesis, seed 001 Ch. 4: 1/32).
//!   Logical pages = floor(physical pages x (1 - share)).
//! - `extra_blocks_per_plane`: blocks each plane has beyond its user-visible blocks (PCFTL,
//!   seed 000 Sec. 3.5: 3% of 2,048 = 62). `geometry.blocks_per_plane` is always the physical
//!   count, so logical pages = (blocks_per_plane - extra) x pages_per_block x planes.
//!   `gc_share_of_extra` says which part of the extra blocks serves GC (PCFTL: 80%); the rest
//!   is held back (bad-block replacement) and never allocated.

use crate::error::{invalid, ConfigError};
use crate::geometry::Geometry;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// A whole drive: hardware, FTL policy and host interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    /// Short name (the preset name).
    #[serde(default)]
    pub name: String,
    /// One line on what this drive is.
    #[serde(default)]
    pub description: String,
    /// Where the numbers come from (paper and table).
    #[serde(default)]
    pub source: String,
    /// Physical shape.
    pub geometry: Geometry,
    /// Space held back from the host.
    pub overprovisioning: OverProvisioning,
    /// NAND rules beyond the always-on ones.
    #[serde(default)]
    pub nand: NandRules,
    /// Operation latencies and concurrency.
    pub timing: Timing,
    /// FTL selection and the shared GC/allocation policy.
    #[serde(default)]
    pub ftl: FtlConfig,
    /// Host interface.
    #[serde(default)]
    pub host: HostConfig,
    /// The state the drive starts a run in, unless the run says otherwise.
    #[serde(default)]
    pub precondition: PreconditionDefaults,
    /// The per-block reliability model (seed 003); off without this section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliability: Option<crate::reliability::ReliabilityConfig>,
    /// A multichannel SSD of one FTL instance per channel behind a shared write buffer
    /// (seed 004); a run with this section is a channel-system run (docs/multichannel.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multichannel: Option<MultichannelConfig>,
    /// NVMe Flexible Data Placement (docs/fdp.md); off without this section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<FdpConfig>,
}

/// Reclaim unit handle types (NVMe Base Specification 2.1, Sec. 8.1.10.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FdpHandleType {
    /// GC may move the handle's valid pages into a block with other handles' (the
    /// controller's choice once they are relocated).
    #[default]
    InitiallyIsolated,
    /// GC keeps the handle's pages apart from every other handle's.
    PersistentlyIsolated,
}

impl FdpHandleType {
    /// Its name in a config and in results.json.
    pub fn name(self) -> &'static str {
        match self {
            FdpHandleType::InitiallyIsolated => "initially_isolated",
            FdpHandleType::PersistentlyIsolated => "persistently_isolated",
        }
    }
}

/// `[fdp]`: the drive's Flexible Data Placement configuration (one reclaim group; a reclaim
/// unit is one block per plane).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdpConfig {
    /// Reclaim unit handles: the placement IDs a write may name, 0..handles.
    pub handles: u32,
    /// Their type.
    #[serde(default)]
    pub handle_type: FdpHandleType,
}

/// How the channels of a multichannel SSD are managed (seed 004 Sec. 2.2, 3.2, 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ChannelMode {
    /// Synchronized channels: one command with one address on every channel, so pages and
    /// blocks are super pages and super blocks, and a partial super page is read-modified-written.
    Sync,
    /// Fully independent channels, no early garbage collection.
    #[default]
    Fi,
    /// Independent channels with garbage-collection advancing (Sec. 3.2, Table I).
    Gca,
    /// Independent channels (and planes) with cycle filling (Sec. 3.3, Table I).
    Cf,
}

impl ChannelMode {
    /// The name as configured.
    pub fn name(self) -> &'static str {
        match self {
            ChannelMode::Sync => "sync",
            ChannelMode::Fi => "fi",
            ChannelMode::Gca => "gca",
            ChannelMode::Cf => "cf",
        }
    }

    /// Whether the mode reads N_s (`spare_threshold`): GCA's early-GC start and CF's
    /// followers do; SYNC and FI collect only when a unit must.
    pub fn uses_spare_threshold(self) -> bool {
        matches!(self, ChannelMode::Gca | ChannelMode::Cf)
    }
}

/// Whether the write buffer is shared by the channels or split among them (seed 004 Sec. 4.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BufferSharing {
    /// One buffer space for all channels (Sec. 3.1).
    #[default]
    Shared,
    /// The space divided equally among the channels; a full share refuses the host.
    Partitioned,
}

/// What a unit's spare blocks are, for N_s (`multichannel.spare_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SpareCount {
    /// Free space before GC is due ([`crate::ftl::ManagedGc::spare_blocks`]).
    #[default]
    FreeSpace,
    /// The FTL's free blocks ([`crate::ftl::Ftl::free_blocks`]).
    FreeBlocks,
}

/// `[multichannel]`: the channel system of seed 004 (docs/multichannel.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MultichannelConfig {
    /// SYNC, FI, GCA or CF.
    pub mode: ChannelMode,
    /// Preemption points in early garbage collection (Sec. 3.2.2, Fig. 5): optional for GCA,
    /// always on for CF (a CF config with `false` is refused).
    pub preemption: bool,
    /// Shared or partitioned write buffer.
    pub buffer: BufferSharing,
    /// N_s: a channel starts early GC only with at most this many spare (free) blocks
    /// (Sec. 3.3.3; 200 in Sec. 4.1).
    pub spare_threshold: u32,
    /// What N_s counts: `free_space` (the space a unit can still write host data to before
    /// it must collect; FAST's free log) or `free_blocks` (the FTL's free blocks, which under
    /// FAST depend on the log's size; a counterfactual).
    pub spare_count: SpareCount,
    /// GC that a page's write needs (FAST's partial merge when the page breaks its SW
    /// block's run) runs as mandatory GC steps before the write, which managers see; `false`
    /// leaves it on the write's path (a counterfactual).
    pub write_due_gc: bool,
    /// CF: a round whose initiator is done goes on while another unit is in mandatory GC;
    /// `false` ends it with its initiator (a counterfactual).
    pub round_handover: bool,
    /// CF: a follower whose own mandatory GC interrupted it goes back to the round; `false`
    /// leaves it out until the next round (a counterfactual).
    pub follower_rejoin: bool,
    /// CF: a follower that has matched every initiator step so far takes another step of
    /// the same type while the initiator's step is still under way; `false` makes it wait
    /// for the initiator's next step (a counterfactual).
    pub fill_steps: bool,
}

impl Default for MultichannelConfig {
    fn default() -> Self {
        MultichannelConfig {
            mode: ChannelMode::Fi,
            preemption: true,
            buffer: BufferSharing::Shared,
            spare_threshold: 200,
            spare_count: SpareCount::FreeSpace,
            write_due_gc: true,
            round_handover: true,
            follower_rejoin: true,
            fill_steps: true,
        }
    }
}

/// `[precondition]`: the drive state a run starts from when `--fill` (Python `fill=`) is
/// not given. A preset sets it where its paper implies a drive that is not full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionDefaults {
    /// Share of the logical space written sequentially before the run, in [0, 1].
    pub fill: f64,
}

impl Default for PreconditionDefaults {
    fn default() -> Self {
        PreconditionDefaults { fill: 1.0 }
    }
}

/// Over-provisioning; exactly one convention must be given (see module header).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct OverProvisioning {
    /// Reserved share of all physical pages, in [0, 1).
    pub share: Option<f64>,
    /// Blocks per plane beyond the user-visible ones.
    pub extra_blocks_per_plane: Option<u32>,
    /// With `extra_blocks_per_plane`: share of the extra blocks that serve GC (default 1.0).
    pub gc_share_of_extra: Option<f64>,
}

/// NAND rules that depend on the part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct NandRules {
    /// Copy-back only between pages of equal parity (PCFTL Sec. 3.2).
    #[serde(default)]
    pub copyback_same_parity: bool,
}

/// Whether planes of one die may run different operations at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PlaneConcurrency {
    /// Each plane is an independent timed resource.
    #[default]
    Independent,
    /// A die runs one command at a time; planes overlap only inside multi-plane commands.
    MultiPlaneOnly,
}

/// In what order a die serves the flash operations queued for it (`timing.transaction_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TransactionOrder {
    /// First come, first served: each operation is placed when issued (the source papers'
    /// simulators).
    #[default]
    Fcfs,
    /// Reads first, as controllers (and MQSim's transaction schedulers) do: a request's
    /// programs, erases and copy-backs wait in their plane's queue and are placed as simulated
    /// time reaches them, so a read overtakes those not yet started; queued operations of one
    /// kind on the planes of a die at the same page become one multi-plane command across
    /// requests.
    ReadFirst,
}

fn default_read_first_age_cap_ns() -> u64 {
    10_000_000
}

/// Latencies and concurrency switches. Times in nanoseconds, rates in MB/s (10^6 bytes/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Command and address cycles on the bus, per command.
    #[serde(default)]
    pub cmd_addr_ns: u64,
    /// Channel bus data rate.
    pub channel_mb_per_s: f64,
    /// Array read to the page register.
    pub t_r_ns: u64,
    /// Page program from the register.
    pub t_prog_ns: u64,
    /// Block erase.
    pub t_bers_ns: u64,
    /// Intra-plane copy-back array time; default tR + tPROG.
    #[serde(default)]
    pub t_copyback_ns: Option<u64>,
    /// Host interface rate; 0 means the host link costs nothing.
    #[serde(default)]
    pub host_mb_per_s: f64,
    /// Cost of one mapping lookup in controller DRAM/SRAM, charged per host page.
    #[serde(default)]
    pub dram_access_ns: u64,
    /// Cost of examining one entry of the write buffer (`host.write_buffer_bytes`), ns: a
    /// host page's lookup scans its LRU list and is charged every entry it holds (a miss's
    /// cost). A proposal: seed 000 names the search cost (Sec. 5.6, Fig. 14) but not its size.
    #[serde(default)]
    pub write_buffer_search_ns: u64,
    /// ECC decoding of a page read to the controller, ns: added to every page read's data
    /// path (host reads and off-chip copies; a copy-back bypasses it, seed 003 Sec. II-A).
    #[serde(default)]
    pub ecc_decode_ns: u64,
    /// Bandwidth of the controller's DRAM port shared by every channel's DMA, MB/s: a page
    /// read to the controller crosses it once into DRAM, a page programmed from the
    /// controller once out of it (seed 003 Sec. II-A, t_DMA in and out). 0: unlimited.
    #[serde(default)]
    pub dram_mb_per_s: f64,
    /// Plane concurrency within a die.
    #[serde(default)]
    pub plane_concurrency: PlaneConcurrency,
    /// Merge operations of one batch on different planes of a die into multi-plane commands.
    #[serde(default)]
    pub multi_plane: bool,
    /// The order a die serves queued operations in (`fcfs` or `read_first`).
    #[serde(default)]
    pub transaction_order: TransactionOrder,
    /// Reading first: an operation queued this long goes ahead of later reads, so that a stream
    /// of reads cannot hold a die's programs back for ever (0: no bound).
    #[serde(default = "default_read_first_age_cap_ns")]
    pub read_first_age_cap_ns: u64,
    /// Strictly serial: one flash operation at a time in the whole drive (thesis setup).
    #[serde(default)]
    pub serial: bool,
    /// A read of the page still held in the plane register skips tR.
    #[serde(default)]
    pub register_read_hits: bool,
    /// With `plane_concurrency = "multi_plane_only"`: reads of different planes of a die may
    /// run at once (independent multi-plane reads of recent TLC parts); programs and erases
    /// still take the whole die.
    #[serde(default)]
    pub independent_plane_reads: bool,
}

/// Plane allocation policy for new writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Allocation {
    /// Next plane in channel-way-die-plane order for each page written.
    #[default]
    RoundRobin,
    /// Plane fixed by the logical page: `lpn % planes` (DLOOP, seed 000 Sec. 2.1).
    StaticLpn,
    /// A new page goes to the next plane of a round-robin token, an update to the plane that
    /// holds its old version (PCFTL's write dispatch, seed 000 Sec. 3.1, Fig. 3).
    UpdateInPlane,
    /// A host page goes to the plane whose queue frees first (its array's free time plus the
    /// work queued or deferred there), ties broken round-robin; a plane that needs foreground
    /// GC starts it and the page goes to another plane if one can take it sooner. Without
    /// timing (preconditioning) it is round-robin.
    Dynamic,
}

/// How much a foreground GC collects once triggered (`ftl.foreground_gc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ForegroundGc {
    /// Victims until the plane is back at the threshold (the source papers' GC): on the
    /// `default` drive about 8 victims in one burst.
    #[default]
    UntilThreshold,
    /// One victim per trigger; more only if the plane would otherwise run out of free blocks
    /// (incremental GC of current controllers).
    Incremental,
}

/// Whether host I/O may overtake foreground GC (`ftl.gc_preemption`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GcPreemption {
    /// A collection holds its plane until it ends (the source papers' GC).
    #[default]
    None,
    /// Host reads (and the mapping reads they need) go ahead of a collection's remaining
    /// page copies; it resumes after them. Needs `ftl.gc_scope = "plane"`.
    Reads,
    /// Host reads and writes go ahead of a plane's queued GC work while every plane of its
    /// die keeps `ftl.gc_preemption_floor_blocks` erased blocks; below that GC goes first on
    /// the die (MQSim's preemptible GC and its hard threshold, a chip's). Needs
    /// `ftl.gc_scope = "plane"`.
    Writes,
}

impl GcPreemption {
    /// The config's spelling, for error messages.
    pub fn name(self) -> &'static str {
        match self {
            GcPreemption::None => "none",
            GcPreemption::Reads => "reads",
            GcPreemption::Writes => "writes",
        }
    }
}

/// GC victim selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum VictimPolicy {
    /// Fewest valid pages, O(1) through buckets by valid count.
    #[default]
    Greedy,
    /// Oldest closed block first.
    Fifo,
    /// Highest (1 - u) / (2u) x age (Kawaguchi et al.); a scan of the scope's closed blocks.
    CostBenefit,
}

/// Which part of the drive one GC collects and blocks for host I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GcScope {
    /// One plane.
    #[default]
    Plane,
    /// The planes of one die.
    Die,
    /// The planes of one chip.
    Chip,
    /// The planes on one channel.
    Channel,
    /// Every plane.
    Device,
}

/// How GC moves a valid page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GcCopy {
    /// Read out over the channel and program back (off-chip copy).
    #[default]
    Controller,
    /// Intra-plane copy-back (no bus data transfer).
    Copyback,
}

/// FTL selection and the GC/allocation policy shared by the FTLs. An FTL's own options live
/// in sections it owns (`[ftl.waftl]`, `[ftl.rcftl]`, ...): the core keeps them as tables and
/// the FTL registry (`ftlsim_ftl::resolve`) parses and checks them, naming their keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FtlConfig {
    /// Registered FTL name (`ftlsim ftls` lists them); empty: the registry's default FTL.
    pub name: String,
    /// Plane allocation for host writes. Default: the FTL's own (`update_in_plane` for pcftl,
    /// `static_lpn` for dloop and DFTL's conventional GC, `round_robin` for the others).
    pub allocation: Option<Allocation>,
    /// Victim selection.
    pub gc_victim: VictimPolicy,
    /// Foreground GC starts when a plane's free blocks fall below this.
    /// Default: the over-provisioning's GC blocks per plane, capped at 2 + 1/8 of them.
    pub gc_threshold_blocks: Option<u32>,
    /// Scope of one GC (host I/O held while it runs). Default: the FTL's own (`device` for
    /// DFTL's conventional GC, `plane` for the others).
    pub gc_scope: Option<GcScope>,
    /// How GC moves valid pages. Default: the FTL's own (`copyback` for pcftl and dloop,
    /// `controller` for the others).
    pub gc_copy: Option<GcCopy>,
    /// How much one foreground GC collects.
    pub foreground_gc: ForegroundGc,
    /// Whether host I/O may overtake foreground GC.
    pub gc_preemption: GcPreemption,
    /// With `gc_preemption = "writes"`: host I/O goes ahead of a plane's queued GC while
    /// every plane of its die has at least this many erased blocks (MQSim's
    /// GC_Hard_Threshold in blocks).
    pub gc_preemption_floor_blocks: u32,
    /// How GC learns which pages of a victim are invalid (seed 001 Table 8.1); the FTLs
    /// declare which they support.
    pub invalid_tracking: InvalidTracking,
    /// Collect in host idle time.
    pub background_gc: bool,
    /// Background GC runs on planes with fewer free blocks than this (default threshold + 2).
    pub background_gc_threshold_blocks: Option<u32>,
    /// Host idle time before background GC starts.
    pub idle_threshold_ns: u64,
    /// Host write streams (open active blocks) per plane; GC has its own stream besides.
    pub write_streams: u32,
    /// SRAM for the mapping cache of demand-based FTLs, bytes; each FTL converts it to
    /// entries with its own entry size. Default: each FTL's thesis configuration (Table 5.2).
    pub mapping_cache_bytes: Option<u64>,
    /// The FTLs' own sections by name (`[ftl.NAME]`), as given: each is parsed and checked by
    /// the FTL that owns it.
    #[serde(flatten)]
    pub sections: std::collections::BTreeMap<String, toml::Table>,
}

/// The keys of `[ftl]` that are not sections, as the TOML file spells them.
const FTL_KEYS: &[&str] = &[
    "name",
    "allocation",
    "gc_victim",
    "gc_threshold_blocks",
    "gc_scope",
    "gc_copy",
    "foreground_gc",
    "gc_preemption",
    "gc_preemption_floor_blocks",
    "invalid_tracking",
    "background_gc",
    "background_gc_threshold_blocks",
    "idle_threshold_ns",
    "write_streams",
    "mapping_cache_bytes",
];

impl<'de> Deserialize<'de> for FtlConfig {
    /// The shared keys typed, as a derived `deny_unknown_fields` would read them (errors at
    /// the key), and every table an FTL's section, kept for its owner to read.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FtlConfig, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = FtlConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the [ftl] table")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<FtlConfig, A::Error> {
                let mut c = FtlConfig::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "name" => c.name = map.next_value()?,
                        "allocation" => c.allocation = map.next_value()?,
                        "gc_victim" => c.gc_victim = map.next_value()?,
                        "gc_threshold_blocks" => c.gc_threshold_blocks = map.next_value()?,
                        "gc_scope" => c.gc_scope = map.next_value()?,
                        "gc_copy" => c.gc_copy = map.next_value()?,
                        "foreground_gc" => c.foreground_gc = map.next_value()?,
                        "gc_preemption" => c.gc_preemption = map.next_value()?,
                        "gc_preemption_floor_blocks" => c.gc_preemption_floor_blocks = map.next_value()?,
                        "invalid_tracking" => c.invalid_tracking = map.next_value()?,
                        "background_gc" => c.background_gc = map.next_value()?,
                        "background_gc_threshold_blocks" => c.background_gc_threshold_blocks = map.next_value()?,
                        "idle_threshold_ns" => c.idle_threshold_ns = map.next_value()?,
                        "write_streams" => c.write_streams = map.next_value()?,
                        "mapping_cache_bytes" => c.mapping_cache_bytes = map.next_value()?,
                        _ => match map.next_value::<toml::Value>()? {
                            toml::Value::Table(t) => {
                                c.sections.insert(key, t);
                            }
                            _ => return Err(serde::de::Error::unknown_field(&key, FTL_KEYS)),
                        },
                    }
                }
                Ok(c)
            }
        }
        d.deserialize_map(Keys)
    }
}

impl FtlConfig {
    /// The section `[ftl.NAME]` read as `T` (its defaults where it is absent); errors name
    /// the section's keys (`ftl.NAME.key`).
    pub fn section<T: serde::de::DeserializeOwned + Default>(&self, name: &str) -> Result<T, ConfigError> {
        match self.sections.get(name) {
            None => Ok(T::default()),
            Some(t) => toml::Value::Table(t.clone()).try_into().map_err(|e: toml::de::Error| ConfigError::Parse {
                file: format!("[ftl.{name}]"),
                message: e.message().to_string(),
            }),
        }
    }
}

/// How GC learns which pages are invalid (`ftl.invalid_tracking`, seed 001 Sec. 8.1,
/// Table 8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidTracking {
    /// One invalid flag per page in SRAM (Table 6.1's "GC 128KB"): GC reads only valid pages.
    #[default]
    Flags,
    /// One invalid counter per block (Table 8.1's "GC 4KB"): GC reads every page of a victim
    /// and looks its LPN up to learn whether it is still valid.
    Counters,
    /// ILog (Ch. 8): block invalid flags logged in invalidation pages on flash.
    Ilog,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            name: String::new(),
            allocation: None,
            gc_victim: VictimPolicy::Greedy,
            gc_threshold_blocks: None,
            gc_scope: None,
            gc_copy: None,
            foreground_gc: ForegroundGc::UntilThreshold,
            gc_preemption: GcPreemption::None,
            gc_preemption_floor_blocks: 1,
            invalid_tracking: InvalidTracking::default(),
            background_gc: false,
            background_gc_threshold_blocks: None,
            idle_threshold_ns: 1_000_000,
            write_streams: 1,
            mapping_cache_bytes: None,
            sections: std::collections::BTreeMap::new(),
        }
    }
}

/// Policy for host writes that cover part of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PartialWrite {
    /// Read the old page, merge, program the whole page.
    #[default]
    ReadModifyWrite,
    /// Program the page with the missing sectors zero-filled (PCFTL Sec. 3.5).
    ZeroPad,
    /// Hold partial pages in a small buffer until the page fills or is evicted (then RMW).
    Merge,
}

/// Replacement policy of the host write buffer (`host.write_buffer_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WriteBufferPolicy {
    /// Least recently written page leaves first; an update moves its page to the head
    /// (PCFTL Sec. 3.1, Fig. 4).
    #[default]
    Lru,
    /// First in, first out: an update replaces its page in place, and the page buffered
    /// longest leaves first (seed 004 Sec. 2.3, L110: its shared write buffer's policy).
    Fifo,
    /// Block-padding LRU (Kim & Ahn, FAST 2008; seed 004's comparison, L255-L262): the pages of
    /// one logical block (`host.bplru_block_pages` consecutive pages) move and leave
    /// together, least recently written block first; a block whose buffered pages all came
    /// is evicted next (LRU compensation); a leaving block with at least
    /// `host.bplru_padding_pages` buffered pages is padded with its other pages read from
    /// flash and written whole.
    Bplru,
    /// Write-behind (rcFTL's write buffer, seed 003 Sec. V-A): every page goes to flash at
    /// once and holds its buffer slot until its program completes; a write is acknowledged
    /// when its pages are in the buffer, and waits for room when the buffer is full. Nothing
    /// is absorbed. Its occupancy is the utilisation that rcFTL's mode selector reads
    /// (Sec. IV-B), averaged over `host.write_buffer_load_window_ns`.
    WriteBehind,
}

/// Host interface settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Device queue depth: requests dispatched at once in open-loop replay.
    pub queue_depth: u32,
    /// Partial-page write policy.
    pub partial_write: PartialWrite,
    /// Pages held by the `merge` policy's buffer.
    pub merge_buffer_pages: u32,
    /// Whether the controller's volatile buffers (the merge buffer now, write caches later)
    /// survive power loss (capacitor-backed). Power-loss recovery counts data acknowledged
    /// from such a buffer as durable only when this is true.
    pub buffer_power_protected: bool,
    /// Pages the hold-up energy of a power-protected drive flushes from its buffers at a
    /// power cut; what does not fit is lost and counted. Unset: every buffered page.
    pub buffer_flush_budget_pages: Option<u32>,
    /// DRAM write buffer size in bytes, whole pages of `geometry.page_size_bytes`
    /// (0 = no write buffer). Default: the FTL's own (2 MiB for pcftl, Table 1; none for the
    /// others).
    pub write_buffer_bytes: Option<u64>,
    /// Write buffer replacement policy.
    pub write_buffer_policy: WriteBufferPolicy,
    /// BPLRU's logical block, pages (unset: `geometry.pages_per_block`).
    pub bplru_block_pages: Option<u32>,
    /// BPLRU's block-padding threshold, buffered pages of a leaving block (unset: no
    /// padding; seed 004 L255 tunes it per workload and does not give it).
    pub bplru_padding_pages: Option<u32>,
    /// Window of the moving average of the write-behind buffer's utilisation, ns. Unset:
    /// one block's program time, `geometry.pages_per_block` x (page transfer + tPROG)
    /// (rcFTL's "average block write time", seed 003 L122).
    pub write_buffer_load_window_ns: Option<u64>,
    /// What a read of a logical page that was never written does.
    pub unmapped_read: UnmappedRead,
}

/// What a read of a never-written logical page does (`host.unmapped_read`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum UnmappedRead {
    /// Behave as if the data were there: the page is written to flash first, functionally
    /// and untimed (as if before the run; MQSim maps such pages on the fly, SSDsim before
    /// the run), then read with full timing. For traces replayed on a drive that did not
    /// hold their data.
    #[default]
    Flash,
    /// Return zeros without touching flash, as a drive does for an unmapped LBA.
    Zero,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            queue_depth: 32,
            partial_write: PartialWrite::ReadModifyWrite,
            merge_buffer_pages: 64,
            buffer_power_protected: false,
            buffer_flush_budget_pages: None,
            write_buffer_bytes: None,
            write_buffer_policy: WriteBufferPolicy::Lru,
            write_buffer_load_window_ns: None,
            bplru_block_pages: None,
            bplru_padding_pages: None,
            unmapped_read: UnmappedRead::Flash,
        }
    }
}

/// A drive config that has passed every rule, with its derived quantities (issue 59: a
/// config validated once). Parsing a config ([`DriveConfig::from_toml`], `with_overrides`)
/// checks its syntax and types; the rules that need the whole config, and the quantities
/// computed from it, come once, in [`Resolved::validate`], when the run's config is final
/// (`ftlsim_ftl::resolve` completes it against its FTL first). Every constructor of the
/// simulator (FTLs, the scheduler, the simulator, a channel system) takes one, so none
/// checks again and none can be handed a config that was never checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    cfg: DriveConfig,
    derived: Derived,
}

/// Derivations made by this process ([`derivations`]).
static DERIVATIONS: AtomicU64 = AtomicU64::new(0);

/// How many configs this process has checked and derived: a test counts a run's.
pub fn derivations() -> u64 {
    DERIVATIONS.load(Ordering::Relaxed)
}

impl Resolved {
    /// `cfg` checked against every rule (the first broken one is the error, naming its key)
    /// and its quantities derived. A run's config comes through `ftlsim_ftl::resolve`, which
    /// completes it against its FTL before it calls this.
    pub fn validate(cfg: DriveConfig) -> Result<Resolved, ConfigError> {
        DERIVATIONS.fetch_add(1, Ordering::Relaxed);
        let derived = cfg.derive()?;
        Ok(Resolved { cfg, derived })
    }

    /// The config.
    pub fn cfg(&self) -> &DriveConfig {
        &self.cfg
    }

    /// The quantities derived from it.
    pub fn derived(&self) -> &Derived {
        &self.derived
    }

    /// The config, given back (e.g. to change it and check it again).
    pub fn into_cfg(self) -> DriveConfig {
        self.cfg
    }
}

impl std::ops::Deref for Resolved {
    type Target = DriveConfig;
    fn deref(&self) -> &DriveConfig {
        &self.cfg
    }
}

/// Quantities derived from a validated config, computed once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derived {
    /// Host-visible logical pages.
    pub logical_pages: u32,
    /// Host-visible bytes.
    pub logical_bytes: u64,
    /// Physical pages.
    pub physical_pages: u32,
    /// Blocks per plane held back and never allocated (PCFTL's non-GC extra blocks).
    pub held_back_blocks_per_plane: u32,
    /// Foreground GC threshold in free blocks per plane.
    pub gc_threshold_blocks: u32,
    /// Background GC threshold in free blocks per plane.
    pub background_gc_threshold_blocks: u32,
    /// Bus time for one page of data, ns.
    pub page_transfer_ns: u64,
    /// Bus time for one page's whole spare area alone, ns.
    pub spare_transfer_ns: u64,
    /// Host link time for one page, ns (0 = free).
    pub host_page_transfer_ns: u64,
    /// DRAM port time for one page, ns (0 = unlimited).
    pub dram_page_transfer_ns: u64,
    /// Copy-back array time, ns.
    pub t_copyback_ns: u64,
    /// Host write buffer capacity in whole pages (0 = none), `None` when the config leaves
    /// it to the FTL (the registry puts an FTL's own buffer into the config it resolves).
    pub write_buffer_pages: Option<u32>,
    /// Window of the write-behind buffer's utilisation average, ns.
    pub write_buffer_load_window_ns: u64,
}

/// Whether GC can make progress on a full drive: the check `derive` makes for an FTL with
/// one open block per host stream plus GC's, and each FTL repeats with its own open blocks
/// and mapping metadata (demand-based FTLs keep translation pages in the planes too).
pub struct GcRoom<'a> {
    /// The drive.
    pub geometry: &'a Geometry,
    /// Host-visible pages: all of them hold data on a full drive.
    pub logical_pages: u32,
    /// Blocks per plane never allocated.
    pub held_back: u32,
    /// Foreground GC threshold, free blocks per plane.
    pub gc_threshold: u32,
    /// `ftl.background_gc_threshold_blocks` as the config gives it.
    pub background_gc_threshold: Option<u32>,
}

impl DriveConfig {
    /// The GC room of this drive as `derive` found it (`d`), for an FTL to check its own
    /// open blocks and metadata against.
    pub fn gc_room(&self, d: &Derived) -> GcRoom<'_> {
        GcRoom {
            geometry: &self.geometry,
            logical_pages: d.logical_pages,
            held_back: d.held_back_blocks_per_plane,
            gc_threshold: d.gc_threshold_blocks,
            background_gc_threshold: self.ftl.background_gc_threshold_blocks,
        }
    }
}

impl GcRoom<'_> {
    /// The most free blocks a plane can have on a full drive (every other block holding
    /// valid pages only): what is left after the held-back and `open_blocks` blocks, the
    /// plane's share of the data and its `metadata_pages` (rounded up to blocks).
    pub fn max_free_blocks(&self, open_blocks: u32, metadata_pages: u64) -> i64 {
        let g = self.geometry;
        let per_plane = u64::from(self.logical_pages).div_ceil(u64::from(g.planes())) + metadata_pages;
        let used = per_plane.div_ceil(u64::from(g.pages_per_block));
        i64::from(g.blocks_per_plane) - i64::from(self.held_back) - i64::from(open_blocks) - used as i64
    }

    /// Check that a full plane keeps one block's worth of invalid pages beyond the GC reserve,
    /// so that its greedy victim always has one and every collection gains (slowly: a WAF
    /// near pages per block on a full drive), and that the background threshold can be
    /// reached (idle-time GC would otherwise collect nearly valid blocks for ever). Returns
    /// the background threshold: the configured one, else the foreground threshold + 2 or
    /// what the drive can reach. `who` names the FTL in the error.
    pub fn check(&self, who: &str, open_blocks: u32, metadata_pages: u64) -> Result<u32, ConfigError> {
        let g = self.geometry;
        let max_free = self.max_free_blocks(open_blocks, metadata_pages);
        let t = self.gc_threshold;
        // The layout behind an error, spelled out only when there is one.
        let layout = || {
            let metadata = if metadata_pages == 0 {
                String::new()
            } else {
                format!(" and {metadata_pages} pages of mapping metadata")
            };
            let data_blocks =
                u64::from(self.logical_pages).div_ceil(u64::from(g.planes())).div_ceil(u64::from(g.pages_per_block));
            format!(
                "{who} on a full drive: {} blocks/plane, less {} held back, {open_blocks} open blocks and \
                 {data_blocks} blocks of data{metadata} per plane, leave at most {max_free} free blocks per plane",
                g.blocks_per_plane, self.held_back,
            )
        };
        if i64::from(t) + 1 > max_free {
            // The most data that leaves the threshold one block of room: whole blocks per plane.
            let room_blocks = i64::from(g.blocks_per_plane)
                - i64::from(self.held_back)
                - i64::from(open_blocks)
                - i64::from(t)
                - 1
                - metadata_pages.div_ceil(u64::from(g.pages_per_block)) as i64;
            let max_logical = room_blocks.max(0) as u64 * u64::from(g.pages_per_block) * u64::from(g.planes());
            return Err(invalid(
                "ftl.gc_threshold_blocks",
                t,
                format!(
                    "GC cannot make progress with {} logical pages: one block per plane must stay free of valid \
                     data beyond the GC reserve, and {}; lower {}the logical space to {max_logical} pages (raise \
                     the over-provisioning)",
                    self.logical_pages,
                    layout(),
                    if max_free > 2 { format!("the threshold to {} or ", max_free - 1) } else { String::new() },
                ),
            ));
        }
        let reachable = (max_free - 1) as u32;
        match self.background_gc_threshold {
            Some(bg) if bg < t => Err(invalid(
                "ftl.background_gc_threshold_blocks",
                bg,
                format!("must be >= ftl.gc_threshold_blocks = {t}"),
            )),
            Some(bg) if bg > reachable => Err(invalid(
                "ftl.background_gc_threshold_blocks",
                bg,
                format!(
                    "must be at most {reachable}, or idle-time GC keeps collecting nearly valid blocks for a goal \
                     it cannot reach: {}",
                    layout()
                ),
            )),
            Some(bg) => Ok(bg),
            None => Ok((t + 2).min(reachable)),
        }
    }
}

fn ge1(key: &str, v: u32) -> Result<(), ConfigError> {
    if v == 0 {
        return Err(invalid(key, v, "must be >= 1"));
    }
    Ok(())
}

/// Transfer time in ns of `bytes` at `mb_per_s` (10^6 bytes/s), rounded to the nearest ns.
pub fn transfer_ns(bytes: u64, mb_per_s: f64) -> u64 {
    if mb_per_s <= 0.0 {
        return 0;
    }
    (bytes as f64 * 1000.0 / mb_per_s).round() as u64
}

impl DriveConfig {
    /// Parse TOML text; `origin` names the file or preset in errors. Parsing checks the
    /// keys and their types; the rules on the whole config are checked once, when it is
    /// final ([`Resolved::validate`], through `ftlsim_ftl::resolve`).
    pub fn from_toml(text: &str, origin: &str) -> Result<DriveConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse { file: origin.to_string(), message: e.to_string() })
    }

    /// This config with `KEY=VALUE` overrides applied (`--set ftl.gc_victim=fifo`, Python's
    /// `overrides`), then `check`ed (`ftlsim_ftl::resolve`, or [`Resolved::validate`]): the
    /// config is written out as TOML, each dotted key set (tables created as needed), and the
    /// result parsed, so an unknown key, a wrong type or a broken rule is the same error as in
    /// a file, naming the key, and the override to blame ([`ConfigError::Override`]). VALUE is
    /// read as a TOML value (`0.1`, `true`, `"x"`, `[1, 2]`), else as a string (`fifo`); an
    /// empty VALUE removes the key (e.g. to switch over-provisioning convention).
    pub fn with_overrides<T>(
        &self,
        sets: &[(String, String)],
        check: impl Fn(DriveConfig) -> Result<T, ConfigError>,
    ) -> Result<T, ConfigError> {
        let attempt = |sets: &[(String, String)]| self.apply_overrides(sets).and_then(&check);
        let e = match attempt(sets) {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        if sets.is_empty() {
            return Err(e);
        }
        // Name the override to blame: the one without which the others load (the message
        // names the field or rule, not which of several `--set`s gave it); none when the
        // config fails without it too. This is the error path only: a config that loads is
        // checked once.
        for (i, (key, value)) in sets.iter().enumerate() {
            let others: Vec<(String, String)> =
                sets.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, s)| s.clone()).collect();
            if attempt(&others).is_ok() {
                return Err(ConfigError::Override { key: key.clone(), value: value.clone(), reason: e.to_string() });
            }
        }
        Err(e)
    }

    /// The overrides of [`DriveConfig::with_overrides`] applied and parsed, unchecked.
    fn apply_overrides(&self, sets: &[(String, String)]) -> Result<DriveConfig, ConfigError> {
        if sets.is_empty() {
            return Ok(self.clone());
        }
        let bad = |key: &str, value: &str, rule: &str| invalid(key, value, rule);
        let mut root = toml::Table::try_from(self).expect("a config serialises to TOML");
        for (key, value) in sets {
            let path: Vec<&str> = key.split('.').collect();
            if path.iter().any(|p| p.is_empty()) {
                return Err(bad(key, value, "a dotted key such as ftl.gc_victim"));
            }
            let (leaf, tables) = path.split_last().expect("split yields at least one part");
            if value.trim().is_empty() {
                // Removing a key that is not set changes nothing, but a misspelt key is an
                // error, as it is with a value (and no table is created on the way).
                let removed = tables
                    .iter()
                    .try_fold(&mut root, |t, part| t.get_mut(*part).and_then(toml::Value::as_table_mut))
                    .and_then(|t| t.remove(*leaf));
                if removed.is_none() && !Self::knows_key(&root, &path) {
                    return Err(bad(key, value, "unknown key: an empty value removes a key the config knows"));
                }
                continue;
            }
            let mut t = &mut root;
            for part in tables {
                let entry = t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                t = match entry {
                    toml::Value::Table(inner) => inner,
                    _ => return Err(bad(key, value, &format!("`{part}` is a value, not a table"))),
                };
            }
            let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
                .ok()
                .and_then(|mut v| v.remove("v"))
                .unwrap_or_else(|| toml::Value::String(value.clone()));
            t.insert(leaf.to_string(), parsed);
        }
        let text = toml::to_string(&root).expect("a TOML table serialises");
        let origin = format!(
            "{} with --set {}",
            self.name,
            sets.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
        );
        DriveConfig::from_toml(&text, &origin)
    }

    /// Whether the dotted `path` is a key of a config (set or not): the config `root` with a
    /// probe value there fails to load as an unknown field only if it is not.
    fn knows_key(root: &toml::Table, path: &[&str]) -> bool {
        let mut probe = root.clone();
        let (leaf, tables) = path.split_last().expect("a key has at least one part");
        let mut t = &mut probe;
        for part in tables {
            let entry = t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let Some(inner) = entry.as_table_mut() else { return false };
            t = inner;
        }
        t.insert(leaf.to_string(), toml::Value::Array(Vec::new()));
        let text = toml::to_string(&probe).expect("a TOML table serialises");
        match DriveConfig::from_toml(&text, "probe") {
            Ok(_) => true,
            Err(e) => !e.to_string().contains("unknown field"),
        }
    }

    /// Read and parse a TOML file.
    pub fn from_file(path: &std::path::Path) -> Result<DriveConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::Io { file: path.display().to_string(), reason: e.to_string() })?;
        DriveConfig::from_toml(&text, &path.display().to_string())
    }

    /// The rules of a channel-system run (seed 004): one chip of one die per channel, an FTL
    /// the channel managers can drive, a buffer they can flush, preemption for CF.
    fn check_multichannel(&self, m: &MultichannelConfig) -> Result<(), ConfigError> {
        let g = &self.geometry;
        if g.chips_per_channel != 1 || g.dies_per_chip != 1 {
            return Err(invalid(
                "geometry.chips_per_channel",
                format!("{} chips of {} dies", g.chips_per_channel, g.dies_per_chip),
                "a [multichannel] drive has one chip of one die per channel (seed 004 Sec. 4.6); \
                 model more chips as more channels",
            ));
        }
        if m.mode == ChannelMode::Cf && !m.preemption {
            return Err(invalid(
                "multichannel.preemption",
                false,
                "cycle filling suspends followers when the initiator's GC ends, so it needs preemption \
                 points (seed 004 Sec. 4.3)",
            ));
        }
        if self.host.write_buffer_policy == WriteBufferPolicy::WriteBehind {
            return Err(invalid(
                "host.write_buffer_policy",
                "write_behind",
                "a [multichannel] buffer is lru, fifo or bplru",
            ));
        }
        // A unit page's sectors are one bit each of a 128-bit mask.
        let pages = match m.mode {
            ChannelMode::Sync => u64::from(g.channels) * u64::from(g.planes_per_die),
            ChannelMode::Fi | ChannelMode::Gca => u64::from(g.planes_per_die),
            ChannelMode::Cf => 1,
        };
        if u64::from(g.page_size_bytes / 512) * pages > 128 {
            return Err(invalid(
                "geometry.page_size_bytes",
                g.page_size_bytes,
                format!(
                    "a [multichannel] unit page ({pages} page(s) under {}) must be at most 64 KiB (128 sectors)",
                    m.mode.name()
                ),
            ));
        }
        // N_s counts a unit's spare blocks: a unit (a channel under GCA, a plane under CF)
        // never has as many spare blocks as blocks, so N_s at or above that holds always.
        let unit_blocks = match m.mode {
            ChannelMode::Gca => g.blocks_per_plane * g.planes_per_die,
            ChannelMode::Cf => g.blocks_per_plane,
            ChannelMode::Sync | ChannelMode::Fi => u32::MAX,
        };
        if m.mode.uses_spare_threshold() && m.spare_threshold >= unit_blocks {
            return Err(invalid(
                "multichannel.spare_threshold",
                m.spare_threshold,
                format!(
                    "N_s must be below the {unit_blocks} blocks of a {} unit, which it counts the spare blocks of \
                     (at or above that every unit is always short of spare blocks)",
                    m.mode.name()
                ),
            ));
        }
        if self.ftl.gc_victim == VictimPolicy::Fifo {
            return Err(invalid(
                "ftl.gc_victim",
                "fifo",
                "a [multichannel] drive's channel managers pick victims greedily or by cost-benefit (a FIFO \
                 log must move past fully valid blocks, which early GC has no reason to do)",
            ));
        }
        // A channel system times its units as seed 004 does, one operation at a time each: no
        // queue for reads to overtake; its GC yields at multichannel.preemption's points.
        if self.timing.transaction_order == TransactionOrder::ReadFirst {
            return Err(invalid(
                "timing.transaction_order",
                "read_first",
                "a [multichannel] drive runs each unit's operations one at a time, as seed 004 does, with no \
                 queue for reads to overtake: use \"fcfs\" (its GC yields at multichannel.preemption's points)",
            ));
        }
        if self.ftl.gc_preemption != GcPreemption::None {
            return Err(invalid(
                "ftl.gc_preemption",
                self.ftl.gc_preemption.name(),
                "a [multichannel] drive's GC yields at its own points (multichannel.preemption, seed 004 Sec. \
                 3.2.2): use \"none\"",
            ));
        }
        Ok(())
    }

    /// Validate and compute derived quantities. Every rule names its key; the sections are
    /// checked in a fixed order, so the first rule broken is the error. Called once per
    /// config, by [`Resolved::validate`].
    fn derive(&self) -> Result<Derived, ConfigError> {
        if let Some(r) = &self.reliability {
            crate::reliability::ReliabilityModel::new(r)?;
        }
        if let Some(m) = &self.multichannel {
            self.check_multichannel(m)?;
        }
        let physical_pages = self.check_geometry()?;
        // Over-provisioning and the GC thresholds are rules on derived quantities (the
        // logical pages, the GC blocks): their checks return what they checked.
        let space = self.check_overprovisioning(physical_pages)?;
        let thresholds = self.check_gc_thresholds(&space)?;
        self.check_timing()?;
        self.check_host()?;
        self.check_precondition()?;
        if let Some(f) = &self.fdp {
            self.check_fdp(f)?;
        }
        Ok(self.derived(&space, thresholds))
    }

    /// `[geometry]`: every count at least one and the pages addressable; returns the
    /// physical pages.
    fn check_geometry(&self) -> Result<u32, ConfigError> {
        let g = &self.geometry;
        ge1("geometry.channels", g.channels)?;
        ge1("geometry.chips_per_channel", g.chips_per_channel)?;
        ge1("geometry.dies_per_chip", g.dies_per_chip)?;
        ge1("geometry.planes_per_die", g.planes_per_die)?;
        ge1("geometry.blocks_per_plane", g.blocks_per_plane)?;
        if g.pages_per_block < 2 || g.pages_per_block > 65_535 {
            return Err(invalid("geometry.pages_per_block", g.pages_per_block, "must be in [2, 65535]"));
        }
        if g.page_size_bytes < 512 || !g.page_size_bytes.is_multiple_of(512) {
            return Err(invalid("geometry.page_size_bytes", g.page_size_bytes, "must be a multiple of 512, >= 512"));
        }
        if g.spare_usable_bytes > g.spare_bytes_per_page {
            return Err(invalid(
                "geometry.spare_usable_bytes",
                g.spare_usable_bytes,
                format!("must be <= geometry.spare_bytes_per_page = {}", g.spare_bytes_per_page),
            ));
        }
        let pages = u64::from(g.channels)
            * u64::from(g.chips_per_channel)
            * u64::from(g.dies_per_chip)
            * u64::from(g.planes_per_die)
            * u64::from(g.blocks_per_plane)
            * u64::from(g.pages_per_block);
        if pages >= u64::from(u32::MAX) {
            return Err(invalid(
                "geometry",
                format!("{pages} pages"),
                "total pages must be < 2^32 - 1; use larger pages or fewer blocks",
            ));
        }
        Ok(pages as u32)
    }

    /// `[overprovisioning]`: one convention, in range, leaving logical pages; returns how
    /// the `physical_pages` split.
    fn check_overprovisioning(&self, physical_pages: u32) -> Result<Space, ConfigError> {
        let g = &self.geometry;
        let op = &self.overprovisioning;
        let (logical_pages, gc_blocks, held_back) = match (op.share, op.extra_blocks_per_plane) {
            (Some(share), None) => {
                if !(0.0..1.0).contains(&share) || share.is_nan() {
                    return Err(invalid("overprovisioning.share", share, "must be in [0, 1)"));
                }
                if op.gc_share_of_extra.is_some() {
                    return Err(invalid(
                        "overprovisioning.gc_share_of_extra",
                        op.gc_share_of_extra.unwrap_or(0.0),
                        "only goes with extra_blocks_per_plane",
                    ));
                }
                let logical = (f64::from(physical_pages) * (1.0 - share)).floor() as u32;
                let spare_blocks = (physical_pages - logical) / g.pages_per_block / g.planes();
                (logical, spare_blocks, 0)
            }
            (None, Some(extra)) => {
                if extra >= g.blocks_per_plane {
                    return Err(invalid(
                        "overprovisioning.extra_blocks_per_plane",
                        extra,
                        format!("must be < geometry.blocks_per_plane = {}", g.blocks_per_plane),
                    ));
                }
                let gc_share = op.gc_share_of_extra.unwrap_or(1.0);
                if !(gc_share > 0.0 && gc_share <= 1.0) {
                    return Err(invalid("overprovisioning.gc_share_of_extra", gc_share, "must be in (0, 1]"));
                }
                let gc_blocks = (f64::from(extra) * gc_share).ceil() as u32;
                let logical = (g.blocks_per_plane - extra) * g.pages_per_block * g.planes();
                (logical, gc_blocks, extra - gc_blocks)
            }
            _ => {
                return Err(invalid(
                    "overprovisioning",
                    "share and extra_blocks_per_plane",
                    "give exactly one of `share` (reserved share of the total) or `extra_blocks_per_plane`",
                ))
            }
        };
        if logical_pages == 0 {
            return Err(invalid("overprovisioning", "100%", "leaves no logical pages"));
        }
        Ok(Space { physical_pages, logical_pages, gc_blocks, held_back })
    }

    /// `[ftl]`'s write streams and GC thresholds: GC can make progress on a full drive;
    /// returns the foreground and background thresholds.
    fn check_gc_thresholds(&self, space: &Space) -> Result<Thresholds, ConfigError> {
        let g = &self.geometry;
        let streams = self.ftl.write_streams;
        if streams == 0 || streams > 16 {
            return Err(invalid("ftl.write_streams", streams, "must be in [1, 16]"));
        }
        // Each plane keeps one open block per host stream plus the GC stream open; GC needs at
        // least one free block beyond them to relocate into.
        let min_threshold = 2;
        let default_threshold = (2 + space.gc_blocks / 8).min(space.gc_blocks.max(min_threshold));
        let gc_threshold = self.ftl.gc_threshold_blocks.unwrap_or(default_threshold);
        if gc_threshold < min_threshold {
            return Err(invalid(
                "ftl.gc_threshold_blocks",
                gc_threshold,
                "must be >= 2 (GC needs a free block to relocate into while the host holds one)",
            ));
        }
        let open_blocks = streams + 1;
        let held_back = space.held_back;
        if gc_threshold + open_blocks + held_back >= g.blocks_per_plane {
            return Err(invalid(
                "ftl.gc_threshold_blocks",
                gc_threshold,
                format!(
                    "threshold + {open_blocks} open blocks + {held_back} held back must be < blocks_per_plane = {}",
                    g.blocks_per_plane
                ),
            ));
        }
        let floor = self.ftl.gc_preemption_floor_blocks;
        if self.ftl.gc_preemption == GcPreemption::Writes && floor > gc_threshold {
            return Err(invalid(
                "ftl.gc_preemption_floor_blocks",
                floor,
                format!(
                    "must be <= the GC threshold ({gc_threshold} blocks, ftl.gc_threshold_blocks): a plane's GC \
                     keeps that many blocks free, so above it GC would always go first"
                ),
            ));
        }
        let room = GcRoom {
            geometry: g,
            logical_pages: space.logical_pages,
            held_back,
            gc_threshold,
            background_gc_threshold: self.ftl.background_gc_threshold_blocks,
        };
        let background = room.check("the FTL", open_blocks, 0)?;
        Ok(Thresholds { foreground: gc_threshold, background })
    }

    /// `[timing]`: rates and latencies positive, and the plane and preemption options that
    /// go together.
    fn check_timing(&self) -> Result<(), ConfigError> {
        let t = &self.timing;
        if !(t.channel_mb_per_s > 0.0 && t.channel_mb_per_s.is_finite()) {
            return Err(invalid("timing.channel_mb_per_s", t.channel_mb_per_s, "must be > 0"));
        }
        if !(t.host_mb_per_s >= 0.0 && t.host_mb_per_s.is_finite()) {
            return Err(invalid("timing.host_mb_per_s", t.host_mb_per_s, "must be >= 0 (0 = free)"));
        }
        if !(t.dram_mb_per_s >= 0.0 && t.dram_mb_per_s.is_finite()) {
            return Err(invalid("timing.dram_mb_per_s", t.dram_mb_per_s, "must be >= 0 (0 = unlimited)"));
        }
        if t.t_r_ns == 0 || t.t_prog_ns == 0 || t.t_bers_ns == 0 {
            let (k, v) = if t.t_r_ns == 0 {
                ("timing.t_r_ns", t.t_r_ns)
            } else if t.t_prog_ns == 0 {
                ("timing.t_prog_ns", t.t_prog_ns)
            } else {
                ("timing.t_bers_ns", t.t_bers_ns)
            };
            return Err(invalid(k, v, "must be >= 1"));
        }
        if t.multi_plane && self.geometry.planes_per_die < 2 {
            return Err(invalid("timing.multi_plane", true, "needs geometry.planes_per_die >= 2"));
        }
        if t.independent_plane_reads && t.plane_concurrency != PlaneConcurrency::MultiPlaneOnly {
            return Err(invalid(
                "timing.independent_plane_reads",
                true,
                "only goes with plane_concurrency = \"multi_plane_only\" (independent planes overlap anyway)",
            ));
        }
        if t.transaction_order == TransactionOrder::ReadFirst {
            if t.serial {
                return Err(invalid(
                    "timing.transaction_order",
                    "\"read_first\"",
                    "cannot go with timing.serial = true",
                ));
            }
            if self.ftl.gc_scope.is_some_and(|s| s != GcScope::Plane) {
                return Err(invalid(
                    "timing.transaction_order",
                    "\"read_first\"",
                    "needs ftl.gc_scope = \"plane\" (a GC that holds a wider scope blocks reads by design)",
                ));
            }
        }
        let preemption = self.ftl.gc_preemption;
        if preemption != GcPreemption::None {
            let value = format!("\"{}\"", preemption.name());
            if t.serial {
                return Err(invalid("ftl.gc_preemption", value, "cannot go with timing.serial = true"));
            }
            if self.ftl.gc_scope.is_some_and(|s| s != GcScope::Plane) {
                return Err(invalid(
                    "ftl.gc_preemption",
                    value,
                    "needs ftl.gc_scope = \"plane\" (a GC that holds a wider scope blocks host I/O by design)",
                ));
            }
        }
        if preemption != GcPreemption::Writes && self.ftl.gc_preemption_floor_blocks != 1 {
            return Err(invalid(
                "ftl.gc_preemption_floor_blocks",
                self.ftl.gc_preemption_floor_blocks,
                "applies only to ftl.gc_preemption = \"writes\" (host writes go ahead of GC while a plane keeps \
                 this many erased blocks)",
            ));
        }
        Ok(())
    }

    /// `[host]`: the queue, the merge buffer and the write buffer's size and options.
    fn check_host(&self) -> Result<(), ConfigError> {
        let h = &self.host;
        ge1("host.queue_depth", h.queue_depth)?;
        if h.partial_write == PartialWrite::Merge {
            ge1("host.merge_buffer_pages", h.merge_buffer_pages)?;
        }
        let page = u64::from(self.geometry.page_size_bytes);
        let buffer = h.write_buffer_bytes.unwrap_or(0);
        if buffer != 0 && buffer < page {
            return Err(invalid(
                "host.write_buffer_bytes",
                buffer,
                format!("must be 0 (no buffer) or >= one page, geometry.page_size_bytes = {page}"),
            ));
        }
        if buffer / page >= u64::from(u32::MAX) {
            return Err(invalid("host.write_buffer_bytes", buffer, "must be < 2^32 - 1 pages"));
        }
        if self.timing.write_buffer_search_ns > 0
            && (buffer == 0 || h.write_buffer_policy == WriteBufferPolicy::WriteBehind)
        {
            return Err(invalid(
                "timing.write_buffer_search_ns",
                self.timing.write_buffer_search_ns,
                "prices a search of the LRU write buffer: it needs host.write_buffer_bytes > 0 with a caching \
                 policy (there is no list to search otherwise)",
            ));
        }
        if h.write_buffer_policy == WriteBufferPolicy::WriteBehind && self.ftl.gc_preemption != GcPreemption::None {
            return Err(invalid(
                "host.write_buffer_policy",
                "\"write_behind\"",
                format!(
                    "cannot go with ftl.gc_preemption = \"{}\" (a write is acknowledged from the buffer, so no host \
                     I/O waits behind its GC)",
                    self.ftl.gc_preemption.name()
                ),
            ));
        }
        if h.write_buffer_policy == WriteBufferPolicy::WriteBehind
            && self.timing.transaction_order == TransactionOrder::ReadFirst
        {
            return Err(invalid(
                "host.write_buffer_policy",
                "\"write_behind\"",
                "cannot go with timing.transaction_order = \"read_first\" yet (the buffer frees a slot when its \
                 program is placed, which read_first defers)",
            ));
        }
        if h.bplru_block_pages == Some(0) {
            return Err(invalid("host.bplru_block_pages", 0, "must be >= 1"));
        }
        let group = h.bplru_block_pages.unwrap_or(self.geometry.pages_per_block);
        if let Some(p) = h.bplru_padding_pages.filter(|&p| p == 0 || p > group) {
            return Err(invalid("host.bplru_padding_pages", p, format!("must be in [1, {group}] (the block's pages)")));
        }
        if h.write_buffer_load_window_ns == Some(0) {
            return Err(invalid("host.write_buffer_load_window_ns", 0, "must be >= 1"));
        }
        Ok(())
    }

    /// `[fdp]`: 1 to 16 handles, which take the host's write streams; nothing that writes a
    /// page after its request is done (a buffer would lose the page's placement).
    fn check_fdp(&self, f: &FdpConfig) -> Result<(), ConfigError> {
        if !(1..=16).contains(&f.handles) {
            return Err(invalid("fdp.handles", f.handles, "must be in [1, 16]"));
        }
        if self.ftl.write_streams != 1 {
            return Err(invalid(
                "ftl.write_streams",
                self.ftl.write_streams,
                "must be 1 with [fdp]: the reclaim unit handles are the host's write streams",
            ));
        }
        if self.host.write_buffer_bytes.unwrap_or(0) > 0 {
            return Err(invalid(
                "host.write_buffer_bytes",
                self.host.write_buffer_bytes.unwrap_or(0),
                "must be 0 with [fdp]: a buffered page is written after its request, without its placement",
            ));
        }
        if self.host.partial_write == PartialWrite::Merge {
            return Err(invalid(
                "host.partial_write",
                "\"merge\"",
                "cannot go with [fdp]: a merged page is written after its request, without its placement",
            ));
        }
        if self.multichannel.is_some() {
            return Err(invalid("fdp", "[fdp]", "cannot go with [multichannel] (one FTL per channel, one source)"));
        }
        Ok(())
    }

    /// `[precondition]`: the fill is a share.
    fn check_precondition(&self) -> Result<(), ConfigError> {
        let fill = self.precondition.fill;
        if !(0.0..=1.0).contains(&fill) {
            return Err(invalid("precondition.fill", fill, "must be in [0, 1]"));
        }
        Ok(())
    }

    /// The derived quantities of a config whose rules hold, from its checked `space` and
    /// GC `thresholds`: capacities, transfer times and the write buffer's size.
    fn derived(&self, space: &Space, thresholds: Thresholds) -> Derived {
        let (g, t, h) = (&self.geometry, &self.timing, &self.host);
        let page = u64::from(g.page_size_bytes);
        Derived {
            logical_pages: space.logical_pages,
            logical_bytes: u64::from(space.logical_pages) * page,
            physical_pages: space.physical_pages,
            held_back_blocks_per_plane: space.held_back,
            gc_threshold_blocks: thresholds.foreground,
            background_gc_threshold_blocks: thresholds.background,
            page_transfer_ns: transfer_ns(page, t.channel_mb_per_s),
            spare_transfer_ns: transfer_ns(u64::from(g.spare_bytes_per_page), t.channel_mb_per_s),
            host_page_transfer_ns: transfer_ns(page, t.host_mb_per_s),
            dram_page_transfer_ns: transfer_ns(page, t.dram_mb_per_s),
            t_copyback_ns: t.t_copyback_ns.unwrap_or(t.t_r_ns + t.t_prog_ns),
            write_buffer_pages: h.write_buffer_bytes.map(|b| (b / page) as u32),
            write_buffer_load_window_ns: h.write_buffer_load_window_ns.unwrap_or_else(|| {
                u64::from(g.pages_per_block) * (transfer_ns(page, t.channel_mb_per_s) + t.t_prog_ns)
            }),
        }
    }
}

/// How the physical pages split: what the host sees, what GC has, what is held back.
struct Space {
    physical_pages: u32,
    logical_pages: u32,
    /// Blocks per plane beyond the logical space that GC may use.
    gc_blocks: u32,
    /// Blocks per plane never allocated.
    held_back: u32,
}

/// GC thresholds, free blocks per plane.
#[derive(Clone, Copy)]
struct Thresholds {
    foreground: u32,
    background: u32,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn tiny_toml() -> String {
        r#"
name = "tiny"
[geometry]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 16
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = 0.125
[timing]
cmd_addr_ns = 0
channel_mb_per_s = 80.0
t_r_ns = 25000
t_prog_ns = 200000
t_bers_ns = 1500000
"#
        .to_string()
    }

    #[test]
    fn tiny_parses_and_derives() {
        let c = DriveConfig::from_toml(&tiny_toml(), "tiny").unwrap();
        let d = c.derive().unwrap();
        assert_eq!(d.physical_pages, 2 * 2 * 64 * 16);
        assert_eq!(d.logical_pages, 2 * 2 * 64 * 16 * 7 / 8);
        assert_eq!(d.page_transfer_ns, 51_200);
        assert_eq!(d.t_copyback_ns, 225_000);
    }

    fn set(pairs: &[(&str, &str)]) -> Result<DriveConfig, String> {
        let sets: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        DriveConfig::from_toml(&tiny_toml(), "tiny")
            .unwrap()
            .with_overrides(&sets, Resolved::validate)
            .map(Resolved::into_cfg)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn overrides_set_keys_as_the_toml_file_would() {
        let c = set(&[("ftl.gc_victim", "fifo"), ("timing.t_r_ns", "30000"), ("ftl.dftl.gc", "conventional")]).unwrap();
        assert_eq!(c.ftl.gc_victim, VictimPolicy::Fifo);
        assert_eq!(c.timing.t_r_ns, 30_000);
        // The same text in the file gives the same config.
        let file = tiny_toml() + "[ftl]\ngc_victim = \"fifo\"\n[ftl.dftl]\ngc = \"conventional\"\n";
        let file = DriveConfig::from_toml(&file.replace("t_r_ns = 25000", "t_r_ns = 30000"), "t").unwrap();
        assert_eq!(c, DriveConfig { name: c.name.clone(), ..file });
        // An empty value removes a key: switch the over-provisioning convention.
        let c = set(&[("overprovisioning.share", ""), ("overprovisioning.extra_blocks_per_plane", "8")]).unwrap();
        assert_eq!((c.overprovisioning.share, c.overprovisioning.extra_blocks_per_plane), (None, Some(8)));
    }

    #[test]
    fn overrides_fail_as_the_toml_file_would() {
        let e = set(&[("ftl.gc_victimm", "fifo")]).unwrap_err();
        assert!(e.contains("gc_victimm") && e.contains("--set ftl.gc_victimm=fifo"), "{e}");
        let e = set(&[("ftl.gc_victim", "lifo")]).unwrap_err();
        assert!(e.contains("unknown variant `lifo`"), "{e}");
        let e = set(&[("geometry.channels", "0")]).unwrap_err();
        assert!(e.contains("geometry.channels = 0"), "{e}");
        let e = set(&[("timing.t_r_ns.x", "1")]).unwrap_err();
        assert!(e.contains("`t_r_ns` is a value, not a table"), "{e}");
        let e = set(&[("ftl..x", "1")]).unwrap_err();
        assert!(e.contains("a dotted key"), "{e}");
        // Of several overrides, the one blamed is the one without which the others load, not
        // one that is invalid only alone (removing `share` needs `extra_blocks_per_plane`).
        let sets: Vec<(String, String)> = [
            ("overprovisioning.share", ""),
            ("overprovisioning.extra_blocks_per_plane", "16"),
            ("geometry.pages_per_block", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        match DriveConfig::from_toml(&tiny_toml(), "t").unwrap().with_overrides(&sets, Resolved::validate) {
            Err(ConfigError::Override { key, .. }) => assert_eq!(key, "geometry.pages_per_block"),
            other => panic!("{other:?}"),
        }
    }

    fn err_of(text: &str) -> String {
        DriveConfig::from_toml(text, "t.toml").and_then(Resolved::validate).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_key_value_and_rule() {
        let e = err_of(&tiny_toml().replace("pages_per_block = 16", "pages_per_block = 0"));
        assert_eq!(e, "invalid config: geometry.pages_per_block = 0 (must be in [2, 65535])");
        let e = err_of(&tiny_toml().replace("share = 0.125", "share = 1.5"));
        assert!(e.contains("overprovisioning.share = 1.5 (must be in [0, 1))"), "{e}");
        let e = err_of(&tiny_toml().replace("share = 0.125", "share = 0.125\nextra_blocks_per_plane = 3"));
        assert!(e.contains("give exactly one of"), "{e}");
        let e = err_of(&tiny_toml().replace("share = 0.125", "share = 0.001"));
        assert!(e.contains("raise the over-provisioning"), "{e}");
        // 64 blocks x 16 pages x 4 planes, 4 blocks/plane of GC reserve and open blocks: 3840
        // pages, of which 64 (a block per plane) must stay free of data.
        let e = err_of(&tiny_toml().replace("share = 0.125", "share = 0.07"));
        assert!(e.contains("ftl.gc_threshold_blocks = 2 (GC cannot make progress with 3809 logical pages"), "{e}");
        assert!(e.contains("lower the logical space to 3776 pages"), "{e}");
        let e = err_of(&(tiny_toml().replace("share = 0.125", "share = 0.07") + "[ftl]\ngc_threshold_blocks = 3\n"));
        assert!(e.contains("leave at most 2 free blocks per plane; lower the logical space to 3712 pages"), "{e}");
        assert!(DriveConfig::from_toml(&tiny_toml().replace("share = 0.125", "share = 0.08"), "t")
            .and_then(Resolved::validate)
            .is_ok());
        let e = err_of(&tiny_toml().replace("t_r_ns = 25000", "t_r_ns = 0"));
        assert_eq!(e, "invalid config: timing.t_r_ns = 0 (must be >= 1)");
        let e = err_of(&tiny_toml().replace("channel_mb_per_s = 80.0", "channel_mb_per_s = -1.0"));
        assert!(e.contains("timing.channel_mb_per_s = -1"), "{e}");
        let e = err_of(&tiny_toml().replace("page_size_bytes = 4096", "page_size_bytes = 4000"));
        assert!(e.contains("geometry.page_size_bytes = 4000"), "{e}");
    }

    #[test]
    fn unknown_and_mistyped_keys_are_parse_errors_naming_the_key() {
        let e = err_of(&tiny_toml().replace("[timing]", "[timing]\nt_foo = 3"));
        assert!(e.starts_with("invalid config t.toml:"), "{e}");
        assert!(e.contains("t_foo"), "{e}");
        let e = err_of(&tiny_toml().replace("channels = 2", "channels = \"two\""));
        assert!(e.contains("channels"), "{e}");
    }

    #[test]
    fn ftl_sections_are_kept_for_their_owner_and_other_unknown_keys_refused() {
        let text = format!("{}\n[ftl]\ngc_victim = \"fifo\"\n[ftl.scftl]\nmodified_threshold = 3\n", tiny_toml());
        let c = DriveConfig::from_toml(&text, "t").unwrap();
        assert_eq!(c.ftl.gc_victim, VictimPolicy::Fifo);
        assert_eq!(c.ftl.sections["scftl"]["modified_threshold"].as_integer(), Some(3));
        // Written out and read back, the section is still there, under its table.
        let again = toml::to_string(&c).unwrap();
        assert!(again.contains("[ftl.scftl]"), "{again}");
        assert_eq!(DriveConfig::from_toml(&again, "t").unwrap(), c);
        // A key of [ftl] that is neither shared nor a table is refused where it stands.
        let e = err_of(&format!("{}\n[ftl]\ngc_victimm = \"fifo\"\n", tiny_toml()));
        assert!(e.contains("unknown field `gc_victimm`") && e.contains("expected one of"), "{e}");
        assert!(e.contains("line"), "the parser's position is kept: {e}");
    }

    #[test]
    fn write_buffer_is_sized_in_whole_pages() {
        let with = |lines: &str| format!("{}\n[host]\n{lines}", tiny_toml());
        let c = DriveConfig::from_toml(&with("write_buffer_bytes = 10000"), "t").unwrap();
        assert_eq!(c.derive().unwrap().write_buffer_pages, Some(2));
        assert_eq!(c.host.write_buffer_policy, WriteBufferPolicy::Lru);
        let c = DriveConfig::from_toml(&tiny_toml(), "t").unwrap();
        assert_eq!(c.derive().unwrap().write_buffer_pages, None);
        let e = err_of(&with("write_buffer_bytes = 100"));
        assert!(e.contains("host.write_buffer_bytes = 100 (must be 0"), "{e}");
        assert!(e.contains("4096"), "{e}");
        let c = DriveConfig::from_toml(&with("write_buffer_policy = \"fifo\""), "t").unwrap();
        assert_eq!(c.host.write_buffer_policy, WriteBufferPolicy::Fifo);
        let c =
            DriveConfig::from_toml(&with("write_buffer_policy = \"bplru\"\nbplru_padding_pages = 16"), "t").unwrap();
        assert_eq!(c.host.write_buffer_policy, WriteBufferPolicy::Bplru);
        let e = err_of(&with("write_buffer_policy = \"mru\""));
        assert!(e.contains("write_buffer_policy") && e.contains("lru") && e.contains("bplru"), "{e}");
        let e = err_of(&with("write_buffer_policy = \"bplru\"\nbplru_padding_pages = 17"));
        assert!(e.contains("host.bplru_padding_pages = 17") && e.contains("[1, 16]"), "{e}");
    }

    #[test]
    fn extra_blocks_convention() {
        let t = tiny_toml().replace("share = 0.125", "extra_blocks_per_plane = 10\ngc_share_of_extra = 0.8");
        let c = DriveConfig::from_toml(&t, "t").unwrap();
        let d = c.derive().unwrap();
        assert_eq!(d.logical_pages, (64 - 10) * 16 * 4);
        assert_eq!(d.held_back_blocks_per_plane, 2);
    }
}
