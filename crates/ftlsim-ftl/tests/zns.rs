//! The zoned namespace (issue 39, docs/zns.md): sequential writes fill zones with write
//! amplification exactly 1 and no GC; a write off the write pointer, across a zone boundary,
//! into a full zone or of part of a page is refused with its NVMe status and changes
//! nothing; a trim of whole zones resets them; the open and active limits hold, the
//! controller closing the zone written least recently; zone append, open, close, finish and
//! reset follow the state machine of ZNS Fig. 7; a zone capacity below the zone size bounds
//! what is written; every read returns the newest version.

use crate::util;

use ftlsim_core::error::{RequestError, SimError};
use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, Report, RunOptions, Simulator};
use util::{read_all, small_config};

/// A verifying zoned drive: 4 planes, 32 blocks of 16 pages each, 8 spare blocks per plane, so
/// 24 zones of 64 pages (4 KiB); `lines` go into `[ftl.zns]`.
fn drive(lines: &str) -> Simulator {
    let mut cfg = small_config(32, 16, 0.25, &format!("[ftl]\nname = \"zns\"\n[ftl.zns]\n{lines}"));
    ftlsim_ftl::zns::fit_drive(&mut cfg);
    ftlsim_ftl::simulator(cfg, true).unwrap()
}

const ZONE: u64 = 64; // pages
const SPP: u64 = 8; // sectors per 4 KiB page

fn req(op: IoOp, first_page: u64, pages: u64) -> Result<Request, RequestError> {
    Ok(Request {
        arrival_ns: 0,
        think_ns: 0,
        device: 0,
        offset_sector: first_page * SPP,
        sectors: (pages * SPP) as u32,
        op,
    })
}

fn run(sim: &mut Simulator, reqs: Vec<Result<Request, RequestError>>) -> Result<Report, SimError> {
    let opts =
        RunOptions { replay: Replay::Closed { queue_depth: 1 }, check_every: 1, interval_ns: 0, ..Default::default() };
    let r = sim.run(&mut reqs.into_iter(), &opts, &mut NoObserver);
    sim.check_invariants();
    r
}

/// A zone management command (no data) on zone `z`.
fn zone(op: IoOp, z: u64) -> Result<Request, RequestError> {
    req(op, z * ZONE, 0)
}

fn refused(r: &Report, status: &str) -> u64 {
    r.ftl_metrics["zns"]["refused"][status].as_u64().unwrap()
}

/// Every page read back against the oracle.
fn read_back(sim: &mut Simulator) {
    let pages = sim.derived().logical_pages;
    let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
    sim.run(&mut read_all(pages), &back, &mut NoObserver).unwrap();
}

#[test]
fn sequential_writes_fill_every_zone_with_write_amplification_one() {
    let mut sim = drive("");
    let zones = sim.derived().logical_pages as u64 / ZONE;
    assert_eq!(zones, 24);
    // Each zone in writes of 4 pages, zones interleaved two at a time (two open at once).
    let mut reqs = Vec::new();
    for pair in (0..zones).step_by(2) {
        for o in (0..ZONE).step_by(4) {
            reqs.push(req(IoOp::Write, pair * ZONE + o, 4));
            reqs.push(req(IoOp::Write, (pair + 1) * ZONE + o, 4));
        }
    }
    let r = run(&mut sim, reqs).unwrap();
    assert_eq!(r.ftl_metrics["zns"]["refused_total"], 0);
    assert_eq!(r.host.pages_written, zones * ZONE);
    assert_eq!(r.flash.programs.total, r.host.pages_written, "every page programmed once");
    assert_eq!(r.write_amplification.total, 1.0);
    assert_eq!(r.gc.collections, 0);
    assert_eq!(r.ftl_metrics["zns"]["zones_full"], zones);
    read_back(&mut sim);
}

#[test]
fn writes_that_break_a_zones_rules_are_refused_with_their_status_and_change_nothing() {
    let mut sim = drive("");
    let r = run(
        &mut sim,
        vec![
            req(IoOp::Write, 0, 8),        // zone 0: pages 0-7
            req(IoOp::Write, 16, 4),       // off the write pointer (8)
            req(IoOp::Write, 8, ZONE),     // from the pointer across zones 0 and 1
            req(IoOp::Write, 8, ZONE - 8), // zone 0 to the end: full
            req(IoOp::Write, 0, 1),        // into the full zone
            req(IoOp::Write, ZONE, 1),     // zone 1 from its start: fine
            req(IoOp::Trim, ZONE, 8),      // a reset of part of a zone
        ],
    )
    .unwrap();
    assert_eq!(refused(&r, "zone_invalid_write"), 1);
    assert_eq!(refused(&r, "zone_boundary_error"), 1);
    assert_eq!(refused(&r, "zone_is_full"), 1);
    assert_eq!(refused(&r, "invalid_field"), 1);
    assert_eq!(r.host.pages_written, ZONE + 1, "only what was admitted was written");
    assert_eq!(r.write_amplification.total, 1.0);
    // Refused commands are kept apart from the requests the drive served (issue 58).
    assert_eq!((r.host.requests, r.host.refused, r.host.writes), (3, 4, 3));
    let by: Vec<(&str, u64)> = r.host.refused_by_status.iter().map(|(k, n)| (*k, *n)).collect();
    assert_eq!(by, [("invalid_field", 1), ("zone_boundary_error", 1), ("zone_invalid_write", 1), ("zone_is_full", 1)]);
    assert_eq!(r.response_time.all.count, 3, "no response time for a refused command");
    // A write of part of a page (512 bytes) is refused too.
    let part = Ok(Request {
        arrival_ns: 0,
        think_ns: 0,
        device: 0,
        offset_sector: (ZONE + 1) * SPP,
        sectors: 1,
        op: IoOp::Write,
    });
    let r = run(&mut sim, vec![part]).unwrap();
    assert_eq!(refused(&r, "invalid_field"), 1);
    read_back(&mut sim);
}

#[test]
fn a_trim_of_whole_zones_resets_them_for_writing_from_their_start() {
    let mut sim = drive("");
    let r = run(
        &mut sim,
        vec![
            req(IoOp::Write, 0, ZONE),
            req(IoOp::Write, ZONE, 16),
            req(IoOp::Trim, 0, 2 * ZONE), // both zones reset
            req(IoOp::Write, 0, 8),
            req(IoOp::Write, ZONE, 8),
        ],
    )
    .unwrap();
    assert_eq!(r.ftl_metrics["zns"]["refused_total"], 0);
    assert_eq!(r.ftl_metrics["zns"]["resets"], 2);
    assert_eq!(r.flash.erases.total, 4 + 4, "zone 0's four blocks and zone 1's four (16 pages: all four planes)");
    assert_eq!(r.write_amplification.total, 1.0);
    read_back(&mut sim);
}

#[test]
fn the_open_and_active_limits_hold_and_the_least_recent_open_zone_closes() {
    let mut sim = drive("max_open_zones = 2\nmax_active_zones = 3");
    let r = run(
        &mut sim,
        vec![
            req(IoOp::Write, 0, 1),        // zone 0 opens
            req(IoOp::Write, ZONE, 1),     // zone 1 opens
            req(IoOp::Write, 2 * ZONE, 1), // zone 2: zone 0 closes to let it open
            req(IoOp::Write, 3 * ZONE, 1), // zone 3: three active already
            req(IoOp::Write, 1, 1),        // zone 0 again: zone 1 closes
        ],
    )
    .unwrap();
    let z = &r.ftl_metrics["zns"];
    assert_eq!(refused(&r, "too_many_active_zones"), 1);
    assert_eq!(z["auto_closed"], 2);
    assert_eq!((z["zones_implicitly_opened"].as_u64(), z["zones_closed"].as_u64()), (Some(2), Some(1)));
    assert_eq!(r.host.pages_written, 4);
    read_back(&mut sim);
}

#[test]
fn on_refused_stop_ends_the_run_naming_the_status() {
    let mut sim = drive("on_refused = \"stop\"");
    let e = run(&mut sim, vec![req(IoOp::Write, 4, 1)]).unwrap_err().to_string();
    assert!(e.contains("zone_invalid_write (BCh)") && e.contains("on_refused"), "{e}");
}

#[test]
fn a_sequential_fill_preconditions_and_random_overwrites_are_refused_with_a_reason() {
    let mut sim = drive("");
    sim.precondition(&Precondition { fill: 1.0, seed: 1, ..Precondition::default() }).unwrap();
    sim.check_invariants();
    let mut sim = drive("");
    let e = sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed: 1, ..Precondition::default() });
    let e = e.unwrap_err().to_string();
    assert!(e.contains("write pointer") && e.contains("sequential fill"), "{e}");
}

#[test]
fn a_drive_that_is_not_whole_zones_is_refused_naming_the_fix() {
    let cfg = small_config(32, 16, 0.2, "[ftl]\nname = \"zns\"\n[host]\nunmapped_read = \"zero\"");
    let e = ftlsim_ftl::simulator(cfg, false).err().unwrap().to_string();
    assert!(e.contains("overprovisioning.extra_blocks_per_plane"), "{e}");
}

#[test]
fn zone_appends_land_at_the_write_pointer_of_the_zone_they_name() {
    let mut sim = drive("");
    let r = run(
        &mut sim,
        vec![
            req(IoOp::ZoneAppend, 0, 8),     // zone 0: pages 0-7
            req(IoOp::ZoneAppend, ZONE, 4),  // zone 1: pages 0-3
            req(IoOp::ZoneAppend, 0, 8),     // zone 0: pages 8-15
            req(IoOp::ZoneAppend, 4, 1),     // not a zone's start: Invalid Field
            req(IoOp::Write, 16, 4),         // a write at zone 0's pointer, after the appends
            req(IoOp::ZoneAppend, ZONE, 61), // zone 1 has 60 pages left: Zone Boundary Error
            req(IoOp::ZoneAppend, ZONE, 60), // fills zone 1
            req(IoOp::ZoneAppend, ZONE, 1),  // Zone Is Full
        ],
    )
    .unwrap();
    let z = &r.ftl_metrics["zns"];
    assert_eq!(z["appends"], 4);
    assert_eq!(refused(&r, "invalid_field"), 1);
    assert_eq!(refused(&r, "zone_boundary_error"), 1);
    assert_eq!(refused(&r, "zone_is_full"), 1);
    assert_eq!(r.host.writes, 5, "appends count as writes");
    assert_eq!(r.host.pages_written, 8 + 4 + 8 + 4 + 60);
    assert_eq!(r.write_amplification.total, 1.0);
    assert_eq!(z["zones_full"], 1);
    // The oracle learnt each append where the drive put it: zone 0 holds 20 pages, in order.
    read_back(&mut sim);
}

#[test]
fn explicitly_opened_zones_hold_their_resources_and_too_many_open_zones_is_refused() {
    let mut sim = drive("max_open_zones = 2\nmax_active_zones = 3");
    let r = run(
        &mut sim,
        vec![
            zone(IoOp::ZoneOpen, 0),       // explicitly opened: active 1, open 1
            req(IoOp::Write, ZONE, 1),     // zone 1 implicitly opened: open 2
            req(IoOp::Write, 2 * ZONE, 1), // zone 2: zone 1 (implicit) closes for it
            zone(IoOp::ZoneOpen, 2),       // implicitly to explicitly opened, no resource taken
            req(IoOp::Write, 3 * ZONE, 1), // three active: Too Many Active Zones
            req(IoOp::Write, ZONE + 1, 1), // zone 1 again: zones 0 and 2 explicit, none closes
            zone(IoOp::ZoneClose, 2),      // frees an open resource
            req(IoOp::Write, ZONE + 1, 1), // now zone 1 reopens
            req(IoOp::Write, 0, 2),        // into the explicitly opened zone 0: stays explicit
        ],
    )
    .unwrap();
    let z = &r.ftl_metrics["zns"];
    assert_eq!(refused(&r, "too_many_active_zones"), 1);
    assert_eq!(refused(&r, "too_many_open_zones"), 1);
    assert_eq!(z["auto_closed"], 1);
    assert_eq!((z["opens"].as_u64(), z["closes"].as_u64()), (Some(2), Some(1)));
    assert_eq!(
        (z["zones_explicitly_opened"].as_u64(), z["zones_implicitly_opened"].as_u64(), z["zones_closed"].as_u64()),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(r.host.pages_written, 5);
    read_back(&mut sim);
}

#[test]
fn finish_fills_a_zone_where_it_stands_and_reset_empties_it() {
    let mut sim = drive("max_open_zones = 1\nmax_active_zones = 1");
    let r = run(
        &mut sim,
        vec![
            zone(IoOp::ZoneClose, 0), // Empty cannot close: Invalid Zone State Transition
            req(IoOp::Write, 0, 10),
            zone(IoOp::ZoneFinish, 0),     // Full at page 10, its active resource freed
            req(IoOp::Write, 10, 1),       // Zone Is Full
            zone(IoOp::ZoneOpen, 0),       // a Full zone cannot open
            req(IoOp::Write, ZONE, 1),     // zone 1 takes the one active resource
            zone(IoOp::ZoneFinish, 2),     // an Empty zone finishes too (to Full, nothing written)
            zone(IoOp::ZoneReset, 0),      // zone 0 Empty again, its blocks erased
            zone(IoOp::ZoneReset, 3),      // an Empty zone's reset changes nothing
            req(IoOp::Write, 2 * ZONE, 1), // zone 2 is Full
            zone(IoOp::ZoneReset, 1),
            req(IoOp::Write, 0, 1),      // zone 0 from its start
            req(IoOp::ZoneFinish, 3, 0), // not a zone's start
        ],
    )
    .unwrap();
    let z = &r.ftl_metrics["zns"];
    assert_eq!(refused(&r, "invalid_zone_state_transition"), 2);
    assert_eq!(refused(&r, "zone_is_full"), 2);
    assert_eq!(refused(&r, "invalid_field"), 1);
    assert_eq!((z["finishes"].as_u64(), z["resets"].as_u64()), (Some(2), Some(3)));
    assert_eq!(z["zones_full"], 1, "zone 2, finished empty");
    assert_eq!(r.flash.erases.total, 4 + 1, "zone 0's four written blocks, zone 1's one");
    assert_eq!(r.write_amplification.total, 1.0);
    read_back(&mut sim);
}

#[test]
fn a_zone_capacity_below_its_size_bounds_what_a_zone_takes() {
    let mut sim = drive("zone_capacity_pages = 40");
    let r = run(
        &mut sim,
        vec![
            req(IoOp::Write, 0, 32),
            req(IoOp::Write, 32, 9), // past the capacity: Zone Boundary Error
            req(IoOp::Write, 32, 8), // to the capacity: Full
            req(IoOp::Write, 40, 1), // Zone Is Full
            req(IoOp::ZoneAppend, ZONE, 40),
        ],
    )
    .unwrap();
    let z = &r.ftl_metrics["zns"];
    assert_eq!((z["zone_size_pages"].as_u64(), z["zone_capacity_pages"].as_u64()), (Some(ZONE), Some(40)));
    assert_eq!(refused(&r, "zone_boundary_error"), 1);
    assert_eq!(refused(&r, "zone_is_full"), 1);
    assert_eq!(z["zones_full"], 2);
    assert_eq!(r.host.pages_written, 80);
    // Pages past the capacity read as zeros, without a flash read.
    read_back(&mut sim);
    let cfg = small_config(32, 16, 0.25, "[ftl]\nname = \"zns\"\n[ftl.zns]\nzone_capacity_pages = 65");
    let e = ftlsim_ftl::resolve(cfg).err().unwrap().to_string();
    assert!(e.contains("zone_capacity_pages") && e.contains("64 pages"), "{e}");
}

#[test]
fn a_reset_of_all_zones_resets_every_zone_of_the_namespace() {
    let mut sim = drive("");
    let r = run(
        &mut sim,
        vec![
            req(IoOp::Write, 0, ZONE),
            req(IoOp::Write, 5 * ZONE, 3),
            zone(IoOp::ZoneResetAll, 0),
            req(IoOp::Write, 0, 1),
        ],
    )
    .unwrap();
    let z = &r.ftl_metrics["zns"];
    assert_eq!(z["resets"], 24, "every zone, written or not");
    assert_eq!(z["refused_total"], 0);
    assert_eq!(r.flash.erases.total, 4 + 3);
    read_back(&mut sim);
}

#[test]
fn a_zoned_command_on_a_drive_without_zones_is_an_error_naming_it() {
    let cfg = small_config(32, 16, 0.25, "[ftl]\nname = \"page\"");
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    let e = run(&mut sim, vec![req(IoOp::ZoneAppend, 0, 1)]).unwrap_err().to_string();
    assert!(e.contains("request 1") && e.contains("zone_append") && e.contains("--ftl zns"), "{e}");
}

#[test]
fn a_blkparse_trace_of_zoned_commands_replays_end_to_end() {
    use ftlsim_core::trace::{TraceOptions, TraceSource};
    // Zones of 512 sectors: appends to zone 0, an open and writes of zone 1, a finish, a
    // reset, a reset of all zones, and one append refused (zone 0 is full).
    let lines = [
        "259,1 0 1 0.000001000 9 D ZA 0 + 64 [app]",
        "259,1 0 2 0.000002000 9 D ZO 512 + 0 [app]",
        "259,1 0 3 0.000003000 9 D ZA 0 + 64 [app]",
        "259,1 0 4 0.000004000 9 D WS 512 + 128 [app]",
        "259,1 0 5 0.000005000 9 D ZF 0 + 0 [app]",
        "259,1 0 6 0.000006000 9 D ZA 0 + 8 [app]",
        "259,1 0 7 0.000007000 9 D R 0 + 128 [app]",
        "259,1 0 8 0.000008000 9 D ZR 0 + 0 [app]",
        "259,1 0 9 0.000009000 9 D ZC 512 [app]",
        "259,1 0 10 0.000010000 9 D ZRA 0 + 0 [app]",
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zoned.blkparse");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let mut sim = drive("");
    let sectors = sim.derived().logical_bytes / 512;
    let mut src = TraceSource::open(&path, TraceOptions::default(), sectors, SPP as u32).unwrap();
    let opts =
        RunOptions { replay: Replay::Closed { queue_depth: 1 }, check_every: 1, interval_ns: 0, ..Default::default() };
    let r = sim.run(&mut src, &opts, &mut NoObserver).unwrap();
    sim.check_invariants();
    let z = &r.ftl_metrics["zns"];
    assert_eq!((z["appends"].as_u64(), z["opens"].as_u64(), z["finishes"].as_u64()), (Some(2), Some(1), Some(1)));
    assert_eq!((z["closes"].as_u64(), z["resets"].as_u64()), (Some(1), Some(1 + 24)));
    assert_eq!(refused(&r, "zone_is_full"), 1);
    assert_eq!((r.host.requests, r.host.refused), (9, 1), "the refused append is no completed request");
    assert_eq!(r.host.pages_written, 8 + 8 + 16);
    assert_eq!(r.write_amplification.total, 1.0);
    assert_eq!(z["zones_empty"], 24);
    // Compaction would move the zones: refused, naming the line.
    let mut sim = drive("");
    let compact = TraceOptions { overflow: ftlsim_core::trace::Overflow::Compact, ..TraceOptions::default() };
    let mut src = TraceSource::open(&path, compact, sectors, SPP as u32).unwrap();
    let e = sim.run(&mut src, &opts, &mut NoObserver).unwrap_err().to_string();
    assert!(e.contains("zoned.blkparse:1: field op") && e.contains("--overflow compact"), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, failure_persistence: None, ..Default::default() })]

    /// Any mix of writes at or off the write pointer, across zones, appends, opens, closes,
    /// finishes and resets, at either zone capacity: the zone
    /// invariants hold after every command, each page admitted is programmed once and never
    /// moved, and every page reads back its newest version.
    #[test]
    fn any_command_mix_keeps_the_zone_invariants_and_writes_each_page_once(
        cmds in proptest::collection::vec((0u8..16, 0u64..6, 0u64..ZONE, 1u64..20), 1..120),
        limits in proptest::sample::select(vec!["", "max_open_zones = 2\nmax_active_zones = 3", "max_open_zones = 1\nmax_active_zones = 1"]),
        capacity in proptest::sample::select(vec!["", "zone_capacity_pages = 40"]),
    ) {
        let mut sim = drive(&format!("{limits}\n{capacity}"));
        let mut wp = [0u64; 6];
        let reqs: Vec<_> = cmds
            .iter()
            .map(|&(kind, z, o, n)| match kind {
                // Mostly writes at the pointer as far as it goes, so zones fill.
                0..=5 => {
                    let at = wp[z as usize];
                    let n = n.min(ZONE - at).max(1);
                    wp[z as usize] = (at + n).min(ZONE);
                    req(IoOp::Write, z * ZONE + at.min(ZONE - 1), n)
                }
                6..=7 => req(IoOp::Write, z * ZONE + o, n.min(ZONE)),
                8 => {
                    wp[z as usize] = 0;
                    req(IoOp::Trim, z * ZONE, ZONE)
                }
                9 => req(IoOp::Trim, z * ZONE + o, n),
                10 => req(IoOp::ZoneAppend, z * ZONE, n),
                11 => zone(IoOp::ZoneOpen, z),
                12 => zone(IoOp::ZoneClose, z),
                13 => zone(IoOp::ZoneFinish, z),
                14 => {
                    wp[z as usize] = 0;
                    zone(IoOp::ZoneReset, z)
                }
                _ => req(IoOp::ZoneAppend, z * ZONE + o, n),
            })
            .collect();
        let r = run(&mut sim, reqs).unwrap();
        proptest::prop_assert_eq!(r.flash.programs.total, r.host.pages_written);
        proptest::prop_assert_eq!(r.gc.pages_moved, 0);
        read_back(&mut sim);
    }
}

/// Issue 58: a zoned drive recovers from a cut at any request: its write pointers and states
/// from flash, a torn write's zone finished there, a torn reset finished; the oracle holds
/// after recovery and after the rest of the requests.
#[test]
fn a_cut_at_any_write_or_reset_recovers_every_zone_from_flash() {
    use ftlsim_core::sim::CutAt;
    let stream: Vec<Request> = util::zoned_stream(24, ZONE, 400, 5).map(Result::unwrap).collect();
    let mut torn = std::collections::BTreeMap::new();
    // Every 7th request, and every reset: each a cut as it is dispatched.
    let cuts: Vec<u64> =
        (0..stream.len()).filter(|&i| i % 7 == 0 || stream[i].op == IoOp::ZoneReset).map(|i| i as u64 + 1).collect();
    for &n in &cuts {
        let mut sim = drive("");
        sim.keep_program_stamps();
        sim.precondition(&Precondition { fill: 0.0, ..Precondition::default() }).unwrap();
        let opts = RunOptions {
            replay: Replay::Closed { queue_depth: 1 },
            interval_ns: 0,
            check_every: 1,
            power_cut: Some(CutAt::Request(n)),
            ..RunOptions::default()
        };
        let mut src = stream.clone().into_iter().map(Ok);
        let before = sim.run(&mut src, &opts, &mut NoObserver).unwrap();
        let c = before.power_cut.as_ref().expect("cut");
        assert_eq!(c.oracle_checked_pages, sim.derived().logical_pages as u64);
        *torn.entry(c.torn_operation.unwrap_or("none")).or_insert(0) += 1;
        if c.torn_operation == Some("erase") {
            assert!(c.recovery_blocks_erased > 0, "request {n}: a torn reset is finished by recovery");
        }
        sim.check_invariants();
        let after = RunOptions { power_cut: None, ..opts };
        sim.run(&mut src, &after, &mut NoObserver).unwrap();
        read_back(&mut sim);
    }
    for kind in ["program", "erase", "none"] {
        assert!(torn.get(kind).copied().unwrap_or(0) > 0, "no cut tore {kind}: {torn:?}");
    }
}

/// Issue 58, case 9: a zone management command's length reaches the drive (open, close and
/// finish take none or the zone's, otherwise Invalid Field); a reset of all zones needs no
/// range; any other zoned command without one is a bad line, never dropped.
#[test]
fn zoned_command_lines_are_taken_as_the_docs_say() {
    use ftlsim_core::trace::{TraceOptions, TraceSource};
    let z = ZONE * SPP; // sectors
    let lines = [
        format!("259,1 0 1 0.000001 9 D WS 0 + {}", 8 * SPP),
        format!("259,1 0 2 0.000002 9 D ZO {z} + 8 [app]"),
        format!("259,1 0 3 0.000003 9 D ZC {z} + 16 [app]"),
        "259,1 0 4 0.000004 9 D ZF 0 + 8 [app]".to_string(),
        format!("259,1 0 5 0.000005 9 D ZO {z} + {z} [app]"),
        "259,1 0 6 0.000006 9 D ZRA [app]".to_string(),
        "259,1 0 7 0.000007 9 D ZRA".to_string(),
        format!("259,1 0 8 0.000008 9 D WS 0 + {}", 8 * SPP),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zoned.blkparse");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let mut sim = drive("");
    let sectors = sim.derived().logical_bytes / 512;
    let mut src = TraceSource::open(&path, TraceOptions::default(), sectors, SPP as u32).unwrap();
    let r = sim.run(&mut src, &RunOptions { interval_ns: 0, ..Default::default() }, &mut NoObserver).unwrap();
    assert_eq!(refused(&r, "invalid_field"), 3, "open, close and finish with a length of neither 0 nor a zone");
    let z = &r.ftl_metrics["zns"];
    assert_eq!((z["opens"].as_u64(), z["finishes"].as_u64()), (Some(1), Some(0)));
    assert_eq!(z["resets"], 2 * 24, "both range-less resets of all zones were taken");
    assert_eq!((r.host.requests, r.host.refused, r.host.pages_written), (5, 3, 16));
    // Any other zoned command without its range is a bad line, named.
    for bad in ["ZR [app]", "ZO", "ZA 0 [app]", "ZA 0 + 0 [app]"] {
        std::fs::write(&path, format!("259,1 0 1 0.000001 9 D {bad}\n")).unwrap();
        let opts = TraceOptions { format: Some(ftlsim_core::trace::TraceFormat::Blkparse), ..TraceOptions::default() };
        // The layout's first pass reads every line when the file is opened.
        let e = match TraceSource::open(&path, opts, sectors, SPP as u32) {
            Err(e) => e.to_string(),
            Ok(mut src) => match src.next() {
                Some(Err(e)) => e.to_string(),
                other => panic!("{bad}: {other:?}"),
            },
        };
        assert!(e.contains("zoned.blkparse:1") && (e.contains("sector") || e.contains("count")), "{bad}: {e}");
    }
}
