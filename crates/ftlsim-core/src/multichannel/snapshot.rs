//! Channel-system snapshots (`--save-state` / `--load-state` with a `[multichannel]` drive):
//! the drive snapshot's file format and checks ([`crate::sim::snapshot`]), with a body that
//! holds every unit's flash array and FTL state, the data-version counter and the per-unit
//! data oracle. Saved after preconditioning, with the write buffer empty; a loaded system
//! gives the results the same preconditioning in the process gives (tested).

use super::ChannelSystem;
use crate::error::SimError;
use crate::flash::FlashArray;
use crate::outputs::{Staged, Target};
use crate::sim::snapshot::{commit, corrupt, header_for, misfit, read_file, target, unsupported, write_file};
use crate::sim::SnapshotHeader;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Serialize)]
struct UnitRef<'a> {
    flash: &'a FlashArray,
    ftl: Vec<u8>,
}

#[derive(Serialize)]
struct BodyRef<'a> {
    units: Vec<UnitRef<'a>>,
    next_version: u32,
    oracle: Option<&'a [Vec<u32>]>,
}

#[derive(Deserialize)]
struct UnitBody {
    flash: FlashArray,
    ftl: Vec<u8>,
}

#[derive(Deserialize)]
struct Body {
    units: Vec<UnitBody>,
    next_version: u32,
    oracle: Option<Vec<Vec<u32>>>,
}

impl ChannelSystem {
    /// Save the channel system to `path` at once; `precondition` describes how the state was
    /// made. The write buffer must be empty (it is after preconditioning).
    pub fn save_state(&self, path: &Path, precondition: serde_json::Value) -> Result<(), SimError> {
        commit(self.stage_state(&target(path)?, precondition)?, path)
    }

    /// [`ChannelSystem::save_state`] into `to`, renamed into place when the returned
    /// [`Staged`] is committed.
    pub fn stage_state(&self, to: &Target, precondition: serde_json::Value) -> Result<Staged, SimError> {
        if self.buffer.used() > 0 {
            return Err(unsupported(to.shown(), "the write buffer holds pages; save right after preconditioning"));
        }
        let header = header_for(&self.cfg, precondition, self.precondition.clone(), self.oracle.is_some());
        let body = BodyRef {
            units: self.units.iter().map(|u| UnitRef { flash: &u.flash, ftl: u.ftl.save_state() }).collect(),
            next_version: self.next_version,
            oracle: self.oracle.as_deref(),
        };
        write_file(to, &header, &body)
    }

    /// Replace every unit's state with the snapshot at `path`, instead of preconditioning;
    /// refused with the reason as a drive's ([`crate::sim::Simulator::load_state`]).
    pub fn load_state(&mut self, path: &Path) -> Result<SnapshotHeader, SimError> {
        let (header, body): (SnapshotHeader, Body) = read_file(path, &self.cfg, self.oracle.is_some())?;
        let fits = body.units.len() == self.units.len()
            && body.units.iter().zip(&self.units).all(|(b, u)| b.flash.geometry() == u.flash.geometry())
            && body.oracle.as_ref().is_none_or(|o| {
                o.len() == self.units.len() && o.iter().all(|v| v.len() == self.unit_logical_pages as usize)
            });
        if !fits {
            return Err(misfit(path));
        }
        for (u, b) in self.units.iter_mut().zip(body.units) {
            u.ftl.load_state(&b.ftl).map_err(|e| corrupt(path, format!("ftl state: {e}")))?;
            u.flash = b.flash;
            u.flash_counts = Default::default();
        }
        self.next_version = body.next_version;
        if self.oracle.is_some() {
            self.oracle = body.oracle;
        }
        self.precondition = header.precondition_report.clone();
        // As a drive's: a decodable but inconsistent state stops here, not in the run.
        self.check_invariants();
        Ok(header)
    }
}
