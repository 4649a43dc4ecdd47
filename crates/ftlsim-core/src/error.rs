//! Typed errors for bad input. Messages are lowercase and name the key, the value found and
//! the rule broken, so that a user can fix the input without reading the source.

use std::fmt;

pub use ftlsim_requests::error::{RequestError, TraceError, WorkloadError};

/// A drive configuration that cannot be loaded or does not make sense.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    Io {
        /// File path.
        file: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The TOML did not parse or had unknown or mistyped keys.
    Parse {
        /// File path (or preset name).
        file: String,
        /// The parser's message, which names the line and key.
        message: String,
    },
    /// A value breaks a rule.
    Invalid {
        /// Dotted key, e.g. `geometry.pages_per_block`.
        key: String,
        /// The value found.
        value: String,
        /// The rule it breaks, e.g. `must be >= 1`.
        rule: String,
    },
    /// A `--set KEY=VALUE` override (Python's `overrides`) that breaks the config.
    Override {
        /// Dotted key set.
        key: String,
        /// Value given.
        value: String,
        /// The error the config gave with that override, which names the rule.
        reason: String,
    },
    /// No preset of that name.
    UnknownPreset {
        /// Name asked for.
        name: String,
        /// Names that exist.
        available: Vec<String>,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io { file, reason } => write!(f, "cannot read config {file}: {reason}"),
            ConfigError::Parse { file, message } => {
                write!(f, "invalid config {file}: {}", message.trim_end())
            }
            ConfigError::Invalid { key, value, rule } => {
                write!(f, "invalid config: {key} = {value} ({rule})")
            }
            ConfigError::Override { reason, .. } => f.write_str(reason),
            ConfigError::UnknownPreset { name, available } => {
                write!(f, "unknown preset `{name}` (available: {}; `ftlsim presets` lists them)", available.join(", "))
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Shorthand used by validators.
pub(crate) fn invalid(key: &str, value: impl fmt::Display, rule: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { key: key.to_string(), value: value.to_string(), rule: rule.into() }
}

/// A broken NAND rule. An FTL that triggers one has a bug; the flash model reports it
/// instead of silently corrupting state, in release builds too.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FlashError {
    /// Programming a page that is not erased.
    ProgramNotErased {
        /// Page.
        ppn: u32,
    },
    /// Programming out of order within a block.
    ProgramOutOfOrder {
        /// Page asked for.
        ppn: u32,
        /// The block's next programmable page index.
        write_pointer: u32,
    },
    /// The power went at this operation (an armed power cut): the operation is torn and
    /// nothing after it runs until the drive restarts.
    PowerLost,
    /// More than 2^32 - 1 pages programmed with program stamps kept (runs with power cuts).
    StampOverflow,
    /// Reading a page that holds no data (erased, skipped or torn).
    ReadUnwritten {
        /// Page.
        ppn: u32,
    },
    /// Copy-back across planes.
    CopybackCrossPlane {
        /// Source page.
        src: u32,
        /// Destination page.
        dst: u32,
    },
    /// Copy-back between pages of different parity while the same-parity rule is on.
    CopybackParity {
        /// Source page.
        src: u32,
        /// Destination page.
        dst: u32,
    },
    /// Erasing a block that still holds valid pages (their data would be lost).
    EraseValidPages {
        /// Block.
        block: u32,
        /// Valid pages left.
        valid: u32,
    },
    /// Invalidating a page that is not valid.
    InvalidateInvalid {
        /// Page.
        ppn: u32,
    },
    /// An address beyond the array.
    OutOfRange {
        /// The address.
        addr: u32,
    },
    /// A copy-back the reliability model forbids (seed 003 Table I): the source block allows
    /// none, or the page's copy-back quota would go below zero (its accumulated errors could
    /// pass what the ECC corrects).
    CopybackQuota {
        /// Source page.
        src: u32,
        /// Quota the copy-back would spend (0: the block allows none).
        deduction: u16,
        /// Quota the page has left.
        left: u16,
    },
    /// An OOB payload larger than the usable spare bytes.
    OobTooLarge {
        /// Bytes asked for.
        bytes: u32,
        /// Usable spare bytes per page.
        usable: u32,
    },
}

/// What to do about a copy-back the reliability model refuses.
const RELIABILITY_HINT: &str = "an FTL that does not check the model (`[reliability]`, seed 003 Table I) must copy \
                                through the controller (ftl.gc_copy = \"controller\")";

impl fmt::Display for FlashError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlashError::ProgramNotErased { ppn } => write!(f, "nand rule: program of page {ppn}, which is not erased"),
            FlashError::ProgramOutOfOrder { ppn, write_pointer } => {
                write!(f, "nand rule: out-of-order program of page {ppn} (block write pointer at page {write_pointer})")
            }
            FlashError::ReadUnwritten { ppn } => write!(f, "nand rule: read of page {ppn}, which holds no data"),
            FlashError::CopybackCrossPlane { src, dst } => {
                write!(f, "nand rule: copy-back from page {src} to page {dst} crosses planes")
            }
            FlashError::CopybackParity { src, dst } => {
                write!(f, "nand rule: copy-back from page {src} to page {dst} breaks the same-parity rule")
            }
            FlashError::EraseValidPages { block, valid } => {
                write!(f, "ftl bug: erase of block {block} with {valid} valid pages")
            }
            FlashError::InvalidateInvalid { ppn } => write!(f, "ftl bug: invalidate of page {ppn}, which is not valid"),
            FlashError::OutOfRange { addr } => write!(f, "address {addr} beyond the flash array"),
            FlashError::PowerLost => write!(f, "power lost (a power cut)"),
            FlashError::StampOverflow => {
                write!(f, "more than 4,294,967,295 pages programmed with program stamps (power-cut runs stamp pages in 32 bits)")
            }
            FlashError::CopybackQuota { src, deduction: 0, .. } => {
                write!(
                    f,
                    "reliability rule: copy-back of page {src} from a block whose copyback threshold is 0 (off-chip \
                     copies only); {RELIABILITY_HINT}"
                )
            }
            FlashError::CopybackQuota { src, deduction, left } => write!(
                f,
                "reliability rule: copy-back of page {src} would spend {deduction} of the {left} copy-back quota it has \
                 left; {RELIABILITY_HINT}"
            ),
            FlashError::OobTooLarge { bytes, usable } => {
                write!(f, "oob payload of {bytes} bytes exceeds the {usable} usable spare bytes")
            }
        }
    }
}

impl std::error::Error for FlashError {}

/// A drive snapshot that cannot be saved or loaded (`--save-state`, `--load-state`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The file could not be read or written.
    Io {
        /// File path.
        file: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The file does not start with the snapshot magic line.
    NotASnapshot {
        /// File path.
        file: String,
    },
    /// Written by another format or ftlsim version.
    Version {
        /// File path.
        file: String,
        /// What the file is.
        found: String,
        /// What this ftlsim reads.
        expected: String,
    },
    /// Saved from a drive whose state differs in shape (geometry, over-provisioning, NAND
    /// rules or FTL settings).
    OtherDrive {
        /// File path.
        file: String,
        /// The first config key that differs.
        key: String,
        /// Its value in the snapshot.
        snapshot: String,
        /// Its value in this run.
        run: String,
    },
    /// Truncated, corrupted or inconsistent.
    Corrupt {
        /// File path.
        file: String,
        /// What failed.
        reason: String,
    },
    /// Valid, but not usable the way asked.
    Unsupported {
        /// File path.
        file: String,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Io { file, reason } => write!(f, "snapshot {file}: {reason}"),
            SnapshotError::NotASnapshot { file } => {
                write!(f, "snapshot {file}: not an ftlsim drive snapshot (files from --save-state start with FTLSIM-SNAPSHOT)")
            }
            SnapshotError::Version { file, found, expected } => write!(
                f,
                "snapshot {file}: written as {found}, this ftlsim reads {expected}; precondition again and save a new one"
            ),
            SnapshotError::OtherDrive { file, key, snapshot, run } => write!(
                f,
                "snapshot {file} belongs to another drive: {key} = {snapshot} there, {run} here (a snapshot holds \
                 one drive's flash and FTL state; load it with the same geometry, over-provisioning, nand and ftl \
                 settings, or precondition this drive)"
            ),
            SnapshotError::Corrupt { file, reason } => {
                write!(f, "snapshot {file} is truncated or corrupted ({reason}); save it again")
            }
            SnapshotError::Unsupported { file, reason } => write!(f, "snapshot {file}: {reason}"),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Errors of a simulation run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SimError {
    /// Bad configuration.
    Config(ConfigError),
    /// Bad workload.
    Workload(WorkloadError),
    /// Bad request from a trace or generator (names the source and line).
    Request(String),
    /// Bad use of the command line or of the files it names (an output that would replace
    /// the input, a directory that cannot be written); the message says which and why.
    Input(String),
    /// Bad trace file or line.
    Trace(TraceError),
    /// A NAND rule broken by the FTL: a bug.
    Flash(FlashError),
    /// The FTL cannot go on (for example no reclaimable block): a bug or an impossible config.
    Ftl(String),
    /// A drive snapshot that cannot be saved or loaded.
    Snapshot(SnapshotError),
    /// The run was stopped by its observer (a user's interrupt) before it finished.
    Interrupted,
    /// A read returned other data than last written: a bug.
    DataMismatch {
        /// Logical page.
        lpn: u32,
        /// Version the oracle expects.
        expected: Option<u32>,
        /// Version the drive returned.
        found: Option<u32>,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(e) => e.fmt(f),
            SimError::Workload(e) => e.fmt(f),
            SimError::Request(m) => write!(f, "invalid request: {m}"),
            SimError::Input(m) => f.write_str(m),
            SimError::Trace(e) => e.fmt(f),
            SimError::Flash(e) => e.fmt(f),
            SimError::Ftl(m) => write!(f, "ftl error: {m}"),
            SimError::Snapshot(e) => e.fmt(f),
            SimError::Interrupted => f.write_str("interrupted"),
            SimError::DataMismatch { lpn, expected, found } => {
                write!(f, "data oracle: read of lpn {lpn} returned version {found:?}, newest written is {expected:?}")
            }
        }
    }
}

impl std::error::Error for SimError {}

impl SimError {
    /// True for errors caused by user input (exit code 1), false for internal ones (exit 2).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            SimError::Config(_)
                | SimError::Workload(_)
                | SimError::Request(_)
                | SimError::Input(_)
                | SimError::Trace(_)
                | SimError::Snapshot(_)
        )
    }
}

impl From<ConfigError> for SimError {
    fn from(e: ConfigError) -> Self {
        SimError::Config(e)
    }
}
impl From<WorkloadError> for SimError {
    fn from(e: WorkloadError) -> Self {
        SimError::Workload(e)
    }
}
impl From<RequestError> for SimError {
    fn from(e: RequestError) -> Self {
        match e {
            RequestError::Workload(e) => SimError::Workload(e),
            RequestError::Trace(e) => SimError::Trace(e),
            RequestError::Request(m) => SimError::Request(m),
        }
    }
}

impl From<TraceError> for SimError {
    fn from(e: TraceError) -> Self {
        SimError::Trace(e)
    }
}
impl From<SnapshotError> for SimError {
    fn from(e: SnapshotError) -> Self {
        SimError::Snapshot(e)
    }
}
impl From<FlashError> for SimError {
    fn from(e: FlashError) -> Self {
        SimError::Flash(e)
    }
}
