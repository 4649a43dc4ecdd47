//! WAFTL (seed 002: Wei et al., MSST 2011, Secs. III-IV): a Buffer Zone logging every write,
//! page-mapped (PMB) and block-mapped (BMB) data blocks chosen per logical block by Algorithm 1
//! when the zone is full, and offline GC in predicted idle time. Issue 16; docs/waftl.md.
//!
//! - `ftl`: the FTL on the flash model (zone blocks, GMT, the page-mapped part as an embedded
//!   DFTL whose CMT is the CPMT, migration, online and offline GC, endurance-aware lending);
//! - `draining`: a full zone draining behind the new one (incremental migration);
//! - `zone`: the BZMT with block popularity and Algorithm 1's plan (Sec. III-C, L127-187);
//! - `zone_log`: the zone's blocks, a log striped over the planes and lent a block at a time;
//! - `threshold`: the static and dynamic migration threshold, with an online estimator for
//!   Eqs. 1-2;
//! - `idle`: the idle-time predictor of Eqs. 3-4 (Sec. III-D);
//! - `mapping_size`: the mapping-table sizes of Fig. 16.

pub mod draining;
mod erase_queue;
mod ftl;
pub mod idle;
pub mod mapping_size;
mod options;
pub mod threshold;
pub mod zone;
pub mod zone_log;

pub use ftl::Waftl;
pub use options::{WaftlOptions, ZoneMigration};

/// Registry hook ([`crate::Capabilities::fit_drive`]): a Buffer Zone of an eighth of each
/// plane's spare blocks, at least one block per plane, so that two zones (the one draining
/// and the new one) fit beside the GC reserve of a drive of any size.
pub fn fit_drive(cfg: &mut ftlsim_core::config::DriveConfig) {
    let Ok(checked) = ftlsim_core::config::Resolved::validate(cfg.clone()) else { return };
    let d = checked.derived();
    let g = &cfg.geometry;
    let spare = g.blocks_per_plane.saturating_sub(d.logical_pages.div_ceil(g.pages_per_block).div_ceil(g.planes()));
    let per_plane = u64::from((spare / 8).max(1));
    let zone = per_plane * u64::from(g.planes()) * u64::from(g.pages_per_block) * u64::from(g.page_size_bytes);
    let section = cfg.ftl.sections.entry(<WaftlOptions as crate::options::Options>::SECTION.to_string()).or_default();
    section.insert("buffer_zone_bytes".into(), toml::Value::Integer(zone as i64));
}
