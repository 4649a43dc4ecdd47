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

/// The small drive of this crate's module tests: 2 channels x 2 planes x 32 blocks x 16
/// pages, a quarter over-provisioned, with `ftl` as its `[ftl]` table's lines.
#[cfg(test)]
pub(crate) fn unit_drive(ftl: &str) -> ftlsim_core::config::Resolved {
    let text = format!(
        r#"
name = "unit"
source = "test"
[geometry]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 32
pages_per_block = 16
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = 0.25
[timing]
cmd_addr_ns = 100
channel_mb_per_s = 81.92
t_r_ns = 25000
t_prog_ns = 200000
t_bers_ns = 1500000
[ftl]
{ftl}
"#
    );
    resolve(ftlsim_core::config::DriveConfig::from_toml(&text, "unit").unwrap()).unwrap()
}

pub use registry::{
    build, build_for, ignored_settings, info, memory_estimate, names, resolve, simulator, simulator_for, Capabilities,
    FtlInfo, FTLS, SECTIONS,
};
