//! rcFTL's data-migration mode selector, DMMS (seed 003 Sec. IV-B, L120-L124): whether a GC
//! victim whose quota allows copy-back (rCPB) is copied back or off-chip.
//!
//! - Urgent work (foreground GC, a plane out of free blocks) copies back whenever the quota
//!   allows, whatever the load (L124).
//! - Background work (idle-time GC) reads the write buffer's utilisation u, averaged over one
//!   block write time (L122, `host.write_buffer_load_window_ns`): copy-back while u is above
//!   the threshold (50%, strictly), off-chip otherwise. An off-chip copy costs bus time
//!   the idle drive has, and resets the pages' quotas to Q_init, so that later urgent
//!   migrations can copy back (L122, L159).
//! - One decision per victim (L122 "per-block level"), made when its first page moves and
//!   kept until it is erased, also when foreground GC finishes a suspended background job:
//!   so a victim's pages go to one destination level, and a collection needs at most one
//!   new block (what the GC reserve allows for; switching mid-victim could need two).
//!
//! Wear levelling would go through it as background work (L124); no FTL of ours levels wear.
//! Without a write-behind buffer there is no utilisation to read, and the selector is off
//! (reported as `rcftl_mode_selector`).

use ftlsim_core::geometry::PlaneId;
use serde::{Deserialize, Serialize};

/// The selector's state and decisions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModeSelector {
    /// Off: copy back whenever the quota allows (rcFTL-).
    enabled: bool,
    /// Why it is off, for the report ("" when on).
    off_because: String,
    threshold: f64,
    /// Per plane: its background job goes off-chip.
    offchip_job: Vec<bool>,
    /// Victims copied back by urgent (foreground) GC.
    pub urgent_copyback: u64,
    /// Victims copied back by background GC (utilisation above the threshold).
    pub background_copyback: u64,
    /// Victims sent off-chip by background GC (utilisation at or below the threshold).
    pub background_offchip: u64,
}

impl ModeSelector {
    /// A selector for `planes` planes: on with `threshold`, or off because of `off_because`.
    pub fn new(planes: u32, threshold: f64, off_because: Option<&str>) -> ModeSelector {
        ModeSelector {
            enabled: off_because.is_none(),
            off_because: off_because.unwrap_or("").to_string(),
            threshold,
            offchip_job: vec![false; planes as usize],
            urgent_copyback: 0,
            background_copyback: 0,
            background_offchip: 0,
        }
    }

    /// Whether the victim of `plane`'s GC job, its quota allowing copy-back, is copied back
    /// now. `starting`: its first page (the decision is made and counted); `load`: the
    /// buffer's mean utilisation.
    pub fn copy_back(&mut self, plane: PlaneId, urgent: bool, load: Option<f64>, starting: bool) -> bool {
        let job = &mut self.offchip_job[plane as usize];
        if starting {
            let copy_back = urgent || !self.enabled || load.is_none_or(|u| u > self.threshold);
            *job = !copy_back;
            match (urgent, copy_back) {
                (true, _) => self.urgent_copyback += 1,
                (false, true) => self.background_copyback += 1,
                (false, false) => self.background_offchip += 1,
            }
        }
        !*job
    }

    /// Take `config`'s settings (whether it is on, why not, its threshold), keeping this
    /// selector's state: a drive snapshot carries the selector of the run that saved it, and
    /// whether a write-behind buffer feeds it is the loading run's host setting.
    pub fn take_settings(&mut self, config: &ModeSelector) {
        self.enabled = config.enabled;
        self.off_because.clone_from(&config.off_because);
        self.threshold = config.threshold;
    }

    /// Zero the decision counts (a measured run starts).
    pub fn reset_counts(&mut self) {
        self.urgent_copyback = 0;
        self.background_copyback = 0;
        self.background_offchip = 0;
    }

    /// Its metrics by name (docs/metrics.md).
    pub fn put_metrics(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let state = if self.enabled { "on".to_string() } else { format!("off: {}", self.off_because) };
        m.insert("rcftl_mode_selector".into(), state.into());
        m.insert("rcftl_mode_threshold".into(), self.threshold.into());
        m.insert("rcftl_dmms_urgent_copyback".into(), self.urgent_copyback.into());
        m.insert("rcftl_dmms_background_copyback".into(), self.background_copyback.into());
        m.insert("rcftl_dmms_background_offchip".into(), self.background_offchip.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted utilisation trace: each background victim decided by the load when it
    /// starts, kept while it runs, whoever finishes it.
    #[test]
    fn background_victims_follow_the_load_and_urgent_ones_copy_back() {
        let mut s = ModeSelector::new(2, 0.5, None);
        let script = [(0.9, true), (0.51, true), (0.5, false), (0.1, false), (0.0, false), (0.75, true)];
        for (u, expect) in script {
            assert_eq!(s.copy_back(0, false, Some(u), true), expect, "u = {u}");
            // Later pages of the victim keep its mode whatever the load does.
            assert_eq!(s.copy_back(0, false, Some(1.0 - u), false), expect, "u = {u}, continuing");
        }
        assert_eq!((s.background_copyback, s.background_offchip), (3, 3));
        // Low load, but urgent: copy-back; a suspended off-chip job taken over by urgent GC
        // keeps its mode (one destination per victim).
        assert!(!s.copy_back(1, false, Some(0.0), true));
        assert!(!s.copy_back(1, true, Some(0.0), false));
        assert!(s.copy_back(1, true, Some(0.0), true));
        assert_eq!(s.urgent_copyback, 1);
    }

    #[test]
    fn off_it_copies_back_always() {
        let mut s = ModeSelector::new(1, 0.5, Some("[ftl.rcftl] mode_selector = false"));
        assert!(s.copy_back(0, false, Some(0.0), true));
        let mut none = ModeSelector::new(1, 0.5, None);
        assert!(none.copy_back(0, false, None, true), "no buffer: nothing to read, greedy");
        let mut m = serde_json::Map::new();
        s.put_metrics(&mut m);
        assert_eq!(m["rcftl_mode_selector"], "off: [ftl.rcftl] mode_selector = false");
    }
}
