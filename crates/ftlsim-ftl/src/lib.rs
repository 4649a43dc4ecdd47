//! ftlsim-ftl: the flash translation layers, one module per paper, and the registry that
//! names them for the CLI, Python and tests.
#![deny(missing_docs)]

pub mod page;

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::ftl::Ftl;
use ftlsim_core::sim::Simulator;

/// A registered FTL.
#[derive(Debug, Clone, Copy)]
pub struct FtlInfo {
    /// Name used in configs and on the command line.
    pub name: &'static str,
    /// One line on what it is.
    pub description: &'static str,
    /// Where it comes from.
    pub source: &'static str,
}

/// Every FTL, in the order `ftlsim ftls` lists them.
pub const FTLS: &[FtlInfo] = &[FtlInfo {
    name: "page",
    description: "ideal page-level FTL: whole map in SRAM, greedy/FIFO/cost-benefit GC",
    source: "baseline of seeds 000-004 (e.g. seed 001 Ch. 4, seed 002 Sec. V)",
}];

/// The registry entry of an FTL name, or an error listing the names that exist.
pub fn info(name: &str) -> Result<&'static FtlInfo, ConfigError> {
    FTLS.iter().find(|f| f.name == name).ok_or_else(|| ConfigError::Invalid {
        key: "ftl.name".into(),
        value: name.into(),
        rule: format!("unknown FTL; available: {}", FTLS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")),
    })
}

/// Build the FTL named by `cfg.ftl.name`.
pub fn build(cfg: &DriveConfig) -> Result<Box<dyn Ftl>, ConfigError> {
    match info(&cfg.ftl.name)?.name {
        "page" => Ok(Box::new(page::PageFtl::new(cfg)?)),
        other => unreachable!("FTL `{other}` is registered but not built"),
    }
}

/// A simulator of `cfg` with its configured FTL.
pub fn simulator(cfg: DriveConfig, verify: bool) -> Result<Simulator, SimError> {
    let ftl = build(&cfg)?;
    Simulator::new(cfg, ftl, verify)
}
