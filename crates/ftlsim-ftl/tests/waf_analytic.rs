//! Validation of the GC model against the analytic write amplification of uniform random
//! writes (Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012; also Xiang
//! & Kurkoski 2011):
//! - FIFO cleaning, Eq. 4: A = a / (a + W0(-a e^-a)), a = physical / logical pages;
//! - greedy, Eq. 12: A = A_fifo(k a) / k with k = 1 + 1 / (2 x pages per block).
//!
//! How `a` is counted: the model has no free-block reserve and no open blocks. Here one
//! plane's blocks B are split as: the GC threshold T (free blocks kept in reserve, hovering
//! between T - 1 and T), two open blocks (host and GC streams, on average half full, so one
//! block of erased pages between them), and the rest, which holds data. So
//! a = (B - T - 1) x pages per block / logical pages. Measured over 2 x logical writes after
//! 4 x logical writes of warm-up, functionally (no timing).

use ftlsim_core::config::DriveConfig;
use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{FlashCounts, FlashCtx, FlashTime, Ftl};
use ftlsim_ftl::page::PageFtl;
use lambert_w::lambert_w0;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const BLOCKS: u32 = 2048;
const PPB: u32 = 64;
const THRESHOLD: u32 = 2;

fn fifo_waf(a: f64) -> f64 {
    a / (a + lambert_w0(-a * (-a).exp()))
}

fn greedy_waf(a: f64) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * f64::from(PPB));
    fifo_waf(k * a) / k
}

fn config(logical: u32, victim: &str) -> DriveConfig {
    let physical = BLOCKS * PPB;
    let share = 1.0 - f64::from(logical) / f64::from(physical);
    let text = format!(
        r#"
[geometry]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = {BLOCKS}
pages_per_block = {PPB}
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = {share}
[timing]
channel_mb_per_s = 100.0
t_r_ns = 1
t_prog_ns = 1
t_bers_ns = 1
[ftl]
gc_victim = "{victim}"
gc_threshold_blocks = {THRESHOLD}
"#
    );
    DriveConfig::from_toml(&text, "waf test").unwrap()
}

/// Measured WAF and the model's `a` for a drive whose data area holds `a_target` times its
/// logical pages.
fn measure(a_target: f64, victim: &str, seed: u64) -> (f64, f64) {
    let data_pages = f64::from((BLOCKS - THRESHOLD - 1) * PPB);
    let logical_target = (data_pages / a_target) as u32;
    let cfg = config(logical_target, victim);
    let logical = crate::util::resolved(&cfg).derived().logical_pages;
    let a = data_pages / f64::from(logical);
    let mut flash = FlashArray::new(&cfg.geometry, false);
    let mut ftl = PageFtl::new(&crate::util::resolved(&cfg)).unwrap();
    let mut ops = Vec::new();
    let mut counts = FlashCounts::default();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut version = 0u32;
    let mut write = |ftl: &mut PageFtl, flash: &mut FlashArray, counts: &mut FlashCounts, lpn: u32| {
        version += 1;
        let mut ctx = FlashCtx::new(flash, &mut ops, counts, FlashTime::Functional);
        ftl.write(&mut ctx, lpn, version).unwrap();
    };
    for lpn in 0..logical {
        write(&mut ftl, &mut flash, &mut counts, lpn);
    }
    for _ in 0..4 * logical {
        let lpn = rng.gen_range(0..logical);
        write(&mut ftl, &mut flash, &mut counts, lpn);
    }
    let before = counts.pages_programmed();
    let n = 2 * logical;
    for _ in 0..n {
        let lpn = rng.gen_range(0..logical);
        write(&mut ftl, &mut flash, &mut counts, lpn);
    }
    ftl.check_invariants(&flash);
    ((counts.pages_programmed() - before) as f64 / f64::from(n), a)
}

#[test]
fn lambert_w_sanity() {
    // W0(-1/e) = -1 and W0(0) = 0; FIFO WAF tends to 1 as a grows.
    assert!((lambert_w0(-(-1f64).exp()) + 1.0).abs() < 1e-6);
    assert!(fifo_waf(10.0) < 1.001);
}

#[test]
fn greedy_and_fifo_match_desnoyers_within_5_percent() {
    let mut report = String::new();
    for a_target in [1.1, 1.2, 1.35, 1.6] {
        for (victim, model) in [("greedy", greedy_waf as fn(f64) -> f64), ("fifo", fifo_waf as fn(f64) -> f64)] {
            let (measured, a) = measure(a_target, victim, 7);
            let expected = model(a);
            let err = (measured - expected).abs() / expected;
            report +=
                &format!("{victim:<6} a={a:.4} measured {measured:.4} model {expected:.4} error {:.2}%\n", err * 100.0);
            assert!(err < 0.05, "{victim} at a={a:.4}: measured WAF {measured:.4}, model {expected:.4}\n{report}");
        }
    }
    println!("{report}");
}
