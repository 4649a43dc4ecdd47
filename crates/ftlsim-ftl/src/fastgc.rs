//! FastGC (Wu et al., DAC 2018) as seed 003 describes it, the baseline rcFTL beats at high
//! wear: GC copies valid pages back within their plane while a page's consecutive
//! copy-backs stay below one threshold per P/E range, chosen for the worst blocks because
//! FastGC does not tell blocks apart ("a single copyback threshold value was used for all
//! the blocks with the same P/E cycles, the copyback threshold was conservatively selected",
//! L50; "block-unaware worst-case setting", L69), tracked per page (L27). Our reading: the
//! threshold is Table I's worst row at the source block's P/E count; the count is the flash
//! model's per-page consecutive copy-back count, reset by a host write or an off-chip copy.
//! The per-page counters cost a page at the end of every block (`ftl.copyback_table_pages`,
//! docs/reliability.md). Everything else is the page FTL (`page`), whose GC this only limits.

use crate::page::{CopybackLimit, PageFtl};
use ftlsim_core::config::{DriveConfig, GcCopy};
use ftlsim_core::error::ConfigError;

/// FastGC on `cfg`'s drive: the reliability model on, GC copying back by default.
pub fn build(cfg: &DriveConfig) -> Result<PageFtl, ConfigError> {
    limited(cfg, "fastgc", CopybackLimit::WorstCase)
}

/// The page FTL named `name` with copy-backs limited by `limit`, for a drive with the
/// reliability model (`[reliability]`). Its GC copies back wherever the limit allows,
/// whatever `ftl.gc_copy` says (the `rcftl` preset's "controller" is its baseline's, `page`).
pub(crate) fn limited(cfg: &DriveConfig, name: &'static str, limit: CopybackLimit) -> Result<PageFtl, ConfigError> {
    if cfg.reliability.is_none() {
        return Err(ConfigError::Invalid {
            key: "reliability".into(),
            value: "(absent)".into(),
            rule: format!(
                "{name} limits copy-backs by the reliability model (seed 003 Table I): add a [reliability] section \
                 (the `rcftl` preset has one) or give --pe-cycles N"
            ),
        });
    }
    let mut cfg = cfg.clone();
    cfg.ftl.gc_copy = Some(GcCopy::Copyback);
    PageFtl::with_limit(&cfg, name, limit)
}
