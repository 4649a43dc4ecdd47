//! ftlsim-ftl: the flash translation layers, one module per paper, the registry that names
//! them for the CLI, Python and tests, and the drive presets of the papers.
//!
//! ```
//! // Every registered FTL, built on a preset's drive through the registry.
//! let cfg = ftlsim_ftl::presets::load("default").unwrap();
//! let ftl = ftlsim_ftl::build(&cfg).unwrap();
//! assert_eq!(ftl.name(), "page");
//! assert!(ftlsim_ftl::info("dftl").unwrap().capabilities.recovers);
//! ```
#![deny(missing_docs)]

pub mod block;
pub mod cdftl;
pub mod demand;
pub mod dftl;
pub mod dloop;
pub mod fast;
pub mod fastgc;
pub mod fdp;
pub mod hotcold;
pub mod ilog;
pub mod options;
pub mod page;
pub mod pcftl;
pub mod presets;
pub mod rcftl;
pub mod rcftl_per_page;
mod registry;
pub mod scftl;
mod slot_chains;
pub mod threedftl;
pub mod waftl;
pub mod zns;

pub use registry::{build, info, memory_estimate, names, resolve, simulator, Capabilities, FtlInfo, FTLS, SECTIONS};
