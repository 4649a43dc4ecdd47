//! The block-level FTL and FAST: data oracle under random mixed workloads with heavy merging,
//! then the FAST merge types on hand-built sequences driven through `FlashCtx` directly
//! (switch, partial, full, the seed 004 Sec. 4.2 reuse of a partly written SW block, also
//! when the RW area is full), the block FTL's in-place writes and its one rewrite per logical
//! block per host request, the over-provisioning check and thesis Table 5.3's SRAM figures.

use crate::util;

use ftlsim_core::config::DriveConfig;
use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{FlashCounts, FlashCtx, FlashTime, Ftl, GcNext, ManagedGc};
use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, RunOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use ftlsim_ftl::block::BlockFtl;
use ftlsim_ftl::fast::FastFtl;
use proptest::prelude::*;
use util::{mix, run_oracle, small_config, Mix};

/// The drive side of a case for FTL `ftl`, as the TOML lines it adds to the small config.
fn drive(ftl: &'static str) -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![None, Some(5.0), Some(10.0), Some(20.0)]),
        prop::sample::select(vec!["plane", "die", "device"]),
        prop::sample::select(vec!["read_modify_write", "zero_pad", "merge"]),
        prop::sample::select(vec!["", "multi_plane = true", "serial = true"]),
    )
        .prop_map(move |(log_percent, scope, partial, timing)| {
            let log = log_percent.map_or(String::new(), |p: f64| format!("[ftl.fast]\nlog_blocks_percent = {p}\n"));
            format!(
                "{timing}\n[ftl]\nname = \"{ftl}\"\ngc_scope = \"{scope}\"\n{log}[host]\npartial_write = \"{partial}\"\n\
                 merge_buffer_pages = 8\nqueue_depth = 8\n"
            )
        })
}

fn run_case(ftl: &str, extra: &str, m: &Mix) -> Result<(), String> {
    let (sim, _) = run_oracle(small_config(24, 16, 0.25, extra), m, 2000)?;
    if sim.ftl().name() != ftl {
        return Err(format!("built {} instead of {ftl}", sim.ftl().name()));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn block_every_read_returns_the_newest_version(extra in drive("block"), m in mix()) {
        if let Err(e) = run_case("block", &extra, &m) {
            prop_assert!(false, "{e}\ndrive: {extra}\nmix: {m:?}");
        }
    }

    #[test]
    fn fast_every_read_returns_the_newest_version(extra in drive("fast"), m in mix()) {
        if let Err(e) = run_case("fast", &extra, &m) {
            prop_assert!(false, "{e}\ndrive: {extra}\nmix: {m:?}");
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
        let logical = util::resolved(cfg).derived().logical_pages;
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
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, FlashTime::Timed);
        self.ftl.write(&mut ctx, lpn, self.version).unwrap();
        self.ftl.check_invariants(&self.flash);
    }

    /// Write `n` whole pages from `first` as one run of a host request.
    fn write_run(&mut self, first: u32, n: u32) {
        let versions: Vec<u32> = (self.version + 1..=self.version + n).collect();
        self.version += n;
        self.newest[first as usize..][..n as usize].copy_from_slice(&versions);
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, FlashTime::Timed);
        self.ftl.write_run(&mut ctx, first, &versions).unwrap();
        self.ftl.check_invariants(&self.flash);
    }

    fn trim(&mut self, lpn: u32) {
        self.newest[lpn as usize] = 0;
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, FlashTime::Timed);
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
            let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, FlashTime::Functional);
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

/// FAST on [`cfg`], with `ftl.fast.log_blocks_percent` set when given.
fn fast(log_percent: Option<f64>) -> Rig<FastFtl> {
    let mut c = cfg();
    if let Some(p) = log_percent {
        util::set(&mut c, "ftl.fast.log_blocks_percent", &format!("{p:?}"));
    }
    let f = FastFtl::new(&util::resolved(&c)).unwrap();
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
fn fast_new_stream_with_the_rw_area_full_merges_the_oldest_rw_block_and_reuses_the_sw_block() {
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
    let (erases, free) = (r.erases(), r.ftl.free_blocks());
    r.write(lpn(2, 0));
    // Seed 004 Sec. 4.2 with the RW area full: the oldest RW block is merged (one full merge,
    // of logical block 5) to make room, then the SW block is reused, not partial-merged.
    assert_eq!(r.merges(), (1, 0, 1, 1));
    assert_eq!(r.ftl.gc_counts().pages_moved, 1, "only logical block 5's page");
    assert_eq!(r.erases(), erases + 1, "the RW victim");
    assert_eq!(r.ftl.free_blocks(), free - 1, "victim freed; new data block and new SW block taken");
    r.check_all();
    // Random writes fill the reused block's four free pages without taking a block.
    for lbn in 6..10 {
        r.write(lpn(lbn, 1));
    }
    assert_eq!(r.ftl.free_blocks(), free - 1);
    assert_eq!(r.merges(), (1, 0, 1, 1));
    // The next one merges the reused block: logical blocks 1 (four pages in it, four in its
    // data block) and 6..10 (one page each).
    r.write(lpn(10, 1));
    assert_eq!(r.merges(), (1, 0, 6, 1));
    assert_eq!(r.ftl.gc_counts().pages_moved, 1 + u64::from(PPB) + 4);
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
    // Whole blocks, the page the ninth write supersedes included: it is invalidated only once
    // its successor is on flash (a cut between the merge's erase and the program loses
    // nothing).
    assert_eq!(r.ftl.gc_counts().pages_moved, 4 * u64::from(PPB), "whole blocks");
    assert_eq!(r.erases(), erases + 5, "four old data blocks and the RW victim");
    assert_eq!(r.ftl.gc_counts().foreground_collections, 8);
    r.check_all();
}

#[test]
fn fast_partly_written_sw_block_is_reused_as_an_rw_block() {
    // floor(3.5% of 96) = 3 log blocks: 1 SW + 2 RW slots.
    let mut r = fast(Some(3.5));
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
    // With both RW slots taken, the next partly written SW block (offsets 0 and 1 of logical
    // block 4) is reused too, after the oldest RW block (logical blocks 15..22) is merged.
    r.write(lpn(4, 1));
    r.write(lpn(30, 0));
    assert_eq!(r.merges(), (1, 0, 14, 2));
    assert_eq!(r.ftl.gc_counts().pages_moved, u64::from(PPB) + 5 + 8);
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
    // Offsets 4, 5, 6 and 7 are copied (6 too: the write superseding it is programmed after
    // the merge); 1 was trimmed, then rewritten by the prefix.
    assert_eq!(r.ftl.gc_counts().pages_moved, u64::from(PPB) - 1 + 4);
    r.check_all();
}

#[test]
fn block_ftl_programs_in_place_and_rewrites_on_updates() {
    let c = small_config(24, PPB, 0.25, "[ftl]\nname = \"block\"\n");
    let mut r = Rig::new(&c, BlockFtl::new(&util::resolved(&c)).unwrap());
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
    assert_eq!(r.ftl.mapping_sram_bytes(), 96 * 4); // one block number per physical block
}

#[test]
fn block_ftl_rewrites_a_logical_block_once_per_run() {
    let c = small_config(24, PPB, 0.25, "[ftl]\nname = \"block\"\n");
    let mut r = Rig::new(&c, BlockFtl::new(&util::resolved(&c)).unwrap());
    r.write_run(lpn(2, 0), PPB);
    assert_eq!(r.ftl.extra_metrics()["block_in_place_writes"], u64::from(PPB));
    // Offsets 2..5 of a written block: one rewrite, copying the five other pages.
    r.write_run(lpn(2, 2), 3);
    assert_eq!(r.ftl.extra_metrics()["block_rewrites"], 1);
    assert_eq!(r.ftl.gc_counts().pages_moved, 5);
    assert_eq!(r.counts.erases[1], 1);
    // Across a block boundary: logical block 2 is rewritten once (six pages kept), logical
    // block 3 (never written) is programmed in place.
    r.write_run(lpn(2, 6), 5);
    assert_eq!(r.ftl.extra_metrics()["block_rewrites"], 2);
    assert_eq!(r.ftl.extra_metrics()["block_in_place_writes"], u64::from(PPB) + 3);
    assert_eq!(r.ftl.gc_counts().pages_moved, 5 + 6);
    assert_eq!(r.counts.programs[0], u64::from(PPB) + 3 + 5, "each page of a run is one host program");
    r.check_all();
}

/// The engine hands a request's whole pages to the FTL as one run; partial pages keep the
/// partial-page policy: a request with a partial head, ten whole pages and a partial tail in
/// one logical block costs the block FTL three rewrites, not twelve.
#[test]
fn a_host_request_rewrites_a_block_once_for_its_whole_pages() {
    let extra = "[ftl]\nname = \"block\"\n[host]\npartial_write = \"read_modify_write\"\n";
    let mut sim = ftlsim_ftl::simulator(small_config(24, 16, 0.25, extra), true).unwrap();
    sim.precondition(&Precondition { fill: 1.0, ..Precondition::default() }).unwrap();
    // Logical block 5, offsets 3 (second half) ..= 14 (first half), 8 sectors per page.
    let first = 5 * 16 + 3;
    let write = Request {
        arrival_ns: 0,
        think_ns: 0,
        device: 0,
        offset_sector: first * 8 + 4,
        sectors: 4 + 10 * 8 + 4,
        op: IoOp::Write,
    };
    let read = Request { op: IoOp::Read, ..write };
    let r = sim.run(&mut [Ok(write), Ok(read)].into_iter(), &RunOptions::default(), &mut NoObserver).unwrap();
    assert_eq!(r.host.pages_written, 12);
    assert_eq!(r.host.partial_page_writes, 2);
    assert_eq!(sim.ftl().extra_metrics()["block_rewrites"], 3);
    assert_eq!(r.gc.pages_moved, 15 + 6 + 15, "each partial page keeps 15, the run keeps 6");
    assert_eq!(r.flash.programs.host, 12);
    sim.check_invariants();
}

#[test]
fn over_provisioning_must_hold_the_log_area() {
    let mut c = cfg();
    util::set(&mut c, "ftl.fast.log_blocks_percent", "30.0");
    let e = FastFtl::new(&util::resolved(&c)).err().expect("28 log blocks do not fit in 24 spare blocks").to_string();
    assert!(e.contains("ftl.fast.log_blocks_percent = 30") && e.contains("28 log blocks"), "{e}");
    util::set(&mut c, "ftl.fast.log_blocks_percent", "20.0");
    assert!(FastFtl::new(&util::resolved(&c)).is_ok());
}

/// Table 5.3 (seed 001): BFTL 16.00 KB of map and 0.50 KB of GC metadata; FAST with "3%"
/// log blocks 16 KB + 256 KB = 272.00 KB and 4.50 KB, which is 128 log blocks (3.125%).
#[test]
fn sram_reproduces_thesis_table_5_3() {
    const KB: u64 = 1024;
    let gc_bytes = |m: serde_json::Map<String, serde_json::Value>| m["sram_gc_metadata_bytes"].as_u64().unwrap();
    let mut thesis = ftlsim_ftl::presets::load("thesis").unwrap();
    let b = BlockFtl::new(&util::resolved(&thesis)).unwrap();
    assert_eq!(b.mapping_sram_bytes(), 16 * KB);
    assert_eq!(gc_bytes(b.extra_metrics()), KB / 2);
    // The preset's default 3%: floor(0.03 x 4,096) = 122 log blocks of 256 pages, 8 B each.
    let f = FastFtl::new(&util::resolved(&thesis)).unwrap();
    assert_eq!(f.log_blocks(), 122);
    assert_eq!(f.mapping_sram_bytes(), 16 * KB + 122 * 2 * KB);
    assert_eq!(gc_bytes(f.extra_metrics()), KB / 2 + 122 * 32);
    // 128 log blocks need one block more than the preset's 128 spare blocks (the merge block).
    util::set(&mut thesis, "ftl.fast.log_blocks_percent", "3.125");
    let e = FastFtl::new(&util::resolved(&thesis)).err().expect("no room for the merge block").to_string();
    assert!(e.contains("ftl.fast.log_blocks_percent = 3.125") && e.contains("128 log blocks"), "{e}");
    thesis.overprovisioning.share = Some(0.0315);
    let f = FastFtl::new(&util::resolved(&thesis)).unwrap();
    assert_eq!(f.log_blocks(), 128);
    assert_eq!(f.mapping_sram_bytes(), 272 * KB);
    assert_eq!(gc_bytes(f.extra_metrics()), 4 * KB + KB / 2);
    // The small drive: 96 blocks of 8 pages, 2 log blocks.
    let f = FastFtl::new(&util::resolved(&cfg())).unwrap();
    assert_eq!(f.mapping_sram_bytes(), 96 * 4 + 2 * u64::from(PPB) * 8);
}

/// FAST's spare blocks for seed 004's N_s ([`ManagedGc::spare_blocks`]).
fn spare(r: &Rig<FastFtl>) -> u64 {
    r.ftl.spare_blocks(&r.flash)
}

#[test]
fn fast_spare_blocks_are_its_free_log_space_whatever_the_log_size() {
    // N_s must mean the same at every log size (seed 004 Table I, L168): a unit with k spare
    // blocks can take k blocks of random writes before it must merge.
    for pct in [4.0, 8.0, 9.0] {
        let mut r = fast(Some(pct));
        let max_rw = u64::from(r.ftl.log_blocks() - 1);
        assert!(max_rw >= 2, "{pct}%: {max_rw} RW blocks");
        for lbn in 0..8 {
            for off in 0..PPB {
                r.write(lpn(lbn, off));
            }
        }
        assert_eq!(spare(&r), max_rw, "{pct}%: switch merges leave the log empty");
        // Distinct pages at offsets 1.. (offset 0 would start a sequential stream).
        let mut pages = (0..8).flat_map(|lbn| (1..PPB).map(move |off| lpn(lbn, off)));
        for filled in 1..=max_rw {
            for _ in 0..PPB {
                r.write(pages.next().expect("enough distinct pages"));
            }
            assert_eq!(spare(&r), max_rw - filled, "{pct}%: {filled} RW blocks filled");
            assert_eq!(r.ftl.gc_due(), filled == max_rw, "{pct}%: due exactly when no spare block is left");
        }
        r.check_all();
    }
}

#[test]
fn fast_a_write_breaking_the_sw_run_arms_its_partial_merge_as_a_gc_step() {
    let mut r = fast(Some(8.0));
    for off in 0..PPB {
        r.write(lpn(2, off));
    }
    for off in 0..3 {
        r.write(lpn(2, off));
    }
    assert_eq!(r.merges(), (1, 0, 0, 0));
    assert!(!r.ftl.gc_due());
    assert!(!r.ftl.gc_due_for(&r.flash, lpn(2, 3)), "the run's next page appends");
    assert!(!r.ftl.gc_due_for(&r.flash, lpn(5, 3)), "another logical block goes to the RW log");
    assert!(!r.ftl.gc_due_for(&r.flash, lpn(2, 0)), "a new stream reuses the SW block, no merge");
    assert!(!r.ftl.gc_due());
    assert!(r.ftl.gc_due_for(&r.flash, lpn(2, 1)), "a rewrite inside the run breaks it");
    assert!(r.ftl.gc_due());
    assert_eq!(r.ftl.gc_next(&r.flash, 0), GcNext::Copy);
    let mut ctx = FlashCtx::new(&mut r.flash, &mut r.ops, &mut r.counts, FlashTime::Timed);
    assert!(r.ftl.gc_step(&mut ctx, 0).unwrap());
    assert_eq!(r.merges(), (1, 1, 0, 0), "the step is the partial merge");
    assert_eq!(r.ftl.gc_counts().pages_moved, u64::from(PPB - 3));
    assert!(!r.ftl.gc_due(), "armed once");
    r.write(lpn(2, 1));
    assert_eq!(r.merges(), (1, 1, 0, 0), "the write itself merges nothing");
    r.check_all();
}
