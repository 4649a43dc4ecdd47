//! Hand-computed schedules of the scheduler (docs/timing.md, "Worked examples").

use super::*;
use crate::config::tests::tiny_toml;
use crate::config::DriveConfig;
use crate::error::ConfigError;

// The tiny drive: 2 channels x 1 chip x 1 die x 2 planes = 4 planes of 64 blocks x 16
// pages. Planes stripe channels first, so planes 0 and 2 are the two planes of channel 0's
// die (die_of = plane % 2); plane 1 is on channel 1.
const PLANE1: Ppn = 64 * 16;
const PLANE2: Ppn = 2 * 64 * 16;

/// PCFTL Sec. 3.2: 25 us read to register, 50 us page transfer, 200 us program.
fn pcftl_like(extra: &str) -> Scheduler {
    let t = tiny_toml()
        .replace("cmd_addr_ns = 0\n", "")
        .replace("channel_mb_per_s = 80.0", "channel_mb_per_s = 81.92")
        .replace("[timing]", &format!("[timing]\n{extra}"));
    let cfg = checked(&t, "t").unwrap();
    let s = Scheduler::new(&cfg);
    assert_eq!(s.phases.of(OpKind::Read).data, 50_000, "4096 B at 81.92 MB/s");
    s
}
fn op(kind: OpKind, addr: Ppn, addr2: u32, after: u32) -> FlashOp {
    FlashOp { kind, tag: Tag::Gc, after, addr, addr2 }
}

#[test]
fn pcftl_copy_costs_325us_and_copyback_225us() {
    // Plane 0 owns pages [0, 1024) in the tiny geometry (64 blocks x 16 pages).
    let mut s = pcftl_like("");
    let copy = [op(OpKind::Read, 0, 0, NO_DEP), op(OpKind::Program, 16, 0, 0)];
    assert_eq!(s.schedule(&copy, 0, Some(0)).end, 325_000);
    let mut s = pcftl_like("");
    assert_eq!(s.schedule(&[op(OpKind::Copyback, 0, 16, NO_DEP)], 0, Some(0)).end, 225_000);
}

#[test]
fn copybacks_on_two_planes_of_one_die_overlap() {
    // PCFTL Fig. 6: planes 0 and 2 are the two planes of channel 0's die; each copy-back
    // uses the bus for its command only, so both run at once (Sec. 3.2).
    let both = |s: &mut Scheduler| {
        let a = s.schedule(&[op(OpKind::Copyback, 0, 16, NO_DEP)], 0, Some(0)).end;
        (a, s.schedule(&[op(OpKind::Copyback, PLANE2, PLANE2 + 16, NO_DEP)], 0, Some(0)).end)
    };
    assert_eq!(both(&mut pcftl_like("")), (225_000, 225_000));
    // A die that runs one command at a time serialises them.
    assert_eq!(both(&mut pcftl_like("plane_concurrency = \"multi_plane_only\"")), (225_000, 450_000));
}

#[test]
fn reads_on_two_planes_of_one_channel_overlap_tr() {
    // Planes 0 and 2 share channel 0 (channels stripe fastest). Hand schedule:
    // read A: cmd 0, tR 0-25, out 25-75. read B: tR 0-25, out 75-125 (bus busy).
    let mut s = pcftl_like("");
    let a = s.schedule(&[op(OpKind::Read, 0, 0, NO_DEP)], 0, Some(0)).end;
    let b = s.schedule(&[op(OpKind::Read, PLANE2, 0, NO_DEP)], 0, Some(0)).end;
    assert_eq!((a, b), (75_000, 125_000));
    // A program on plane 0 waits for plane 0 (75) and takes the bus gap-free at 125.
    let c = s.schedule(&[op(OpKind::Program, 1, 0, NO_DEP)], 0, Some(0)).end;
    assert_eq!(c, 125_000 + 50_000 + 200_000);
}

#[test]
fn bus_backfills_gaps() {
    let mut s = pcftl_like("cmd_addr_ns = 1000");
    // Read on plane 0: cmd 0-1, tR 1-26, out 26-76.
    assert_eq!(s.schedule(&[op(OpKind::Read, 0, 0, NO_DEP)], 0, Some(0)).end, 76_000);
    // Erase on plane 2 (same channel) fits its command in the gap at 1-2.
    assert_eq!(s.schedule(&[op(OpKind::Erase, PLANE2, 0, NO_DEP)], 0, Some(0)).end, 1_000 + 1_000 + 1_500_000);
}

#[test]
fn serial_mode_runs_one_op_at_a_time() {
    let mut s = pcftl_like("serial = true");
    let a = s.schedule(&[op(OpKind::Program, 0, 0, NO_DEP)], 0, Some(0)).end;
    let b = s.schedule(&[op(OpKind::Program, PLANE1, 0, NO_DEP)], 0, Some(0)).end;
    assert_eq!((a, b), (250_000, 500_000));
}

#[test]
fn multi_plane_program_shares_one_tprog() {
    let mut s = pcftl_like("multi_plane = true");
    // Planes 0 and 2 are on channel 0; with 1 chip and 1 die they share die 0 (die_of = plane % 2).
    let g = s.geo.clone();
    assert_eq!(g.die_of(0), g.die_of(2));
    let ops = [op(OpKind::Program, 0, 0, NO_DEP), op(OpKind::Program, PLANE2, 0, NO_DEP)];
    assert_eq!(s.schedule(&ops, 0, Some(0)).end, 2 * 50_000 + 200_000);
    assert_eq!(s.multi_plane_commands(), 1);
}

#[test]
fn multi_plane_only_serialises_planes_of_a_die() {
    let mut s = pcftl_like("plane_concurrency = \"multi_plane_only\"");
    let a = s.schedule(&[op(OpKind::Program, 0, 0, NO_DEP)], 0, Some(0)).end;
    let b = s.schedule(&[op(OpKind::Program, PLANE2, 0, NO_DEP)], 0, Some(0)).end;
    assert_eq!((a, b), (250_000, 500_000));
}

#[test]
fn register_hit_skips_tr() {
    let mut s = pcftl_like("register_read_hits = true");
    let a = s.schedule(&[op(OpKind::Read, 5, 0, NO_DEP)], 0, Some(0)).end;
    let b = s.schedule(&[op(OpKind::Read, 5, 0, NO_DEP)], a, Some(0)).end;
    assert_eq!((a, b - a), (75_000, 50_000));
    assert_eq!(s.register_hits(), 1);
}

#[test]
fn barrier_blocks_the_scope() {
    let mut s = pcftl_like("");
    let ops = [op(OpKind::Erase, 0, 0, NO_DEP), op(OpKind::Barrier, 0, scope_code(GcScope::Device), NO_DEP)];
    s.schedule(&ops, 0, Some(0));
    let host = FlashOp { tag: Tag::Host, ..op(OpKind::Program, PLANE1, 0, NO_DEP) };
    assert_eq!(s.schedule(&[host], 0, Some(0)).host_end, 1_500_000 + 250_000);
    assert_eq!(s.busy().channel[1][Tag::Host as usize], 50_000);
}

fn host(kind: OpKind, addr: Ppn, after: u32) -> FlashOp {
    FlashOp { tag: Tag::Host, ..op(kind, addr, 0, after) }
}

#[test]
fn host_link_is_full_duplex_and_first_fit() {
    let t = tiny_toml().replace("[timing]", "[timing]\nhost_mb_per_s = 409.6");
    let mut s = Scheduler::new(&checked(&t, "t").unwrap());
    // 409.6 MB/s: 10 us per 4 KiB. A read's data booked at its flash end, 1 ms away...
    assert_eq!(s.host_transfer(1_000_000, 4096, Direction::ToHost), 1_010_000);
    // ...holds up neither a write's data (other direction) nor a read ready earlier.
    assert_eq!(s.host_transfer(0, 4096, Direction::ToDrive), 10_000);
    assert_eq!(s.host_transfer(0, 4096, Direction::ToHost), 10_000);
    // One direction still carries one transfer at a time: 8 KiB ready at 0 follows.
    assert_eq!(s.host_transfer(0, 8192, Direction::ToDrive), 30_000);
    // A transfer that does not fit the gap before the 1 ms booking goes after it.
    assert_eq!(s.host_transfer(995_000, 8192, Direction::ToHost), 1_030_000);
}

#[test]
fn a_data_read_waits_for_the_translation_read_that_located_it() {
    // Translation read on plane 0 (channel 0), data read on plane 1 (channel 1).
    let mut s = pcftl_like("");
    let ops = [op(OpKind::Read, 0, 0, NO_DEP), host(OpKind::Read, PLANE1, 0)];
    assert_eq!(s.schedule(&ops, 0, Some(0)).host_end, 75_000 + 75_000);
    // Unchained, they overlap (different channels).
    let mut s = pcftl_like("");
    let ops = [op(OpKind::Read, 0, 0, NO_DEP), host(OpKind::Read, PLANE1, NO_DEP)];
    assert_eq!(s.schedule(&ops, 0, Some(0)).host_end, 75_000);
}

#[test]
fn a_die_runs_one_command_unless_reads_are_independent() {
    let reads = |s: &mut Scheduler| {
        let a = s.schedule(&[host(OpKind::Read, 0, NO_DEP)], 0, Some(0)).end;
        let b = s.schedule(&[host(OpKind::Read, PLANE2, NO_DEP)], 0, Some(0)).end;
        // A program on plane 2 needs the whole die.
        let c = s.schedule(&[host(OpKind::Program, PLANE2 + 1, NO_DEP)], 0, Some(0)).end;
        (a, b, c)
    };
    // Independent planes: tR overlaps, the data-out waits for the bus (as above).
    assert_eq!(reads(&mut pcftl_like("")), (75_000, 125_000, 375_000));
    // One command per die: the second read starts when the first one's data is out.
    let die = "plane_concurrency = \"multi_plane_only\"";
    assert_eq!(reads(&mut pcftl_like(die)), (75_000, 150_000, 400_000));
    // Independent multi-plane reads overlap again, and the program waits for both.
    let indep = format!("{die}\nindependent_plane_reads = true");
    assert_eq!(reads(&mut pcftl_like(&indep)), (75_000, 125_000, 375_000));
    let e = checked(&tiny_toml().replace("[timing]", "[timing]\nindependent_plane_reads = true"), "t");
    assert!(e.unwrap_err().to_string().contains("multi_plane_only"));
}

/// Four controller copies on plane 0 (325 us each), as one foreground GC batch at 0.
fn gc_batch() -> Vec<FlashOp> {
    (0..4u32).flat_map(|k| [op(OpKind::Read, k, 0, NO_DEP), op(OpKind::Program, 16 + k, 0, 2 * k)]).collect()
}

#[test]
fn host_reads_overtake_deferred_gc_between_page_copies() {
    let preempt = |extra: &str| {
        let t = tiny_toml().replace("channel_mb_per_s = 80.0", "channel_mb_per_s = 81.92").replace("[ftl]", "")
            + &format!("\n[ftl]\ngc_preemption = \"reads\"\n{extra}");
        Scheduler::new(&checked(&t, "t").unwrap())
    };
    // Without preemption a read at 100 us waits for all four copies: 1,300 + 75 us.
    let mut s = pcftl_like("");
    s.schedule(&gc_batch(), 0, Some(0));
    s.set_now(100_000);
    assert_eq!(s.schedule(&[host(OpKind::Read, 40, NO_DEP)], 100_000, Some(0)).end, 1_375_000);
    // With it, the read goes after the copy under way (0-325 us) and before the rest.
    let mut s = preempt("");
    let end = s.schedule(&gc_batch(), 0, Some(0));
    assert_eq!(end.end, 0, "the GC batch is deferred");
    assert!(s.plane_ready(0) >= 1_300_000, "deferred GC counts in the plane's load");
    s.set_now(100_000);
    assert_eq!(s.schedule(&[host(OpKind::Read, 40, NO_DEP)], 100_000, Some(0)).end, 325_000 + 75_000);
    // The GC resumes after the read. A program for the plane needs the space: it queues
    // behind the rest of the collection, and its request completes when it is placed.
    s.set_now(500_000);
    let w = s.schedule(&[host(OpKind::Program, 100, NO_DEP)], 500_000, Some(7));
    assert_eq!((w.host_end, w.deferred_host_ops), (500_000, 1));
    // A read arriving meanwhile still overtakes both (after the copy under way, 725-1050).
    s.set_now(800_000);
    assert_eq!(s.schedule(&[host(OpKind::Read, 41, NO_DEP)], 800_000, Some(1)).end, 1_050_000 + 75_000);
    let mut done = Vec::new();
    while let Some(t) = s.next_deferred_start() {
        s.set_now(t);
        let mut c = Vec::new();
        s.take_completions(&mut c);
        done.extend(c);
    }
    let program_end = 1_125_000 + 325_000 + 250_000;
    assert_eq!(done, vec![(7, program_end)]);
    assert!(!s.in_gc_at(0, program_end), "the collection is over once the program is placed");
    // Idle-time GC (not foreground) is never deferred.
    let mut s = preempt("");
    assert_eq!(s.schedule(&gc_batch(), 0, None).end, 1_300_000);
    // Preemption cannot go with a GC scope wider than a plane.
    let e = checked(&(tiny_toml() + "\n[ftl]\ngc_preemption = \"reads\"\ngc_scope = \"die\""), "t");
    assert!(e.unwrap_err().to_string().contains("ftl.gc_preemption"));
}

#[test]
fn least_loaded_counts_work_recorded_but_not_yet_scheduled() {
    let mut s = pcftl_like("");
    let batch = [host(OpKind::Program, PLANE1, NO_DEP)];
    assert_eq!(s.least_loaded(&[], true, [1, 0].into_iter()), Some(1), "a tie goes to the first plane tried");
    assert_eq!(s.least_loaded(&batch, false, [1, 0].into_iter()), Some(0), "the batch's program loads plane 1");
    assert_eq!(s.plane_ready(1), 250_000);
    // Asked again with nothing new, the program is not counted twice.
    assert_eq!(s.least_loaded(&[], false, [1, 0].into_iter()), Some(0));
    assert_eq!(s.plane_ready(1), 250_000);
    let end = s.schedule(&batch, 0, Some(0)).end;
    assert_eq!(s.least_loaded(&[], true, [1, 0].into_iter()), Some(0), "scheduled, the program still loads plane 1");
    assert_eq!(s.plane_ready(1), end, "scheduled: the estimate is the plane's free time");
}

#[test]
fn a_context_counts_each_recorded_operation_once_however_often_it_asks() {
    use crate::flash::{FlashArray, Oob, PageKind};
    use crate::ftl::{FlashCounts, FlashCtx, FlashTime};
    let mut s = pcftl_like("");
    let mut flash = FlashArray::new(&s.geo, false);
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    {
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Timed).with_scheduler(&mut s);
        // Programs on plane 1, a question after each, and two with nothing new between them.
        for k in 0..4 {
            ctx.program(PLANE1 + k, Oob { lpn: k, version: 1, kind: PageKind::Data }).unwrap();
            assert_eq!(ctx.least_loaded_plane([1, 0].into_iter()), Some(0));
        }
        assert_eq!(ctx.least_loaded_plane([1, 0].into_iter()), Some(0));
    }
    let program_ns = s.cost_ns(&host(OpKind::Program, PLANE1, NO_DEP));
    assert_eq!(s.plane_ready(1), 4 * program_ns, "each program counted once");
    // A new context's batch starts the count over.
    ops.clear();
    {
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Timed).with_scheduler(&mut s);
        assert_eq!(ctx.least_loaded_plane([1, 0].into_iter()), Some(1));
    }
    assert_eq!(s.plane_ready(1), 0);
}

#[test]
fn host_programs_behind_gc_are_counted_with_idle_planes() {
    let mut s = pcftl_like("");
    s.schedule(&gc_batch(), 0, Some(0));
    // A host program on plane 0 queues behind the collection while planes 1-3 are idle.
    s.schedule(&[host(OpKind::Program, 100, NO_DEP)], 0, Some(0));
    s.schedule(&[host(OpKind::Program, PLANE1, NO_DEP)], 0, Some(0));
    let c = s.gc_contention();
    assert_eq!((c.host_programs_behind_gc, c.host_programs_behind_gc_with_idle_plane), (1, 1));
}

#[test]
fn off_chip_copies_pay_ecc_and_share_the_dram_port_copy_backs_do_not() {
    // ECC 10 us; DRAM at 409.6 MB/s: 10 us per 4 KiB page. Copy on plane 0: read out at 75,
    // ECC to 85, into DRAM to 95; out of DRAM 95-105, transfer 105-155, program to 355.
    let mut s = pcftl_like("ecc_decode_ns = 10000\ndram_mb_per_s = 409.6");
    let copy = [op(OpKind::Read, 0, 0, NO_DEP), op(OpKind::Program, 16, 0, 0)];
    assert_eq!(s.schedule(&copy, 0, Some(0)).end, 355_000);
    // Two reads on different channels finish their transfers together (75) and queue at the
    // DRAM port: 85-95 and 95-105.
    let mut s = pcftl_like("ecc_decode_ns = 10000\ndram_mb_per_s = 409.6");
    let a = s.schedule(&[op(OpKind::Read, 0, 0, NO_DEP)], 0, Some(0)).end;
    let b = s.schedule(&[op(OpKind::Read, PLANE1, 0, NO_DEP)], 0, Some(0)).end;
    assert_eq!((a, b), (95_000, 105_000));
    // A copy-back stays in its plane: neither ECC nor DRAM.
    let mut s = pcftl_like("ecc_decode_ns = 10000\ndram_mb_per_s = 409.6");
    assert_eq!(s.schedule(&[op(OpKind::Copyback, 0, 16, NO_DEP)], 0, Some(0)).end, 225_000);
}

#[test]
fn a_spare_area_read_moves_only_the_spare_bytes_over_the_bus() {
    let mut s = pcftl_like("");
    assert_eq!(s.phases.of(OpKind::ReadSpare).data, 1_563, "128 B at 81.92 MB/s");
    // Array read 25 us, then 1.56 us of spare bytes instead of the page's 50 us.
    assert_eq!(s.schedule(&[op(OpKind::ReadSpare, 0, 0, NO_DEP)], 0, Some(0)).end, 25_000 + 1_563);
    // A page read of plane 2 (same channel, its tR alongside) waits on the bus only for the
    // spare bytes, not for a page.
    assert_eq!(s.schedule(&[op(OpKind::Read, PLANE2, 0, NO_DEP)], 0, Some(0)).end, 25_000 + 1_563 + 50_000);
    // Serially too: one line of work, the spare bytes only.
    let mut s = pcftl_like("serial = true");
    let end = s.schedule(&[op(OpKind::ReadSpare, 0, 0, NO_DEP), op(OpKind::Read, PLANE1, 0, NO_DEP)], 0, Some(0)).end;
    assert_eq!(end, 25_000 + 1_563 + 25_000 + 50_000);
}

/// Every deferred operation placed, as the replay loop advances the clock: (request, end).
fn run_out(s: &mut Scheduler) -> Vec<(u32, SimTime)> {
    let mut done = Vec::new();
    while let Some(t) = s.next_deferred_start() {
        s.set_now(t.max(s.now()));
        let mut c = Vec::new();
        s.take_completions(&mut c);
        done.extend(c);
    }
    done
}

const READ_FIRST: &str =
    "transaction_order = \"read_first\"\nplane_concurrency = \"multi_plane_only\"\nmulti_plane = true";

#[test]
fn reading_first_a_read_overtakes_the_programs_queued_before_it() {
    // Three requests' programs on plane 0 at 0 us (50 us transfer + 200 us tPROG each), a
    // read of plane 0 at 100 us. First come, first served it waits for all three: 750 + 75.
    let mut s = pcftl_like("plane_concurrency = \"multi_plane_only\"\nmulti_plane = true");
    for (r, page) in [(7, 0), (8, 1), (9, 2)] {
        s.schedule(&[host(OpKind::Program, page, NO_DEP)], 0, Some(r));
    }
    s.set_now(100_000);
    assert_eq!(s.schedule(&[host(OpKind::Read, 40, NO_DEP)], 100_000, Some(1)).end, 825_000);
    // Reading first, the programs wait in the plane's queue: the first is under way at
    // 100 us (0-250), the read goes next (250-325), then the other two.
    let mut s = pcftl_like(READ_FIRST);
    for (r, page) in [(7, 0), (8, 1), (9, 2)] {
        let b = s.schedule(&[host(OpKind::Program, page, NO_DEP)], 0, Some(r));
        assert_eq!((b.host_end, b.deferred_host_ops), (0, 1), "a program waits in its plane's queue");
    }
    s.set_now(100_000);
    let mut c = Vec::new();
    s.take_completions(&mut c);
    assert_eq!(s.schedule(&[host(OpKind::Read, 40, NO_DEP)], 100_000, Some(1)).end, 325_000);
    c.extend(run_out(&mut s));
    assert_eq!(c, vec![(7, 250_000), (8, 575_000), (9, 825_000)]);
    // It cannot go with a serial drive.
    let e =
        checked(&tiny_toml().replace("[timing]", "[timing]\nserial = true\ntransaction_order = \"read_first\""), "t");
    assert!(e.unwrap_err().to_string().contains("timing.transaction_order"));
}

#[test]
fn reading_first_two_requests_programs_on_a_dies_planes_become_one_command() {
    // Planes 0 and 2 are channel 0's die. Two requests program page 0 of a block on each:
    // first come, first served a die runs one command at a time (0-250, 250-500); queued,
    // they go as one two-plane program: both pages over the bus (100 us), one tPROG.
    let mut s = pcftl_like("plane_concurrency = \"multi_plane_only\"\nmulti_plane = true");
    let a = s.schedule(&[host(OpKind::Program, 0, NO_DEP)], 0, Some(7)).end;
    let b = s.schedule(&[host(OpKind::Program, PLANE2, NO_DEP)], 0, Some(8)).end;
    assert_eq!((a, b, s.multi_plane_commands()), (250_000, 500_000, 0));
    let mut s = pcftl_like(READ_FIRST);
    s.schedule(&[host(OpKind::Program, 0, NO_DEP)], 0, Some(7));
    s.schedule(&[host(OpKind::Program, PLANE2, NO_DEP)], 0, Some(8));
    // A third request's program at another page of plane 2 cannot join them.
    s.schedule(&[host(OpKind::Program, PLANE2 + 1, NO_DEP)], 0, Some(9));
    assert_eq!(run_out(&mut s), vec![(7, 300_000), (8, 300_000), (9, 550_000)]);
    assert_eq!(s.multi_plane_commands(), 1);
}

#[test]
fn reading_first_a_die_serves_its_planes_queued_work_oldest_first() {
    // Planes 0 and 2 are channel 0's die. Requests 7, 9 and 10 program plane 0, request 8
    // plane 2 at a page no other lines up with; all queued at 0 us. The die takes them in the
    // order they came, not plane 0's queue to its end before plane 2's (which kept a die's
    // first plane busy while its queue refilled and its later planes waited).
    let mut s = pcftl_like(READ_FIRST);
    for (r, page) in [(7, 0), (8, PLANE2 + 3), (9, 1), (10, 2)] {
        s.schedule(&[host(OpKind::Program, page, NO_DEP)], 0, Some(r));
    }
    assert_eq!(run_out(&mut s), vec![(7, 250_000), (8, 500_000), (9, 750_000), (10, 1_000_000)]);
    assert_eq!(s.multi_plane_commands(), 0);
}

#[test]
fn reading_first_work_queued_longer_than_the_age_cap_goes_ahead_of_a_read() {
    // Three requests' programs on plane 0 at 0 us, a read at 150 us. Under a 200 us cap the
    // queued programs have not waited long enough: the read overtakes them (325 us). Under a
    // 100 us cap they have: they go first, and the read ends as first come, first served.
    for (cap, read_end) in [(200_000, 325_000), (100_000, 825_000)] {
        let mut s = pcftl_like(&format!("{READ_FIRST}\nread_first_age_cap_ns = {cap}"));
        for (r, page) in [(7, 0), (8, 1), (9, 2)] {
            s.schedule(&[host(OpKind::Program, page, NO_DEP)], 0, Some(r));
        }
        s.set_now(150_000);
        assert_eq!(s.schedule(&[host(OpKind::Read, 40, NO_DEP)], 150_000, Some(1)).end, read_end, "cap {cap}");
        run_out(&mut s);
    }
}

#[test]
fn host_writes_go_ahead_of_queued_gc_while_the_plane_keeps_erased_blocks() {
    // A foreground collection on plane 0 at 0 us: four copies out of block 0 into block 1
    // (325 us each), then block 0's erase (1,500 us). At 100 us, the first copy under way
    // (0-325), request 7 programs plane 0.
    let run = |preemption: &str, erased: u32, page: Ppn| {
        let t = tiny_toml().replace("channel_mb_per_s = 80.0", "channel_mb_per_s = 81.92")
            + &format!("\n[ftl]\ngc_preemption = \"{preemption}\"\n");
        let mut s = Scheduler::new(&checked(&t, "t").unwrap());
        // The FTL's erased blocks on plane 0, block 0 among them (its erase is queued).
        let erased = vec![s.held_back + erased; 4];
        s.note_erased_blocks(&erased);
        let mut gc = gc_batch();
        gc.push(op(OpKind::Erase, 0, 0, NO_DEP));
        s.schedule(&gc, 0, Some(0));
        s.set_now(100_000);
        let w = s.schedule(&[host(OpKind::Program, page, NO_DEP)], 100_000, Some(7));
        assert_eq!(w.deferred_host_ops, 1, "the program queues: GC work waits on its plane");
        run_out(&mut s)
    };
    const BLOCK5: Ppn = 5 * 16;
    let after_gc = 325_000 + 3 * 325_000 + 1_500_000 + 250_000;
    // Only reads overtake GC: the program waits for the rest of the collection.
    assert_eq!(run("reads", 3, BLOCK5), vec![(7, after_gc)]);
    // Host writes go ahead: 2 erased blocks on flash (3 to the FTL, one erase queued) keep
    // the plane above the floor of 1, so the program goes right after the copy under way.
    assert_eq!(run("writes", 3, BLOCK5), vec![(7, 325_000 + 250_000)]);
    // Below the floor (the FTL's only erased block is the one GC has yet to erase) GC goes first.
    assert_eq!(run("writes", 1, BLOCK5), vec![(7, after_gc)]);
    // A program never passes the erase of its own block (the FTL erased block 0 and
    // allocated it to the host; on flash the erase is still queued).
    assert_eq!(run("writes", 3, 0), vec![(7, after_gc)]);
}

#[test]
fn the_preemption_floor_needs_preemptible_writes_and_stays_within_the_gc_threshold() {
    let cfg = |ftl: &str| checked(&(tiny_toml() + "\n[ftl]\n" + ftl), "t").map_err(|e| e.to_string());
    assert!(cfg("gc_preemption = \"writes\"\ngc_preemption_floor_blocks = 2").is_ok());
    let e = cfg("gc_preemption = \"reads\"\ngc_preemption_floor_blocks = 2").unwrap_err();
    assert!(e.contains("ftl.gc_preemption_floor_blocks") && e.contains("\"writes\""), "{e}");
    let e = cfg("gc_preemption = \"writes\"\ngc_threshold_blocks = 4\ngc_preemption_floor_blocks = 5").unwrap_err();
    assert!(e.contains("ftl.gc_preemption_floor_blocks") && e.contains("GC threshold (4 blocks"), "{e}");
    let e = cfg("gc_preemption = \"writes\"\ngc_scope = \"die\"").unwrap_err();
    assert!(e.contains("ftl.gc_preemption") && e.contains("\"writes\""), "{e}");
}

#[test]
fn gc_goes_first_on_the_whole_die_when_one_of_its_planes_is_below_the_floor() {
    // Plane 0's collection as above (four copies, then block 0's erase, queued at 0 us); at
    // 100 us request 7 programs plane 2, plane 0's die-mate, whose own erased blocks are many.
    let run = |erased_plane0: u32, timing: &str| {
        let t = tiny_toml()
            .replace("channel_mb_per_s = 80.0", "channel_mb_per_s = 81.92")
            .replace("[timing]", &format!("[timing]\n{timing}"))
            + "\n[ftl]\ngc_preemption = \"writes\"\n";
        let mut s = Scheduler::new(&checked(&t, "t").unwrap());
        let mut erased = vec![s.held_back + 3; 4];
        erased[0] = s.held_back + erased_plane0;
        s.note_erased_blocks(&erased);
        let mut gc = gc_batch();
        gc.push(op(OpKind::Erase, 0, 0, NO_DEP));
        s.schedule(&gc, 0, Some(0));
        s.set_now(100_000);
        const PLANE2: Ppn = 2 * 1024 + 5 * 16;
        let w = s.schedule(&[host(OpKind::Program, PLANE2, NO_DEP)], 100_000, Some(7));
        let done = run_out(&mut s);
        match w.deferred_host_ops {
            0 => w.host_end,
            _ => done.iter().find(|&&(r, _)| r == 7).expect("the queued program completes").1,
        }
    };
    // Independent planes, plane 0 above the floor: the program runs beside the collection,
    // its data behind the copy's on the channel.
    assert!(run(3, "") < 1_300_000);
    // Plane 0 below it: GC goes first on the die (MQSim's urgent mode is a chip's), so the
    // program waits until the die's GC queue is empty: its erase starts at 1,300 us.
    assert_eq!(run(1, ""), 1_300_000 + 250_000);
    // A die that runs one command at a time (reading first, MQSim's chip): the program goes
    // between two page copies above the floor, and after the erase below it.
    let die = "transaction_order = \"read_first\"\nplane_concurrency = \"multi_plane_only\"";
    assert_eq!(run(3, die), 325_000 + 250_000);
    assert_eq!(run(1, die), 1_300_000 + 1_500_000 + 250_000);
}

proptest::proptest! {
    /// Each kind of operation has one set of phases whichever path places it: alone on an
    /// idle drive its end is the sum of its phases as docs/timing.md writes them from the
    /// config (a read's data at the controller after ECC and the DRAM port, a program's plane
    /// free after the DRAM port, bus and tPROG); the serial mode, a multi-plane command of
    /// one plane and the load estimate (command, array and bus) agree with it.
    #[test]
    fn every_path_gives_an_operation_the_same_phases(
        cmd in 0u64..3_000,
        t_r in 1u64..100_000,
        t_prog in 1u64..3_000_000,
        t_bers in 1u64..6_000_000,
        ecc in 0u64..20_000,
        channel in 20u32..2_000,
        dram in proptest::option::of(200u32..20_000),
        ready in 0u64..1_000_000,
    ) {
        let timing = format!(
            "cmd_addr_ns = {cmd}\nt_r_ns = {t_r}\nt_prog_ns = {t_prog}\nt_bers_ns = {t_bers}\n\
             ecc_decode_ns = {ecc}\nchannel_mb_per_s = {channel}.0\ndram_mb_per_s = {}.0\n",
            dram.unwrap_or(0)
        );
        let text = tiny_toml()
            .replace("cmd_addr_ns = 0\n", "")
            .replace("channel_mb_per_s = 80.0\n", "")
            .replace("t_r_ns = 25000\n", "")
            .replace("t_prog_ns = 200000\n", "")
            .replace("t_bers_ns = 1500000\n", "")
            .replace("[timing]", &format!("[timing]\n{timing}"));
        let cfg = checked(&text, "t").unwrap();
        let d = cfg.derived();
        let (xfer, spare, dram_ns, t_cb) = (d.page_transfer_ns, d.spare_transfer_ns, d.dram_page_transfer_ns, d.t_copyback_ns);
        let expected = [
            (OpKind::Read, cmd + t_r + xfer + ecc + dram_ns, cmd + t_r + xfer),
            (OpKind::ReadSpare, cmd + t_r + spare + ecc, cmd + t_r + spare),
            (OpKind::Program, dram_ns + cmd + xfer + t_prog, cmd + xfer + t_prog),
            (OpKind::Erase, cmd + t_bers, cmd + t_bers),
            (OpKind::Copyback, 2 * cmd + t_cb, 2 * cmd + t_cb),
        ];
        for (kind, alone, estimate) in expected {
            let o = op(kind, 32, 48, NO_DEP);
            let mut s = Scheduler::new(&cfg);
            s.set_now(ready);
            proptest::prop_assert_eq!(s.schedule(&[o], ready, Some(0)).end, ready + alone, "{:?} alone", kind);
            proptest::prop_assert_eq!(s.cost_ns(&o), estimate, "{:?} estimate", kind);
            let mut serial = Scheduler::new(&cfg);
            serial.serial = true;
            serial.set_now(ready);
            proptest::prop_assert_eq!(serial.schedule(&[o], ready, Some(0)).end, ready + alone, "{:?} serial", kind);
            if matches!(kind, OpKind::Read | OpKind::Program | OpKind::Erase) {
                let mut group = Scheduler::new(&cfg);
                group.set_now(ready);
                proptest::prop_assert_eq!(group.place_group(&[o], ready), ready + alone, "{:?} as a command of one", kind);
            }
        }
    }

    /// Runs of page copies placed together (`place_copy_run`) land exactly where placing
    /// their operations one by one puts them: the same completions, busy time, register hits,
    /// GC extent and free times, batch after batch, among host work and copies that leave
    /// their plane or join a multi-plane command, on each kind of die.
    #[test]
    fn copy_runs_place_as_their_operations_would_one_by_one(
        timing in 0usize..4,
        batches in proptest::collection::vec(
            (0u64..400_000, proptest::collection::vec((0u8..8, 0u32..4, 0u32..6, 0u8..3), 1..16)),
            1..24,
        )
    ) {
        let timing = [
            "multi_plane = true",
            "plane_concurrency = \"multi_plane_only\"\nmulti_plane = true",
            "plane_concurrency = \"multi_plane_only\"\nregister_read_hits = true",
            "register_read_hits = true\ndram_mb_per_s = 2000.0\necc_decode_ns = 3000",
        ][timing];
        let mut together = pcftl_like(timing);
        let mut apart = together.clone();
        apart.copy_runs = false;
        let tags = [Tag::Gc, Tag::Mapping, Tag::Host];
        let (mut ready, mut ops) = (0, Vec::new());
        for (step, spec) in batches {
            ready += step;
            ops.clear();
            for (what, plane, page, tag) in spec {
                let tag = tags[tag as usize];
                let at = |plane: u32| (plane % 4) * 1024 + page;
                let i = ops.len() as u32;
                match what {
                    // A page copy on its plane, or (5) to the next plane.
                    0..=2 | 5 => {
                        let to = if what == 5 { plane + 1 } else { plane };
                        ops.push(FlashOp { tag, ..op(OpKind::Read, at(plane), 0, NO_DEP) });
                        ops.push(FlashOp { tag, ..op(OpKind::Program, at(to) + 1, 0, i) });
                    }
                    // A second program after the last read: may join a multi-plane command.
                    3 if i > 0 && ops[i as usize - 1].kind == OpKind::Program => {
                        let FlashOp { after, addr, tag, .. } = ops[i as usize - 1];
                        ops.push(FlashOp { tag, ..op(OpKind::Program, (addr + 2048) % 4096, 0, after) });
                    }
                    3 | 4 => ops.push(FlashOp { tag, ..op(OpKind::Read, at(plane), 0, NO_DEP) }),
                    6 => ops.push(FlashOp { tag, ..op(OpKind::Program, at(plane), 0, NO_DEP) }),
                    _ => ops.push(FlashOp { tag, ..op(OpKind::Erase, at(plane) & !15, 0, NO_DEP) }),
                }
            }
            together.set_now(ready);
            apart.set_now(ready);
            let request = (step % 2 == 0).then_some(0);
            proptest::prop_assert_eq!(together.schedule(&ops, ready, request), apart.schedule(&ops, ready, request));
            proptest::prop_assert_eq!(&together.busy, &apart.busy);
            proptest::prop_assert_eq!(&together.plane_free, &apart.plane_free);
            proptest::prop_assert_eq!(&together.gc_until, &apart.gc_until);
            proptest::prop_assert_eq!(&together.register, &apart.register);
            proptest::prop_assert_eq!(together.register_hits_count, apart.register_hits_count);
            proptest::prop_assert_eq!(together.multi_plane_commands, apart.multi_plane_commands);
            proptest::prop_assert_eq!(together.contention, apart.contention);
        }
    }
}

/// A drive config from TOML text, checked as a run's is.
fn checked(text: &str, origin: &str) -> Result<Resolved, ConfigError> {
    DriveConfig::from_toml(text, origin).and_then(Resolved::validate)
}
