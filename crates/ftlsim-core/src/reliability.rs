//! The per-block reliability model of rcFTL (seed 003 Secs. II-III, Table I): how many
//! consecutive copy-backs a page may go through before its accumulated bit errors could
//! exceed what the off-chip ECC corrects.
//!
//! - A block has a BER class (best / median / worst: its bit-error rate right after a
//!   program, L65) drawn once per block from a seeded distribution (the paper gives none:
//!   `class_shares`, docs/reliability.md), and a P/E count (the run's starting wear plus its
//!   erases).
//! - The copyback threshold table CTT(x, e, t) (Table I, L73-L85) gives the consecutive
//!   copy-backs a block of P/E count x and class e allows under retention t; 0 means off-chip
//!   copies only (worst blocks at 4K-5K cycles, 1 year). Past 5K cycles the paper has no
//!   column: 0.
//! - Errors grow about linearly per copy-back from a block (L98), so a page carries a quota:
//!   Q_init, the least common multiple of the table's non-zero values (60 for either
//!   retention), and each copy-back from block b spends Q_init / CT(b) of it (L105), CT looked
//!   up when the copy-back runs. A host write or an off-chip copy (read through the ECC)
//!   gives the page its whole quota again (L100, L105).
//!
//! The flash model refuses a copy-back that would overspend (`FlashError::CopybackQuota`), so
//! no FTL, however it manages quotas, can move a page beyond what its blocks allow.

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// BER classes, best first (Table I's rows).
pub const CLASSES: [&str; 3] = ["best", "median", "worst"];

/// Upper P/E bounds of Table I's columns: [0, 0.4K], (0.4K, 1K], (1K, 2K], ..., (4K, 5K].
pub const PE_BOUNDS: [u32; 6] = [400, 1000, 2000, 3000, 4000, 5000];

/// Table I, 1-year retention (L80-L82): rows best, median, worst.
pub const CTT_ONE_YEAR: [[u8; 6]; 3] = [[5, 4, 4, 3, 3, 2], [5, 4, 3, 3, 2, 1], [3, 2, 2, 1, 1, 0]];
/// Table I, 3-month retention (L83-L85).
pub const CTT_THREE_MONTHS: [[u8; 6]; 3] = [[6, 5, 4, 4, 3, 2], [6, 5, 4, 3, 3, 2], [4, 3, 2, 2, 1, 1]];

/// The retention requirement a run assumes (Table I's two halves; the paper evaluates 1 year,
/// L73).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Retention {
    /// One year (JEDEC's client requirement, the paper's basic one).
    #[default]
    OneYear,
    /// Three months.
    ThreeMonths,
}

/// `[reliability]`: the model is on for a drive whose config has this section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReliabilityConfig {
    /// P/E cycles every block has been through before the run (the paper sweeps 0-5K).
    pub pe_cycles: u32,
    /// Retention requirement: which half of Table I applies.
    pub retention: Retention,
    /// Shares of blocks in the best, median and worst classes (not in the paper: most blocks
    /// near the average BER and a long worst tail, L65).
    pub class_shares: [f64; 3],
    /// Seed of the per-block class draw.
    pub seed: u64,
    /// Replaces Table I's half for `retention` (rows best, median, worst; columns the P/E
    /// ranges of `PE_BOUNDS`).
    pub ctt: Option<[[u8; 6]; 3]>,
}

impl Default for ReliabilityConfig {
    fn default() -> Self {
        ReliabilityConfig {
            pe_cycles: 0,
            retention: Retention::OneYear,
            class_shares: [0.2, 0.7, 0.1],
            seed: 1,
            ctt: None,
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The model a drive runs: the table in force, Q_init, the starting wear.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityModel {
    ctt: [[u8; 6]; 3],
    q_init: u16,
    start_pe: u32,
}

impl ReliabilityModel {
    /// The model `cfg` describes, checked.
    pub fn new(cfg: &ReliabilityConfig) -> Result<ReliabilityModel, ConfigError> {
        let bad = |key: &str, value: String, rule: &str| ConfigError::Invalid {
            key: format!("reliability.{key}"),
            value,
            rule: rule.into(),
        };
        let sum: f64 = cfg.class_shares.iter().sum();
        if cfg.class_shares.iter().any(|&s| !(0.0..=1.0).contains(&s)) || (sum - 1.0).abs() > 1e-9 {
            return Err(bad(
                "class_shares",
                format!("{:?}", cfg.class_shares),
                "three shares (best, median, worst), each in [0, 1], summing to 1",
            ));
        }
        let ctt = cfg.ctt.unwrap_or(match cfg.retention {
            Retention::OneYear => CTT_ONE_YEAR,
            Retention::ThreeMonths => CTT_THREE_MONTHS,
        });
        let q = ctt.iter().flatten().filter(|&&v| v > 0).fold(1u32, |acc, &v| acc / gcd(acc, v.into()) * u32::from(v));
        if q > u32::from(u16::MAX) {
            return Err(bad("ctt", format!("{ctt:?}"), "the least common multiple of its values must fit 16 bits"));
        }
        Ok(ReliabilityModel { ctt, q_init: q as u16, start_pe: cfg.pe_cycles })
    }

    /// Q_init: the quota a page gets from a host write or an off-chip copy.
    pub fn q_init(&self) -> u16 {
        self.q_init
    }

    /// P/E cycles of a block that has been erased `erases` times in this run.
    pub fn pe(&self, erases: u32) -> u32 {
        self.start_pe.saturating_add(erases)
    }

    /// CT of a block of `class` (0 best .. 2 worst) at `pe` cycles: Table I's cell, 0 past
    /// its last column.
    pub fn ct(&self, class: u8, pe: u32) -> u8 {
        match PE_BOUNDS.iter().position(|&hi| pe <= hi) {
            Some(col) => self.ctt[usize::from(class.min(2))][col],
            None => 0,
        }
    }

    /// The quota one copy-back from a block of `class` at `pe` cycles spends (Q_init / CT),
    /// `None` when the block allows none.
    pub fn deduction(&self, class: u8, pe: u32) -> Option<u16> {
        match self.ct(class, pe) {
            0 => None,
            ct => Some(self.q_init / u16::from(ct)),
        }
    }

    /// The worst class's CT at `pe`: FastGC's one threshold for every block (L50).
    pub fn worst_ct(&self, pe: u32) -> u8 {
        self.ct(2, pe)
    }
}

/// Per-block classes for `blocks` blocks: a seeded shuffle of the shares' counts (rounded,
/// the remainder to the median), so that the shares hold exactly on every drive size.
pub fn assign_classes(blocks: u32, shares: [f64; 3], seed: u64) -> Vec<u8> {
    let n = blocks as usize;
    let best = ((shares[0] * n as f64).round() as usize).min(n);
    let worst = ((shares[2] * n as f64).round() as usize).min(n - best);
    let mut classes: Vec<u8> = (0..n)
        .map(|i| {
            if i < best {
                0
            } else if i < n - worst {
                1
            } else {
                2
            }
        })
        .collect();
    // Fisher-Yates with splitmix64: deterministic, no dependency on an RNG crate's stream.
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        classes.swap(i, j);
    }
    classes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_i_and_q_init_are_the_papers() {
        let m = ReliabilityModel::new(&ReliabilityConfig::default()).unwrap();
        assert_eq!(m.q_init(), 60, "lcm of 1-5");
        // L73: at 2K cycles, 1 year, CT is 2 to 4 by BER; L69: at 3K best has two more than worst.
        assert_eq!((m.ct(0, 2000), m.ct(1, 2000), m.ct(2, 2000)), (4, 3, 2));
        assert_eq!(m.ct(0, 3000) - m.ct(2, 3000), 2);
        // Column bounds: [0, 400] closed, then (a, b].
        assert_eq!((m.ct(1, 400), m.ct(1, 401)), (5, 4));
        // The worst block at 4K-5K allows no copy-back; nothing past 5K.
        assert_eq!((m.ct(2, 4500), m.deduction(2, 4500)), (0, None));
        assert_eq!(m.ct(0, 5001), 0);
        assert_eq!((m.deduction(0, 0), m.deduction(2, 0), m.deduction(1, 4500)), (Some(12), Some(20), Some(60)));
        let three =
            ReliabilityModel::new(&ReliabilityConfig { retention: Retention::ThreeMonths, ..Default::default() });
        let three = three.unwrap();
        assert_eq!((three.q_init(), three.ct(0, 0), three.deduction(0, 0)), (60, 6, Some(10)));
        assert_eq!(m.worst_ct(0), 3);
        assert_eq!(m.pe(7), 7);
    }

    #[test]
    fn bad_shares_are_refused_by_key() {
        let e = ReliabilityModel::new(&ReliabilityConfig { class_shares: [0.5, 0.5, 0.5], ..Default::default() });
        assert!(e.unwrap_err().to_string().contains("reliability.class_shares"));
    }

    #[test]
    fn classes_follow_the_shares_and_the_seed() {
        let c = assign_classes(1000, [0.2, 0.7, 0.1], 1);
        let count = |k: u8| c.iter().filter(|&&x| x == k).count();
        assert_eq!((count(0), count(1), count(2)), (200, 700, 100));
        assert_eq!(c, assign_classes(1000, [0.2, 0.7, 0.1], 1), "deterministic");
        assert_ne!(c, assign_classes(1000, [0.2, 0.7, 0.1], 2), "the seed matters");
        assert!(c[..100].iter().any(|&x| x != 0), "shuffled, not in blocks of a class");
    }
}
