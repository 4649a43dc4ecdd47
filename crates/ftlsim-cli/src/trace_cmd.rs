//! Trace options of `ftlsim run --trace`, and the `ftlsim trace` subcommands.

use clap::Args;
use ftlsim_core::error::SimError;
use ftlsim_core::outputs::{Outputs, Target};
use ftlsim_requests::error::WorkloadError;
use ftlsim_requests::fitted::FittedWorkload;
use ftlsim_requests::locality::{Locality, LocalityDistance};
use ftlsim_requests::trace::{
    detect, stats, write_line, Overflow, ParserOptions, RecordReader, TraceFormat, TraceOptions, TraceStats, WRITABLE,
};
use std::path::PathBuf;

/// Trace replay flags of `ftlsim run`: each but `--trace` is refused without it
/// ([`TraceArgs::given_without_trace`]).
#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// Replay this trace file (plain, .gz or .zst) instead of the synthetic workload.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Trace format; detected from the content when not given.
    #[arg(long, value_parser = parse_format)]
    pub format: Option<TraceFormat>,
    /// Replay only this device (disk, ASU, LUN, volume); default lays devices side by side.
    #[arg(long)]
    pub device: Option<u32>,
    /// Addresses beyond the drive's logical capacity: error (stop, naming the line), wrap
    /// (modulo the logical capacity) or compact (the touched pages remapped densely).
    #[arg(long, default_value = "error", value_parser = |s: &str| s.parse::<Overflow>())]
    pub overflow: Overflow,
    /// Replay speed: 2.0 halves inter-arrival times.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub speed: f64,
    /// Ignore timestamps and replay closed loop at this queue depth.
    #[arg(long)]
    pub qd: Option<u32>,
    /// Requests held to sort out-of-order timestamps.
    #[arg(long, default_value_t = 4096)]
    pub reorder_window: usize,
    /// Skip this many requests at the start.
    #[arg(long, default_value_t = 0)]
    pub skip: u64,
    /// Replay at most this many requests (per pass).
    #[arg(long)]
    pub max_requests: Option<u64>,
    /// Only requests in START..END after the first one (e.g. 10s..20s).
    #[arg(long)]
    pub time_window: Option<String>,
    /// Replay the trace N times back to back, times shifted.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Count and skip malformed lines instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// blkparse: replay queue (Q) instead of dispatch (D) events.
    #[arg(long)]
    pub blkparse_queue: bool,
}

/// Parse a `--format` name.
pub fn parse_format(s: &str) -> Result<TraceFormat, String> {
    s.parse()
}

impl TraceArgs {
    /// The first trace flag given (away from its default) when no `--trace` is: it would be
    /// ignored by a synthetic workload or tenants (issue 58).
    pub fn given_without_trace(&self) -> Option<&'static str> {
        if self.trace.is_some() {
            return None;
        }
        [
            ("--format", self.format.is_some()),
            ("--device", self.device.is_some()),
            ("--overflow", self.overflow != Overflow::Error),
            ("--speed", self.speed != 1.0),
            ("--qd", self.qd.is_some()),
            ("--reorder-window", self.reorder_window != 4096),
            ("--skip", self.skip != 0),
            ("--max-requests", self.max_requests.is_some()),
            ("--time-window", self.time_window.is_some()),
            ("--repeat", self.repeat != 1),
            ("--skip-bad-lines", self.skip_bad_lines),
            ("--blkparse-queue", self.blkparse_queue),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    /// The reader's options.
    pub fn options(&self) -> Result<TraceOptions, SimError> {
        let time_window_ns = self.time_window.as_deref().map(ftlsim_run::time_window_ns).transpose()?;
        Ok(TraceOptions {
            format: self.format,
            parser: ParserOptions { blkparse_event: if self.blkparse_queue { b'Q' } else { b'D' } },
            device: self.device,
            overflow: self.overflow,
            speed: self.speed,
            reorder_window: self.reorder_window,
            skip: self.skip,
            max_requests: self.max_requests,
            time_window_ns,
            repeat: self.repeat,
            skip_bad_lines: self.skip_bad_lines,
        })
    }
}

/// `ftlsim trace` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum TraceCmd {
    /// Summarise a trace: requests, sizes, footprint, sequentiality, timing, hot spots.
    Stats(StatsArgs),
    /// Convert a trace to MQSim, SSDsim or DiskSim ASCII.
    Convert(ConvertArgs),
    /// Fit a trace's shape (mix, sizes, where requests land, sequential runs, inter-arrival
    /// times) as a synthetic workload: `--workload file:W.toml` replays it at any length,
    /// capacity and rate.
    Fit(FitArgs),
    /// Temporal locality: update share, reuse distances in pages and in requests, and the hit
    /// ratio of an LRU cache (and of an LRU write buffer) of 1 MiB to 4 GiB.
    Locality(LocalityArgs),
}

/// Arguments of `ftlsim trace locality`.
#[derive(Args, Debug)]
pub struct LocalityArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print JSON (every distribution and the curve) instead of a table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `ftlsim trace fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output TOML file.
    #[arg(short, long)]
    out: PathBuf,
    /// Extent size of the popularity map (doubled until the trace's range has at most
    /// 65,536 extents).
    #[arg(long, default_value = "1m")]
    extent: String,
    /// Impose this update share (page writes that rewrite a page written before, e.g. a
    /// paper's Table 2) on the replay given by --replay and --capacity: fresh runs of writes
    /// are reweighted until that replay reaches it (or as near as the shape allows).
    #[arg(long, requires_all = ["replay", "capacity"])]
    update_share: Option<f64>,
    /// The replay the update share holds for: the workload keys after `file:W.toml`, e.g.
    /// `requests=60000,read=0.23`.
    #[arg(long, requires = "update_share")]
    replay: Option<String>,
    /// Logical capacity of the drive the replay addresses (e.g. 1g).
    #[arg(long, requires = "update_share")]
    capacity: Option<String>,
    /// Seed of the replays that check the fit and calibrate an imposed update share.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Input flags shared by the `trace` subcommands.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace file (plain, .gz or .zst).
    pub file: PathBuf,
    /// Trace format; detected from the content when not given.
    #[arg(long, value_parser = parse_format)]
    pub format: Option<TraceFormat>,
    /// Count and skip malformed lines instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// blkparse: read queue (Q) instead of dispatch (D) events.
    #[arg(long)]
    pub blkparse_queue: bool,
}

impl InputArgs {
    fn open(&self, quiet: bool) -> Result<RecordReader, SimError> {
        let opts = ParserOptions { blkparse_event: if self.blkparse_queue { b'Q' } else { b'D' } };
        let format = match self.format {
            Some(f) => f,
            None => {
                let f = detect(&self.file, &opts)?;
                if !quiet {
                    eprintln!(
                        "trace {}: format {f}, {} (detected; --format overrides)",
                        self.file.display(),
                        f.units()
                    );
                }
                f
            }
        };
        Ok(RecordReader::new(&self.file, format, &opts, self.skip_bad_lines)?)
    }
}

/// Arguments of `ftlsim trace stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Page size for the footprint, bytes.
    #[arg(long, default_value_t = 4096)]
    page_size: u32,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `ftlsim trace convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output file.
    out: PathBuf,
    /// Output format: mqsim, ssdsim or disksim.
    #[arg(long, value_parser = parse_format)]
    to: TraceFormat,
}

/// Run a `trace` subcommand.
pub fn run(cmd: &TraceCmd) -> Result<(), SimError> {
    match cmd {
        TraceCmd::Stats(a) => stats_cmd(a),
        TraceCmd::Fit(a) => fit_cmd(a),
        TraceCmd::Locality(a) => {
            let reader = a.input.open(a.json)?;
            let l = ftlsim_requests::locality::of_trace(reader)?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&l.report()).expect("locality serialises"));
            } else {
                print_locality(&l);
            }
            Ok(())
        }
        TraceCmd::Convert(a) => convert_cmd(a),
    }
}

/// `ftlsim trace stats`.
fn stats_cmd(a: &StatsArgs) -> Result<(), SimError> {
    if a.page_size < 512 || !a.page_size.is_multiple_of(512) {
        return Err(WorkloadError::new("--page-size", a.page_size.to_string(), "must be a multiple of 512").into());
    }
    let reader = a.input.open(a.json)?;
    let format = reader.format();
    let s = stats(reader, a.page_size)?;
    if a.json {
        let mut v = serde_json::to_value(&s).expect("stats serialise");
        v["format"] = format.name().into();
        v["units"] = format.units().into();
        println!("{}", serde_json::to_string_pretty(&v).expect("stats serialise"));
    } else {
        println!("format         {format} ({})", format.units());
        print_stats(&s);
    }
    Ok(())
}

/// Where `-o`/OUT of a trace subcommand goes, checked against its input trace.
fn output_of(input: &InputArgs, out: &std::path::Path) -> Result<Target, SimError> {
    let mut o = Outputs::new();
    o.input("input trace", &input.file);
    o.file("output", out).map_err(SimError::Input)
}

/// `ftlsim trace fit`.
fn fit_cmd(a: &FitArgs) -> Result<(), SimError> {
    let extent = ftlsim_requests::workload::parse_bytes("--extent", &a.extent)?;
    if extent < 4096 || extent % 4096 != 0 {
        return Err(WorkloadError::new("--extent", a.extent.clone(), "must be a multiple of 4 KiB").into());
    }
    let out = output_of(&a.input, &a.out)?;
    let reader = a.input.open(false)?;
    let source = a.input.file.display().to_string();
    let mut w = ftlsim_requests::fitted::fit(reader, &source, extent)?;
    // The fit as fitted is checked against its trace; an imposed share changes it on
    // purpose.
    let replayed = w.replay_locality(w.requests, a.seed);
    let d = w.locality.distance(&replayed);
    if let Some(target) = a.update_share {
        w = impose_update_share(a, &w, target)?;
    }
    let text = toml::to_string(&w).map_err(|e| SimError::Input(format!("cannot serialise the fit: {e}")))?;
    out.write(|f| f.write_all(text.as_bytes())).and_then(|s| s.commit()).map_err(SimError::Input)?;
    print_fit(a, &source, &w, &replayed, &d);
    Ok(())
}

/// `--update-share`: the fit `w` reweighted until `--replay` on `--capacity` reaches `target`.
fn impose_update_share(a: &FitArgs, w: &FittedWorkload, target: f64) -> Result<FittedWorkload, SimError> {
    if !(0.0..=1.0).contains(&target) {
        return Err(WorkloadError::new("--update-share", target.to_string(), "a share: a number in [0, 1]").into());
    }
    let (replay, capacity) = (a.replay.as_deref().unwrap_or(""), a.capacity.as_deref().unwrap_or(""));
    let logical_bytes = ftlsim_requests::workload::parse_bytes("--capacity", capacity)?;
    let origin = a.out.display().to_string();
    let names = ("--replay", "--capacity");
    Ok(ftlsim_requests::workload::impose_on_fit(w, &origin, replay, logical_bytes, target, a.seed, names)?)
}

/// What the fit `w` of `source` found, how its replay compares (`replayed`, `d`), and the
/// imposed update share if any.
fn print_fit(a: &FitArgs, source: &str, w: &FittedWorkload, replayed: &Locality, d: &LocalityDistance) {
    println!(
        "{}: {} requests, read {:.1}%, sequential {:.1}%, updates {:.1}% of page writes, {} extents of {} \
         touched (top 10% take {:.1}%), mean inter-arrival {:.1} us -> {}",
        source,
        w.requests,
        w.read_share * 100.0,
        w.sequential_share * 100.0,
        w.locality.update_share * 100.0,
        w.space.touched.len(),
        ftlsim_run::memory::bytes(w.space.extent_bytes),
        w.space.top_10pct_share * 100.0,
        w.arrival.mean_ns / 1e3,
        a.out.display()
    );
    println!(
        "fit check ({} requests replayed, seed {}): update share {:.1}% (trace {:.1}%); Kolmogorov-Smirnov \
         distance of reuse distances: pages {:.3}, written pages {:.3}, requests {:.3}; LRU hit ratios within \
         {:.3} (cache), {:.3} (write buffer) of the trace's from 1 MiB to 4 GiB",
        w.requests,
        a.seed,
        replayed.update_share * 100.0,
        w.locality.update_share * 100.0,
        d.stack_distance_ks,
        d.write_stack_distance_ks,
        d.request_distance_ks,
        d.miss_ratio_curve_max,
        d.write_miss_ratio_curve_max
    );
    if let Some(i) = &w.imposed {
        println!(
            "imposed update share {:.1}%: the replay `{}` on {} reaches {:.1}% (fresh runs of writes x{})",
            i.update_share * 100.0,
            i.replay,
            ftlsim_run::memory::bytes(i.capacity_bytes),
            i.reached * 100.0,
            i.factor
        );
    }
}

/// `ftlsim trace convert`.
fn convert_cmd(a: &ConvertArgs) -> Result<(), SimError> {
    if !WRITABLE.contains(&a.to) {
        return Err(WorkloadError::new("--to", a.to.name(), "convert writes mqsim, ssdsim or disksim").into());
    }
    let out = output_of(&a.input, &a.out)?;
    let reader = a.input.open(false)?;
    let (mut t0, mut written, mut left_out) = (None, 0u64, 0u64);
    // A read error ends the write; the output is then discarded, not left partial.
    let mut read_error = None;
    let wrote = out.write(|out| {
        for rec in reader {
            let r = match rec {
                Ok((_, r)) => r,
                Err(e) => {
                    read_error = Some(e);
                    return Err(std::io::Error::other("the input trace has an error"));
                }
            };
            let base = *t0.get_or_insert(r.time_ns);
            if write_line(out, a.to, &r, base)? {
                written += 1;
            } else {
                left_out += 1;
            }
        }
        Ok(())
    });
    if let Some(e) = read_error {
        return Err(e.into());
    }
    let staged = wrote.map_err(SimError::Input)?;
    if written == 0 {
        // Dropped uncommitted: no empty file stands for a trace.
        drop(staged);
        return Err(WorkloadError::new(
            "--to",
            a.to.name(),
            format!(
                "none of the trace's {left_out} requests has a {} form (trims and zoned commands have none): nothing \
                 to write, so no file was written",
                a.to
            ),
        )
        .into());
    }
    staged.commit().map_err(SimError::Input)?;
    eprintln!(
        "wrote {written} requests to {} as {}; {left_out} trims and zoned commands have no {} form and were left out",
        a.out.display(),
        a.to,
        a.to
    );
    Ok(())
}

fn print_stats(s: &TraceStats) {
    let mb = |b: u64| b as f64 / 1e6;
    println!("requests       {} (reads {}, writes {}, trims {})", s.requests, s.reads, s.writes, s.trims);
    if s.zone_appends + s.zone_management > 0 {
        println!("zoned          {} zone appends, {} zone management commands", s.zone_appends, s.zone_management);
    }
    println!(
        "bytes          read {:.1} MB, written {:.1} MB, trimmed {:.1} MB",
        mb(s.bytes_read),
        mb(s.bytes_written),
        mb(s.bytes_trimmed)
    );
    let mut devices: Vec<(u32, u64)> = s.requests_per_device.iter().map(|(&d, &n)| (d, n)).collect();
    devices.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let busiest: Vec<String> = devices.iter().take(10).map(|(d, n)| format!("{d}: {n}")).collect();
    println!("devices        {} (busiest: {})", devices.len(), busiest.join(", "));
    println!("sizes (<= B)   {:?}", s.size_histogram_bytes);
    println!("footprint      {} pages of {} B = {:.1} MB", s.footprint_pages, s.page_size_bytes, mb(s.footprint_bytes));
    println!("sequential     {:.1}% of requests continue the previous one", s.sequential_share * 100.0);
    println!(
        "duration       {:.3} s, mean {:.1} IOPS, max {} requests in one ms",
        s.duration_ns as f64 / 1e9,
        s.mean_iops,
        s.max_requests_per_ms
    );
    let ia = &s.inter_arrival;
    println!(
        "inter-arrival  mean {:.1} us, p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        ia.mean_ns as f64 / 1e3,
        ia.p50_ns as f64 / 1e3,
        ia.p99_ns as f64 / 1e3,
        ia.max_ns as f64 / 1e3
    );
    println!("out of order   {} requests", s.out_of_order_requests);
    println!(
        "hot spots      top 1% of pages get {:.1}% of accesses, top 10% get {:.1}%",
        s.top_1pct_pages_access_share * 100.0,
        s.top_10pct_pages_access_share * 100.0
    );
    if let Some(l) = &s.recorded_latency {
        let us = |ns: u64| ns as f64 / 1e3;
        println!(
            "recorded lat.  {} requests: mean {:.1} us, p50 {:.1} us, p99 {:.1} us, max {:.1} us \
             (reads mean {:.1} us, p99 {:.1} us; writes mean {:.1} us, p99 {:.1} us){}",
            l.requests,
            us(l.all.mean_ns),
            us(l.all.p50_ns),
            us(l.all.p99_ns),
            us(l.all.max_ns),
            us(l.read.mean_ns),
            us(l.read.p99_ns),
            us(l.write.mean_ns),
            us(l.write.p99_ns),
            if l.incomplete > 0 { format!("; {} not completed, without latency", l.incomplete) } else { String::new() }
        );
    }
    if s.bad_lines_skipped > 0 {
        println!("bad lines      {} skipped", s.bad_lines_skipped);
    }
    if s.untyped_records_skipped > 0 {
        println!("unknown type   {} records with a blank IOType, not replayed", s.untyped_records_skipped);
    }
}

/// `trace locality` as a table.
fn print_locality(l: &ftlsim_requests::locality::Locality) {
    println!(
        "requests       {} ({} page accesses, {} page writes, 4 KiB pages)",
        l.requests, l.page_accesses, l.page_writes
    );
    println!("update share   {:.1}% of page writes rewrite a page written before", l.update_share * 100.0);
    let median = |d: &ftlsim_requests::locality::Distances| {
        let half = d.total().div_ceil(2);
        let mut acc = 0;
        for (&b, &n) in d.lower_bounds.iter().zip(&d.counts) {
            acc += n;
            if acc >= half {
                return format!("{b}+");
            }
        }
        "-".to_string()
    };
    let first = l.stack_distance.first as f64 / l.page_accesses.max(1) as f64 * 100.0;
    if first >= 50.0 {
        println!("reuse          {first:.1}% of accesses are first touches (the median access is one)");
    } else {
        println!(
            "reuse          median distance {} pages, {} requests; {first:.1}% of accesses are first touches",
            median(&l.stack_distance),
            median(&l.request_distance)
        );
    }
    println!("LRU cache      size: hit ratio (cache of reads and writes) / write buffer absorbs");
    for p in l.curve() {
        println!("  {:>9}    {:.3} / {:.3}", ftlsim_run::memory::bytes(p.cache_bytes), p.hit_ratio, p.write_hit_ratio);
    }
}
