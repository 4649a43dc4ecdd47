//! DLOOP, PCFTL's earlier version (Abdurrab, Xie & Wang, IPDPS 2013), as seed 000 describes
//! it (Secs. 1, 2.1, 3.4 and 5).
//!
//! DFTL's mapping-table model (`dftl.rs`) with:
//! - **static dispatch**: a page's plane is fixed by its logical address, `lpn % planes`,
//!   so updates stay on their plane (`ftl.allocation = "static_lpn"` is the default here);
//! - **plane-level GC with copy-back**, as PCFTL's (`pcftl.rs`): one plane collected on the
//!   write's path, copy-backs within it, destination pages wasted to keep parity;
//! - **no write cache** and no fix for the never-ending GC.
//!
//! Never-ending GC (Sec. 3.4): DLOOP keeps collecting when a PGC frees nothing, as the
//! paper says it would. A real drive would then loop for ever; the simulator counts each
//! such collection (`gc_no_progress_collections`) and, when one plane goes
//! `blocks_per_plane` collections without passing its best count of erased pages (Fig. 8's
//! loop, or a longer cycle whose gains and waste cancel), stops the run with an error naming
//! the plane, rather than hang. It is rare with parity-matched moves (tests/pcftl.rs meets it
//! on some full drives under uniform overwrites) and did not occur in experiments/pcftl.
//! Idle-time GC has no such stop: after an idle collection that freed nothing, idle GC
//! leaves the plane until the host invalidates a page there or foreground GC collects it
//! (a simulator choice: seed 000 does not say what DLOOP's idle-time GC does there).
//!
//! Departures: those of `pcftl.rs` (GC block per plane, progress judged by destination pages).

use crate::demand::{GcMode, NeverEnding};
use crate::dftl::{Dftl, Flavour};
use ftlsim_core::config::{Allocation, Resolved};
use ftlsim_core::error::ConfigError;

/// Build DLOOP for a validated config.
pub fn new(cfg: &Resolved) -> Result<Dftl, ConfigError> {
    Dftl::build(
        cfg,
        Flavour {
            name: "dloop",
            second_level: false,
            gc: GcMode::plane_level(cfg, NeverEnding::Stop)?,
            allocation: Allocation::StaticLpn,
            plane_info: true,
            remake: new,
        },
    )
}
