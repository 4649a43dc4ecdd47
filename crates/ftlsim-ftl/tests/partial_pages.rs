//! Partial-page write policies are applied and counted: read-modify-write reads the old
//! page first, zero padding programs at once and counts the padded sectors, the merge
//! buffer programs a page once all its sectors have arrived.

use crate::util;

use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Report, RunOptions};
use util::small_config;

/// Eight 512-byte writes per page, in sector order, over the first 32 pages, then a read
/// of each page; data oracle on.
fn run(policy: &str) -> Report {
    let cfg = small_config(32, 16, 0.2, &format!("[host]\npartial_write = \"{policy}\"\nmerge_buffer_pages = 4"));
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition { fill: 0.5, ..Precondition::default() }).unwrap();
    let writes = (0..32 * 8).map(|s| Request {
        arrival_ns: 0,
        think_ns: 0,
        device: 0,
        offset_sector: s,
        sectors: 1,
        op: IoOp::Write,
    });
    let reads = (0..32).map(|p| Request {
        arrival_ns: 0,
        think_ns: 0,
        device: 0,
        offset_sector: p * 8,
        sectors: 8,
        op: IoOp::Read,
    });
    let mut reqs = writes.chain(reads).map(Ok);
    sim.run(&mut reqs, &RunOptions::default(), &mut NoObserver).unwrap()
}

#[test]
fn read_modify_write_reads_each_mapped_page_before_programming() {
    let r = run("read_modify_write");
    assert_eq!(r.host.partial_page_writes, 256);
    assert_eq!(r.host.rmw_reads, 256, "every page was mapped by the fill");
    assert_eq!(r.flash.programs.host, 256);
    assert_eq!(r.flash.reads.host, 256 + 32);
    // The program waits for its read: a write takes at least tR + transfer + tPROG.
    assert!(r.response_time.write.p50_ns >= 25_000 + 50_000 + 200_000, "{:?}", r.response_time.write);
}

#[test]
fn zero_pad_programs_at_once_and_counts_padding() {
    let r = run("zero_pad");
    assert_eq!(r.host.rmw_reads, 0);
    assert_eq!(r.host.zero_padded_sectors, 256 * 7);
    assert_eq!(r.flash.programs.host, 256);
    assert_eq!(r.flash.reads.host, 32);
}

#[test]
fn merge_buffer_programs_each_page_once() {
    let r = run("merge");
    assert_eq!(r.host.merged_pages, 32);
    assert_eq!(r.flash.programs.host, 32, "one program per completed page");
    assert_eq!(r.host.rmw_reads, 0, "no page was evicted partially");
    assert!((r.write_amplification.total - 32.0 / 256.0).abs() < 1e-9);
}
