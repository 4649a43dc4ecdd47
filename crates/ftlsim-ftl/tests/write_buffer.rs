//! The host DRAM write buffer (PCFTL Sec. 3.1, Fig. 4): LRU order, absorbed updates, read
//! hits without flash reads, evictions through the FTL, and the data oracle with constant
//! evictions across page-level and demand-based FTLs.

use crate::util;

use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, Report, RunOptions, Simulator};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use proptest::prelude::*;
use util::{mix, run_oracle, small_config, Mix};

fn req(op: IoOp, page: u64) -> Request {
    Request { arrival_ns: 0, think_ns: 0, device: 0, offset_sector: page * 8, sectors: 8, op }
}

fn sim_with(buffer_pages: u64, ftl: &str) -> Simulator {
    let extra = format!("[ftl]\nname = \"{ftl}\"\n[host]\nwrite_buffer_bytes = {}", buffer_pages * 4096);
    ftlsim_ftl::simulator(small_config(32, 16, 0.2, &extra), true).unwrap()
}

fn run(sim: &mut Simulator, reqs: Vec<Request>) -> Report {
    let opts = RunOptions { replay: Replay::Closed { queue_depth: 1 }, interval_ns: 0, ..RunOptions::default() };
    let r = sim.run(&mut reqs.into_iter().map(Ok), &opts, &mut NoObserver).unwrap();
    sim.check_invariants();
    r
}

fn buffered(sim: &Simulator) -> Vec<u32> {
    sim.write_buffer().unwrap().iter_recent().map(|e| e.0).collect()
}

#[test]
fn lru_evicts_the_least_recently_written_page() {
    let mut sim = sim_with(2, "page");
    let r = run(&mut sim, vec![req(IoOp::Write, 1), req(IoOp::Write, 2), req(IoOp::Write, 3)]);
    let wb = r.write_buffer.as_ref().unwrap();
    assert_eq!(wb.capacity_pages, 2);
    assert_eq!(wb.evictions, 1);
    assert_eq!(r.flash.programs.host, 1, "only the victim is programmed");
    assert_eq!(buffered(&sim), vec![3, 2], "page 1 was evicted");
    // An update of a cached page moves it to the head: 2 is now newest, so 3 leaves next.
    let r = run(&mut sim, vec![req(IoOp::Write, 2), req(IoOp::Write, 4)]);
    let wb = r.write_buffer.as_ref().unwrap();
    assert_eq!((wb.write_hits, wb.evictions, wb.pages_buffered_end), (1, 1, 2));
    assert_eq!(buffered(&sim), vec![4, 2]);
    assert_eq!(serde_json::to_value(r.write_buffer.unwrap().policy).unwrap(), "lru");
}

#[test]
fn absorbed_writes_do_no_flash_work() {
    let mut sim = sim_with(4, "page");
    let r = run(&mut sim, (0..20).map(|i| req(IoOp::Write, i % 3)).collect());
    let wb = r.write_buffer.unwrap();
    assert_eq!(r.flash.programs.host + r.flash.programs.gc + r.flash.programs.mapping, 0);
    assert_eq!(r.flash.reads.host, 0);
    assert_eq!((wb.write_inserts, wb.write_hits, wb.evictions), (3, 17, 0));
    assert!((wb.write_hit_ratio - 17.0 / 20.0).abs() < 1e-6);
    assert_eq!(r.write_amplification.total, 0.0);
}

#[test]
fn read_hits_are_served_without_flash_reads() {
    let mut sim = sim_with(2, "page");
    // 1 goes to flash, 2 and 3 stay buffered.
    run(&mut sim, vec![req(IoOp::Write, 1), req(IoOp::Write, 2), req(IoOp::Write, 3)]);
    let r = run(&mut sim, vec![req(IoOp::Read, 2), req(IoOp::Read, 3), req(IoOp::Read, 3)]);
    assert_eq!(r.write_buffer.as_ref().unwrap().read_hits, 3);
    assert_eq!(r.flash.reads.host, 0, "read hits need no flash read");
    let r = run(&mut sim, vec![req(IoOp::Read, 1)]);
    assert_eq!(r.write_buffer.as_ref().unwrap().read_hits, 0);
    assert_eq!(r.flash.reads.host, 1, "a miss reads flash");
    // Reads leave the order alone: 2 is still the victim.
    assert_eq!(buffered(&sim), vec![3, 2]);
}

#[test]
fn trims_drop_buffered_pages_and_partial_pages_enter_whole() {
    let mut sim = sim_with(2, "page");
    let partial =
        Request { arrival_ns: 0, think_ns: 0, device: 0, offset_sector: 8 * 5 + 2, sectors: 3, op: IoOp::Write };
    let r = run(&mut sim, vec![req(IoOp::Write, 1), partial, req(IoOp::Trim, 1), req(IoOp::Read, 1)]);
    let wb = r.write_buffer.unwrap();
    assert_eq!((wb.partial_pages, wb.trimmed_pages, wb.evictions, wb.read_hits), (1, 1, 0, 0));
    assert_eq!(r.host.partial_page_writes, 1);
    assert_eq!(r.host.zero_padded_sectors, 5);
    assert_eq!(r.host.rmw_reads, 0);
    assert_eq!((r.host.trimmed_page_reads, r.host.unmapped_page_reads), (1, 0), "the trimmed page reads as zeros");
    assert_eq!(buffered(&sim), vec![5]);
}

#[test]
fn evictions_wait_on_the_write_path() {
    // Capacity 1: every new page evicts the previous one, so each write after the first
    // waits for a program (tPROG = 200 us).
    let mut sim = sim_with(1, "page");
    let r = run(&mut sim, (0..10).map(|i| req(IoOp::Write, i)).collect());
    assert_eq!(r.write_buffer.as_ref().unwrap().evictions, 9);
    assert_eq!(r.flash.programs.host, 9);
    assert!(r.response_time.write.p50_ns >= 200_000, "{:?}", r.response_time.write);
}

#[test]
fn write_buffer_too_small_is_rejected_naming_the_key() {
    let mut cfg = small_config(32, 16, 0.2, "");
    cfg.host.write_buffer_bytes = Some(1000);
    let e = ftlsim_ftl::simulator(cfg, true).err().expect("a buffer below one page is an error").to_string();
    assert!(e.contains("host.write_buffer_bytes = 1000"), "{e}");
}

fn report_json(seed: u64) -> String {
    let cfg = small_config(32, 16, 0.2, "[host]\nwrite_buffer_bytes = 65536");
    let mut sim = ftlsim_ftl::simulator(cfg, false).unwrap();
    sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed, ..Precondition::default() }).unwrap();
    let spec = WorkloadSpec::parse("qd=8,read=0.3,pattern=zipf:0.9,size=2k|4k|16k,requests=4000").unwrap();
    let bytes = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, bytes, seed).unwrap().map(Ok);
    let opts = RunOptions { replay: Replay::Closed { queue_depth: 8 }, ..RunOptions::default() };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).unwrap();
    let wb = r.write_buffer.as_ref().unwrap();
    assert!(wb.evictions > 0 && wb.write_hits > 0 && wb.read_hits > 0, "{wb:?}");
    serde_json::to_string(&r).unwrap()
}

#[test]
fn same_seed_gives_the_same_report() {
    assert_eq!(report_json(5), report_json(5));
    assert_ne!(report_json(5), report_json(6));
}

fn run_case(ftl: &str, policy: &str, buffer_pages: u32, m: &Mix) -> Result<(), String> {
    // BPLRU pads a leaving block of 4 or more buffered pages (of 16) with its other pages.
    let padding = if policy == "bplru" { "\nbplru_padding_pages = 4" } else { "" };
    let extra = format!(
        "[ftl]\nname = \"{ftl}\"\n[host]\nqueue_depth = 8\nwrite_buffer_bytes = {}\nwrite_buffer_policy = \"{policy}\"{padding}",
        u64::from(buffer_pages) * 4096
    );
    let (sim, r) = run_oracle(small_config(24, 16, 0.3, &extra), m, 2000)?;
    sim.check_invariants();
    sim.write_buffer().ok_or("no write buffer")?;
    // The buffer must have filled and evicted. (Its fill at the end says less: a trim of a
    // buffered page near the end leaves it short.)
    let evictions = r.write_buffer.as_ref().map_or(0, |w| w.evictions);
    if m.read < 0.4 && m.trim < 0.1 && evictions == 0 {
        return Err(format!("no eviction from a {buffer_pages}-page buffer: no eviction pressure"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// A small buffer (1-16 pages) keeps evicting; every read, and the read-back of every
    /// page at the end (buffered pages included), returns the newest version.
    #[test]
    fn every_read_returns_the_newest_version_through_the_buffer(
        ftl in prop::sample::select(vec!["page", "dftl", "scftl"]),
        policy in prop::sample::select(vec!["lru", "fifo", "bplru"]),
        buffer_pages in 1u32..=16,
        m in mix(),
    ) {
        if let Err(e) = run_case(ftl, policy, buffer_pages, &m) {
            prop_assert!(false, "{e}\nftl: {ftl}, policy: {policy}, buffer pages: {buffer_pages}\nmix: {m:?}");
        }
    }
}

/// BPLRU (seed 004's comparison): a block leaves whole when the buffer is full, and one with
/// enough buffered pages is padded with its other pages read from flash, so the FTL gets the
/// whole block in order.
#[test]
fn bplru_evicts_and_pads_whole_blocks() {
    let extra = "[ftl]\nname = \"page\"\n[host]\nwrite_buffer_bytes = 16384\nwrite_buffer_policy = \"bplru\"\n\
                 bplru_padding_pages = 3";
    let mut sim = ftlsim_ftl::simulator(small_config(32, 16, 0.2, extra), true).unwrap();
    sim.precondition(&Precondition { fill: 1.0, ..Precondition::default() }).unwrap();
    // Pages 0-3 of block 0 fill the 4-page buffer; page 16 (block 1) evicts block 0, padded
    // with its other 12 pages.
    let r = run(&mut sim, (0..4).chain([16]).map(|i| req(IoOp::Write, i)).collect());
    let wb = r.write_buffer.unwrap();
    assert_eq!((wb.blocks_evicted, wb.evictions, wb.padded_pages), (1, 4, 12));
    assert_eq!(r.flash.programs.host, 16, "the whole block");
    assert_eq!(r.flash.reads.host, 12, "the padding read the other pages");
    // Two pages of block 2 and page 48 (block 3): block 1 (one page) leaves without padding.
    let r = run(&mut sim, [32, 33, 48, 49].map(|i| req(IoOp::Write, i)).to_vec());
    let wb = r.write_buffer.unwrap();
    assert_eq!((wb.blocks_evicted, wb.padded_pages), (1, 0));
    let r = run(&mut sim, (0..64).map(|i| req(IoOp::Read, i)).collect());
    assert_eq!(r.host.pages_read, 64, "read back through the oracle");
}

/// The write-behind buffer (rcFTL's, `write_buffer_policy = "write_behind"`): writes are
/// acknowledged once buffered, a burst larger than the buffer waits for programs to end,
/// reads of every page return their newest version.
#[test]
fn write_behind_acknowledges_from_the_buffer_until_it_is_full() {
    let extra = "[ftl]\nname = \"page\"\n[host]\nwrite_buffer_bytes = 32768\nwrite_buffer_policy = \"write_behind\"";
    let mut sim = ftlsim_ftl::simulator(small_config(32, 16, 0.2, extra), true).unwrap();
    let opts = RunOptions { replay: Replay::Closed { queue_depth: 1 }, interval_ns: 0, ..RunOptions::default() };
    // Eight pages fit: each write is acknowledged at once (tPROG is 200 us).
    let r = sim.run(&mut (0..8).map(|i| Ok(req(IoOp::Write, i))), &opts, &mut NoObserver).unwrap();
    let wb = r.write_behind.clone().unwrap();
    assert_eq!((wb.capacity_pages, wb.pages_admitted, wb.writes_stalled), (8, 8, 0));
    assert!(r.response_time.write.max_ns < 10_000, "{:?}", r.response_time.write);
    assert!(r.write_buffer.is_none(), "not the caching buffer");
    // A burst of 64 outruns the four planes: later writes wait for room.
    let r = sim.run(&mut (8..72).map(|i| Ok(req(IoOp::Write, i))), &opts, &mut NoObserver).unwrap();
    let wb = r.write_behind.unwrap();
    assert!(wb.writes_stalled > 20 && wb.mean_stall_us > 50.0, "{wb:?}");
    sim.check_invariants();
    let r = sim.run(&mut (0..72).map(|i| Ok(req(IoOp::Read, i))), &opts, &mut NoObserver).unwrap();
    assert_eq!(r.host.pages_read, 72, "every page read back through the oracle");
    // A power cut needs the buffer power-protected: the flash state already holds what it
    // acknowledged.
    let cut = RunOptions { power_cut: Some(ftlsim_core::sim::CutAt::Request(3)), ..opts };
    let e = sim.run(&mut (0..8).map(|i| Ok(req(IoOp::Write, i))), &cut, &mut NoObserver).unwrap_err().to_string();
    assert!(e.contains("buffer_power_protected"), "{e}");
    // Refused with read preemption (a write waits for no GC to preempt).
    let mut cfg = small_config(32, 16, 0.2, extra);
    cfg.ftl.gc_preemption = ftlsim_core::config::GcPreemption::Reads;
    let e = ftlsim_core::config::Resolved::validate(cfg).unwrap_err().to_string();
    assert!(e.contains("write_behind") && e.contains("gc_preemption"), "{e}");
}
