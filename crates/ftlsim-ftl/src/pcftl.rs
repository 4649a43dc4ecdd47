//! PCFTL, a plane-centric page-mapping FTL (Wang & Xie, IEEE TPDS 2015; seed 000 Secs. 3-5).
//!
//! PCFTL is DFTL's mapping-table model (`dftl.rs`: CMT, translation pages, GTD) with the
//! paper's three mechanisms; only these differ from the DFTL and DLOOP it is compared with:
//! - **Write cache** (Sec. 3.1, Fig. 4): the host pipeline's LRU write buffer
//!   (`ftlsim_core::write_buffer`), 2 MiB (Table 1) unless `host.write_buffer_bytes` says
//!   otherwise; hits on reads and writes, the tail evicted to flash.
//! - **Cache-assisted write dispatch** (Fig. 3): an evicted new page goes to plane
//!   `token % planes` and the token moves on; an update goes to the plane of its old copy
//!   (`ftl.allocation = "update_in_plane"` is the default here).
//! - **Plane-level GC** (Secs. 3.3, 3.5, Fig. 9): when a plane's free blocks fall below the
//!   threshold, the plane alone collects its block with the most invalid pages, on the
//!   write's path; valid pages move by intra-plane copy-back, and a destination page of the
//!   other parity is wasted (counted) to keep the same-parity rule. No other plane waits:
//!   nothing holds host I/O, and copy-backs on different planes overlap in the scheduler.
//!   With `ftl.background_gc`, idle time runs PGC on each plane below the background
//!   threshold.
//! - **Never-ending GC** (Sec. 3.4, Fig. 8; Fig. 9 lines 18 and 27-29): a PGC after which
//!   the plane has no more erased pages than before made no progress (judged by the
//!   destination pages it used, moves and parity waste, against the pages its victim gives
//!   back, so host writes meanwhile do not count); this holds for idle-time PGC too; the next collection then moves pages through the
//!   controller without copy-back (no parity waste), counted in `gc.fallbacks`.
//!   `[ftl.pcftl] never_ending_gc_fallback = false` turns the fix off to show the problem.
//! - **Plane Info** (Sec. 3.3): per-plane active block and free-block count, 9 bytes per
//!   plane of DRAM, reported as `dram_plane_info_bytes`.
//!
//! Departures: GC relocates into the plane's GC block rather than the host's active block
//! (the engine keeps host, translation and GC streams apart so that a collection opens at
//! most one block); the never-ending check counts a collection's destination pages
//! rather than Fig. 9's unspecified `current_state`. The paper does not say where translation pages go; they
//! follow DFTL (round-robin over planes).

use crate::demand::{GcMode, NeverEnding};
use crate::dftl::{Dftl, Flavour};
use crate::options::Options;
use ftlsim_core::config::{Allocation, Resolved};
use ftlsim_core::error::ConfigError;
use serde::{Deserialize, Serialize};

/// Table 1's default write cache: 2 MB (the registry gives the drive this write buffer when
/// `host.write_buffer_bytes` is unset).
pub const WRITE_CACHE_BYTES: u64 = 2 << 20;

/// PCFTL's options (`[ftl.pcftl]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PcftlOptions {
    /// After a plane-level GC that freed no page (the never-ending GC of Sec. 3.4), collect
    /// once without copy-back (Fig. 9 lines 27-29). `false` reproduces the problem.
    pub never_ending_gc_fallback: bool,
}

impl Default for PcftlOptions {
    fn default() -> Self {
        PcftlOptions { never_ending_gc_fallback: true }
    }
}

impl Options for PcftlOptions {
    const SECTION: &'static str = "pcftl";
}

/// Build PCFTL for a validated config.
pub fn new(cfg: &Resolved) -> Result<Dftl, ConfigError> {
    let never_ending =
        if PcftlOptions::of(cfg)?.never_ending_gc_fallback { NeverEnding::Fallback } else { NeverEnding::Stop };
    Dftl::build(
        cfg,
        Flavour {
            name: "pcftl",
            second_level: false,
            gc: GcMode::plane_level(cfg, never_ending)?,
            allocation: Allocation::UpdateInPlane,
            plane_info: true,
            remake: new,
        },
    )
}
