//! What a channel-system run reports (docs/metrics.md, "Multichannel runs"). Every name
//! carries its unit.

use serde::Serialize;

/// The drive as run.
#[derive(Debug, Clone, Serialize)]
pub struct McDrive {
    /// Config name.
    pub name: String,
    /// FTL of every unit.
    pub ftl: String,
    /// sync | fi | gca | cf.
    pub mode: &'static str,
    /// Channels.
    pub channels: u32,
    /// Planes per channel (one chip of one die per channel).
    pub planes_per_channel: u32,
    /// Units with their own FTL (channels, planes under CF, one under SYNC).
    pub units: u32,
    /// Bytes of a unit page (a flash page, synchronized planes' pages, or a super page).
    pub unit_page_bytes: u32,
    /// Host-visible capacity, bytes.
    pub logical_bytes: u64,
    /// Write buffer, bytes (0: write-through).
    pub buffer_bytes: u64,
    /// Write buffer, unit pages.
    pub buffer_unit_pages: u32,
    /// lru | fifo | bplru.
    pub buffer_policy: String,
    /// shared | partitioned.
    pub buffer_sharing: String,
    /// BPLRU's padding threshold, buffered pages of a leaving block (null: no padding).
    pub bplru_padding_pages: Option<u32>,
    /// Preemption points in early GC.
    pub preemption: bool,
    /// N_s, spare blocks (null under sync and fi, which do not use it).
    pub spare_threshold: Option<u32>,
}

/// The host side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McHost {
    /// Write requests completed (acknowledged).
    pub requests: u64,
    /// Read requests in the source, not replayed (seed 004 Sec. 4.1 ignores host reads).
    pub reads_ignored: u64,
    /// Trim requests in the source, not replayed.
    pub trims_ignored: u64,
    /// Sectors written by the host.
    pub sectors_written: u64,
    /// Host page writes entering the buffer (a page per request per page touched).
    pub page_writes: u64,
    /// Of those, absorbed by a page already buffered.
    pub page_writes_absorbed: u64,
    /// Mean write request size, bytes.
    pub mean_request_bytes: f64,
}

/// Throughput and response.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McPerformance {
    /// Simulated time from the first request to the last buffered page's program, ns.
    pub simulated_time_ns: u64,
    /// Write requests per second.
    pub iops: f64,
    /// Host bytes written per second, MB/s (10^6 bytes).
    pub throughput_mb_per_s: f64,
    /// The paper's response (Sec. 4.1): the inverse of IOPS, us.
    pub response_inverse_iops_us: f64,
    /// Measured response: from a request's issue (the previous one's acknowledgement; the
    /// host keeps one request outstanding) to its last page buffered, or programmed when
    /// write-through, us.
    pub response_mean_us: f64,
    /// Its 99th percentile, us.
    pub response_p99_us: f64,
    /// Its maximum, us.
    pub response_max_us: f64,
}

/// Channel time (seed 004 Fig. 9), shares of units x simulated time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McChannelTime {
    /// Writing host data (with read-modify-write and padding reads).
    pub host_write_share: f64,
    /// Collecting garbage, mandatory and early.
    pub gc_share: f64,
    /// Mandatory GC (with GC on a host write's path).
    pub mandatory_gc_share: f64,
    /// Early GC (GCA, CF followers).
    pub early_gc_share: f64,
    /// Idling (with CF halts).
    pub idle_share: f64,
    /// CF followers halted while the initiator erased.
    pub halted_share: f64,
    /// Idle time by what the unit waited for (shares of channel time; with `halted_share`
    /// they add up to `idle_share`).
    pub idle: McIdle,
    /// Per unit: host write, mandatory GC, early GC, idle, ns.
    pub per_unit_host_write_ns: Vec<u64>,
    /// Per unit mandatory GC, ns.
    pub per_unit_mandatory_gc_ns: Vec<u64>,
    /// Per unit early GC, ns.
    pub per_unit_early_gc_ns: Vec<u64>,
    /// Per unit idle, ns.
    pub per_unit_idle_ns: Vec<u64>,
}

/// What idle units waited for, shares of channel time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McIdle {
    /// No dirty page of its own while the host waited for room: buffer-space contention
    /// (seed 004 Sec. 2.3).
    pub no_dirty_pages_share: f64,
    /// Dirty pages, but the buffer was not full (the model flushes only when the host waits
    /// for room, or at the end).
    pub buffer_not_full_share: f64,
    /// A CF follower that had matched every initiator step so far, waiting for the next.
    pub follower_waiting_share: f64,
    /// Idle under a plane sibling's CF round (Sec. 3.3.3), or with nothing to do.
    pub other_share: f64,
}

/// Garbage collection and the channel managers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McGc {
    /// Mandatory GC steps (a page copy or an erase; a data block's merge under FAST).
    pub mandatory_steps: u64,
    /// Early GC steps.
    pub early_steps: u64,
    /// GCA early-GC episodes started.
    pub early_starts: u64,
    /// Early GC suspended with a victim part-way (at a preemption point).
    pub preemptions: u64,
    /// CF rounds (mandatory GC initiations).
    pub cf_rounds: u64,
    /// CF rounds started by GC on a write's path that the manager could not step (at least
    /// half a block's copies in one flush); part of `cf_rounds`.
    pub cf_write_path_rounds: u64,
    /// CF rounds passed on to a unit that fell due during them (the round went on).
    pub cf_round_extensions: u64,
    /// CF follower participations.
    pub cf_followers: u64,
    /// Follower steps taken, beyond the initiator's step count, while the initiator's step
    /// was still under way (a follower's step shorter than the initiator's).
    pub cf_fill_steps: u64,
    /// Followers that went back to their round after their own mandatory GC (which had
    /// interrupted their early GC) ended.
    pub cf_rejoins: u64,
    /// Why followers left their rounds; each participation (or rejoin) ends once, those under
    /// way at the end of the run excepted.
    pub cf_follower_exits: super::FollowerExits,
    /// Mandatory GC begun before a flush because its page's write needed it (FAST's partial
    /// merge when the page breaks the SW block's run).
    pub write_due_collections: u64,
    /// CF follower steps halted while the initiator erased.
    pub cf_halts: u64,
    /// CF follower copies made from the next-best victim while the drained one waited.
    pub cf_next_victims: u64,
    /// CF follower steps of another type than the initiator's (no next-best victim).
    pub cf_type_mismatches: u64,
    /// Suspended page-mapped collections resumed on a better victim than their own.
    pub victim_repicks: u64,
    /// Blocks erased, all units.
    pub erases: u64,
    /// Per unit: mandatory GC steps.
    pub per_unit_mandatory_steps: Vec<u64>,
    /// The FTLs' own counters summed over units (FAST's merges by type, pages moved, ...).
    pub ftl: serde_json::Map<String, serde_json::Value>,
}

/// The write buffer.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McBuffer {
    /// Unit pages programmed from the buffer.
    pub pages_flushed: u64,
    /// Reads of old data for partial unit pages (read-modify-write).
    pub rmw_reads: u64,
    /// BPLRU blocks flushed.
    pub blocks_flushed: u64,
    /// Pages read and written to pad BPLRU blocks.
    pub padded_pages: u64,
    /// Time the host waited for buffer room, ns.
    pub host_blocked_ns: u64,
}

/// Dirty pages per unit over time (seed 004 Fig. 3), at most 2,048 samples (the interval
/// doubles when it fills).
#[derive(Debug, Clone, Default, Serialize)]
pub struct McDirtySeries {
    /// Sample interval, ns.
    pub interval_ns: u64,
    /// Sample times, ns.
    pub time_ns: Vec<u64>,
    /// Per unit, dirty pages at each sample.
    pub per_unit: Vec<Vec<u32>>,
}

/// Flash work, all units, in flash pages (unit pages x pages per unit page).
#[derive(Debug, Clone, Default, Serialize)]
pub struct McFlash {
    /// Flash pages read.
    pub pages_read: u64,
    /// Flash pages programmed.
    pub pages_programmed: u64,
    /// Flash pages programmed per host page written (sectors written / sectors per page).
    pub write_amplification: f64,
}

/// A channel-system run's report (`report` in results.json).
#[derive(Debug, Clone, Serialize)]
pub struct McReport {
    /// The drive.
    pub drive: McDrive,
    /// Host side.
    pub host: McHost,
    /// IOPS, throughput, response.
    pub performance: McPerformance,
    /// Channel time.
    pub channel_time: McChannelTime,
    /// GC and channel managers.
    pub gc: McGc,
    /// Write buffer.
    pub buffer: McBuffer,
    /// Flash work.
    pub flash: McFlash,
    /// Dirty pages per unit over time.
    pub dirty_pages: McDirtySeries,
    /// Preconditioning done before the measured run (as a drive run's `report.precondition`).
    pub precondition: Option<crate::sim::PreconditionReport>,
    /// The power cut that ended the run and the recovery after it (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_cut: Option<crate::sim::PowerCutReport>,
}
