//! The report of a measured run: every metric by name with its unit (docs/metrics.md).

use super::{PreconditionReport, Simulator};
use crate::ftl::{FlashCounts, GcCounts};
use crate::metrics::{mean_std, r6, ByTag, LatencyHistogram, LatencyStats, WriteBehindReport, WriteBufferReport};
use crate::scheduler::{BusyTime, GcContention};
use serde::Serialize;
use std::collections::BTreeMap;

/// Host-side counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostCounts {
    /// Requests completed.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trim requests.
    pub trims: u64,
    /// Bytes read by the host.
    pub bytes_read: u64,
    /// Bytes written by the host.
    pub bytes_written: u64,
    /// Logical pages read.
    pub pages_read: u64,
    /// Logical pages written (whole or partial): the WAF denominator.
    pub pages_written: u64,
    /// Logical pages trimmed (whole pages only).
    pub pages_trimmed: u64,
    /// Pages read that were never written. Under `host.unmapped_read = "flash"` each was
    /// first written untimed, as if before the run, then read from flash; under `"zero"` it
    /// was served as zeros without flash access.
    pub unmapped_page_reads: u64,
    /// Pages read whose last operation was a trim (served as zeros, no flash access).
    pub trimmed_page_reads: u64,
    /// Partial-page writes.
    pub partial_page_writes: u64,
    /// Flash reads done for read-modify-write.
    pub rmw_reads: u64,
    /// Sectors zero-filled by the zero-pad policy.
    pub zero_padded_sectors: u64,
    /// Partial pages completed in the merge buffer (programmed once, no read).
    pub merged_pages: u64,
    /// Reads served from the merge buffer.
    pub merge_buffer_read_hits: u64,
    /// Commands the drive refused (a zoned namespace's rules, docs/zns.md): they complete
    /// at once with their status, nothing done, and are not in `requests`, `reads`,
    /// `writes`, `trims` nor the response times.
    pub refused: u64,
    /// `refused` by status (`zone_invalid_write`).
    pub refused_by_status: BTreeMap<&'static str, u64>,
}

impl HostCounts {
    /// Add what the counters `now` gained since `before` (a tenant's part of a request).
    pub fn add_since(&mut self, now: &HostCounts, before: &HostCounts) {
        let HostCounts {
            requests,
            reads,
            writes,
            trims,
            bytes_read,
            bytes_written,
            pages_read,
            pages_written,
            pages_trimmed,
            unmapped_page_reads,
            trimmed_page_reads,
            partial_page_writes,
            rmw_reads,
            zero_padded_sectors,
            merged_pages,
            merge_buffer_read_hits,
            refused,
            refused_by_status,
        } = self;
        *requests += now.requests - before.requests;
        *reads += now.reads - before.reads;
        *writes += now.writes - before.writes;
        *trims += now.trims - before.trims;
        *bytes_read += now.bytes_read - before.bytes_read;
        *bytes_written += now.bytes_written - before.bytes_written;
        *pages_read += now.pages_read - before.pages_read;
        *pages_written += now.pages_written - before.pages_written;
        *pages_trimmed += now.pages_trimmed - before.pages_trimmed;
        *unmapped_page_reads += now.unmapped_page_reads - before.unmapped_page_reads;
        *trimmed_page_reads += now.trimmed_page_reads - before.trimmed_page_reads;
        *partial_page_writes += now.partial_page_writes - before.partial_page_writes;
        *rmw_reads += now.rmw_reads - before.rmw_reads;
        *zero_padded_sectors += now.zero_padded_sectors - before.zero_padded_sectors;
        *merged_pages += now.merged_pages - before.merged_pages;
        *merge_buffer_read_hits += now.merge_buffer_read_hits - before.merge_buffer_read_hits;
        *refused += now.refused - before.refused;
        if now.refused > before.refused {
            for (&status, &n) in &now.refused_by_status {
                let gained = n - before.refused_by_status.get(status).copied().unwrap_or(0);
                if gained > 0 {
                    *refused_by_status.entry(status).or_insert(0) += gained;
                }
            }
        }
    }
}

/// Rates of the host counters `h` over `sim_ns` measured.
pub(super) fn performance(h: &HostCounts, sim_ns: u64) -> Performance {
    let secs = (sim_ns.max(1)) as f64 / 1e9;
    Performance {
        simulated_time_ns: sim_ns,
        iops: r6(h.requests as f64 / secs),
        throughput_mb_per_s: r6((h.bytes_read + h.bytes_written) as f64 / 1e6 / secs),
        read_mb_per_s: r6(h.bytes_read as f64 / 1e6 / secs),
        write_mb_per_s: r6(h.bytes_written as f64 / 1e6 / secs),
    }
}

/// The full result of a run: see docs/metrics.md.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Drive and FTL.
    pub drive: DriveSummary,
    /// Host counters.
    pub host: HostCounts,
    /// Rates over the simulated time.
    pub performance: Performance,
    /// Response time = completion - arrival.
    pub response_time: ResponseTimes,
    /// Flash operations.
    pub flash: FlashSummary,
    /// Write amplification: pages programmed / host pages written.
    pub write_amplification: Waf,
    /// Garbage collection.
    pub gc: GcSummary,
    /// Block wear.
    pub wear: Wear,
    /// Plane balance.
    pub planes: Planes,
    /// Channel time split.
    pub channels: Channels,
    /// Host idle periods.
    pub idle: Idle,
    /// Controller SRAM used by the mapping, bytes.
    pub mapping_sram_bytes: u64,
    /// FTL-specific metrics.
    pub ftl_metrics: serde_json::Map<String, serde_json::Value>,
    /// Host write buffer counters (`null` without a buffer).
    pub write_buffer: Option<WriteBufferReport>,
    /// The write-behind buffer (`null` without one).
    pub write_behind: Option<WriteBehindReport>,
    /// Preconditioning done before the measured run.
    pub precondition: Option<PreconditionReport>,
    /// Each tenant's part of the run (absent without tenants).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenants: Option<Vec<super::TenantReport>>,
    /// The power cut that ended the run and the recovery after it (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_cut: Option<super::PowerCutReport>,
    /// Distributions for plots.
    pub histograms: Histograms,
}

/// Drive summary.
#[derive(Debug, Clone, Serialize)]
pub struct DriveSummary {
    /// Preset or config name.
    pub name: String,
    /// FTL name.
    pub ftl: String,
    /// Host-visible bytes.
    pub logical_bytes: u64,
    /// Raw bytes.
    pub physical_bytes: u64,
    /// Planes.
    pub planes: u32,
    /// Foreground GC threshold, free blocks per plane.
    pub gc_threshold_blocks: u32,
}

/// Rates.
#[derive(Debug, Clone, Serialize)]
pub struct Performance {
    /// Simulated time from the first dispatch to the last completion, ns.
    pub simulated_time_ns: u64,
    /// Requests per simulated second.
    pub iops: f64,
    /// Host bytes (read + written) per simulated second, MB/s (10^6 B).
    pub throughput_mb_per_s: f64,
    /// Read MB/s.
    pub read_mb_per_s: f64,
    /// Write MB/s.
    pub write_mb_per_s: f64,
}

/// Response times by request type.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseTimes {
    /// All requests.
    pub all: LatencyStats,
    /// Reads.
    pub read: LatencyStats,
    /// Writes.
    pub write: LatencyStats,
    /// Trims.
    pub trim: LatencyStats,
}

/// Flash operation counts by tag.
#[derive(Debug, Clone, Serialize)]
pub struct FlashSummary {
    /// Page reads to the controller.
    pub reads: ByTag,
    /// Page programs from the controller.
    pub programs: ByTag,
    /// Intra-plane copy-backs.
    pub copybacks: ByTag,
    /// Block erases.
    pub erases: ByTag,
    /// Pages skipped (wasted) in the run: copy-back parity (PCFTL), block padding.
    pub wasted_pages: u64,
    /// Wasted pages as a share of all physical pages (PCFTL Sec. 5.5, Fig. 13).
    pub wasted_pages_share: f64,
    /// Multi-plane commands formed by the scheduler.
    pub multi_plane_commands: u64,
    /// Reads served from the plane register.
    pub register_read_hits: u64,
}

/// Write amplification and its components (each = pages programmed for that purpose /
/// host pages written; copy-back destinations count as programs).
#[derive(Debug, Clone, Serialize)]
pub struct Waf {
    /// All programs / host pages written.
    pub total: f64,
    /// Host programs / host pages written.
    pub host: f64,
    /// GC programs / host pages written.
    pub gc: f64,
    /// Mapping programs / host pages written.
    pub mapping: f64,
}

/// GC summary.
#[derive(Debug, Clone, Serialize)]
pub struct GcSummary {
    /// Victims collected.
    pub collections: u64,
    /// Collected on a host request's path.
    pub foreground_collections: u64,
    /// Collected in idle time.
    pub background_collections: u64,
    /// Valid pages moved.
    pub pages_moved: u64,
    /// Valid pages moved per collection.
    pub pages_moved_per_collection: f64,
    /// Average share of a victim's pages that were valid (moved), in [0, 1] (PCFTL Sec.
    /// 5.5, Fig. 13).
    pub victim_valid_share: f64,
    /// FTL-specific fallbacks.
    pub fallbacks: u64,
    /// Block utilisation BU = host pages written / pages erased (thesis Eq. 4.4; 0 when
    /// nothing was erased).
    pub block_utilization: f64,
    /// Valid page move rate MR = pages moved / pages erased (thesis Eq. 4.5).
    pub valid_page_move_rate: f64,
}

/// Erase counts per block over the drive's life (preconditioning included).
#[derive(Debug, Clone, Serialize)]
pub struct Wear {
    /// Fewest erases of any block.
    pub erase_count_min: u32,
    /// Mean erases per block.
    pub erase_count_mean: f64,
    /// Most erases of any block.
    pub erase_count_max: u32,
    /// Standard deviation of erases per block.
    pub erase_count_std: f64,
    /// Erases of each plane's blocks summed, over the drive's life.
    pub erases_per_plane: Vec<u64>,
}

/// Distributions of a run, for plots (`report.histograms`; docs/metrics.md).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Histograms {
    /// Response times of all requests: `[upper_ns, requests]` per log-spaced bucket (20 per
    /// decade from 1 us), empty buckets left out.
    pub response_time_all: Vec<[u64; 2]>,
    /// Reads alone, as `response_time_all`.
    pub response_time_read: Vec<[u64; 2]>,
    /// Writes alone, as `response_time_all`.
    pub response_time_write: Vec<[u64; 2]>,
    /// `[erase_count, blocks]`: how many blocks have been erased that many times over the
    /// drive's life, counts with no block left out.
    pub erase_counts: Vec<[u64; 2]>,
}

/// Programs per plane in the run (host, GC and mapping).
#[derive(Debug, Clone, Serialize)]
pub struct Planes {
    /// Mean pages programmed per plane.
    pub programs_mean: f64,
    /// SDWPP: population standard deviation of pages programmed per plane, host, GC
    /// (copy-back destinations included) and mapping writes together (PCFTL Sec. 5.1).
    pub sdwpp: f64,
    /// Pages programmed by each plane.
    pub programs_per_plane: Vec<u64>,
    /// Host page programs placed on a plane that still had GC work ahead of them (they
    /// waited for it).
    pub host_programs_behind_gc: u64,
    /// Of those, the ones placed while another plane was idle (what dynamic allocation
    /// avoids).
    pub host_programs_behind_gc_with_idle_plane: u64,
}

/// Channel bus time split, summed over channels.
#[derive(Debug, Clone, Serialize)]
pub struct Channels {
    /// Bus time for host operations, ns.
    pub host_busy_ns: u64,
    /// Bus time for GC, ns.
    pub gc_busy_ns: u64,
    /// Bus time for mapping operations, ns.
    pub mapping_busy_ns: u64,
    /// Idle bus time, ns (channels x simulated time - busy).
    pub idle_ns: u64,
    /// Shares of channel time: host, GC, mapping, idle.
    pub host_share: f64,
    /// GC share.
    pub gc_share: f64,
    /// Mapping share.
    pub mapping_share: f64,
    /// Idle share.
    pub idle_share: f64,
    /// Plane array busy shares: host, GC, mapping (mean over planes).
    pub plane_host_share: f64,
    /// GC share of plane time.
    pub plane_gc_share: f64,
    /// Mapping share of plane time.
    pub plane_mapping_share: f64,
}

/// Periods with no request outstanding.
#[derive(Debug, Clone, Serialize)]
pub struct Idle {
    /// Number of idle periods.
    pub periods: u64,
    /// Total idle time, ns.
    pub total_ns: u64,
    /// Idle period length statistics (count, mean, quantiles, max), ns.
    pub length: LatencyStats,
}

/// Counters at the start of a measured run: the report gives the difference.
pub(super) struct Baseline {
    counts: FlashCounts,
    pub(super) gc: GcCounts,
    plane_programs: Vec<u64>,
    wasted_pages: u64,
    busy: BusyTime,
    multi_plane_commands: u64,
    register_hits: u64,
    contention: GcContention,
}

/// What the replay loop measured.
pub(super) struct Measured {
    /// From the first dispatch to the last completion, ns.
    pub sim_ns: u64,
    /// Response times: all, read, write, trim.
    pub latency: [LatencyHistogram; 4],
    /// Idle period lengths.
    pub idle_len: LatencyHistogram,
    /// Total idle time, ns.
    pub idle_total_ns: u64,
}

impl Simulator {
    /// The counters a measured run starts from.
    pub(super) fn baseline(&self) -> Baseline {
        let s = &self.dev.sched;
        Baseline {
            counts: self.dev.counts.clone(),
            gc: self.gc_counts(),
            plane_programs: self.plane_programs(),
            wasted_pages: self.dev.flash.wasted_pages(),
            busy: s.busy().clone(),
            multi_plane_commands: s.multi_plane_commands(),
            register_hits: s.register_hits(),
            contention: s.gc_contention(),
        }
    }

    /// The report of the run measured since `base`.
    pub(super) fn report(&self, m: Measured, base: &Baseline) -> Report {
        let c = self.dev.counts.since(&base.counts);
        let gc = self.gc_counts().since(&base.gc);
        let h = &self.host;
        let per_plane: Vec<u64> = self.plane_programs().iter().zip(&base.plane_programs).map(|(a, b)| a - b).collect();
        let ec = self.dev.flash.erase_counts();
        let pages_erased = c.erases.iter().sum::<u64>() * u64::from(self.cfg.geometry.pages_per_block);
        let [lat_all, lat_read, lat_write, lat_trim] = m.latency;
        Report {
            drive: DriveSummary {
                name: self.cfg.name.clone(),
                ftl: self.ftl.name().to_string(),
                logical_bytes: self.cfg.derived().logical_bytes,
                physical_bytes: self.cfg.geometry.raw_bytes(),
                planes: self.cfg.geometry.planes(),
                gc_threshold_blocks: self.cfg.derived().gc_threshold_blocks,
            },
            host: h.clone(),
            performance: performance(h, m.sim_ns),
            response_time: ResponseTimes {
                all: lat_all.stats(),
                read: lat_read.stats(),
                write: lat_write.stats(),
                trim: lat_trim.stats(),
            },
            flash: self.flash_summary(&c, base),
            write_amplification: self.waf(&c),
            gc: self.gc_summary(&gc, pages_erased),
            wear: self.wear(ec),
            planes: self.planes(per_plane, base),
            channels: self.channels(m.sim_ns, &base.busy),
            idle: Idle { periods: m.idle_len.stats().count, total_ns: m.idle_total_ns, length: m.idle_len.stats() },
            mapping_sram_bytes: self.ftl.mapping_sram_bytes(),
            ftl_metrics: self.ftl.extra_metrics(),
            write_buffer: self.write_buffer_report(),
            write_behind: self.write_behind_report(),
            precondition: self.precondition.clone(),
            tenants: None,
            power_cut: None,
            histograms: Histograms {
                response_time_all: lat_all.log_buckets(),
                response_time_read: lat_read.log_buckets(),
                response_time_write: lat_write.log_buckets(),
                erase_counts: erase_histogram(ec),
            },
        }
    }

    /// Flash operations `c` of the run, by tag.
    fn flash_summary(&self, c: &FlashCounts, base: &Baseline) -> FlashSummary {
        let wasted_pages = self.dev.flash.wasted_pages() - base.wasted_pages;
        FlashSummary {
            reads: ByTag::from(c.reads),
            programs: ByTag::from(c.programs),
            copybacks: ByTag::from(c.copybacks),
            erases: ByTag::from(c.erases),
            wasted_pages,
            wasted_pages_share: r6(wasted_pages as f64 / f64::from(self.cfg.derived().physical_pages)),
            multi_plane_commands: self.dev.sched.multi_plane_commands() - base.multi_plane_commands,
            register_read_hits: self.dev.sched.register_hits() - base.register_hits,
        }
    }

    /// Pages programmed (and copied back) per host page written, by tag.
    fn waf(&self, c: &FlashCounts) -> Waf {
        let hp = self.host.pages_written.max(1) as f64;
        let tag_programs = |i: usize| (c.programs[i] + c.copybacks[i]) as f64 / hp;
        Waf {
            total: r6(c.pages_programmed() as f64 / hp),
            host: r6(tag_programs(0)),
            gc: r6(tag_programs(1)),
            mapping: r6(tag_programs(2)),
        }
    }

    /// The run's collections `gc`, against the `pages_erased`.
    fn gc_summary(&self, gc: &GcCounts, pages_erased: u64) -> GcSummary {
        let pages_written = self.host.pages_written;
        GcSummary {
            collections: gc.collections(),
            foreground_collections: gc.foreground_collections,
            background_collections: gc.background_collections,
            pages_moved: gc.pages_moved,
            pages_moved_per_collection: r6(gc.pages_moved as f64 / gc.collections().max(1) as f64),
            victim_valid_share: r6(
                gc.pages_moved as f64 / (gc.collections().max(1) * u64::from(self.cfg.geometry.pages_per_block)) as f64
            ),
            fallbacks: gc.fallbacks,
            block_utilization: r6(
                pages_written as f64 / pages_erased.max(1) as f64 * f64::from(u8::from(pages_erased > 0))
            ),
            valid_page_move_rate: r6(gc.pages_moved as f64 / pages_erased.max(1) as f64),
        }
    }

    /// Erase counts `ec` of every block (since the drive was new), and per plane.
    fn wear(&self, ec: &[u32]) -> Wear {
        let (em, es) = mean_std(ec.iter().map(|&v| f64::from(v)));
        let geo = &self.cfg.geometry;
        let mut erases_per_plane = vec![0u64; geo.planes() as usize];
        for (b, &e) in ec.iter().enumerate() {
            erases_per_plane[geo.plane_of_block(b as _) as usize] += u64::from(e);
        }
        Wear {
            erase_count_min: ec.iter().copied().min().unwrap_or(0),
            erase_count_mean: r6(em),
            erase_count_max: ec.iter().copied().max().unwrap_or(0),
            erase_count_std: r6(es),
            erases_per_plane,
        }
    }

    /// The run's programs `per_plane` and host programs held behind GC.
    fn planes(&self, per_plane: Vec<u64>, base: &Baseline) -> Planes {
        let (pm, ps) = mean_std(per_plane.iter().map(|&v| v as f64));
        let contention = self.dev.sched.gc_contention();
        Planes {
            programs_mean: r6(pm),
            sdwpp: r6(ps),
            programs_per_plane: per_plane,
            host_programs_behind_gc: contention.host_programs_behind_gc - base.contention.host_programs_behind_gc,
            host_programs_behind_gc_with_idle_plane: contention.host_programs_behind_gc_with_idle_plane
                - base.contention.host_programs_behind_gc_with_idle_plane,
        }
    }

    /// Channel and plane busy time by tag since `busy0`, over `sim_ns`.
    fn channels(&self, sim_ns: u64, busy0: &BusyTime) -> Channels {
        let busy = self.dev.sched.busy();
        let mut ch = [0u64; 3];
        for (now, before) in busy.channel.iter().zip(&busy0.channel) {
            for i in 0..3 {
                ch[i] += now[i] - before[i];
            }
        }
        let mut pl = [0u64; 3];
        for (now, before) in busy.plane.iter().zip(&busy0.plane) {
            for i in 0..3 {
                pl[i] += now[i] - before[i];
            }
        }
        // Summed over channels or planes, a run near the simulated-time limit passes u64.
        let channel_total = u128::from(sim_ns.max(1)) * u128::from(self.cfg.geometry.channels);
        let plane_total = f64::from(self.cfg.geometry.planes()) * sim_ns.max(1) as f64;
        let ch_busy: u64 = ch.iter().sum();
        let idle_ns = u64::try_from(channel_total.saturating_sub(u128::from(ch_busy))).unwrap_or(u64::MAX);
        Channels {
            host_busy_ns: ch[0],
            gc_busy_ns: ch[1],
            mapping_busy_ns: ch[2],
            idle_ns,
            host_share: r6(ch[0] as f64 / channel_total as f64),
            gc_share: r6(ch[1] as f64 / channel_total as f64),
            mapping_share: r6(ch[2] as f64 / channel_total as f64),
            idle_share: r6(idle_ns as f64 / channel_total as f64),
            plane_host_share: r6(pl[0] as f64 / plane_total),
            plane_gc_share: r6(pl[1] as f64 / plane_total),
            plane_mapping_share: r6(pl[2] as f64 / plane_total),
        }
    }

    /// The caching write buffer's hits, if the drive has one.
    fn write_buffer_report(&self) -> Option<WriteBufferReport> {
        let h = &self.host;
        self.wbuf.as_ref().map(|w| {
            let ratio = |hits: u64, all: u64| r6(hits as f64 / all.max(1) as f64);
            WriteBufferReport {
                policy: self.cfg.host.write_buffer_policy,
                capacity_pages: w.capacity_pages(),
                pages_buffered_end: w.len(),
                hit_ratio: ratio(self.wb.write_hits + self.wb.read_hits, h.pages_written + h.pages_read),
                write_hit_ratio: ratio(self.wb.write_hits, h.pages_written),
                read_hit_ratio: ratio(self.wb.read_hits, h.pages_read),
                ..self.wb.clone()
            }
        })
    }

    /// The write-behind buffer's admissions and stalls, if the drive has one.
    fn write_behind_report(&self) -> Option<WriteBehindReport> {
        self.dev.behind.as_ref().map(|b| WriteBehindReport {
            capacity_pages: b.capacity_pages(),
            load_window_ns: self.cfg.derived().write_buffer_load_window_ns,
            pages_admitted: b.pages_admitted,
            writes_stalled: b.writes_stalled,
            mean_stall_us: r6(b.stall_ns as f64 / 1e3 / self.host.writes.max(1) as f64),
            pages_held_end: b.held(),
            mean_utilisation_end: r6(b.mean_utilisation()),
        })
    }
}

/// Blocks by erase count: `[erase count, blocks]`, ascending.
fn erase_histogram(ec: &[u32]) -> Vec<[u64; 2]> {
    let mut histogram = std::collections::BTreeMap::<u32, u64>::new();
    for &e in ec {
        *histogram.entry(e).or_default() += 1;
    }
    histogram.into_iter().map(|(e, n)| [u64::from(e), n]).collect()
}
