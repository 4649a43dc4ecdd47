//! WAFTL (seed 002: Wei et al., MSST 2011, Secs. III-IV): a Buffer Zone logging every write,
//! page-mapped (PMB) and block-mapped (BMB) data blocks chosen per logical block by Algorithm 1
//! when the zone is full, and offline GC in predicted idle time. Issue 16; docs/waftl.md.
//!
//! - `ftl`: the FTL on the flash model (zone blocks, GMT, the page-mapped part as an embedded
//!   DFTL whose CMT is the CPMT, migration, online and offline GC, endurance-aware lending);
//! - `draining`: a full zone draining behind the new one (incremental migration);
//! - `zone`: the BZMT with block popularity and Algorithm 1's plan (Sec. III-C, L127-187);
//! - `threshold`: the static and dynamic migration threshold, with an online estimator for
//!   Eqs. 1-2;
//! - `idle`: the idle-time predictor of Eqs. 3-4 (Sec. III-D);
//! - `mapping_size`: the mapping-table sizes of Fig. 16.

pub mod draining;
mod erase_queue;
mod ftl;
pub mod idle;
pub mod mapping_size;
pub mod threshold;
pub mod zone;

pub use ftl::Waftl;
