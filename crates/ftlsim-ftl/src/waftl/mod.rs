//! WAFTL (seed 002: Wei et al., MSST 2011, Secs. III-IV): a Buffer Zone logging every write,
//! page-mapped (PMB) and block-mapped (BMB) data blocks chosen per logical block by Algorithm 1
//! when the zone is full, and offline GC in predicted idle time. Issue 16.
//!
//! Built so far, each with the paper's rules as tests: the BZMT with block popularity and
//! Algorithm 1's plan (`zone`, Sec. III-C, L127-187), the static and dynamic migration
//! threshold with an online estimator for Eqs. 1-2 (`threshold`), the idle-time predictor of
//! Eqs. 3-4 (`idle`, Sec. III-D) and the mapping-table sizes of Fig. 16 (`mapping_size`). The FTL that
//! puts them on the flash model (zone blocks, GMT/PMT/CPMT, migration, online and offline GC,
//! endurance-aware allocation) and its registration as `waftl` come next; the decisions the
//! paper leaves open are in docs/waftl.md.

pub mod idle;
pub mod mapping_size;
pub mod threshold;
pub mod zone;
