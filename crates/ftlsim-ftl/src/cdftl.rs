//! CDFTL, a two-level cache for demand-based page mapping (Qin et al., RTAS 2011, as
//! summarised in the thesis, seed 001 Sec. 3.3 and Fig. 3.5, and configured in Table 5.2).
//!
//! The DFTL engine (`dftl.rs`: translation pages on flash, GTD, translation-block GC,
//! GC remapping through the cache) with a second cache level:
//! - the first level is a CMT of single entries (8.25 B each) exploiting temporal locality;
//! - the second level (CTP) holds whole translation pages (LRU) for spatial locality: a
//!   CMT miss whose translation page is cached is served from SRAM (counted as a hit, and as
//!   `cache_second_level_hits`); otherwise the page is read into the CTP;
//! - a modified CMT entry, when evicted, goes to its cached translation page (loaded if
//!   needed); only a modified page evicted from the CTP is written to flash, without
//!   reading it first since it is held whole, and with the CMT's modified entries of that
//!   page folded in and marked clean: DFTL's batch update (seed 001 L480), which the first
//!   level, "similar to DFTL" (L488), inherits. The copy then holds every change made so
//!   far, so its backup stamp advances (`demand.rs`, recovery). Qin et al.'s text is not
//!   available to us (paywalled); we follow the thesis's description.
//!
//! SRAM (Table 5.2, 8 GB chip): GTD 2.19 KB (512 entries of 4 B + 3 bits), CMT 2.06 KB
//! (256 entries), CTP 16 KB (two 8 KB pages): 20.25 KB. A `ftl.mapping_cache_bytes` budget
//! is split 8:1 between the CTP (whole pages, at least one) and the CMT.
//!
//! Departures: the first level is the DFTL's segmented LRU rather than plain LRU.

use crate::dftl::Dftl;
use ftlsim_core::config::Resolved;
use ftlsim_core::error::ConfigError;

/// Build CDFTL for a validated config.
pub fn new(cfg: &Resolved) -> Result<Dftl, ConfigError> {
    Dftl::cdftl(cfg)
}
