//! Multichannel SSDs (seed 004): the data oracle through the shared and partitioned buffers
//! under every channel-management mode and FTL, the managers' effects (early GC, cycle
//! filling rounds, preemption), read-modify-write under SYNC, write-through, determinism,
//! and configs refused with the key named.

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::SimError;
use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::multichannel::report::McReport;
use ftlsim_core::multichannel::{ChannelSystem, McOptions};
use ftlsim_core::sim::Precondition;
use rand::{Rng, SeedableRng};

fn config(mode: &str, ftl: &str, planes: u32, buffer_bytes: u64, extra: &str) -> DriveConfig {
    let text = config_text(mode, ftl, planes, buffer_bytes, extra);
    DriveConfig::from_toml(&text, "test config").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn config_text(mode: &str, ftl: &str, planes: u32, buffer_bytes: u64, extra: &str) -> String {
    format!(
        r#"
name = "mc-test"
source = "test"
[geometry]
channels = 4
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = {planes}
blocks_per_plane = 48
pages_per_block = 16
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = 0.2
[timing]
cmd_addr_ns = 0
channel_mb_per_s = 1e9
t_r_ns = 166000
t_prog_ns = 906000
t_bers_ns = 1500000
[ftl]
name = "{ftl}"
gc_threshold_blocks = 2
[ftl.fast]
log_blocks_percent = 12.0
[host]
write_buffer_bytes = {buffer_bytes}
write_buffer_policy = "fifo"
[multichannel]
mode = "{mode}"
spare_threshold = 47
{extra}
"#
    )
}

/// `n` writes of 1-24 sectors at any sector offset (unaligned, so pages are concatenated in
/// the buffer and partial pages read-modify-written), over the first `span` of the space.
fn writes(logical_bytes: u64, n: usize, seed: u64, span: f64) -> Vec<Request> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let sectors = (logical_bytes / 512) as f64 * span;
    (0..n)
        .map(|_| {
            let len = rng.gen_range(1..=24u32);
            let off = rng.gen_range(0..sectors as u64 - u64::from(len));
            Request { arrival_ns: 0, think_ns: 0, device: 0, offset_sector: off, sectors: len, op: IoOp::Write }
        })
        .collect()
}

/// Preconditioning: `fill` of the unit pages, then with `steady` random overwrites.
fn pre(fill: f64, steady: bool, seed: u64) -> Precondition {
    Precondition { fill, steady_state: steady, seed, ..Precondition::default() }
}

fn system(cfg: &DriveConfig) -> ChannelSystem {
    ChannelSystem::new(&crate::util::resolved(cfg), &ftlsim_ftl::build_for, true).unwrap_or_else(|e| panic!("{e}"))
}

fn run(cfg: &DriveConfig, n: usize, seed: u64) -> McReport {
    let mut sys = system(cfg);
    sys.precondition(&pre(1.0, false, seed), &mut NoObserver).unwrap();
    let reqs = writes(sys.logical_bytes(), n, seed, 1.0);
    let opts = McOptions { interval_ns: 10_000_000, check_every: 97, ..McOptions::default() };
    sys.run(&mut reqs.into_iter().map(Ok), &opts, &mut NoObserver).unwrap_or_else(|e| panic!("{e}"))
}

/// The FTLs that run as units of a channel system (the registry's `channel_unit`).
fn channel_units() -> Vec<&'static str> {
    ftlsim_ftl::FTLS.iter().filter(|f| f.capabilities.channel_unit).map(|f| f.name).collect()
}

#[test]
fn oracle_holds_through_every_mode_buffer_and_ftl() {
    for ftl in channel_units() {
        for mode in ["sync", "fi", "gca", "cf"] {
            for (planes, buffer, extra) in
                [(1, 32768, ""), (2, 65536, "buffer = \"partitioned\""), (2, 0, ""), (1, 65536, "preemption = false")]
            {
                if mode == "cf" && extra.contains("preemption") {
                    continue;
                }
                let cfg = config(mode, ftl, planes, buffer, extra);
                let r = run(&cfg, 1500, 7);
                let what = format!("{ftl} {mode} planes={planes} buffer={buffer} {extra}");
                assert_eq!(r.host.requests, 1500, "{what}");
                let t = &r.channel_time;
                let total = t.host_write_share + t.gc_share + t.idle_share;
                assert!((total - 1.0).abs() < 1e-9, "{what}: channel time adds to {total}");
                assert!(r.gc.erases > 0, "{what}: a full drive collects");
            }
        }
    }
}

#[test]
fn bplru_with_padding_keeps_the_oracle() {
    for ftl in ["fast", "page"] {
        let extra = "";
        let mut cfg = config("cf", ftl, 1, 1 << 20, extra);
        cfg.host.write_buffer_policy = ftlsim_core::config::WriteBufferPolicy::Bplru;
        cfg.host.bplru_padding_pages = Some(4);
        let mut sys = system(&cfg);
        sys.precondition(&pre(1.0, false, 3), &mut NoObserver).unwrap();
        // Sequential bursts and random writes.
        let mut reqs = writes(sys.logical_bytes(), 800, 3, 1.0);
        for i in 0..200u64 {
            reqs.push(Request {
                arrival_ns: 0,
                think_ns: 0,
                device: 0,
                offset_sector: i * 64,
                sectors: 64,
                op: IoOp::Write,
            });
        }
        let opts = McOptions { interval_ns: 0, check_every: 31, ..McOptions::default() };
        let r = sys.run(&mut reqs.into_iter().map(Ok), &opts, &mut NoObserver).unwrap();
        assert!(r.buffer.blocks_flushed > 0 && r.buffer.padded_pages > 0, "{ftl}: {:?}", r.buffer);
    }
}

#[test]
fn managers_start_early_gc_and_fi_never_does() {
    let fi = run(&config("fi", "page", 1, 32768, ""), 3000, 11);
    assert_eq!((fi.gc.early_steps, fi.gc.cf_rounds), (0, 0));
    let gca = run(&config("gca", "page", 1, 32768, ""), 3000, 11);
    assert!(gca.gc.early_starts > 0 && gca.gc.early_steps > 0, "{:?}", gca.gc);
    let fast_gca = run(&config("gca", "fast", 1, 32768, ""), 3000, 11);
    assert_eq!(fast_gca.gc.victim_repicks, 0, "hybrid mapping resumes the same merge");
    let cf = run(&config("cf", "page", 1, 32768, ""), 3000, 11);
    assert!(cf.gc.cf_rounds > 0 && cf.gc.cf_followers > 0 && cf.gc.early_steps > 0, "{:?}", cf.gc);
    // Followers stop when the initiator finishes: mid-victim at times.
    assert!(cf.gc.preemptions > 0, "{:?}", cf.gc);
    let fast = run(&config("cf", "fast", 1, 32768, ""), 3000, 11);
    assert!(fast.gc.cf_rounds > 0 && fast.gc.early_steps > 0, "{:?}", fast.gc);
    assert!(fast.gc.ftl["fast_full_merges"].as_u64().unwrap() > 0);
}

#[test]
fn gca_preempts_only_with_preemption_points() {
    let with = run(&config("gca", "fast", 1, 32768, ""), 3000, 5);
    let without = run(&config("gca", "fast", 1, 32768, "preemption = false"), 3000, 5);
    assert!(with.gc.early_steps > 0 && without.gc.early_steps > 0);
    assert!(with.gc.preemptions > 0, "{:?}", with.gc);
    assert_eq!(without.gc.preemptions, 0, "without preemption points early GC runs to the victim's erase");
}

#[test]
fn sync_reads_modifies_and_writes_super_pages() {
    // 4 KiB aligned writes: under SYNC each fills one page of a 4-page super page.
    let reqs: Vec<Request> = (0..200u64)
        .map(|i| Request {
            arrival_ns: 0,
            think_ns: 0,
            device: 0,
            offset_sector: (i * 7919 % 1000) * 8,
            sectors: 8,
            op: IoOp::Write,
        })
        .collect();
    let replay = |mode: &str| {
        let mut sys = system(&config(mode, "page", 1, 0, ""));
        sys.precondition(&pre(1.0, false, 1), &mut NoObserver).unwrap();
        sys.run(&mut reqs.clone().into_iter().map(Ok), &McOptions::default(), &mut NoObserver).unwrap()
    };
    let r = replay("sync");
    assert_eq!(r.drive.units, 1);
    assert_eq!(r.drive.unit_page_bytes, 4 * 4096);
    assert_eq!(r.buffer.rmw_reads, 200, "every write reads its super page first");
    assert!(r.flash.write_amplification >= 4.0, "{}", r.flash.write_amplification);
    // Write-through: a request's response is its own read + program at least.
    assert!(r.performance.response_mean_us >= 166.0 + 906.0);
    let fi = replay("fi");
    assert_eq!(fi.buffer.rmw_reads, 0);
    assert!(fi.performance.iops > r.performance.iops, "independent channels beat SYNC on small writes");
}

#[test]
fn same_config_and_seed_give_identical_reports() {
    for mode in ["gca", "cf"] {
        let cfg = config(mode, "dftl", 2, 65536, "");
        let a = serde_json::to_string(&run(&cfg, 1200, 9)).unwrap();
        let b = serde_json::to_string(&run(&cfg, 1200, 9)).unwrap();
        assert_eq!(a, b, "{mode}");
    }
}

#[test]
fn partitioned_buffer_waits_on_one_full_share() {
    let shared = run(&config("fi", "page", 1, 65536, ""), 2000, 4);
    let parted = run(&config("fi", "page", 1, 65536, "buffer = \"partitioned\""), 2000, 4);
    assert!(parted.buffer.host_blocked_ns >= shared.buffer.host_blocked_ns);
    assert!(
        shared.performance.iops >= parted.performance.iops * 0.99,
        "{} vs {}",
        shared.performance.iops,
        parted.performance.iops
    );
}

#[test]
fn impossible_configs_name_their_key() {
    let bad = |cfg: DriveConfig, key: &str| {
        let e = ftlsim_ftl::resolve(cfg)
            .map_err(SimError::from)
            .and_then(|c| ChannelSystem::new(&c, &ftlsim_ftl::build_for, false))
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains(key), "{e}");
    };
    let refused = |f: &dyn Fn(&mut DriveConfig), key: &str| {
        let mut cfg = config("fi", "page", 1, 32768, "");
        f(&mut cfg);
        let e = ftlsim_core::config::Resolved::validate(cfg).expect_err("refused").to_string();
        assert!(e.contains(key), "{e}");
    };
    refused(
        &|c| {
            let m = c.multichannel.as_mut().unwrap();
            m.mode = ftlsim_core::config::ChannelMode::Cf;
            m.preemption = false;
        },
        "multichannel.preemption",
    );
    // An FTL that cannot be a channel unit: refused by the registry, naming those that can.
    let mut waftl = config("fi", "page", 1, 32768, "");
    waftl.ftl.name = "waftl".into();
    let e = ftlsim_ftl::resolve(waftl).expect_err("refused").to_string();
    assert!(e.contains("ftl.name") && e.contains("page, dftl, fast"), "{e}");
    refused(&|c| c.ftl.gc_victim = ftlsim_core::config::VictimPolicy::Fifo, "ftl.gc_victim");
    // 16 KiB pages on 8 synchronized planes: a 128 KiB unit page.
    refused(
        &|c| {
            c.geometry.page_size_bytes = 16384;
            c.geometry.planes_per_die = 8;
        },
        "geometry.page_size_bytes",
    );
    let mut chips = config("fi", "page", 1, 32768, "");
    chips.geometry.chips_per_channel = 2;
    bad(chips, "geometry.chips_per_channel");
    bad(config("sync", "page", 2, 4096, ""), "host.write_buffer_bytes");
    let text = "[multichannel]\nmode = \"turbo\"";
    let e = config("fi", "page", 1, 0, "")
        .with_overrides(&[("multichannel.mode".into(), "turbo".into())], ftlsim_ftl::resolve)
        .unwrap_err();
    assert!(e.to_string().contains("multichannel.mode"), "{e} {text}");
}

#[test]
fn a_request_beyond_the_drive_is_refused_with_its_number() {
    let cfg = config("fi", "page", 1, 32768, "");
    let mut sys = system(&cfg);
    let past = sys.logical_bytes() / 512;
    let reqs =
        vec![Ok(Request { arrival_ns: 0, think_ns: 0, device: 0, offset_sector: past, sectors: 8, op: IoOp::Write })];
    let e: SimError = sys.run(&mut reqs.into_iter(), &McOptions::default(), &mut NoObserver).unwrap_err();
    assert!(e.to_string().contains("write request 1"), "{e}");
}

mod property {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// Any mode, FTL, plane count, buffer size, policy and sharing, any mix of unaligned
        /// writes: every page reads back its newest version and every FTL stays consistent
        /// (checked every 13 flushes and at the end).
        #[test]
        fn the_oracle_holds_for_any_channel_system(
            mode in prop::sample::select(vec!["sync", "fi", "gca", "cf"]),
            ftl in prop::sample::select(channel_units()),
            planes in 1u32..=2,
            buffer_pages in prop::sample::select(vec![0u64, 8, 16, 64, 256]),
            policy in prop::sample::select(vec!["fifo", "lru", "bplru"]),
            partitioned in any::<bool>(),
            preemption in any::<bool>(),
            // write_due_gc, round_handover, follower_rejoin, fill_steps (bits 0-3; all on mostly).
            switches in prop::sample::select(vec![15u8, 15, 15, 0, 1, 2, 4, 8, 14, 13, 11, 7]),
            // Mostly full drives, so that GC, early GC and preemption run in most cases.
            fill in 0.6f64..=1.0,
            span in 0.3f64..=1.0,
            seed in any::<u64>(),
        ) {
            let sharing = if partitioned { "buffer = \"partitioned\"" } else { "" };
            let preemption_key = if preemption || mode == "cf" { "" } else { "preemption = false" };
            let mut cfg = config(mode, ftl, planes, buffer_pages * 4096 * 8, &format!("{sharing}\n{preemption_key}"));
            cfg.host.write_buffer_policy = match policy {
                "lru" => ftlsim_core::config::WriteBufferPolicy::Lru,
                "bplru" => ftlsim_core::config::WriteBufferPolicy::Bplru,
                _ => ftlsim_core::config::WriteBufferPolicy::Fifo,
            };
            cfg.host.bplru_padding_pages = Some(6);
            mc_set(&mut cfg, |m| {
                m.write_due_gc = switches & 1 != 0;
                m.round_handover = switches & 2 != 0;
                m.follower_rejoin = switches & 4 != 0;
                m.fill_steps = switches & 8 != 0;
            });
            let mut sys = system(&cfg);
            sys.precondition(&pre(fill, seed % 2 == 0, seed), &mut NoObserver).unwrap();
            let reqs = writes(sys.logical_bytes(), 800, seed, span);
            let opts = McOptions { interval_ns: 5_000_000, check_every: 13, ..McOptions::default() };
            let r = sys.run(&mut reqs.into_iter().map(Ok), &opts, &mut NoObserver).unwrap_or_else(|e| panic!("{e}"));
            prop_assert_eq!(r.host.requests, 800);
        }
    }
}

#[test]
fn no_unit_starts_early_gc_above_n_s() {
    // Table I, condition (4) / CF's start condition: N_s = 0 and every unit keeps free blocks.
    for mode in ["gca", "cf"] {
        let mut cfg = config(mode, "page", 1, 32768, "");
        cfg.multichannel.as_mut().unwrap().spare_threshold = 0;
        let r = run(&cfg, 3000, 11);
        assert_eq!((r.gc.early_steps, r.gc.cf_followers), (0, 0), "{mode}: {:?}", r.gc);
        if mode == "cf" {
            assert!(r.gc.cf_rounds > 0, "rounds are initiated, nobody follows");
        }
    }
}

/// One host page (8 sectors) of unit `unit`'s page `unit_lpn` on [`config`]'s four
/// single-plane channels (RAID-0: host page `unit_lpn * 4 + unit`).
fn unit_page(unit: u64, unit_lpn: u64) -> Request {
    Request {
        arrival_ns: 0,
        think_ns: 0,
        device: 0,
        offset_sector: (unit_lpn * 4 + unit) * 8,
        sectors: 8,
        op: IoOp::Write,
    }
}

fn mc_set(cfg: &mut DriveConfig, f: impl FnOnce(&mut ftlsim_core::config::MultichannelConfig)) {
    f(cfg.multichannel.as_mut().expect("a [multichannel] config"));
}

#[test]
fn a_cf_round_starts_from_the_merge_a_write_needs() {
    // After a sequential fill FAST's log is empty. Each logical block gets a run of ten pages
    // in its SW block, then a rewrite of page 2 breaks the run: a partial merge copying six
    // pages, less than the half block that starts a round from a write's path. The log never
    // fills, so that merge is the only GC there is.
    let reqs: Vec<Request> = (0..6u64)
        .flat_map(|lbn| (0..10).chain([2]).flat_map(move |off| (0..4).map(move |u| unit_page(u, lbn * 16 + off))))
        .collect();
    let go = |write_due: bool| {
        let mut cfg = config("cf", "fast", 1, 32768, "");
        mc_set(&mut cfg, |m| m.write_due_gc = write_due);
        let mut sys = system(&cfg);
        sys.precondition(&pre(1.0, false, 1), &mut NoObserver).unwrap();
        let opts = McOptions { interval_ns: 0, check_every: 7, ..McOptions::default() };
        sys.run(&mut reqs.clone().into_iter().map(Ok), &opts, &mut NoObserver).unwrap()
    };
    let with = go(true);
    assert_eq!(with.gc.ftl["fast_partial_merges"].as_u64(), Some(24), "{:?}", with.gc);
    assert_eq!(with.gc.write_due_collections, 24, "each merge ran as a mandatory step before its write");
    assert_eq!(with.gc.mandatory_steps, 24);
    assert!(with.gc.cf_rounds >= 1 && with.gc.cf_write_path_rounds == 0, "{:?}", with.gc);
    let without = go(false);
    assert_eq!(without.gc.ftl["fast_partial_merges"].as_u64(), Some(24));
    assert_eq!((without.gc.write_due_collections, without.gc.mandatory_steps, without.gc.cf_rounds), (0, 0, 0));
}

#[test]
fn mandatory_gc_that_begins_mid_round_carries_the_round_on() {
    let go = |handover: bool| {
        let mut cfg = config("cf", "page", 1, 32768, "");
        mc_set(&mut cfg, |m| m.round_handover = handover);
        run(&cfg, 3000, 11)
    };
    let on = go(true);
    assert!(on.gc.cf_round_extensions > 0, "{:?}", on.gc);
    let off = go(false);
    assert_eq!(off.gc.cf_round_extensions, 0);
    assert!(
        off.gc.cf_rounds > on.gc.cf_rounds,
        "without handover a new round starts instead: {} vs {}",
        off.gc.cf_rounds,
        on.gc.cf_rounds
    );
}

#[test]
fn dftl_followers_reasons_for_leaving_are_counted_in_results_json() {
    let go = |rejoin: bool| {
        let mut cfg = config("cf", "dftl", 1, 32768, "");
        mc_set(&mut cfg, |m| m.follower_rejoin = rejoin);
        run(&cfg, 4000, 11)
    };
    let r = go(true);
    let json = serde_json::to_value(&r).unwrap();
    let exits = &json["gc"]["cf_follower_exits"];
    let keys = ["round_ended", "write_path_merge_ended", "nothing_to_collect", "fell_due"];
    let total: u64 = keys.iter().map(|k| exits[k].as_u64().unwrap_or_else(|| panic!("{k} in {exits}"))).sum();
    // Every participation ends once, those under way at the end (at most one per unit) excepted.
    let begun = r.gc.cf_followers + r.gc.cf_rejoins;
    assert!(total <= begun && begun - total <= r.drive.units as u64, "{exits} of {begun}");
    assert!(r.gc.cf_follower_exits.round_ended > 0, "{exits}");
    // A follower at the GC threshold falls due when its GC opens a block; it goes back after.
    assert!(r.gc.cf_follower_exits.fell_due > 0 && r.gc.cf_rejoins > 0, "{exits}");
    assert_eq!(go(false).gc.cf_rejoins, 0);
}

#[test]
fn idle_time_is_split_by_what_units_waited_for() {
    for mode in ["fi", "gca", "cf"] {
        let r = run(&config(mode, "page", 1, 32768, ""), 3000, 11);
        let t = &r.channel_time;
        let parts = t.idle.no_dirty_pages_share
            + t.idle.buffer_not_full_share
            + t.idle.follower_waiting_share
            + t.idle.other_share
            + t.halted_share;
        assert!((parts - t.idle_share).abs() < 1e-9, "{mode}: {parts} vs {}", t.idle_share);
        if mode == "fi" {
            assert!(t.idle.no_dirty_pages_share > 0.0, "FI idles on buffer contention: {:?}", t.idle);
        }
    }
}

#[test]
fn n_s_is_applied_identically_at_every_fast_log_size() {
    // N_s counts free space before GC (FAST: free log), so one N_s means the same at a 4%,
    // 8% or 9% log; counted as free blocks it depends on the log (the blocks beyond it).
    let followers = |pct: f64, ns: u32, count: ftlsim_core::config::SpareCount| {
        let text = config_text("cf", "fast", 1, 32768, "")
            .replace("log_blocks_percent = 12.0", &format!("log_blocks_percent = {pct:?}"))
            .replace("blocks_per_plane = 48", "blocks_per_plane = 200");
        let mut cfg = DriveConfig::from_toml(&text, "test config").unwrap();
        mc_set(&mut cfg, |m| {
            m.spare_threshold = ns;
            m.spare_count = count;
        });
        run(&cfg, 3000, 11).gc.cf_followers
    };
    use ftlsim_core::config::SpareCount::{FreeBlocks, FreeSpace};
    for pct in [4.0, 8.0, 9.0] {
        assert!(followers(pct, 3, FreeSpace) > 0, "{pct}%: units with at most 3 blocks of free log follow");
        // 160 logical and 40 spare blocks a unit: the free blocks beyond the log are 31 at a
        // 4% log (8 blocks), 23 at 8% and 21 at 9%; N_s = 25 then lets units follow only at
        // the larger logs.
        let by_free_blocks = followers(pct, 25, FreeBlocks);
        assert_eq!(by_free_blocks > 0, pct > 4.0, "{pct}%: {by_free_blocks} followers counting free blocks");
    }
}
