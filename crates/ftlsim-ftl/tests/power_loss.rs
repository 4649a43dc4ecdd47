//! Issue 15: crash consistency. Random write workloads with heavy GC on a small drive, a power
//! cut at a random program, copy-back or erase (inside host writes, GC copies, GC erases and
//! idle-time GC), then recovery by an FTL built anew from flash alone. The data oracle must
//! hold afterwards: every write acknowledged before the cut reads its version, the write cut
//! in flight reads its old or its new version, nothing else; the flash's and the FTL's
//! invariants hold; and the drive keeps working (more writes with GC, checked the same way).
//! `FTLSIM_CRASH_CASES=N` runs N cases per configuration instead of the suite's few.

mod util;

use ftlsim_core::error::{FlashError, SimError};
use ftlsim_core::flash::{FlashArray, PageKind, TornOp};
use ftlsim_core::ftl::{FlashCounts, FlashCtx, Ftl};
use ftlsim_core::geometry::Lpn;
use ftlsim_core::recovery::RECOVERABLE;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use util::small_config;

/// What one crash case measured.
struct Outcome {
    /// The operation the cut tore (`None`: the run ended before the cut point).
    torn: Option<TornOp>,
    /// What a torn program or copy-back was writing.
    torn_kind: Option<PageKind>,
    /// Pages recovery read and programmed.
    reads: u64,
    programs: u64,
    /// Programs, copy-backs and erases before the cut (the whole first phase if uncut).
    mutations: u64,
}

fn is_power_lost(e: &SimError) -> bool {
    matches!(e, SimError::Flash(FlashError::PowerLost))
}

/// Write `lpn` as the next version; `Ok(false)` when the power went during the write.
fn write(ftl: &mut dyn Ftl, flash: &mut FlashArray, lpn: Lpn, version: u32) -> Result<bool, String> {
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    let mut ctx = FlashCtx::new(flash, &mut ops, &mut counts, false);
    match ftl.write(&mut ctx, lpn, version) {
        Ok(()) => Ok(true),
        Err(e) if is_power_lost(&e) => Ok(false),
        Err(e) => Err(format!("write of lpn {lpn}: {e}")),
    }
}

/// Every logical page reads what the oracle allows: its acknowledged version, or for the page
/// whose write was cut, that write's version too.
fn check_oracle(
    ftl: &mut dyn Ftl,
    flash: &mut FlashArray,
    acked: &[Option<u32>],
    in_flight: Option<(Lpn, u32)>,
) -> Result<(), String> {
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    let mut ctx = FlashCtx::new(flash, &mut ops, &mut counts, false);
    for (lpn, &want) in acked.iter().enumerate() {
        let lpn = lpn as Lpn;
        let got = ftl.read(&mut ctx, lpn).map_err(|e| format!("read of lpn {lpn}: {e}"))?;
        let also = in_flight.filter(|f| f.0 == lpn).map(|f| f.1);
        if got != want && (also.is_none() || got != also) {
            return Err(format!("lpn {lpn}: read {got:?}, acknowledged {want:?}, in flight {also:?}"));
        }
    }
    Ok(())
}

/// One case: `extra` config lines, the over-provisioning share, a seed, and the mutation the
/// cut tears.
fn crash_case(extra: &str, share: f64, seed: u64, cut_after: u64) -> Result<Outcome, String> {
    let mut cfg = small_config(24, 16, share, extra);
    // 3DFTL's spare areas hold up to 106 bytes of mapping entries (seed 001 L986).
    cfg.geometry.spare_usable_bytes = cfg.geometry.spare_usable_bytes.max(112);
    let logical = cfg.derive().map_err(|e| e.to_string())?.logical_pages;
    let mut flash = FlashArray::for_config(&cfg).map_err(|e| e.to_string())?;
    flash.keep_program_stamps();
    let mut ftl = ftlsim_ftl::build(&cfg).map_err(|e| e.to_string())?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut acked: Vec<Option<u32>> = vec![None; logical as usize];
    let mut next_version = 1u32;
    let mut in_flight = None;
    flash.arm_power_cut(cut_after);
    // A fill, then overwrites with 80% of them to a fifth of the pages (heavy GC), with an
    // idle-time GC step now and then.
    let writes = logical * 5;
    for i in 0..writes {
        let lpn = if i < logical {
            i
        } else if rng.gen_bool(0.8) {
            rng.gen_range(0..logical / 5)
        } else {
            rng.gen_range(0..logical)
        };
        if !write(ftl.as_mut(), &mut flash, lpn, next_version)? {
            in_flight = Some((lpn, next_version));
            break;
        }
        acked[lpn as usize] = Some(next_version);
        next_version += 1;
        if i % 7 == 0 {
            let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
            let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, false);
            match ftl.background_step(&mut ctx) {
                Err(e) if is_power_lost(&e) => break,
                Err(e) => return Err(format!("idle-time GC: {e}")),
                Ok(_) => {}
            }
        }
    }
    let (torn, torn_kind, mutations) = (flash.torn_op(), flash.torn_kind(), flash.mutations());
    // The power comes back: controller memory is gone, the FTL rebuilds from flash.
    flash.restart();
    // A full scan reads every page below each block's write pointer and the erased page
    // that ends each block that is not full; the demand FTLs' first-page reads add at most
    // one per block (seed 001 Sec. 8.1: m + n in the worst case).
    let g = cfg.geometry.clone();
    let scan: u64 = (0..g.blocks())
        .map(|b| u64::from(flash.write_pointer(b)) + u64::from(flash.write_pointer(b) < g.pages_per_block))
        .sum();
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    {
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, false);
        ftl.recover(&mut ctx, &cfg).map_err(|e| format!("recovery: {e}"))?;
    }
    let reads: u64 = counts.reads.iter().sum();
    let programs: u64 = counts.programs.iter().sum();
    // The full-scan FTLs read exactly the scan, plus the source of each page a merge copies.
    if matches!(ftl.name(), "page" | "block" | "fast") && reads != scan + programs {
        return Err(format!("recovery read {reads} pages, a full scan reads {scan} and merges copied {programs}"));
    }
    // Reads beyond the scan feed the pages recovery programs (merge sources, old copies of
    // rewritten translation pages): the scan itself stays within m + n.
    if reads.saturating_sub(programs) > scan + u64::from(g.blocks()) {
        return Err(format!(
            "recovery read {reads} pages for {programs} programs, more than m + n = {}",
            scan + u64::from(g.blocks())
        ));
    }
    flash.check_invariants();
    ftl.check_invariants(&flash);
    check_oracle(ftl.as_mut(), &mut flash, &acked, in_flight).map_err(|e| format!("after recovery: {e}"))?;
    // The page cut in flight now holds whichever version recovery found; the oracle takes it.
    if let Some((lpn, _)) = in_flight {
        let (mut ops, mut c) = (Vec::new(), FlashCounts::default());
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut c, false);
        acked[lpn as usize] = ftl.read(&mut ctx, lpn).map_err(|e| e.to_string())?;
    }
    // The drive goes on: two more fills' worth of overwrites with GC.
    for _ in 0..logical * 2 {
        let lpn = rng.gen_range(0..logical);
        if !write(ftl.as_mut(), &mut flash, lpn, next_version).map_err(|e| format!("after recovery: {e}"))? {
            return Err("power lost with no cut armed".into());
        }
        acked[lpn as usize] = Some(next_version);
        next_version += 1;
    }
    flash.check_invariants();
    ftl.check_invariants(&flash);
    check_oracle(ftl.as_mut(), &mut flash, &acked, None).map_err(|e| format!("after more writes: {e}"))?;
    Ok(Outcome { torn, torn_kind, reads, programs, mutations })
}

/// The configurations each FTL is cut under.
const PAGE_CONFIGS: &[&str] = &[
    "[ftl]\nname = \"page\"",
    "[ftl]\nname = \"page\"\ngc_copy = \"copyback\"\nbackground_gc = true\nidle_threshold_ns = 1",
    "[nand]\ncopyback_same_parity = true\n[ftl]\nname = \"page\"\ngc_copy = \"copyback\"\ngc_victim = \"fifo\"",
    "[ftl]\nname = \"page\"\nallocation = \"static_lpn\"\nforeground_gc = \"incremental\"",
];

fn cases() -> u64 {
    std::env::var("FTLSIM_CRASH_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(40)
}

/// The demand FTLs under tiny caches (constant translation write-backs, two translation
/// pages), their GC modes, copy-back and idle-time GC.
const DEMAND_CONFIGS: &[&str] = &[
    "[ftl]\nname = \"dftl\"\nmapping_cache_bytes = 66",
    "[ftl]\nname = \"dftl\"\nmapping_cache_bytes = 66\ngc_copy = \"copyback\"\nbackground_gc = true\nidle_threshold_ns = 1",
    "[ftl]\nname = \"cdftl\"\nmapping_cache_bytes = 4170",
    "[ftl]\nname = \"scftl\"\nmapping_cache_bytes = 72",
    // With the same-parity rule DLOOP's GC never ends on a drive this small (seed 000 Sec. 3.4).
    "[ftl]\nname = \"dloop\"\nmapping_cache_bytes = 66",
    "[nand]\ncopyback_same_parity = true\n[ftl]\nname = \"pcftl\"\nmapping_cache_bytes = 66",
    "[ftl]\nname = \"dftl\"\nmapping_cache_bytes = 66\n[ftl.dftl]\ngc = \"conventional\"",
];

/// The demand FTLs with ILog (seed 001 Fig. 8.4) and a 10-BIF queue: IP write-backs all the
/// time; a fourth open block per plane needs more spare room (so CDFTL's one cached
/// translation page holds the whole map: its cuts need not land in a translation page).
const DEMAND_ILOG_CONFIGS: &[&str] = &[
    "[ftl]\nname = \"dftl\"\nmapping_cache_bytes = 66\ninvalid_tracking = \"ilog\"\nilog_bifq_bytes = 350",
    "[ftl]\nname = \"cdftl\"\nmapping_cache_bytes = 4170\ninvalid_tracking = \"ilog\"\nilog_bifq_bytes = 350",
    "[ftl]\nname = \"scftl\"\nmapping_cache_bytes = 72\ninvalid_tracking = \"ilog\"\nilog_bifq_bytes = 350\ngc_copy = \"copyback\"",
];

/// Cut every configuration at random mutations, `cases()` times and then on until the cuts
/// have landed in an erase, in a copy-back where the config copies back and (`translation`)
/// in a translation page write, and with ILog in an invalidation page write (at most ten
/// times as many cases).
fn cut_everywhere(configs: &[&str], share: f64, translation: bool) {
    for (k, extra) in configs.iter().enumerate() {
        let mut torn: std::collections::HashMap<TornOp, u64> = Default::default();
        let mut kinds: std::collections::HashMap<PageKind, u64> = Default::default();
        let copies_back = ["copyback\"", "dloop", "pcftl", "fastgc", "rcftl"].iter().any(|k| extra.contains(k));
        let covered = |torn: &std::collections::HashMap<TornOp, u64>,
                       kinds: &std::collections::HashMap<PageKind, u64>| {
            torn.contains_key(&TornOp::Erase)
                && (!copies_back || torn.contains_key(&TornOp::Copyback))
                && (!translation || kinds.contains_key(&PageKind::Translation))
                && (!extra.contains("\"ilog\"") || kinds.contains_key(&PageKind::Log))
        };
        // Cut points spread over the whole first phase (five fills of writes and their GC),
        // as long as an uncut run of it shows.
        let span = crash_case(extra, share, u64::MAX, u64::MAX / 2).unwrap_or_else(|e| panic!("{extra:?}: {e}"));
        let (mut reads, mut programs, mut case) = (0, 0, 0);
        while case < cases() || (!covered(&torn, &kinds) && case < 10 * cases()) {
            let seed = (k as u64) << 32 | case;
            let cut_after = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xC0FFEE).gen_range(0..span.mutations);
            match crash_case(extra, share, seed, cut_after) {
                Ok(o) => {
                    if let Some(op) = o.torn {
                        *torn.entry(op).or_insert(0) += 1;
                    }
                    if let Some(kind) = o.torn_kind {
                        *kinds.entry(kind).or_insert(0) += 1;
                    }
                    reads += o.reads;
                    programs += o.programs;
                }
                Err(e) => panic!("config {extra:?}, seed {seed}, cut at mutation {cut_after}: {e}"),
            }
            case += 1;
        }
        let cut: u64 = torn.values().sum();
        assert!(cut >= case * 3 / 4, "{extra:?}: only {cut} of {case} cases were cut");
        assert!(covered(&torn, &kinds), "{extra:?}: cuts missed a kind of operation: {torn:?}, {kinds:?}");
        eprintln!(
            "{extra:?}: {cut} cuts in {case} cases, torn {torn:?}, programs torn by kind {kinds:?}; recovery read {} \
             and programmed {} pages per case",
            reads / case,
            programs / case
        );
    }
}

#[test]
fn page_ftl_recovers_every_acknowledged_write_from_a_cut_anywhere() {
    cut_everywhere(PAGE_CONFIGS, 0.25, false);
}

/// The block-mapped FTLs: the block FTL rewrites a block per page update, FAST logs random
/// writes and merges.
const BLOCK_MAPPED_CONFIGS: &[&str] = &["[ftl]\nname = \"block\"", "[ftl]\nname = \"fast\""];

#[test]
fn block_mapped_ftls_recover_every_acknowledged_write_from_a_cut_anywhere() {
    cut_everywhere(BLOCK_MAPPED_CONFIGS, 0.25, false);
}

/// 3DFTL (seed 001 Figs. 8.5, 8.6) with CMTs of one to four lines, invalid flags, counters
/// and ILog.
const THREEDFTL_CONFIGS: &[&str] = &[
    "[ftl]\nname = \"3dftl\"\nmapping_cache_bytes = 262",
    "[ftl]\nname = \"3dftl\"\nmapping_cache_bytes = 1048\ninvalid_tracking = \"counters\"\ngc_copy = \"copyback\"",
    // A BIFQ of 10 BIFs on this 96-block drive: IPs written back often.
    "[ftl]\nname = \"3dftl\"\nmapping_cache_bytes = 524\ninvalid_tracking = \"ilog\"\nilog_bifq_bytes = 350",
];

#[test]
fn threedftl_recovers_every_acknowledged_write_from_a_cut_anywhere() {
    cut_everywhere(THREEDFTL_CONFIGS, 0.3, false);
}

#[test]
fn demand_ftls_recover_every_acknowledged_write_from_a_cut_anywhere() {
    cut_everywhere(DEMAND_CONFIGS, 0.3, true);
}

#[test]
fn demand_ftls_with_ilog_recover_every_acknowledged_write_from_a_cut_anywhere() {
    cut_everywhere(DEMAND_ILOG_CONFIGS, 0.4, false);
}

/// The FTLs that copy back within the reliability model (seed 003), on a worn drive: the
/// flash's quota check holds through cuts and recoveries (rcFTL forgets its block quotas).
const RELIABILITY_CONFIGS: &[&str] = &[
    "[ftl]\nname = \"fastgc\"\n[reliability]\npe_cycles = 700",
    "[ftl]\nname = \"rcftl-per-page\"\n[reliability]\npe_cycles = 2500",
    "[ftl]\nname = \"rcftl\"\n[reliability]\npe_cycles = 2500",
];

#[test]
fn ftls_under_the_reliability_model_recover_every_acknowledged_write_from_a_cut_anywhere() {
    // rcFTL keeps an open block per quota level and plane (9 here): more spare room.
    cut_everywhere(RELIABILITY_CONFIGS, 0.6, false);
}

#[test]
fn the_ftls_said_to_recover_do_and_the_others_say_they_do_not() {
    for info in ftlsim_ftl::FTLS {
        // WAFTL's default Buffer Zone (256 MB) does not fit this drive: one block per plane,
        // migrated in the foreground (room for one zone only).
        let zone = match info.name {
            "waftl" => "\n[ftl.waftl]\nbuffer_zone_bytes = 262144\nmigration = \"foreground\"",
            _ => "",
        };
        // rcFTL keeps an open block per quota level and plane: more spare room.
        let share = if info.name == "rcftl" { 0.6 } else { 0.3 };
        let mut cfg = small_config(24, 16, share, &format!("[ftl]\nname = \"{}\"{zone}", info.name));
        cfg.geometry.spare_usable_bytes = cfg.geometry.spare_usable_bytes.max(112);
        if info.needs_reliability {
            cfg.reliability = Some(Default::default());
        }
        let mut flash = FlashArray::new(&cfg.geometry, false);
        flash.keep_program_stamps();
        let mut ftl = ftlsim_ftl::build(&cfg).unwrap();
        let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, false);
        let result = ftl.recover(&mut ctx, &cfg);
        if RECOVERABLE.contains(&info.name) {
            result.unwrap_or_else(|e| panic!("{}: {e}", info.name));
        } else {
            let e = result.unwrap_err().to_string();
            assert!(e.contains(info.name) && e.contains("not built") && e.contains("page"), "{e}");
        }
    }
}
