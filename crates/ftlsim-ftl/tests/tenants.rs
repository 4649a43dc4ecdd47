//! Tenants (issue 39): several sources replayed at once behind their own submission queues.
//! Each tenant's counters add up to the drive's, the arbiter gives each class its weight's
//! share of a saturated device, namespaces place requests where they belong, one tenant is
//! the plain replay, and every read returns the newest version under tenants of any FTL.

use crate::util;

use ftlsim_core::arbiter::{Arbitration, PriorityClass};
use ftlsim_core::error::RequestError;
use ftlsim_core::host::Request;
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{
    Namespace, PlacementRule, Precondition, QueueArbitration, Replay, Report, RunOptions, Simulator, Tenant,
};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use util::{drive_for, read_all, set, small_config};

type Source = Box<dyn Iterator<Item = Result<Request, RequestError>>>;

/// A tenant `name` of `class` over the pages `[a, b)` shares of `sim`'s logical space running
/// `workload` (closed loop at its `qd`, or open loop), and its source from `seed`.
fn tenant(
    sim: &Simulator,
    name: &str,
    class: PriorityClass,
    (a, b): (f64, f64),
    workload: &str,
    seed: u64,
) -> (Tenant, Source) {
    let d = sim.derived();
    let spp = d.logical_bytes / u64::from(d.logical_pages) / 512;
    let pages = u64::from(d.logical_pages);
    let (first, end) = ((a * pages as f64) as u64, (b * pages as f64) as u64);
    let namespace = Namespace { first_sector: first * spp, sectors: (end - first) * spp };
    let w = WorkloadSpec::parse(workload).unwrap();
    let replay = match w.arrival.queue_depth() {
        Some(queue_depth) => Replay::Closed { queue_depth },
        None => Replay::Open { time_scale: 1.0 },
    };
    let source: Source = Box::new(Generator::new(&w, namespace.sectors * 512, seed).unwrap().map(Ok));
    (
        Tenant { name: name.into(), replay, class, namespace, stop_after_ns: None, placement: PlacementRule::Default },
        source,
    )
}

fn run(sim: &mut Simulator, tenants: Vec<(Tenant, Source)>, opts: RunOptions) -> Report {
    let (tenants, mut sources): (Vec<_>, Vec<_>) = tenants.into_iter().unzip();
    let mut refs: Vec<&mut dyn Iterator<Item = Result<Request, RequestError>>> =
        sources.iter_mut().map(|s| s.as_mut() as &mut dyn Iterator<Item = Result<Request, RequestError>>).collect();
    sim.run_tenants(&mut refs, &RunOptions { tenants, ..opts }, &mut NoObserver).unwrap()
}

/// Three tenants with reads, writes, trims and partial pages, two of them sharing a namespace.
fn mixed_tenants(sim: &Simulator) -> Vec<(Tenant, Source)> {
    vec![
        tenant(
            sim,
            "db",
            PriorityClass::High,
            (0.0, 0.4),
            "read=0.5,trim=0.05,size=4k@4|8k@1|512@1,align=512,qd=4,requests=3000",
            1,
        ),
        tenant(
            sim,
            "log",
            PriorityClass::Medium,
            (0.4, 1.0),
            "pattern=sequential,read=0,size=64k,qd=8,requests=800",
            2,
        ),
        tenant(sim, "scan", PriorityClass::Low, (0.0, 0.4), "read=0.9,size=16k,arrival=poisson:200us,requests=1500", 3),
    ]
}

#[test]
fn each_tenants_counters_add_up_to_the_drives() {
    let mut sim = ftlsim_ftl::simulator(small_config(32, 16, 0.25, ""), true).unwrap();
    sim.precondition(&Precondition { fill: 1.0, seed: 7, ..Precondition::default() }).unwrap();
    let tenants = mixed_tenants(&sim);
    let r = run(&mut sim, tenants, RunOptions { check_every: 101, ..RunOptions::default() });
    let t = r.tenants.as_ref().expect("a run with tenants reports them");
    assert_eq!(t.len(), 3);
    assert_eq!(t.iter().map(|t| t.host.requests).collect::<Vec<_>>(), vec![3000, 800, 1500]);
    // Every host counter, by name.
    let h = &r.host;
    let drive = serde_json::to_value(h).unwrap();
    let tenant_hosts: Vec<serde_json::Value> = t.iter().map(|t| serde_json::to_value(&t.host).unwrap()).collect();
    for (key, value) in drive.as_object().unwrap() {
        // A count, or counts by name (`refused_by_status`).
        let counts: Vec<(String, u64)> = match value.as_object() {
            Some(m) => m.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect(),
            None => vec![(String::new(), value.as_u64().unwrap())],
        };
        for (name, n) in counts {
            let of = |h: &serde_json::Value| if name.is_empty() { h[key].as_u64() } else { h[key][&name].as_u64() };
            let sum: u64 = tenant_hosts.iter().map(|h| of(h).unwrap_or(0)).sum();
            assert_eq!(sum, n, "{key} {name}");
        }
    }
    assert!(h.trims > 0 && h.partial_page_writes > 0, "the mix has trims and partial pages");
    let lat = |f: &dyn Fn(&ftlsim_core::sim::ResponseTimes) -> u64| t.iter().map(|t| f(&t.response_time)).sum::<u64>();
    assert_eq!(lat(&|r| r.all.count), r.response_time.all.count);
    assert_eq!(lat(&|r| r.read.count), r.response_time.read.count);
    assert_eq!(lat(&|r| r.write.count), r.response_time.write.count);
    let iops: f64 = t.iter().map(|t| t.performance.iops).sum();
    assert!((iops - r.performance.iops).abs() < 1e-3 * r.performance.iops, "{iops} vs {}", r.performance.iops);
    let share: f64 = t.iter().map(|t| t.host_write_share).sum();
    assert!((share - 1.0).abs() < 1e-5, "write shares sum to {share}");
    assert!(t.iter().all(|t| t.performance.simulated_time_ns == r.performance.simulated_time_ns));
}

#[test]
fn namespaces_place_each_tenants_requests_in_its_range() {
    // An empty drive: the writer fills the upper half only, so the reader of the lower half
    // finds nothing written there, and the reader of the upper half finds only written pages.
    let mut sim = ftlsim_ftl::simulator(small_config(32, 16, 0.25, "[host]\nunmapped_read = \"zero\""), true).unwrap();
    let logical = u64::from(sim.derived().logical_pages);
    // 64 KiB writes of 16 pages, sequential over the upper half once.
    let requests = logical / 2 / 16;
    let w = format!("pattern=sequential,read=0,size=64k,qd=1,requests={requests}");
    let writer = tenant(&sim, "writer", PriorityClass::Medium, (0.5, 1.0), &w, 1);
    let r = run(&mut sim, vec![writer], RunOptions::default());
    assert_eq!(r.host.pages_written, requests * 16);
    let low = tenant(&sim, "low", PriorityClass::Medium, (0.0, 0.5), "read=1,qd=2,requests=500", 2);
    let high = tenant(&sim, "high", PriorityClass::Medium, (0.5, 1.0), "read=1,qd=2,requests=500", 3);
    let r = run(&mut sim, vec![low, high], RunOptions::default());
    let t = r.tenants.unwrap();
    assert_eq!(t[0].host.unmapped_page_reads, t[0].host.pages_read, "the lower half was never written");
    assert!(t[1].host.pages_read > 0);
    assert_eq!(t[1].host.unmapped_page_reads, 0, "the upper half was written whole");
}

#[test]
fn weighted_round_robin_gives_each_class_its_weights_share_of_a_saturated_device() {
    // One device slot, three closed-loop tenants always ready: every slot that frees goes to
    // the class the weights say. Issuing stops after a while, before any tenant runs dry.
    let mut cfg = small_config(32, 16, 0.25, "");
    set(&mut cfg, "host.queue_depth", "1");
    let mut sim = ftlsim_ftl::simulator(cfg, false).unwrap();
    sim.precondition(&Precondition { fill: 1.0, seed: 7, ..Precondition::default() }).unwrap();
    let w = "read=1,qd=4,requests=100000";
    let tenants = vec![
        tenant(&sim, "high", PriorityClass::High, (0.0, 1.0), w, 1),
        tenant(&sim, "medium", PriorityClass::Medium, (0.0, 1.0), w, 2),
        tenant(&sim, "low", PriorityClass::Low, (0.0, 1.0), w, 3),
    ];
    let arbitration = QueueArbitration { mechanism: Arbitration::WeightedRoundRobin { weights: [4, 2, 1] }, burst: 1 };
    let r = run(&mut sim, tenants, RunOptions { arbitration, max_sim_ns: Some(200_000_000), ..RunOptions::default() });
    let n: Vec<u64> = r.tenants.unwrap().iter().map(|t| t.host.requests).collect();
    let total: u64 = n.iter().sum();
    assert!(total > 2000, "{n:?}");
    // Stated tolerance: within one round (7 commands) of the exact 4:2:1 split.
    for (got, weight) in n.iter().zip([4u64, 2, 1]) {
        let want = total * weight / 7;
        assert!(got.abs_diff(want) <= 7, "{n:?}: {got} vs {want}");
    }
}

#[test]
fn round_robin_shares_alike_and_urgent_goes_first() {
    let mut cfg = small_config(32, 16, 0.25, "");
    set(&mut cfg, "host.queue_depth", "1");
    let mut sim = ftlsim_ftl::simulator(cfg, false).unwrap();
    sim.precondition(&Precondition { fill: 1.0, seed: 7, ..Precondition::default() }).unwrap();
    let w = "read=1,qd=4,requests=100000";
    let alike = vec![
        tenant(&sim, "a", PriorityClass::High, (0.0, 1.0), w, 1),
        tenant(&sim, "b", PriorityClass::Low, (0.0, 1.0), w, 2),
    ];
    let r = run(&mut sim, alike, RunOptions { max_sim_ns: Some(100_000_000), ..RunOptions::default() });
    let n: Vec<u64> = r.tenants.unwrap().iter().map(|t| t.host.requests).collect();
    assert!(n[0].abs_diff(n[1]) <= 1, "round robin ignores classes: {n:?}");
    // An urgent tenant with 200 requests beside a busy low one: its requests wait for no
    // other queue, so each waits at most for the one request in the device.
    let urgent = vec![
        tenant(&sim, "busy", PriorityClass::Low, (0.0, 1.0), w, 3),
        tenant(&sim, "urgent", PriorityClass::Urgent, (0.0, 1.0), "read=1,qd=4,requests=200", 4),
    ];
    let arbitration = QueueArbitration { mechanism: Arbitration::WeightedRoundRobin { weights: [1, 1, 1] }, burst: 1 };
    let r = run(&mut sim, urgent, RunOptions { arbitration, max_sim_ns: Some(100_000_000), ..RunOptions::default() });
    let t = r.tenants.unwrap();
    assert_eq!(t[1].host.requests, 200);
    // Urgent's closed loop always has a request ready, so the busy tenant gets no slot until
    // urgent's 200 are done: its longest wait spans them (each of urgent's waits for the 4 of
    // its own queue, so one read is about a quarter of urgent's mean), within 20%.
    let (busy, urgent) = (&t[0].response_time.all, &t[1].response_time.all);
    assert!(
        busy.max_ns as f64 >= 0.8 * 200.0 * urgent.mean_ns as f64 / 4.0,
        "busy max {} ns, urgent mean {} ns",
        busy.max_ns,
        urgent.mean_ns
    );
}

#[test]
fn one_tenant_over_the_whole_drive_is_the_plain_replay() {
    let build = || {
        let mut sim = ftlsim_ftl::simulator(small_config(32, 16, 0.25, "[host]\nqueue_depth = 8"), false).unwrap();
        sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed: 7, ..Precondition::default() }).unwrap();
        sim
    };
    let w = "read=0.3,qd=8,requests=5000";
    let mut plain = build();
    let logical = plain.derived().logical_bytes;
    let mut gen = Generator::new(&WorkloadSpec::parse(w).unwrap(), logical, 5).unwrap().map(Ok);
    let a = plain
        .run(
            &mut gen,
            &RunOptions { replay: Replay::Closed { queue_depth: 8 }, ..RunOptions::default() },
            &mut NoObserver,
        )
        .unwrap();
    let mut sim = build();
    let one = tenant(&sim, "only", PriorityClass::Medium, (0.0, 1.0), w, 5);
    let b = run(&mut sim, vec![one], RunOptions::default());
    let mut bj = serde_json::to_value(&b).unwrap();
    bj.as_object_mut().unwrap().remove("tenants");
    assert_eq!(serde_json::to_value(&a).unwrap(), bj);
    let t = &b.tenants.unwrap()[0];
    assert_eq!(t.host, a.host);
    assert_eq!(t.response_time.all.mean_ns, a.response_time.all.mean_ns);
}

#[test]
fn every_read_returns_the_newest_version_under_tenants_of_every_ftl() {
    // A zoned namespace refuses random writes by design (tests/zns.rs).
    for f in ftlsim_ftl::FTLS.iter().filter(|f| !f.capabilities.zoned) {
        let cfg = ftlsim_ftl::resolve(drive_for(f, 32, 16, "")).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        let mut sim = ftlsim_ftl::simulator_for(cfg, true).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        sim.precondition(&Precondition {
            fill: 0.9,
            steady_state: true,
            max_overwrite_passes: 1.0,
            seed: 3,
            ..Precondition::default()
        })
        .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        let tenants = mixed_tenants(&sim);
        let (tenants, mut sources): (Vec<_>, Vec<_>) = tenants.into_iter().unzip();
        let mut refs: Vec<&mut dyn Iterator<Item = Result<Request, RequestError>>> =
            sources.iter_mut().map(|s| s.as_mut() as &mut dyn Iterator<Item = Result<Request, RequestError>>).collect();
        let opts = RunOptions { tenants, check_every: 97, ..RunOptions::default() };
        sim.run_tenants(&mut refs, &opts, &mut NoObserver).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        sim.check_invariants();
        let logical = sim.derived().logical_pages;
        let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
        sim.run(&mut read_all(logical), &back, &mut NoObserver)
            .unwrap_or_else(|e| panic!("{}: read back: {e}", f.name));
    }
}

#[test]
fn a_closed_loop_tenants_wait_for_a_device_slot_counts_in_its_response() {
    // A tenant keeping 16 requests outstanding on a device that holds 4: by Little's law its
    // mean response is 16 over its rate, the time in its submission queue included.
    let mut sim = ftlsim_ftl::simulator(small_config(32, 16, 0.25, "[host]\nqueue_depth = 4"), false).unwrap();
    sim.precondition(&Precondition { fill: 1.0, seed: 7, ..Precondition::default() }).unwrap();
    let t = tenant(&sim, "deep", PriorityClass::Medium, (0.0, 1.0), "read=0.5,qd=16,requests=4000", 1);
    let r = run(&mut sim, vec![t], RunOptions::default());
    let t = &r.tenants.unwrap()[0];
    let in_flight = t.performance.iops * t.response_time.all.mean_ns as f64 / 1e9;
    assert!((in_flight - 16.0).abs() < 0.5, "{in_flight} requests in flight on average, not 16");
}

#[test]
fn the_time_series_has_each_tenants_columns_adding_up_to_the_drives() {
    let mut sim = ftlsim_ftl::simulator(small_config(32, 16, 0.25, ""), false).unwrap();
    sim.precondition(&Precondition { fill: 1.0, seed: 7, ..Precondition::default() }).unwrap();
    let tenants = mixed_tenants(&sim);
    let (tenants, mut sources): (Vec<_>, Vec<_>) = tenants.into_iter().unzip();
    let mut refs: Vec<&mut dyn Iterator<Item = Result<Request, RequestError>>> =
        sources.iter_mut().map(|s| s.as_mut() as &mut dyn Iterator<Item = Result<Request, RequestError>>).collect();
    let mut rows = ftlsim_core::metrics::RowCollector::default();
    let opts = RunOptions { tenants, interval_ns: 10_000_000, ..RunOptions::default() };
    let r = sim.run_tenants(&mut refs, &opts, &mut rows).unwrap();
    assert!(rows.rows.len() > 3, "{} rows", rows.rows.len());
    let header = rows.rows[0].header();
    assert!(header.iter().any(|h| h == "tenant.scan.mean_latency_us"), "{header:?}");
    for row in &rows.rows {
        assert_eq!(row.tenants.iter().map(|t| t.requests).sum::<u64>(), row.requests);
        assert_eq!(row.header().len(), row.cells().len());
    }
    let per_tenant: Vec<u64> = (0..3).map(|i| rows.rows.iter().map(|row| row.tenants[i].requests).sum()).collect();
    let reported: Vec<u64> = r.tenants.unwrap().iter().map(|t| t.host.requests).collect();
    assert_eq!(per_tenant, reported);
}
