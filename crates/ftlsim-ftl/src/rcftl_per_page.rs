//! rcFTL's per-page quota management (seed 003 Sec. IV-A, Fig. 4; L100-L107), the variant the
//! paper weighs its per-block scheme against (Fig. 7(a)): every page carries a copy-back
//! quota, Q_init after a host write or an off-chip copy; a copy-back from block b spends
//! Q_init / CT(b), CT(b) looked up from b's BER class and P/E count when the copy-back runs
//! (L105); GC copies a page back while its quota covers that, off-chip otherwise. The quota
//! arithmetic is the flash model's (`FlashArray::copyback_allowed`), which is exactly this
//! rule. Everything else is the page FTL with FastGC's policy shape (`fastgc::PerPageLimit`).
//!
//! Per-page management costs flash space and raises WAF (L27, L29, L145; how, the paper does
//! not say): the page FTL closes every block with `[ftl.copyback_table] pages` pages holding
//! its pages' quotas (docs/reliability.md), as for FastGC.

use crate::fastgc::{limited, Limit, PerPageLimit};
use crate::page::PageFtl;
use ftlsim_core::config::Resolved;
use ftlsim_core::error::ConfigError;

/// rcFTL with per-page quotas on `cfg`'s drive.
pub fn build(cfg: &Resolved) -> Result<PageFtl<PerPageLimit>, ConfigError> {
    limited(cfg, "rcftl-per-page", Limit::Quota)
}
