//! The registry: every FTL once, with its constructor and its capabilities. It is the only
//! place that knows FTLs by name. The CLI, Python, the run pipeline and the tests list, build,
//! check and size FTLs through it; the core checks capabilities an FTL object offers, never
//! names; the conformance suite (tests/conformance.rs) runs every entry.
//!
//! Adding an FTL: a module with its constructor, one [`FtlInfo`] in [`FTLS`], its option
//! sections (if any) in [`SECTIONS`]; docs/extending.md walks through one.

use crate::options::{section, Section};
use crate::{block, cdftl, dftl, dloop, fast, fastgc, hotcold, page, pcftl, rcftl, rcftl_per_page, scftl, threedftl};
use crate::{ilog, waftl, zns};
use ftlsim_core::config::{DriveConfig, GcScope, InvalidTracking, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::ftl::Ftl;
use ftlsim_core::sim::Simulator;

/// What an FTL can do and needs, declared once: the registry checks configs against it, and
/// the conformance suite checks each FTL object agrees (`Ftl::recovery`, `Ftl::managed_gc`).
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    /// Recovers after a power cut ([`ftlsim_core::ftl::Recovery`]; `--power-cut`).
    pub recovers: bool,
    /// Runs as a unit of a channel system (`[multichannel]`, seed 004): its GC can be driven
    /// step by step from outside ([`ftlsim_core::ftl::ManagedGc`]).
    pub channel_unit: bool,
    /// Needs the reliability model (`[reliability]`, seed 003) on its drive.
    pub needs_reliability: bool,
    /// Its GC may never end under the same-parity copy-back rule (`nand.copyback_same_parity`),
    /// as the paper says (DLOOP, seed 000 Sec. 3.4, which has no fix): a run can stop with
    /// that error, so checks of correctness leave the rule off for it.
    pub never_ending_gc: bool,
    /// A zoned namespace (docs/zns.md): it refuses writes off a zone's write pointer, so the
    /// contract's random workloads do not apply to it; its own tests cover it.
    pub zoned: bool,
    /// Honours NVMe Flexible Data Placement (`[fdp]`, docs/fdp.md): a write's placement handle
    /// decides its blocks.
    pub placement: bool,
    /// Keeps a superseded copy of a page valid until a move under way ends (WAFTL: a page
    /// rewritten into its Buffer Zone, or into a block-mapped block being rewritten, leaves
    /// its home copy valid until the migration or rewrite completes, seed 002 Sec. III-C):
    /// the conformance suite's flash check then holds only each page's newest copy to the
    /// oracle, not the count of copies.
    pub superseded_valid: bool,
    /// The shared `[ftl]` keys it does not act on (`background_gc`: no idle-time GC;
    /// `gc_scope`: its collections hold only their own plane): a run that sets one is told
    /// so ([`ignored_settings`]), never silently.
    pub ignores: &'static [&'static str],
    /// The ways of tracking invalid pages it supports (`ftl.invalid_tracking`).
    pub invalid_tracking: &'static [InvalidTracking],
    /// The option sections (`[ftl.NAME]`) it reads.
    pub sections: &'static [&'static str],
    /// The DRAM write buffer it brings when `host.write_buffer_bytes` is unset, bytes
    /// (PCFTL's write cache).
    pub default_write_buffer_bytes: u64,
    /// Open blocks per plane it keeps on `cfg` (host streams, GC streams, translation and
    /// log streams): what the over-provisioning must hold beside the GC reserve.
    pub open_blocks_per_plane: fn(&DriveConfig) -> u32,
    /// Adjust a drive made for another FTL so that this one runs on it (the benchmark's and
    /// the conformance suite's drives): its own options sized to the drive (WAFTL's Buffer
    /// Zone), the spare bytes it needs (3DFTL's mapping entries).
    pub fit_drive: fn(&mut DriveConfig),
}

impl Capabilities {
    /// The yes-or-no capabilities by the names the CLI (`ftlsim ftls`) and Python
    /// (`ftlsim.ftls()`) both give them.
    pub fn flags(&self) -> [(&'static str, bool); 5] {
        [
            ("recovers", self.recovers),
            ("channel_unit", self.channel_unit),
            ("needs_reliability", self.needs_reliability),
            ("placement", self.placement),
            ("zoned", self.zoned),
        ]
    }
}

/// A registered FTL.
#[derive(Debug, Clone, Copy)]
pub struct FtlInfo {
    /// Name used in configs and on the command line.
    pub name: &'static str,
    /// One line on what it is.
    pub description: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// Its constructor, for a config the registry resolved ([`resolve`]).
    pub build: fn(&Resolved) -> Result<Box<dyn Ftl>, ConfigError>,
    /// What it can do and needs.
    pub capabilities: Capabilities,
    /// Simulator memory per logical page for the FTL's own per-page state (maps, cache
    /// indexes), bytes: the FTL's part of [`memory_estimate`].
    pub bytes_per_logical_page: u64,
    /// Simulator memory per byte of the configured mapping cache (`ftl.mapping_cache_bytes`):
    /// a cache entry of 8-9 bytes on the controller takes about 30 in the simulator (its
    /// links, flags and index).
    pub bytes_per_cache_byte: u64,
}

/// Every option section an FTL owns.
pub const SECTIONS: &[Section] = &[
    section::<scftl::ScftlOptions>(),
    section::<fast::FastOptions>(),
    section::<zns::ZnsOptions>(),
    section::<dftl::DftlOptions>(),
    section::<dftl::CdftlOptions>(),
    section::<pcftl::PcftlOptions>(),
    section::<waftl::WaftlOptions>(),
    section::<rcftl::RcftlOptions>(),
    section::<fastgc::CopybackTableOptions>(),
    section::<ilog::IlogOptions>(),
    section::<hotcold::HotColdOptions>(),
    section::<threedftl::ThreeDftlOptions>(),
];

fn boxed<F: Ftl + 'static>(f: Result<F, ConfigError>) -> Result<Box<dyn Ftl>, ConfigError> {
    f.map(|f| Box::new(f) as Box<dyn Ftl>)
}

/// Flags only.
const FLAGS: &[InvalidTracking] = &[InvalidTracking::Flags];
/// Every way: the demand FTLs read a victim's pages, or its ILog, to learn what is stale.
const ANY_TRACKING: &[InvalidTracking] = &[InvalidTracking::Flags, InvalidTracking::Counters, InvalidTracking::Ilog];
/// The demand engine's streams: host, translation and GC blocks, and ILog's invalidation
/// pages when it tracks so.
fn demand_open_blocks(cfg: &DriveConfig) -> u32 {
    let fdp = cfg.fdp.as_ref().map_or(0, |f| match f.handle_type {
        ftlsim_core::config::FdpHandleType::PersistentlyIsolated => 2 * (f.handles - 1),
        ftlsim_core::config::FdpHandleType::InitiallyIsolated => f.handles - 1,
    });
    3 + u32::from(cfg.ftl.invalid_tracking == InvalidTracking::Ilog) + fdp
}
/// A page-mapped FTL: one block per host stream and one for GC; under FDP one per handle
/// and one for GC, or one per handle for GC too (persistently isolated).
fn page_open_blocks(cfg: &DriveConfig) -> u32 {
    match &cfg.fdp {
        Some(f) if f.handle_type == ftlsim_core::config::FdpHandleType::PersistentlyIsolated => 2 * f.handles,
        Some(f) => f.handles + 1,
        None => cfg.ftl.write_streams + 1,
    }
}
/// A block-mapped FTL: the block being written.
fn one_open_block(_: &DriveConfig) -> u32 {
    1
}
fn no_change(_: &mut DriveConfig) {}
/// A zoned namespace: no open blocks beyond its zones'.
fn no_open_blocks(_: &DriveConfig) -> u32 {
    0
}

/// The capabilities most FTLs have: recovery, nothing else; `open` blocks per plane.
const fn recovering(open: fn(&DriveConfig) -> u32) -> Capabilities {
    Capabilities {
        recovers: true,
        channel_unit: false,
        needs_reliability: false,
        never_ending_gc: false,
        zoned: false,
        placement: false,
        superseded_valid: false,
        ignores: &[],
        invalid_tracking: FLAGS,
        sections: &[],
        default_write_buffer_bytes: 0,
        open_blocks_per_plane: open,
        fit_drive: no_change,
    }
}

/// The demand engine's FTLs: recovery, every invalid tracking, ILog's section.
const fn demand(sections: &'static [&'static str]) -> Capabilities {
    Capabilities { invalid_tracking: ANY_TRACKING, sections, ..recovering(demand_open_blocks) }
}

/// Every FTL, in the order `ftlsim ftls` lists them; the first is the default.
pub const FTLS: &[FtlInfo] = &[
    FtlInfo {
        name: "page",
        description: "ideal page-level FTL: whole map in SRAM, greedy/FIFO/cost-benefit GC",
        source: "baseline of seeds 000-004 (e.g. seed 001 Ch. 4, seed 002 Sec. V)",
        build: |c| boxed(page::PageFtl::new(c)),
        capabilities: Capabilities { channel_unit: true, placement: true, ..recovering(page_open_blocks) },
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
    },
    FtlInfo {
        name: "dftl",
        description: "demand-based page FTL: translation pages on flash, GTD, segmented-LRU CMT",
        source: "Gupta et al. ASPLOS'09; seed 001 Sec. 3.3, Table 5.2",
        build: |c| boxed(dftl::Dftl::new(c)),
        capabilities: Capabilities { channel_unit: true, placement: true, ..demand(&["dftl", "ilog"]) },
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
    },
    FtlInfo {
        name: "cdftl",
        description: "DFTL with a second-level cache of whole translation pages (CTP)",
        source: "Qin et al. RTAS'11; seed 001 Sec. 3.3, Fig. 3.5, Table 5.2",
        build: |c| boxed(cdftl::new(c)),
        capabilities: Capabilities { placement: true, ..demand(&["dftl", "cdftl", "ilog"]) },
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
    },
    FtlInfo {
        name: "scftl",
        description: "SCFTL: TPD with modified counters, consecutive CMT entries, spatial fetching, D-NRU",
        source: "seed 001 Ch. 5 (Sec. 5.1, Figs. 5.1-5.2, Tables 5.1-5.2)",
        build: |c| boxed(scftl::Scftl::new(c)),
        capabilities: Capabilities { placement: true, ..demand(&["scftl", "ilog"]) },
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
    },
    FtlInfo {
        name: "dloop",
        description: "DLOOP: DFTL mapping, plane fixed by LPN, plane-level GC with copy-back, no write cache",
        source: "Abdurrab et al. IPDPS'13, as seed 000 Secs. 2.1, 3.4 and 5 describe it",
        build: |c| boxed(dloop::new(c)),
        capabilities: Capabilities { never_ending_gc: true, placement: true, ..demand(&["ilog"]) },
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
    },
    FtlInfo {
        name: "pcftl",
        description: "PCFTL: DFTL mapping, LRU write cache, token dispatch, plane-level GC with copy-back",
        source: "Wang & Xie TPDS'15, seed 000 Secs. 3-5 (Figs. 3, 4, 7-9, Table 1)",
        build: |c| boxed(pcftl::new(c)),
        capabilities: Capabilities {
            default_write_buffer_bytes: pcftl::WRITE_CACHE_BYTES,
            placement: true,
            ..demand(&["pcftl", "ilog"])
        },
        bytes_per_logical_page: 8,
        bytes_per_cache_byte: 4,
    },
    FtlInfo {
        name: "waftl",
        description:
            "WAFTL: Buffer Zone logging, page- and block-mapped data blocks by Algorithm 1, offline GC in idle time",
        source: "Wei et al. MSST'11, seed 002 Secs. III-IV (Table II, Algorithm 1, Eqs. 1-4)",
        build: |c| boxed(waftl::Waftl::new(c)),
        capabilities: Capabilities {
            invalid_tracking: FLAGS,
            superseded_valid: true,
            fit_drive: waftl::fit_drive,
            ..demand(&["waftl"])
        },
        bytes_per_logical_page: 9,
        bytes_per_cache_byte: 4,
    },
    FtlInfo {
        name: "3dftl",
        description:
            "3DFTL: mapping entries in the data pages' spare areas (GTD -> LTD -> PMT), compressed, write-through CMT",
        source: "seed 001 Ch. 6 (Secs. 6.1.1-6.1.4, Table 6.1)",
        build: |c| boxed(threedftl::ThreeDftl::new(c)),
        capabilities: Capabilities {
            invalid_tracking: ANY_TRACKING,
            ignores: &["background_gc", "gc_scope"],
            fit_drive: threedftl::fit_drive,
            ..recovering(demand_open_blocks)
        },
        bytes_per_logical_page: 6,
        bytes_per_cache_byte: 1,
    },
    FtlInfo {
        name: "fastgc",
        description: "FastGC: page FTL whose GC copies back below one worst-case threshold per P/E range, per page",
        source: "Wu et al. DAC'18, as seed 003 Secs. II-III describe it (L23, L27, L50)",
        build: |c| boxed(fastgc::build(c)),
        capabilities: Capabilities {
            needs_reliability: true,
            sections: &["copyback_table"],
            ..recovering(page_open_blocks)
        },
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
    },
    FtlInfo {
        name: "rcftl",
        description:
            "rcFTL: per-block copy-back quotas, one open block per quota level and plane, background GC's mode by write-buffer load",
        source: "seed 003 Secs. IV-A, IV-B, Fig. 5 (L107-L124)",
        build: |c| boxed(rcftl::build(c)),
        capabilities: Capabilities {
            needs_reliability: true,
            sections: &["rcftl"],
            ..recovering(rcftl::open_blocks_per_plane)
        },
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
    },
    FtlInfo {
        name: "rcftl-per-page",
        description: "rcFTL's per-page quota: copy-back while Q_init / CT(source block) fits the page's quota",
        source: "seed 003 Sec. IV-A, Fig. 4 (L100-L107)",
        build: |c| boxed(rcftl_per_page::build(c)),
        capabilities: Capabilities {
            needs_reliability: true,
            sections: &["copyback_table"],
            ..recovering(page_open_blocks)
        },
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
    },
    FtlInfo {
        name: "block",
        description: "block-level FTL: one physical block per logical block, page updates rewrite the block",
        source: "BFTL of seed 001 Sec. 3.2, Table 5.3",
        build: |c| boxed(block::BlockFtl::new(c)),
        capabilities: Capabilities { ignores: &["background_gc"], ..recovering(one_open_block) },
        bytes_per_logical_page: 1,
        bytes_per_cache_byte: 0,
    },
    FtlInfo {
        name: "fast",
        description: "FAST hybrid FTL: block-mapped data, one SW log block, fully associative RW log blocks",
        source: "Lee et al. TECS'07; seed 001 Sec. 3.2, Table 5.3; seed 002 Sec. V; seed 004 Sec. 4.2",
        build: |c| boxed(fast::FastFtl::new(c)),
        capabilities: Capabilities {
            channel_unit: true,
            sections: &["fast"],
            ignores: &["background_gc"],
            ..recovering(one_open_block)
        },
        bytes_per_logical_page: 4,
        bytes_per_cache_byte: 0,
    },
    FtlInfo {
        name: "zns",
        description: "zoned namespace: sequential-write-required zones, one block per plane each, no device GC",
        source: "NVMe Zoned Namespace Command Set 1.1 (TP4053); issue 39",
        build: |c| boxed(zns::ZnsFtl::new(c)),
        capabilities: Capabilities {
            zoned: true,
            sections: &["zns"],
            ignores: &["background_gc", "gc_scope"],
            fit_drive: zns::fit_drive,
            ..recovering(no_open_blocks)
        },
        bytes_per_logical_page: 0,
        bytes_per_cache_byte: 0,
    },
    FtlInfo {
        name: "hotcold",
        description: "page FTL writing hot and cold pages to separate blocks, hotness by update count",
        source: "docs/extending.md; data clustering of Chiang, Lee & Chang (SP&E 1999), hot data by update counts as Hsieh, Kuo & Chang (ACM TOS 2006)",
        build: |c| boxed(hotcold::build(c)),
        capabilities: Capabilities { channel_unit: true, sections: &["hotcold"], ..recovering(hotcold::open_blocks_per_plane) },
        bytes_per_logical_page: 5,
        bytes_per_cache_byte: 0,
    },
];

/// What `cfg` sets that its FTL does not act on (the FTL's `ignores`), one sentence each
/// naming the key, its value and the FTL: a run reports them as notices.
pub fn ignored_settings(cfg: &DriveConfig) -> Vec<String> {
    let Ok(f) = info(&cfg.ftl.name) else { return Vec::new() };
    // Each key: its value when set, and why the FTL does not act on it.
    let set = |key: &str| match key {
        "background_gc" => (cfg.ftl.background_gc.then(|| "true".to_string()), "it has no idle-time GC"),
        // A plane's scope is what such an FTL does anyway.
        "gc_scope" => (
            cfg.ftl.gc_scope.filter(|&s| s != GcScope::Plane).map(|s| format!("{s:?}").to_lowercase()),
            "its collections hold only their own plane",
        ),
        other => unreachable!("registry lists an unknown [ftl] key {other}"),
    };
    f.capabilities
        .ignores
        .iter()
        .filter_map(|&key| {
            let (value, why) = set(key);
            value.map(|v| format!("ftl.{key} = {v}: {} does not act on it ({why}); the run goes on without it", f.name))
        })
        .collect()
}

/// The registry entry of an FTL name, or an error listing the names that exist.
pub fn info(name: &str) -> Result<&'static FtlInfo, ConfigError> {
    FTLS.iter().find(|f| f.name == name).ok_or_else(|| ConfigError::Invalid {
        key: "ftl.name".into(),
        value: name.into(),
        rule: format!("unknown FTL; available: {}", names(|_| true)),
    })
}

/// The names of the FTLs whose capabilities pass `keep`, comma-separated.
pub fn names(keep: impl Fn(&Capabilities) -> bool) -> String {
    FTLS.iter().filter(|f| keep(&f.capabilities)).map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// `cfg` checked against its FTL and completed: the registry's default FTL when it names
/// none, every `[ftl.NAME]` section parsed and checked by its owner and written back with
/// its defaults (the FTL's own sections always present), the FTL's write buffer when the host
/// sets none; refused where the FTL cannot run it (an invalid-tracking mode it lacks, no
/// reliability model for an FTL that needs one, a channel system of FTLs that cannot be its
/// units, a section no FTL owns); then checked against every rule and derived, once
/// ([`Resolved::validate`]): what every constructor takes.
pub fn resolve(mut cfg: DriveConfig) -> Result<Resolved, ConfigError> {
    if cfg.ftl.name.is_empty() {
        cfg.ftl.name = FTLS[0].name.to_string();
    }
    let f = info(&cfg.ftl.name)?;
    let caps = &f.capabilities;
    let tracking = cfg.ftl.invalid_tracking;
    if !caps.invalid_tracking.contains(&tracking) {
        return Err(ConfigError::Invalid {
            key: "ftl.invalid_tracking".into(),
            value: format!("{tracking:?}").to_lowercase(),
            rule: format!(
                "{} tracks invalid pages by flags only; {} track them otherwise",
                f.name,
                names(|c| c.invalid_tracking.len() > 1)
            ),
        });
    }
    if cfg.fdp.is_some() && !caps.placement {
        return Err(ConfigError::Invalid {
            key: "fdp".into(),
            value: "[fdp]".into(),
            rule: format!(
                "{} cannot honour placement handles (FTLs that do: {}); remove [fdp] or pick one of them",
                f.name,
                names(|c| c.placement)
            ),
        });
    }
    if caps.needs_reliability && cfg.reliability.is_none() {
        return Err(ConfigError::Invalid {
            key: "reliability".into(),
            value: "(absent)".into(),
            rule: format!(
                "{} limits copy-backs by the reliability model (seed 003 Table I): add a [reliability] section (the \
                 `rcftl` preset has one) or give --pe-cycles N",
                f.name
            ),
        });
    }
    if cfg.multichannel.is_some() && !caps.channel_unit {
        return Err(ConfigError::Invalid {
            key: "ftl.name".into(),
            value: f.name.into(),
            rule: format!("a [multichannel] drive runs one of: {}", names(|c| c.channel_unit)),
        });
    }
    if let Some(unknown) = cfg.ftl.sections.keys().find(|k| !SECTIONS.iter().any(|s| &s.name == k)) {
        return Err(ConfigError::Invalid {
            key: format!("ftl.{unknown}"),
            value: "(a table)".into(),
            rule: format!(
                "no FTL has a section [ftl.{unknown}] (sections: {})",
                SECTIONS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    for s in SECTIONS {
        if cfg.ftl.sections.contains_key(s.name) || caps.sections.contains(&s.name) {
            let table = (s.resolve)(&cfg)?;
            cfg.ftl.sections.insert(s.name.to_string(), table);
        }
    }
    if cfg.host.write_buffer_bytes.is_none() && caps.default_write_buffer_bytes > 0 {
        cfg.host.write_buffer_bytes = Some(caps.default_write_buffer_bytes);
    }
    Resolved::validate(cfg)
}

/// Build the FTL `cfg` names, on the config [`resolve`] makes of it.
pub fn build(cfg: &DriveConfig) -> Result<Box<dyn Ftl>, ConfigError> {
    build_for(&resolve(cfg.clone())?)
}

/// Build the FTL a resolved config names.
pub fn build_for(cfg: &Resolved) -> Result<Box<dyn Ftl>, ConfigError> {
    (info(&cfg.ftl.name)?.build)(cfg)
}

/// Simulator memory a config needs, bytes, before any of it is allocated: the flash array
/// (10 1/8 bytes per physical page: owner, version, flags, copy-back count, valid bit; 17 per
/// block), the block manager (28 per block: the victim index's links, bucket, age and flag,
/// 19; the free pools and FIFO queues, 8; the state, 1), the host side (1/8 byte per logical page for trim
/// bits, 4 more with `verify`'s data oracle), the FTL's per-logical-page state
/// ([`FtlInfo::bytes_per_logical_page`]), its mapping cache
/// ([`FtlInfo::bytes_per_cache_byte`]) and its write buffer, plus a fixed 16 MiB for the
/// program, histograms and I/O buffers. It is the resident set of a full drive, a little
/// above the measured one (docs/configuration.md; tested against measured peak RSS); a
/// trace's `--overflow compact` first pass adds its map of touched pages on top.
pub fn memory_estimate(cfg: &Resolved, verify: bool) -> Result<u64, ConfigError> {
    let d = cfg.derived();
    let ftl = info(&cfg.ftl.name)?;
    let physical = u64::from(d.physical_pages);
    let logical = u64::from(d.logical_pages);
    let blocks = u64::from(cfg.geometry.blocks());
    // With the reliability model, each page's copy-back quota spent (2 bytes).
    let quota = if cfg.reliability.is_some() { physical * 2 } else { 0 };
    let flash = physical * 81 / 8 + blocks * 17 + quota;
    let block_manager = blocks * 28;
    let host = logical / 8 + if verify { logical * 4 } else { 0 };
    let ftl_state =
        logical * ftl.bytes_per_logical_page + cfg.ftl.mapping_cache_bytes.unwrap_or(0) * ftl.bytes_per_cache_byte;
    let buffer = cfg.host.write_buffer_bytes.unwrap_or(0);
    Ok(flash + block_manager + host + ftl_state + buffer + (16 << 20))
}

/// A simulator of `cfg`, resolved ([`resolve`]), with its FTL.
pub fn simulator(cfg: DriveConfig, verify: bool) -> Result<Simulator, SimError> {
    simulator_for(resolve(cfg)?, verify)
}

/// A simulator of a resolved config with its FTL.
pub fn simulator_for(cfg: Resolved, verify: bool) -> Result<Simulator, SimError> {
    let t0 = std::time::Instant::now();
    let ftl = (info(&cfg.ftl.name)?.build)(&cfg)?;
    let ftl_s = t0.elapsed().as_secs_f64();
    let mut sim = Simulator::new(cfg, ftl, verify)?;
    sim.add_build_time(ftl_s);
    Ok(sim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_the_ftl_does_not_act_on_is_reported_by_name() {
        let mut cfg = crate::unit_drive(r#"name = "block""#).into_cfg();
        assert!(ignored_settings(&cfg).is_empty(), "nothing set, nothing to report");
        cfg.ftl.background_gc = true;
        cfg.ftl.gc_scope = Some(GcScope::Die);
        let said = ignored_settings(&cfg);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("ftl.background_gc = true: block does not act on it"), "{said:?}");
        cfg.ftl.name = "3dftl".into();
        assert_eq!(ignored_settings(&cfg).len(), 2);
        cfg.ftl.gc_scope = Some(GcScope::Plane);
        assert_eq!(ignored_settings(&cfg).len(), 1, "a plane's scope is what 3dftl does");
        cfg.ftl.name = "page".into();
        assert!(ignored_settings(&cfg).is_empty(), "the page FTL acts on both");
    }
}
