//! ftlsim-ftl: the flash translation layers, one module per paper, and the registry that
//! names them for the CLI, Python and tests.
#![deny(missing_docs)]

pub mod block;
pub mod cdftl;
pub mod demand;
pub mod dftl;
pub mod dloop;
pub mod fast;
pub mod fastgc;
pub mod ilog;
pub mod page;
pub mod pcftl;
pub mod rcftl;
pub mod rcftl_per_page;
pub mod scftl;
mod slot_chains;
pub mod threedftl;
pub mod waftl;

use ftlsim_core::config::{DriveConfig, InvalidTracking};
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
    /// Simulator memory per logical page for the FTL's own per-page state (maps, cache
    /// indexes), bytes: the FTL's part of [`memory_estimate`].
    pub bytes_per_logical_page: u64,
    /// Simulator memory per byte of the configured mapping cache (`ftl.mapping_cache_bytes`):
    /// a cache entry of 8-9 bytes on the controller takes about 30 in the simulator (its
    /// links, flags and index).
    pub bytes_per_cache_byte: u64,
    /// Whether it needs the reliability model (`[reliability]`, seed 003) on its drive.
    pub needs_reliability: bool,
}

/// Every FTL, in the order `ftlsim ftls` lists them.
pub const FTLS: &[FtlInfo] = &[
    FtlInfo {
        name: "page",
        description: "ideal page-level FTL: whole map in SRAM, greedy/FIFO/cost-benefit GC",
        source: "baseline of seeds 000-004 (e.g. seed 001 Ch. 4, seed 002 Sec. V)",
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
        needs_reliability: false,
    },
    FtlInfo {
        name: "dftl",
        description: "demand-based page FTL: translation pages on flash, GTD, segmented-LRU CMT",
        source: "Gupta et al. ASPLOS'09; seed 001 Sec. 3.3, Table 5.2",
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
        needs_reliability: false,
    },
    FtlInfo {
        name: "cdftl",
        description: "DFTL with a second-level cache of whole translation pages (CTP)",
        source: "Qin et al. RTAS'11; seed 001 Sec. 3.3, Fig. 3.5, Table 5.2",
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
        needs_reliability: false,
    },
    FtlInfo {
        name: "scftl",
        description: "SCFTL: TPD with modified counters, consecutive CMT entries, spatial fetching, D-NRU",
        source: "seed 001 Ch. 5 (Sec. 5.1, Figs. 5.1-5.2, Tables 5.1-5.2)",
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
        needs_reliability: false,
    },
    FtlInfo {
        name: "dloop",
        description: "DLOOP: DFTL mapping, plane fixed by LPN, plane-level GC with copy-back, no write cache",
        source: "Abdurrab et al. IPDPS'13, as seed 000 Secs. 2.1, 3.4 and 5 describe it",
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
        needs_reliability: false,
    },
    FtlInfo {
        name: "pcftl",
        description: "PCFTL: DFTL mapping, LRU write cache, token dispatch, plane-level GC with copy-back",
        source: "Wang & Xie TPDS'15, seed 000 Secs. 3-5 (Figs. 3, 4, 7-9, Table 1)",
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
        needs_reliability: false,
    },
    FtlInfo {
        name: "waftl",
        description:
            "WAFTL: Buffer Zone logging, page- and block-mapped data blocks by Algorithm 1, offline GC in idle time",
        source: "Wei et al. MSST'11, seed 002 Secs. III-IV (Table II, Algorithm 1, Eqs. 1-4)",
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
        needs_reliability: false,
    },
    FtlInfo {
        name: "3dftl",
        description:
            "3DFTL: mapping entries in the data pages' spare areas (GTD -> LTD -> PMT), compressed, write-through CMT",
        source: "seed 001 Ch. 6 (Secs. 6.1.1-6.1.4, Table 6.1)",
        bytes_per_logical_page: 5,
        bytes_per_cache_byte: 1,
        needs_reliability: false,
    },
    FtlInfo {
        name: "fastgc",
        description: "FastGC: page FTL whose GC copies back below one worst-case threshold per P/E range, per page",
        source: "Wu et al. DAC'18, as seed 003 Secs. II-III describe it (L23, L27, L50)",
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
        needs_reliability: true,
    },
    FtlInfo {
        name: "rcftl",
        description:
            "rcFTL: per-block copy-back quotas, one open block per quota level and plane, background GC's mode by write-buffer load",
        source: "seed 003 Secs. IV-A, IV-B, Fig. 5 (L107-L124)",
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
        needs_reliability: true,
    },
    FtlInfo {
        name: "rcftl-per-page",
        description: "rcFTL's per-page quota: copy-back while Q_init / CT(source block) fits the page's quota",
        source: "seed 003 Sec. IV-A, Fig. 4 (L100-L107)",
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
        needs_reliability: true,
    },
    FtlInfo {
        name: "block",
        description: "block-level FTL: one physical block per logical block, page updates rewrite the block",
        source: "BFTL of seed 001 Sec. 3.2, Table 5.3",
        bytes_per_logical_page: 0,
        bytes_per_cache_byte: 0,
        needs_reliability: false,
    },
    FtlInfo {
        name: "fast",
        description: "FAST hybrid FTL: block-mapped data, one SW log block, fully associative RW log blocks",
        source: "Lee et al. TECS'07; seed 001 Sec. 3.2, Table 5.3; seed 002 Sec. V; seed 004 Sec. 4.2",
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
        needs_reliability: false,
    },
];

/// The registry entry of an FTL name, or an error listing the names that exist.
pub fn info(name: &str) -> Result<&'static FtlInfo, ConfigError> {
    FTLS.iter().find(|f| f.name == name).ok_or_else(|| ConfigError::Invalid {
        key: "ftl.name".into(),
        value: name.into(),
        rule: format!("unknown FTL; available: {}", FTLS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")),
    })
}

/// FTLs whose GC can track invalid pages other than by flags (`ftl.invalid_tracking`).
const INVALID_TRACKING_FTLS: [&str; 6] = ["dftl", "cdftl", "scftl", "dloop", "pcftl", "3dftl"];

/// Build the FTL named by `cfg.ftl.name`.
pub fn build(cfg: &DriveConfig) -> Result<Box<dyn Ftl>, ConfigError> {
    let name = info(&cfg.ftl.name)?.name;
    let tracking = cfg.ftl.invalid_tracking;
    if tracking != InvalidTracking::Flags && !INVALID_TRACKING_FTLS.contains(&name) {
        return Err(ConfigError::Invalid {
            key: "ftl.invalid_tracking".into(),
            value: format!("{tracking:?}").to_lowercase(),
            rule: format!("only {} track invalid pages otherwise than by flags", INVALID_TRACKING_FTLS.join(", ")),
        });
    }
    match name {
        "page" => Ok(Box::new(page::PageFtl::new(cfg)?)),
        "fastgc" => Ok(Box::new(fastgc::build(cfg)?)),
        "rcftl-per-page" => Ok(Box::new(rcftl_per_page::build(cfg)?)),
        "rcftl" => Ok(Box::new(rcftl::build(cfg)?)),
        "block" => Ok(Box::new(block::BlockFtl::new(cfg)?)),
        "fast" => Ok(Box::new(fast::FastFtl::new(cfg)?)),
        "dftl" => Ok(Box::new(dftl::Dftl::new(cfg)?)),
        "scftl" => Ok(Box::new(scftl::Scftl::new(cfg)?)),
        "cdftl" => Ok(Box::new(cdftl::new(cfg)?)),
        "dloop" => Ok(Box::new(dloop::new(cfg)?)),
        "pcftl" => Ok(Box::new(pcftl::new(cfg)?)),
        "waftl" => Ok(Box::new(waftl::Waftl::new(cfg)?)),
        "3dftl" => Ok(Box::new(threedftl::ThreeDftl::new(cfg)?)),
        other => unreachable!("FTL `{other}` is registered but not built"),
    }
}

/// Simulator memory a config needs, bytes, before any of it is allocated: the flash array
/// (10 1/8 bytes per physical page: owner, version, flags, copy-back count, valid bit; 19 per
/// block), the block manager (12 per block), the host side (1/8 byte per logical page for trim
/// bits, 4 more with `verify`'s data oracle), the FTL's per-logical-page state
/// ([`FtlInfo::bytes_per_logical_page`]), its mapping cache
/// ([`FtlInfo::bytes_per_cache_byte`]) and its write buffer, plus a fixed 16 MiB for the
/// program, histograms and I/O buffers. It is the resident set of a full drive, a little
/// above the measured one (docs/configuration.md; tested against measured peak RSS); a
/// trace's `--overflow compact` first pass adds its map of touched pages on top.
pub fn memory_estimate(cfg: &DriveConfig, verify: bool) -> Result<u64, ConfigError> {
    let d = cfg.derive()?;
    let ftl = info(&cfg.ftl.name)?;
    let physical = u64::from(d.physical_pages);
    let logical = u64::from(d.logical_pages);
    let blocks = u64::from(cfg.geometry.blocks());
    // With the reliability model, each page's copy-back quota spent (2 bytes).
    let quota = if cfg.reliability.is_some() { physical * 2 } else { 0 };
    let flash = physical * 81 / 8 + blocks * 17 + quota;
    let block_manager = blocks * 12;
    let host = logical / 8 + if verify { logical * 4 } else { 0 };
    let ftl_state =
        logical * ftl.bytes_per_logical_page + cfg.ftl.mapping_cache_bytes.unwrap_or(0) * ftl.bytes_per_cache_byte;
    let buffer = cfg.host.write_buffer_bytes.unwrap_or(0);
    Ok(flash + block_manager + host + ftl_state + buffer + (16 << 20))
}

/// A simulator of `cfg` with its configured FTL.
pub fn simulator(cfg: DriveConfig, verify: bool) -> Result<Simulator, SimError> {
    let t0 = std::time::Instant::now();
    let ftl = build(&cfg)?;
    let ftl_s = t0.elapsed().as_secs_f64();
    let mut sim = Simulator::new(cfg, ftl, verify)?;
    sim.add_build_time(ftl_s);
    Ok(sim)
}
