//! Result files, the summary table and the progress bar.

use ftlsim_core::config::DriveConfig;
use ftlsim_core::metrics::{IntervalRow, LatencyStats, Observer};
use ftlsim_core::sim::Report;
use ftlsim_run::memory::bytes;
use ftlsim_run::RunObserver;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// A progress bar on stderr with this template.
fn bar(len: Option<u64>, template: &str) -> ProgressBar {
    let b = match len {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    b.set_style(ProgressStyle::with_template(template).expect("static template").progress_chars("=> "));
    b
}

/// Writes the time series as CSV, prints notices and drives the progress bars
/// (preconditioning, then the replay), all hidden when quiet.
pub struct CliObserver {
    csv: csv::Writer<BufWriter<File>>,
    quiet: bool,
    bar: Option<ProgressBar>,
    path: std::path::PathBuf,
    /// The first failed write of the time series: the run then fails, rather than publish
    /// a cut-off file beside a complete report.
    error: Option<String>,
    /// The header is written with the first row (it names the FTL's columns).
    header_written: bool,
}

impl CliObserver {
    /// Create `out/` and `out/timeseries.csv`.
    pub fn new(out: &Path, quiet: bool) -> Result<CliObserver, String> {
        std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        let path = out.join("timeseries.csv");
        let f = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(CliObserver {
            csv: csv::Writer::from_writer(BufWriter::new(f)),
            quiet,
            bar: None,
            path,
            error: None,
            header_written: false,
        })
    }

    /// Flush the CSV and clear the bar; the first write error of the time series, if any.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if let Err(e) = self.csv.flush() {
            self.error.get_or_insert_with(|| format!("cannot write {}: {e}", self.path.display()));
        }
        self.error.take().map_or(Ok(()), Err)
    }
}

impl Observer for CliObserver {
    fn interval(&mut self, row: &IntervalRow) {
        if self.error.is_some() {
            return;
        }
        let mut written = Ok(());
        if !std::mem::replace(&mut self.header_written, true) {
            written = self.csv.write_record(row.header());
        }
        if let Err(e) = written.and_then(|()| self.csv.write_record(row.cells())) {
            self.error = Some(format!("cannot write {}: {e}", self.path.display()));
        }
    }
    fn progress(&mut self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }
    fn precondition(&mut self, written: u64, most: u64) {
        if self.quiet {
            return;
        }
        let b = self.bar.get_or_insert_with(|| {
            bar(Some(most), "precondition {elapsed_precise} [{bar:40}] {pos}/{len} pages (at most; eta {eta})")
        });
        b.set_length(most);
        b.set_position(written);
    }
}

impl RunObserver for CliObserver {
    fn notice(&mut self, msg: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("{msg}")),
            None => eprintln!("{msg}"),
        }
    }
    fn replay_begins(&mut self, total: Option<u64>) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if !self.quiet {
            self.bar = Some(bar(total, "{elapsed_precise} [{bar:40}] {pos}/{len} requests ({per_sec}, eta {eta})"));
        }
    }
}

/// The files of a run's results, in the order they are moved into place: results.json last,
/// so that its presence says the others are complete.
pub const RESULT_FILES: [&str; 3] = ["timeseries.csv", "config.toml", "results.json"];

/// Write results.json and the effective config.toml.
pub fn write_results(out: &Path, cfg: &DriveConfig, json: &Value) -> Result<(), String> {
    let path = out.join("results.json");
    let mut f = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let text = serde_json::to_string_pretty(json).expect("report serialises");
    f.write_all(text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let path = out.join("config.toml");
    let toml = toml::to_string(cfg).map_err(|e| format!("cannot serialise config: {e}"))?;
    std::fs::write(&path, toml).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn lat_row(name: &str, s: &LatencyStats) -> String {
    let us = |ns: u64| ns as f64 / 1e3;
    format!(
        "  {name:<8} {:>10} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>11.1}\n",
        s.count,
        us(s.mean_ns),
        us(s.p50_ns),
        us(s.p90_ns),
        us(s.p99_ns),
        us(s.p999_ns),
        us(s.max_ns)
    )
}

/// The summary of a channel-system run (`[multichannel]`), from its results.json.
pub fn channel_summary(json: &Value) -> String {
    let r = &json["report"];
    let (d, p, t, g) = (&r["drive"], &r["performance"], &r["channel_time"], &r["gc"]);
    let pct = |v: &Value| v.as_f64().unwrap_or(0.0) * 100.0;
    format!(
        "drive {} | ftl {} | {} x {} channels x {} planes, {} units | buffer {} {} {}\n\
         write requests {} | IOPS {:.1} | {:.2} MB/s | response 1/IOPS {:.0} us, measured mean {:.0} us p99 {:.0} us\n\
         channel time: host writes {:.1}% | GC {:.1}% (early {:.1}%) | idle {:.1}%\n\
         GC steps: mandatory {} early {} | preemptions {} | CF rounds {} | write amplification {:.3}\n",
        d["name"].as_str().unwrap_or(""),
        d["ftl"].as_str().unwrap_or(""),
        d["mode"].as_str().unwrap_or(""),
        d["channels"],
        d["planes_per_channel"],
        d["units"],
        bytes(d["buffer_bytes"].as_u64().unwrap_or(0)),
        d["buffer_sharing"].as_str().unwrap_or(""),
        d["buffer_policy"].as_str().unwrap_or(""),
        r["host"]["requests"],
        p["iops"].as_f64().unwrap_or(0.0),
        p["throughput_mb_per_s"].as_f64().unwrap_or(0.0),
        p["response_inverse_iops_us"].as_f64().unwrap_or(0.0),
        p["response_mean_us"].as_f64().unwrap_or(0.0),
        p["response_p99_us"].as_f64().unwrap_or(0.0),
        pct(&t["host_write_share"]),
        pct(&t["gc_share"]),
        pct(&t["early_gc_share"]),
        pct(&t["idle_share"]),
        g["mandatory_steps"],
        g["early_steps"],
        g["preemptions"],
        g["cf_rounds"],
        r["flash"]["write_amplification"].as_f64().unwrap_or(0.0),
    )
}

/// The readable summary printed after a run; `wall` is the `wall_time` object.
pub fn summary_table(r: &Report, wall: &Value) -> String {
    let mut s = run_lines(r);
    s += &wall_time_line(wall);
    s += &performance_lines(r);
    s += &tenant_lines(r);
    s += &flash_lines(r);
    s
}

/// Each tenant's requests, rate, response times and share of the host's writes.
fn tenant_lines(r: &Report) -> String {
    let Some(tenants) = &r.tenants else {
        return String::new();
    };
    let mut s = format!(
        "tenants\n  {:<12} {:<7} {:>9} {:>10} {:>10} {:>10} {:>10} {:>7}\n",
        "", "class", "requests", "IOPS", "mean us", "p99 us", "MB/s", "writes"
    );
    for t in tenants {
        let refused = if t.host.refused > 0 { format!("  ({} refused)", t.host.refused) } else { String::new() };
        s += &format!(
            "  {:<12} {:<7} {:>9} {:>10.0} {:>10.1} {:>10.1} {:>10.1} {:>6.1}%{refused}\n",
            t.name,
            t.class,
            t.host.requests,
            t.performance.iops,
            t.response_time.all.mean_ns as f64 / 1e3,
            t.response_time.all.p99_ns as f64 / 1e3,
            t.performance.throughput_mb_per_s,
            t.host_write_share * 100.0
        );
    }
    s
}

/// The drive, its preconditioning and the requests the run completed.
fn run_lines(r: &Report) -> String {
    let mut s = String::new();
    let d = &r.drive;
    s += &format!(
        "drive {} | ftl {} | {} logical of {} raw | {} planes\n",
        d.name,
        d.ftl,
        bytes(d.logical_bytes),
        bytes(d.physical_bytes),
        d.planes
    );
    if let Some(p) = &r.precondition {
        if p.overwrite_pages > 0 {
            s += &format!(
                "precondition: {} pages filled, {:.2} overwrite passes, WAF {:.3}, {}\n",
                p.fill_pages,
                p.overwrite_passes,
                p.final_waf,
                if p.settled { "settled" } else { "NOT settled (overwrite cap reached)" }
            );
        }
    }
    let h = &r.host;
    s += &match &r.power_cut {
        // Reads, writes and trims count dispatched requests; some of those the cut failed.
        Some(_) => format!(
            "requests {} completed before the power cut, of {} dispatched (reads {}, writes {}, trims {}), in {:.3} s \
             simulated\n",
            h.requests,
            h.reads + h.writes + h.trims,
            h.reads,
            h.writes,
            h.trims,
            r.performance.simulated_time_ns as f64 / 1e9,
        ),
        None => format!(
            "requests {} (reads {}, writes {}, trims {}) in {:.3} s simulated\n",
            h.requests,
            h.reads,
            h.writes,
            h.trims,
            r.performance.simulated_time_ns as f64 / 1e9,
        ),
    };
    if h.refused > 0 {
        let by: Vec<String> = h.refused_by_status.iter().map(|(k, n)| format!("{k} {n}")).collect();
        s += &format!(
            "refused {} commands ({}): completed with their status, nothing done; not in the requests, IOPS or \
             response times above\n",
            h.refused,
            by.join(", ")
        );
    }
    s
}

/// Where the wall-clock time went (`wall`: the `wall_time` object).
fn wall_time_line(wall: &Value) -> String {
    let secs = |k: &str| wall[k].as_f64().unwrap_or(0.0);
    let prep = if secs("load_state_s") > 0.0 {
        format!("load state {:.2} s", secs("load_state_s"))
    } else {
        format!("fill {:.2} s | steady state {:.2} s", secs("fill_s"), secs("steady_state_s"))
    };
    format!(
        "wall time {:.2} s: build {:.2} s | {prep} | replay {:.2} s ({:.0} requests/s){}\n",
        secs("total_s"),
        secs("build_s"),
        secs("replay_s"),
        secs("replay_requests_per_s"),
        if secs("save_state_s") > 0.0 { format!(" | save state {:.2} s", secs("save_state_s")) } else { String::new() }
    )
}

/// IOPS, throughput and the response times.
fn performance_lines(r: &Report) -> String {
    let mut s = format!(
        "IOPS {:.0} | throughput {:.1} MB/s (read {:.1}, write {:.1})\n",
        r.performance.iops,
        r.performance.throughput_mb_per_s,
        r.performance.read_mb_per_s,
        r.performance.write_mb_per_s
    );
    s += &format!(
        "response time (us)\n  {:<8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11}\n",
        "", "count", "mean", "p50", "p90", "p99", "p99.9", "max"
    );
    s += &lat_row("all", &r.response_time.all);
    s += &lat_row("read", &r.response_time.read);
    s += &lat_row("write", &r.response_time.write);
    s
}

/// Write amplification, GC, flash operations, wear, channel time and mapping SRAM.
fn flash_lines(r: &Report) -> String {
    let w = &r.write_amplification;
    let mut s = if r.host.pages_written == 0 {
        "write amplification - (no host page written)\n".to_string()
    } else {
        format!("write amplification {:.3} (host {:.3}, gc {:.3}, mapping {:.3})\n", w.total, w.host, w.gc, w.mapping)
    };
    let g = &r.gc;
    s += &format!(
        "gc: {} collections ({} foreground, {} background, {} fallbacks), {} pages moved, {:.1} per collection ({:.1}% of a victim)\n",
        g.collections,
        g.foreground_collections,
        g.background_collections,
        g.fallbacks,
        g.pages_moved,
        g.pages_moved_per_collection,
        g.victim_valid_share * 100.0
    );
    let f = &r.flash;
    s += &format!(
        "flash: {} reads, {} programs, {} copy-backs, {} erases, {} wasted pages\n",
        f.reads.total, f.programs.total, f.copybacks.total, f.erases.total, f.wasted_pages
    );
    s += &format!(
        "planes: programs mean {:.1}, SDWPP {:.1} | erase count min/mean/max {}/{:.2}/{}\n",
        r.planes.programs_mean, r.planes.sdwpp, r.wear.erase_count_min, r.wear.erase_count_mean, r.wear.erase_count_max
    );
    let c = &r.channels;
    s += &format!(
        "channel time: host {:.1}% | gc {:.1}% | mapping {:.1}% | idle {:.1}%\n",
        c.host_share * 100.0,
        c.gc_share * 100.0,
        c.mapping_share * 100.0,
        c.idle_share * 100.0
    );
    s += &format!("mapping SRAM {}\n", bytes(r.mapping_sram_bytes));
    s
}

/// The instant `--power-cut` asked for, from `run.power_cut` of results.json.
fn cut_instant(asked: &Value) -> String {
    if let Some(n) = asked.get("request").and_then(Value::as_u64) {
        return format!("request {n}");
    }
    if let Some(ns) = asked.get("time_ns").and_then(Value::as_u64) {
        return format!("{:.3} ms", ns as f64 / 1e6);
    }
    asked.as_str().unwrap_or("?").to_string()
}

/// What `--power-cut` did, from results.json: the cut, recovery and the run after it (or, for
/// `random:N`, the means over the cuts), or that the run ended before the cut instant; empty
/// without `--power-cut`.
pub fn power_cut_summary(json: &Value) -> String {
    let asked = &json["run"]["power_cut"];
    if asked.is_null() {
        return String::new();
    }
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    if let Some(o) = json.get("power_cuts_overview") {
        let torn: Vec<String> = o["torn_operations"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| format!("{k} {v}")).collect())
            .unwrap_or_default();
        let post = o["post_recovery_mean_response_ns_mean"]
            .as_f64()
            .map_or("no request left after any cut".into(), |ns| format!("mean response {:.1} us", ns / 1e3));
        return format!(
            "power cuts: {} at seeded random instants of the run above, each followed by recovery and the rest of \
             the workload\n\
             recovery: read {:.0} pages on average (RP {:.2}%, at most {:.2}%), {:.1} ms on average (at most {:.1} \
             ms); acknowledged pages lost: {}; torn: {}\n\
             after recovery: {post} (mean over the cuts; before the cuts {:.1} us)\n",
            u(&o["cuts"]),
            f(&o["recovery_pages_read_mean"]),
            f(&o["recovery_pages_read_ratio_mean"]) * 100.0,
            f(&o["recovery_pages_read_ratio_max"]) * 100.0,
            f(&o["recovery_time_us_mean"]) / 1e3,
            f(&o["recovery_time_us_max"]) / 1e3,
            u(&o["lost_acknowledged_pages_total"]),
            torn.join(", "),
            f(&o["before_cut_mean_response_ns_mean"]) / 1e3,
        );
    }
    let c = &json["report"]["power_cut"];
    if c.is_null() {
        return format!(
            "power cut at {}: not reached (the run ended after {} requests and {:.3} ms); nothing was cut\n",
            cut_instant(asked),
            u(&json["report"]["host"]["requests"]),
            f(&json["report"]["performance"]["simulated_time_ns"]) / 1e6
        );
    }
    let lost = &c["lost_acknowledged_pages"];
    let mut torn = match c["torn_operation"].as_str() {
        Some(op) => format!("a {op} of {} page(s) torn", c["torn_page_kind"].as_str().unwrap_or("?")),
        None => "no flash operation under way".into(),
    };
    if u(&c["queued_operations_dropped"]) > 0 {
        torn +=
            &format!("; {} queued flash operations had not started and never ran", u(&c["queued_operations_dropped"]));
    }
    let mut s = format!(
        "power cut at {} ({:.3} ms): {} requests completed before it, {} in flight failed (never acknowledged); {torn}\n\
         recovery: {} pages read (RP {:.2}% of the flash), {} programmed, {} blocks erased, {:.1} ms; acknowledged \
         pages lost: {} (write buffer {}, merge buffer {}){}\n",
        cut_instant(asked),
        f(&c["at_ns"]) / 1e6,
        u(&c["requests_completed"]),
        u(&c["requests_in_flight"]),
        u(&c["recovery_pages_read"]),
        f(&c["recovery_pages_read_ratio"]) * 100.0,
        u(&c["recovery_pages_programmed"]),
        u(&c["recovery_blocks_erased"]),
        f(&c["recovery_time_us"]) / 1e3,
        u(&lost["write_buffer"]) + u(&lost["merge_buffer"]),
        u(&lost["write_buffer"]),
        u(&lost["merge_buffer"]),
        match u(&c["oracle_checked_pages"]) {
            0 => String::new(),
            n => format!("; {n} pages checked against the data oracle"),
        }
    );
    let p = &json["post_recovery"];
    s += &if json["run"].get("multichannel").is_some() {
        "after recovery: a channel-system run ends at its cut (the rest of the source is not replayed)\n".to_string()
    } else if p.is_null() {
        "after recovery: no request was left\n".to_string()
    } else {
        let all = &p["response_time"]["all"];
        format!(
            "after recovery: {} requests in {:.3} s simulated, IOPS {:.0}, response mean {:.1} us p99 {:.1} us, \
             write amplification {:.3} (post_recovery in results.json)\n",
            u(&p["host"]["requests"]),
            f(&p["performance"]["simulated_time_ns"]) / 1e9,
            f(&p["performance"]["iops"]),
            f(&all["mean_ns"]) / 1e3,
            f(&all["p99_ns"]) / 1e3,
            f(&p["write_amplification"]["total"]),
        )
    };
    s
}
