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
//! migration from the new logical blocks migrated so far (their page counts c, a histogram):
//!
//! - M_X, the PMT entries if THR were X: every new block with c < X pages is page-mapped,
//!   c entries each (blocks with c >= X cost only their GMT entry, as at any X);
//! - P_X, the pages migrations program if THR were X: all zone pages (c per block), plus, for
//!   each block placed in a BMB although not full (X <= c < a full block), the copies a later
//!   BMB rewrite makes of the offsets the zone did not bring, (full - c) x u, where u is the
//!   share of the BMBs made so far that a later migration rewrote (an EWMA over rewrites;
//!   1 until the first BMB exists, so the first estimates lean towards keeping THR high).
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
    /// New logical blocks migrated, by zone page count (index c = c pages).
    counts: Vec<u64>,
    /// Share of BMBs rewritten by a later migration (EWMA; 1 before any BMB).
    rewrite_share: f64,
    bmbs_made: u64,
}

/// Weight of one BMB's fate in the rewrite-share EWMA.
const REWRITE_WEIGHT: f64 = 1.0 / 64.0;

impl DynamicThreshold {
    /// A controller for blocks of `full` pages and control parameter `d` in (0, 1).
    pub fn new(d: f64, full: u32) -> DynamicThreshold {
        assert!(d > 0.0 && d < 1.0, "D {d} outside (0, 1)");
        assert!(full > 0, "a block has pages");
        DynamicThreshold {
            d,
            full,
            current: full,
            counts: vec![0; full as usize + 1],
            rewrite_share: 1.0,
            bmbs_made: 0,
        }
    }

    /// A new logical block with `pages` zone pages was migrated.
    pub fn record_new_block(&mut self, pages: u32) {
        let c = pages.min(self.full) as usize;
        self.counts[c] += 1;
    }

    /// A BMB was made (`rewritten` false) or a BMB was rewritten by a later migration
    /// (`rewritten` true): the rewrite share moves towards what happened.
    pub fn record_bmb(&mut self, rewritten: bool) {
        if !rewritten {
            self.bmbs_made += 1;
            if self.bmbs_made == 1 {
                self.rewrite_share = 0.0;
            }
            self.rewrite_share *= 1.0 - REWRITE_WEIGHT;
        } else {
            self.rewrite_share = self.rewrite_share * (1.0 - REWRITE_WEIGHT) + REWRITE_WEIGHT;
        }
    }

    /// M_X: PMT entries of the new blocks seen, were the threshold `x`.
    pub fn mapping_entries(&self, x: u32) -> f64 {
        (1..x.min(self.full + 1)).map(|c| self.counts[c as usize] as f64 * f64::from(c)).sum()
    }

    /// P_X: pages programmed for the new blocks seen, were the threshold `x`.
    pub fn programmed_pages(&self, x: u32) -> f64 {
        let zone: f64 = (1..=self.full).map(|c| self.counts[c as usize] as f64 * f64::from(c)).sum();
        let rewrites: f64 = (x.max(1)..self.full)
            .map(|c| self.counts[c as usize] as f64 * f64::from(self.full - c) * self.rewrite_share)
            .sum();
        zone + rewrites
    }

    /// Re-evaluate Eqs. 1-2; `avg_request_pages` bounds the threshold from below (L206).
    /// Returns the threshold now in force.
    pub fn update(&mut self, avg_request_pages: u32) -> u32 {
        let (p_full, m_full) = (self.programmed_pages(self.full), self.mapping_entries(self.full));
        let lowest = avg_request_pages.clamp(1, self.full);
        self.current = self.full;
        if p_full == 0.0 || m_full == 0.0 {
            return self.current;
        }
        for x in lowest..self.full {
            let eq1 = (self.programmed_pages(x) - p_full) / p_full <= self.d;
            let eq2 = (m_full - self.mapping_entries(x)) / m_full >= self.d;
            if eq1 && eq2 {
                self.current = x;
                break;
            }
        }
        self.current
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
        for _ in 0..33 {
            t.record_bmb(true);
        }
        let x = t.update(2);
        assert_eq!(x, 5, "share {}", t.rewrite_share);
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
