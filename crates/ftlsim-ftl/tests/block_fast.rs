//! The block-level FTL and FAST: data oracle under random mixed workloads with heavy merging,
//! then the FAST merge types on hand-built sequences driven through `FlashCtx` directly
//! (switch, partial, full, the seed 004 Sec. 4.2 reuse of a partly written SW block), the
//! block FTL's in-place writes and rewrites, and the over-provisioning check.

mod util;

use ftlsim_core::config::DriveConfig;
use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{FlashCounts, FlashCtx, Ftl};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, RunOptions, Simulator};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use ftlsim_ftl::block::BlockFtl;
use ftlsim_ftl::fast::FastFtl;
use proptest::prelude::*;
use util::{read_all, small_config};

#[derive(Debug, Clone)]
struct Case {
    seed: u64,
    log_share: Option<f64>,
    scope: &'static str,
    partial: &'static str,
    timing: &'static str,
    open_loop: bool,
    read: f64,
    trim: f64,
    pattern: &'static str,
    fill: f64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<u64>(),
        prop::sample::select(vec![None, Some(0.05), Some(0.1), Some(0.2)]),
        prop::sample::select(vec!["plane", "die", "device"]),
        prop::sample::select(vec!["read_modify_write", "zero_pad", "merge"]),
        prop::sample::select(vec!["", "multi_plane = true", "serial = true"]),
        (any::<bool>(), 0.0..0.5f64, 0.0..0.15f64),
        (prop::sample::select(vec!["uniform", "hotcold:0.8:0.2", "zipf:0.9", "sequential"]), 0.0..1.0f64),
    )
        .prop_map(|(seed, log_share, scope, partial, timing, (open_loop, read, trim), (pattern, fill))| Case {
            seed,
            log_share,
            scope,
            partial,
            timing,
            open_loop,
            read,
            trim,
            pattern,
            fill,
        })
}

fn run_case(ftl: &str, c: &Case) -> Result<(), String> {
    let extra = format!(
        "{}\n[ftl]\nname = \"{ftl}\"\ngc_scope = \"{}\"\n[host]\npartial_write = \"{}\"\nmerge_buffer_pages = 8\nqueue_depth = 8\n",
        c.timing, c.scope, c.partial,
    );
    let cfg = small_config(24, 16, 0.25, &extra);
    let logical = cfg.derive().map_err(|e| e.to_string())?.logical_pages;
    let mut sim = match (ftl, c.log_share) {
        ("fast", Some(share)) => {
            let f = FastFtl::with_log_share(&cfg, share).map_err(|e| e.to_string())?;
            Simulator::new(cfg, Box::new(f), true)
        }
        _ => ftlsim_ftl::simulator(cfg, true),
    }
    .map_err(|e| e.to_string())?;
    sim.precondition(&Precondition {
        fill: c.fill,
        steady_state: c.fill > 0.5,
        max_overwrite_passes: 1.0,
        seed: c.seed,
    })
    .map_err(|e| e.to_string())?;
    let arrival = if c.open_loop { "poisson:300us" } else { "closed:8" };
    let spec = WorkloadSpec::parse(&format!(
        "pattern={},read={},trim={},size=512@1|4k@4|8k@2|12k@1|64k@0.3,arrival={arrival},requests=2000,align=512",
        c.pattern, c.read, c.trim
    ))
    .map_err(|e| e.to_string())?;
    let logical_bytes = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, logical_bytes, c.seed).map_err(|e| e.to_string())?.map(Ok);
    let replay = if c.open_loop { Replay::Open { time_scale: 1.0 } } else { Replay::Closed { queue_depth: 8 } };
    let opts = RunOptions { replay, check_every: 61, interval_ns: 1_000_000, ..RunOptions::default() };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).map_err(|e| e.to_string())?;
    if r.host.requests != 2000 {
        return Err(format!("{} of 2000 requests completed", r.host.requests));
    }
    sim.check_invariants();
    if sim.ftl().name() != ftl {
        return Err(format!("built {} instead of {ftl}", sim.ftl().name()));
    }
    let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
    sim.run(&mut read_all(logical), &back, &mut NoObserver).map_err(|e| e.to_string())?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn block_every_read_returns_the_newest_version(c in case()) {
        if let Err(e) = run_case("block", &c) {
            prop_assert!(false, "{e}\ncase: {c:?}");
        }
    }

    #[test]
    fn fast_every_read_returns_the_newest_version(c in case()) {
        if let Err(e) = run_case("fast", &c) {
            prop_assert!(false, "{e}\ncase: {c:?}");
        }
    }
}

/// Random overwrites of a full drive merge a lot and keep the books straight.
#[test]
fn heavy_random_overwrites_merge_and_account() {
    for name in ["block", "fast"] {
        let cfg = small_config(24, 16, 0.25, &format!("[ftl]\nname = \"{name}\"\n"));
        let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
        sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed: 1, ..Precondition::default() }).unwrap();
        assert!(sim.ftl().gc_counts().pages_moved > 0, "{name}: preconditioning moved pages");
        let spec = WorkloadSpec::parse("read=0.2,requests=3000,qd=8").unwrap();
        let logical_bytes = sim.derived().logical_bytes;
        let mut gen = Generator::new(&spec, logical_bytes, 9).unwrap().map(Ok);
        let r = sim.run(&mut gen, &RunOptions { check_every: 499, ..RunOptions::default() }, &mut NoObserver).unwrap();
        assert!(r.gc.collections > 100, "{name}: collections {}", r.gc.collections);
        assert_eq!(r.flash.programs.gc, r.gc.pages_moved, "{name}: every move is one controller program");
        assert_eq!(r.flash.reads.gc, r.gc.pages_moved, "{name}: every move reads its source");
        assert_eq!(r.flash.copybacks.gc, 0, "{name}: no copy-back");
        let m = sim.ftl().extra_metrics();
        assert_eq!(m["pages_moved"].as_u64().unwrap(), r.gc.pages_moved, "{name}: metrics cover the run");
        assert!(r.gc.pages_moved < sim.ftl().gc_counts().pages_moved, "{name}: preconditioning not counted");
        if name == "fast" {
            let merges: u64 = ["fast_switch_merges", "fast_partial_merges", "fast_full_merges"]
                .iter()
                .map(|k| m[*k].as_u64().unwrap())
                .sum();
            assert_eq!(merges, r.gc.foreground_collections, "every merge is one collection");
            assert!(m["fast_full_merges"].as_u64().unwrap() > 100, "{m:?}");
        }
        sim.check_invariants();
    }
}

/// An FTL driven directly, with a model of the newest version of every page.
struct Rig<F: Ftl> {
    flash: FlashArray,
    ops: Vec<ftlsim_core::scheduler::FlashOp>,
    counts: FlashCounts,
    ftl: F,
    newest: Vec<u32>,
    version: u32,
}

impl<F: Ftl> Rig<F> {
    fn new(cfg: &DriveConfig, ftl: F) -> Rig<F> {
        let logical = cfg.derive().unwrap().logical_pages;
        Rig {
            flash: FlashArray::new(&cfg.geometry, false),
            ops: Vec::new(),
            counts: FlashCounts::default(),
            ftl,
            newest: vec![0; logical as usize],
            version: 0,
        }
    }

    fn write(&mut self, lpn: u32) {
        self.version += 1;
        self.newest[lpn as usize] = self.version;
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, true);
        self.ftl.write(&mut ctx, lpn, self.version).unwrap();
        self.ftl.check_invariants(&self.flash);
    }

    fn trim(&mut self, lpn: u32) {
        self.newest[lpn as usize] = 0;
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, true);
        self.ftl.trim(&mut ctx, lpn).unwrap();
        self.ftl.check_invariants(&self.flash);
    }

    fn metric(&self, key: &str) -> u64 {
        self.ftl.extra_metrics()[key].as_u64().unwrap_or_else(|| panic!("{key}"))
    }

    /// (switch, partial, full, reuses) merges so far.
    fn merges(&self) -> (u64, u64, u64, u64) {
        (
            self.metric("fast_switch_merges"),
            self.metric("fast_partial_merges"),
            self.metric("fast_full_merges"),
            self.metric("fast_sw_reuses"),
        )
    }

    fn erases(&self) -> u64 {
        self.counts.erases.iter().sum()
    }

    fn check_all(&mut self) {
        self.flash.check_invariants();
        self.ftl.check_invariants(&self.flash);
        for lpn in 0..self.newest.len() as u32 {
            let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, false);
            let got = self.ftl.read(&mut ctx, lpn).unwrap();
            let want = self.newest[lpn as usize];
            assert_eq!(got, (want != 0).then_some(want), "lpn {lpn}");
        }
    }
}

const PPB: u32 = 8;

/// 4 planes x 24 blocks of 8 pages, 25% over-provisioning: 72 logical blocks. With the
/// default 3% log share the log area is 2 blocks (1 SW + 1 RW).
fn cfg() -> DriveConfig {
    small_config(24, PPB, 0.25, "[ftl]\nname = \"fast\"\n")
}

fn fast(share: Option<f64>) -> Rig<FastFtl> {
    let c = cfg();
    let f = match share {
        Some(s) => FastFtl::with_log_share(&c, s).unwrap(),
        None => FastFtl::new(&c).unwrap(),
    };
    Rig::new(&c, f)
}

fn lpn(lbn: u32, off: u32) -> u32 {
    lbn * PPB + off
}

#[test]
fn fast_full_sequential_write_is_one_switch_merge() {
    let mut r = fast(None);
    assert_eq!(r.ftl.log_blocks(), 2);
    for off in 0..PPB {
        r.write(lpn(3, off));
    }
    assert_eq!(r.merges(), (1, 0, 0, 0));
    assert_eq!(r.ftl.gc_counts().pages_moved, 0, "a switch merge moves nothing");
    assert_eq!(r.ftl.gc_counts().foreground_collections, 1);
    assert_eq!(r.erases(), 0, "no old data block to erase");
    // Again: the old data block is erased by the second switch merge.
    for off in 0..PPB {
        r.write(lpn(3, off));
    }
    assert_eq!(r.merges(), (2, 0, 0, 0));
    assert_eq!(r.erases(), 1);
    assert_eq!(r.counts.programs[0], 2 * u64::from(PPB), "only host programs");
    r.check_all();
}

#[test]
fn fast_prefix_then_new_stream_is_a_partial_merge_when_no_rw_slot_is_free() {
    let mut r = fast(None);
    for off in 0..PPB {
        r.write(lpn(1, off));
    }
    // Take the only RW slot with a random write.
    r.write(lpn(5, 3));
    // A 4-page prefix of logical block 1 in the SW block, then a new stream.
    for off in 0..4 {
        r.write(lpn(1, off));
    }
    assert_eq!(r.merges(), (1, 0, 0, 0));
    let erases = r.erases();
    r.write(lpn(2, 0));
    assert_eq!(r.merges(), (1, 1, 0, 0), "partial merge, no reuse without a free RW slot");
    assert_eq!(r.ftl.gc_counts().pages_moved, 4, "offsets 4..8 copied from the old data block");
    assert_eq!(r.erases(), erases + 1, "the old data block is erased");
    assert_eq!(r.ftl.gc_counts().foreground_collections, 2);
    r.check_all();
}

#[test]
fn fast_random_updates_filling_the_rw_area_cause_full_merges() {
    let mut r = fast(None);
    for lbn in 0..4 {
        for off in 0..PPB {
            r.write(lpn(lbn, off));
        }
    }
    assert_eq!(r.merges(), (4, 0, 0, 0));
    // Eight random updates over four logical blocks fill the single RW block.
    for lbn in 0..4 {
        r.write(lpn(lbn, 1));
        r.write(lpn(lbn, 5));
    }
    assert_eq!(r.merges(), (4, 0, 0, 0), "the RW block absorbs them");
    let erases = r.erases();
    // The ninth has no room: the RW block is merged, one full merge per logical block.
    r.write(lpn(0, 6));
    assert_eq!(r.merges(), (4, 0, 4, 0));
    assert_eq!(r.ftl.gc_counts().pages_moved, 4 * u64::from(PPB) - 1, "whole blocks but the superseded page");
    assert_eq!(r.erases(), erases + 5, "four old data blocks and the RW victim");
    assert_eq!(r.ftl.gc_counts().foreground_collections, 8);
    r.check_all();
}

#[test]
fn fast_partly_written_sw_block_is_reused_as_an_rw_block() {
    // floor(3.5% of 96) = 3 log blocks: 1 SW + 2 RW slots.
    let mut r = fast(Some(0.035));
    assert_eq!(r.ftl.log_blocks(), 3);
    for off in 0..PPB {
        r.write(lpn(3, off));
    }
    for off in 0..3 {
        r.write(lpn(3, off));
    }
    let free = r.ftl.free_blocks();
    // A new stream while the SW block holds 3 pages of logical block 3: seed 004 Sec. 4.2.
    r.write(lpn(4, 0));
    assert_eq!(r.merges(), (1, 0, 0, 1), "reused, not merged");
    assert_eq!(r.ftl.gc_counts().pages_moved, 0);
    assert_eq!(r.ftl.free_blocks(), free - 1, "only the new SW block was taken");
    // Random writes fill the reused block's five free pages before a new RW block opens.
    for (i, lbn) in [10, 11, 12, 13, 14].into_iter().enumerate() {
        r.write(lpn(lbn, 2 + i as u32 % 3));
    }
    assert_eq!(r.ftl.free_blocks(), free - 1, "the reused block took them");
    r.check_all();
    r.write(lpn(15, 1));
    assert_eq!(r.ftl.free_blocks(), free - 2, "then a new RW block opens");
    // Fill it, then one more: the oldest RW block (the reused SW block) is full-merged.
    for lbn in 16..23 {
        r.write(lpn(lbn, 1));
    }
    assert_eq!(r.merges(), (1, 0, 0, 1));
    r.write(lpn(23, 1));
    // Logical blocks 3 (its reused SW pages) and 10..14 had pages in the victim.
    assert_eq!(r.merges(), (1, 0, 6, 1));
    assert_eq!(r.ftl.gc_counts().pages_moved, u64::from(PPB) + 5, "block 3 whole, one page each of 10..14");
    r.check_all();
    // With both RW slots taken, the next partly written SW block is partial-merged instead.
    r.write(lpn(4, 1));
    r.write(lpn(30, 0));
    assert_eq!(r.merges(), (1, 1, 6, 1));
    r.check_all();
}

#[test]
fn fast_sw_block_with_a_hole_is_full_merged_and_broken_sequences_merge_it() {
    let mut r = fast(None);
    for off in 0..PPB {
        r.write(lpn(7, off));
    }
    // A TRIM leaves a hole in the SW block: when it fills, a full merge (not a switch).
    for off in 0..3 {
        r.write(lpn(7, off));
    }
    r.trim(lpn(7, 1));
    for off in 3..PPB {
        r.write(lpn(7, off));
    }
    assert_eq!(r.merges(), (1, 0, 1, 0));
    assert_eq!(r.ftl.gc_counts().pages_moved, u64::from(PPB) - 1);
    r.check_all();
    // A write that breaks the sequence merges the SW block (partial) and goes to an RW block.
    for off in 0..4 {
        r.write(lpn(7, off));
    }
    r.write(lpn(7, 6));
    assert_eq!(r.merges(), (1, 1, 1, 0));
    // Offsets 4, 5 and 7 are copied; 6 was superseded and dropped first; 1 was trimmed,
    // then rewritten by the prefix.
    assert_eq!(r.ftl.gc_counts().pages_moved, u64::from(PPB) - 1 + 3);
    r.check_all();
}

#[test]
fn block_ftl_programs_in_place_and_rewrites_on_updates() {
    let c = small_config(24, PPB, 0.25, "[ftl]\nname = \"block\"\n");
    let mut r = Rig::new(&c, BlockFtl::new(&c).unwrap());
    let free = r.ftl.free_blocks();
    r.write(lpn(2, 0));
    r.write(lpn(2, 3));
    r.write(lpn(2, 4));
    assert_eq!(r.flash.wasted_pages(), 2, "offsets 1 and 2 skipped");
    assert_eq!(r.ftl.gc_counts().foreground_collections, 0, "erased offsets are programmed in place");
    assert_eq!(r.ftl.free_blocks(), free - 1);
    r.write(lpn(2, 3));
    assert_eq!(r.ftl.gc_counts().foreground_collections, 1, "an update rewrites the block");
    assert_eq!(r.ftl.gc_counts().pages_moved, 2, "offsets 0 and 4 copied");
    assert_eq!(r.counts.programs[1], 2);
    assert_eq!(r.counts.programs[0], 4);
    assert_eq!(r.counts.erases[1], 1);
    assert_eq!(r.ftl.free_blocks(), free - 1);
    r.trim(lpn(2, 0));
    r.write(lpn(2, 1));
    assert_eq!(r.ftl.gc_counts().pages_moved, 4, "the trimmed page is not copied");
    assert_eq!(r.ftl.extra_metrics()["block_rewrites"], 2);
    r.check_all();
    assert_eq!(r.ftl.mapping_sram_bytes(), 72 * 4);
}

#[test]
fn over_provisioning_must_hold_the_log_area() {
    let c = cfg();
    let e = FastFtl::with_log_share(&c, 0.3).err().expect("28 log blocks do not fit in 24 spare blocks").to_string();
    assert!(e.contains("overprovisioning") && e.contains("log blocks"), "{e}");
    assert!(FastFtl::with_log_share(&c, 0.2).is_ok());
    let f = FastFtl::new(&c).unwrap();
    assert_eq!(f.mapping_sram_bytes(), 72 * 4 + 2 * u64::from(PPB) * 4);
    // The thesis chip: 3,968 logical blocks and floor(3% x 4,096) = 122 log blocks.
    let thesis = ftlsim_core::presets::load("thesis").unwrap();
    let f = FastFtl::new(&thesis).unwrap();
    assert_eq!(f.log_blocks(), 122);
    assert_eq!(f.mapping_sram_bytes(), 3968 * 4 + 122 * 256 * 4);
    assert_eq!(BlockFtl::new(&thesis).unwrap().mapping_sram_bytes(), 3968 * 4);
}
