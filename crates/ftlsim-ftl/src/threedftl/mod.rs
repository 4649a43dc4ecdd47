//! 3DFTL (seed 001, Thontirawong 2014, Ch. 6): the page map kept in the spare areas of the
//! data pages, three-level translation GTD -> LTD -> PMT, compressed spare areas, and a cache
//! of GTD-entry lines written through. Issue 17; docs/3dftl.md.
//!
//! - `ftl`: the FTL on the flash model (lookups charged in spare-area reads, GC that re-homes
//!   what a victim's stale pages still carry);
//! - `spare`: the spare-area layouts (Sec. 6.1.2), encoded and decoded bit for bit;
//! - `sram`: the SRAM budgets of Tables 6.1 and 8.1;
//! - `translate`: GTD and LTD pointers, the CMT of group lines and the reads each lookup
//!   costs (Secs. 6.1.1-6.1.4).

mod ftl;
pub mod spare;
pub mod sram;
pub mod translate;

pub use ftl::{LookupTransfer, ThreeDftl, ThreeDftlOptions};

/// Registry hook ([`crate::Capabilities::fit_drive`]): spare areas large enough for the
/// compressed mapping entries (seed 001 L986: 106 bytes).
pub fn fit_drive(cfg: &mut ftlsim_core::config::DriveConfig) {
    let need = spare::COMPRESSED_BYTES as u32;
    let g = &mut cfg.geometry;
    g.spare_usable_bytes = g.spare_usable_bytes.max(need);
    g.spare_bytes_per_page = g.spare_bytes_per_page.max(g.spare_usable_bytes);
}
