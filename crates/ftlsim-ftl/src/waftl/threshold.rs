//! WAFTL's migration threshold (seed 002 Sec. III-C, L195-214, Eqs. 1-2): a new logical block
//! with at least THR pages in the Buffer Zone goes to a BMB of its own, one with fewer to the
//! PMB (Algorithm 1 lines 23-26).
//!
//! Static: THR is a fixed page count (the main figures use a full block, 64 pages). Dynamic:
//! THR starts at a full block and "decreases to a smaller value if" (L208)
//!
//! - Eq. 1: (P_THR - P_blk) / P_blk <= D (performance lost is at most D), and
//! - Eq. 2: (M_blk - M_THR) / M_blk >= D (mapping table saved is at least D),
//!
//! for THR from the average request size up to a full block (L206), D set by the user (0.03 and
//! 0.06 in Figs. 18-19). The paper measured P and M "through repetitive experiments" (L201); a
//! drive has to estimate them while it runs. The estimator here, re-evaluated at every
//! migration from the new logical blocks migrated (their page counts c, a histogram; each
//! migration's weight halved at the next, `HISTORY_DECAY`):
//!
//! - M_X, the PMT entries if THR were X: every new block with c < X pages is page-mapped,
//!   c entries each (blocks with c >= X cost only their GMT entry, as at any X);
//! - P_X, the pages migrations program if THR were X: all zone pages (c per block), plus, for
//!   each block placed in a BMB although not full (X <= c < a full block), the copies a later
//!   BMB rewrite makes of the offsets the zone did not bring, (full - c) x u, where u is the
//!   number of BMB rewrites per BMB made so far (a BMB is rewritten whole at every migration
//!   that brings an update of it, so u may well exceed 1; 1 until the first BMB exists, so
//!   the first estimates lean towards keeping THR high).
//!
//! The new THR is the smallest X in [average request pages, full block] that meets both
//! equations; a full block when none does. Only the trend matters (both sides are relative to
//! a full block), and both inputs are what WAFTL sees anyway: the zone's block nodes and its
//! own BMB rewrites.

use serde::{Deserialize, Serialize};

/// The threshold policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Threshold {
    /// A fixed page count.
    Static(u32),
    /// Eqs. 1-2 with control parameter `d`, estimated online.
    Dynamic(DynamicThreshold),
}

impl Threshold {
    /// The threshold in force, pages.
    pub fn pages(&self) -> u32 {
        match self {
            Threshold::Static(t) => *t,
            Threshold::Dynamic(d) => d.current,
        }
    }
}

/// The dynamic threshold's state: what it has seen and the value in force.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DynamicThreshold {
    d: f64,
    full: u32,
    current: u32,
    /// New logical blocks migrated, by zone page count (index c = c pages), and BMBs made and
    /// BMB rewrites: each weighted by HISTORY_DECAY per migration since.
    counts: Vec<f64>,
    bmbs_made: f64,
    bmb_rewrites: f64,
}

/// What one migration's history keeps of its weight at the next: the estimate follows the
/// workload of the last few zones, not what the drive did long ago (a sequential fill makes
/// only full blocks and no rewrites; remembered for ever it would hold THR at the request
/// size whatever came next).
const HISTORY_DECAY: f64 = 0.5;

impl DynamicThreshold {
    /// A controller for blocks of `full` pages and control parameter `d` in (0, 1).
    pub fn new(d: f64, full: u32) -> DynamicThreshold {
        assert!(d > 0.0 && d < 1.0, "D {d} outside (0, 1)");
        assert!(full > 0, "a block has pages");
        DynamicThreshold {
            d,
            full,
            current: full,
            counts: vec![0.0; full as usize + 1],
            bmbs_made: 0.0,
            bmb_rewrites: 0.0,
        }
    }

    /// A new logical block with `pages` zone pages was migrated.
    pub fn record_new_block(&mut self, pages: u32) {
        let c = pages.min(self.full) as usize;
        self.counts[c] += 1.0;
    }

    /// A BMB was made (`rewritten` false) or a BMB was rewritten by a later migration
    /// (`rewritten` true).
    pub fn record_bmb(&mut self, rewritten: bool) {
        if rewritten {
            self.bmb_rewrites += 1.0;
        } else {
            self.bmbs_made += 1.0;
        }
    }

    /// u: BMB rewrites per BMB made (1 before the first BMB).
    fn rewrites_per_bmb(&self) -> f64 {
        if self.bmbs_made == 0.0 {
            1.0
        } else {
            self.bmb_rewrites / self.bmbs_made
        }
    }

    /// M_X: PMT entries of the new blocks seen, were the threshold `x`.
    pub fn mapping_entries(&self, x: u32) -> f64 {
        (1..x.min(self.full + 1)).map(|c| self.counts[c as usize] * f64::from(c)).sum()
    }

    /// P_X: pages programmed for the new blocks seen, were the threshold `x`.
    pub fn programmed_pages(&self, x: u32) -> f64 {
        let zone: f64 = (1..=self.full).map(|c| self.counts[c as usize] * f64::from(c)).sum();
        let u = self.rewrites_per_bmb();
        let rewrites: f64 = (x.max(1)..self.full).map(|c| self.counts[c as usize] * f64::from(self.full - c) * u).sum();
        zone + rewrites
    }

    /// Re-evaluate Eqs. 1-2; `avg_request_pages` bounds the threshold from below (L206).
    /// Returns the threshold now in force.
    pub fn update(&mut self, avg_request_pages: u32) -> u32 {
        self.current = self.choose(avg_request_pages);
        for c in &mut self.counts {
            *c *= HISTORY_DECAY;
        }
        self.bmbs_made *= HISTORY_DECAY;
        self.bmb_rewrites *= HISTORY_DECAY;
        self.current
    }

    /// The smallest threshold meeting Eqs. 1-2 on the history, a full block if none does.
    fn choose(&self, avg_request_pages: u32) -> u32 {
        let (p_full, m_full) = (self.programmed_pages(self.full), self.mapping_entries(self.full));
        let lowest = avg_request_pages.clamp(1, self.full);
        if p_full == 0.0 || m_full == 0.0 {
            return self.full;
        }
        (lowest..self.full)
            .find(|&x| {
                let eq1 = (self.programmed_pages(x) - p_full) / p_full <= self.d;
                let eq2 = (m_full - self.mapping_entries(x)) / m_full >= self.d;
                eq1 && eq2
            })
            .unwrap_or(self.full)
    }

    /// The threshold in force, pages.
    pub fn current(&self) -> u32 {
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m_and_p_follow_their_definitions() {
        let mut t = DynamicThreshold::new(0.03, 8);
        for c in [2, 6, 6, 8] {
            t.record_new_block(c);
        }
        // M_X: entries of blocks below X pages.
        assert_eq!(t.mapping_entries(8), 2.0 + 6.0 + 6.0);
        assert_eq!(t.mapping_entries(6), 2.0);
        assert_eq!(t.mapping_entries(1), 0.0);
        // P_X before any BMB (u = 1): all zone pages, plus full - c per non-full block in a BMB.
        assert_eq!(t.programmed_pages(8), 22.0);
        assert_eq!(t.programmed_pages(6), 22.0 + 2.0 * 2.0);
        assert_eq!(t.programmed_pages(2), 22.0 + 2.0 * 2.0 + 6.0);
    }

    #[test]
    fn blocks_that_are_rarely_rewritten_let_the_threshold_fall() {
        // Many nearly full new blocks: block-mapping them saves most of the PMT.
        let mut t = DynamicThreshold::new(0.03, 64);
        for _ in 0..100 {
            t.record_new_block(60);
        }
        t.record_new_block(4);
        // No BMB made yet: every BMB assumed rewritten, 4 copies per block cost 6.6%: too much.
        assert_eq!(t.update(2), 64);
        // BMBs made and never rewritten: the copies cost nothing, and the threshold falls to
        // the average request size.
        for _ in 0..500 {
            t.record_bmb(false);
        }
        assert_eq!(t.update(2), 2);
        assert_eq!(t.update(8), 8, "never below the average request");
        // Some rewritten: a BMB of 60 pages costs 4 copies when rewritten; at a 40% share that is
        // 100 x 4 x 0.4 = 160 pages of 6,004 (2.7%), within D; the 4-page block's 60 copies are not.
        // 33 rewrites of 500 BMBs: u = 0.066, the copies still cheap.
        for _ in 0..33 {
            t.record_bmb(true);
        }
        assert_eq!(t.update(2), 2, "u {}", t.rewrites_per_bmb());
        // Ten rewrites per BMB: every partial BMB costs more than D; back to a full block.
        for _ in 0..5_000 {
            t.record_bmb(true);
        }
        assert_eq!(t.update(2), 64, "u {}", t.rewrites_per_bmb());
    }

    #[test]
    fn a_sequential_past_is_forgotten_within_a_few_migrations() {
        // A fill: many full blocks made into BMBs, never rewritten.
        let mut t = DynamicThreshold::new(0.03, 64);
        for _ in 0..100_000 {
            t.record_new_block(64);
            t.record_bmb(false);
        }
        t.record_new_block(3);
        assert_eq!(t.update(1), 1, "nothing says partial BMBs are costly yet");
        // Then small blocks whose BMBs are rewritten at every migration.
        let mut thr = Vec::new();
        for _ in 0..12 {
            for _ in 0..1_000 {
                t.record_new_block(4);
                t.record_bmb(true);
                t.record_bmb(true);
            }
            t.record_bmb(false);
            thr.push(t.update(1));
        }
        assert_eq!(thr.last(), Some(&64), "{thr:?}");
    }

    #[test]
    fn rewritten_bmbs_keep_the_threshold_at_a_full_block() {
        let mut t = DynamicThreshold::new(0.06, 64);
        for c in (1..=64).cycle().take(6400) {
            t.record_new_block(c);
        }
        t.record_bmb(false);
        for _ in 0..500 {
            t.record_bmb(true);
        }
        // Half-full BMBs rewritten nearly always: each costs its missing pages again.
        let x = t.update(1);
        assert!(x > 48, "threshold {x}");
        assert!((t.programmed_pages(x) - t.programmed_pages(64)) / t.programmed_pages(64) <= 0.06);
    }

    #[test]
    fn nothing_seen_keeps_a_full_block() {
        let mut t = DynamicThreshold::new(0.03, 64);
        assert_eq!(t.update(1), 64);
        assert_eq!(Threshold::Dynamic(t).pages(), 64);
        assert_eq!(Threshold::Static(48).pages(), 48);
    }
}
