//! Drive snapshots (`--save-state` / `--load-state`): the whole drive after
//! preconditioning, flash and FTL state, saved once and loaded instead of preconditioning
//! again. A loaded drive gives byte-identical results to the same preconditioning done in
//! the process (tested).
//!
//! File layout (docs/configuration.md, "Drive snapshots"):
//! - the magic line `FTLSIM-SNAPSHOT\n` (16 bytes);
//! - the header length and its CRC-32, little-endian u32 each;
//! - the header, JSON: format version, ftlsim version, the drive config, the FTL, the
//!   preconditioning it came from and its report, whether it holds a data oracle;
//! - the body, one zstd frame with its content checksum: postcard of the flash array, the
//!   FTL's own state ([`crate::ftl::Ftl::save_state`]), the data-version counter, the
//!   trimmed-page bits and the oracle;
//! - the CRC-32 of the compressed body, little-endian u32, so that any damage to the file
//!   (even to bits of the zstd frame that do not change what it decodes to) is caught.
//!
//! What must match to load: the format version and ftlsim version, and the drive's
//! geometry, over-provisioning, NAND rules and FTL settings (they shape the state). Timing
//! and the host interface may differ: a snapshot is taken with empty host buffers and no
//! operation in flight, so the same aged drive can be measured under several timings,
//! queue depths or write-buffer sizes. A truncated or corrupted file fails its checksum or
//! its decoding and is refused, and the loaded state passes the whole-state invariant
//! checks before a run may use it.

use super::{PreconditionReport, Simulator};
use crate::config::DriveConfig;
use crate::error::{SimError, SnapshotError};
use crate::flash::FlashArray;
use crate::outputs::{Outputs, Staged, Target};
use crate::state;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

/// First bytes of every snapshot file.
const MAGIC: &[u8; 16] = b"FTLSIM-SNAPSHOT\n";
/// Version of the file layout and of the state encodings; bumped when either changes.
pub const FORMAT_VERSION: u32 = 13;
/// zstd level: fast, and the state's random addresses compress little more at higher ones.
const ZSTD_LEVEL: i32 = 1;

/// What a snapshot says about where it came from (its JSON header).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotHeader {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// ftlsim version of the writer.
    pub ftlsim_version: String,
    /// The drive config the state belongs to.
    pub config: DriveConfig,
    /// Preconditioning that produced the state (the CLI's `--fill`, `--steady-state`,
    /// `--seed`), as JSON.
    pub precondition: serde_json::Value,
    /// Its report.
    pub precondition_report: Option<PreconditionReport>,
    /// Whether the body holds a data oracle (saved with `--verify`).
    pub verify: bool,
}

/// The body, borrowed for writing.
#[derive(Serialize)]
struct BodyRef<'a> {
    flash: &'a FlashArray,
    ftl: &'a [u8],
    next_version: u32,
    trimmed: &'a [u64],
    oracle: Option<&'a [u32]>,
}

/// The body, owned for reading (same fields, same order).
#[derive(Deserialize)]
struct Body {
    flash: FlashArray,
    ftl: Vec<u8>,
    next_version: u32,
    trimmed: Vec<u64>,
    oracle: Option<Vec<u32>>,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> SnapshotError {
    SnapshotError::Io { file: path.display().to_string(), reason: e.to_string() }
}

/// Open a snapshot file for reading; a directory is named as one (opening it succeeds on
/// Unix, and reading it would look like a file of another kind).
fn open_snapshot(path: &Path) -> Result<std::fs::File, SnapshotError> {
    if path.is_dir() {
        return Err(io_err(path, "is a directory, not a snapshot file (--save-state FILE writes one file)"));
    }
    std::fs::File::open(path).map_err(|e| io_err(path, e))
}

pub(crate) fn corrupt(path: &Path, reason: impl Into<String>) -> SnapshotError {
    SnapshotError::Corrupt { file: path.display().to_string(), reason: reason.into() }
}

/// The first key (dotted path) where `a` and `b` differ, with both values.
fn first_difference(prefix: &str, a: &serde_json::Value, b: &serde_json::Value) -> Option<(String, String, String)> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let null = Value::Null;
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                first_difference(&path, x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null))
            })
        }
        _ if a == b => None,
        _ => Some((prefix.to_string(), a.to_string(), b.to_string())),
    }
}

/// The parts of a drive config that shape its state, as JSON (those a snapshot must match): a
/// sweep shares one snapshot among runs that agree on them (Python's `_snapshot_key`).
pub fn state_shaping(cfg: &DriveConfig) -> serde_json::Value {
    serde_json::json!({
        "geometry": cfg.geometry,
        "overprovisioning": cfg.overprovisioning,
        "nand": cfg.nand,
        "ftl": cfg.ftl,
        // Block wear and BER classes live in the flash state.
        "reliability": cfg.reliability,
        // A channel system's mode decides its units (null for a drive).
        "multichannel": cfg.multichannel.as_ref().map(|m| m.mode.name()),
        // Which blocks each placement handle may use lives in the FTL state.
        "fdp": cfg.fdp,
    })
}

/// Write a snapshot file: the magic line, `header`, and `body` compressed and checksummed
/// (module header). A file is written to a temporary file beside it, renamed into place when
/// the returned [`Staged`] is committed, so a failed save or run leaves no partial file and
/// the old one. Drives and channel systems share it.
pub(crate) fn write_file(to: &Target, header: &SnapshotHeader, body: &impl Serialize) -> Result<Staged, SimError> {
    let header = serde_json::to_vec_pretty(header).expect("snapshot header serialises");
    to.write(|w| {
        w.write_all(MAGIC)?;
        w.write_all(&(header.len() as u32).to_le_bytes())?;
        w.write_all(&crc32fast::hash(&header).to_le_bytes())?;
        w.write_all(&header)?;
        let mut z =
            zstd::stream::Encoder::new(Crc32Writer { inner: &mut *w, crc: crc32fast::Hasher::new() }, ZSTD_LEVEL)?;
        z.include_checksum(true)?;
        // postcard writes a few bytes at a time: buffer them before the compressor.
        let buffered = std::io::BufWriter::with_capacity(1 << 20, z);
        let buffered = postcard::to_io(body, buffered).map_err(std::io::Error::other)?;
        let crc = buffered.into_inner().map_err(|e| e.into_error())?.finish()?.crc.finalize();
        w.write_all(&crc.to_le_bytes())
    })
    .map_err(|reason| SnapshotError::Io { file: to.shown().display().to_string(), reason }.into())
}

/// Commit a staged snapshot at `path`, the error naming it.
pub(crate) fn commit(staged: Staged, path: &Path) -> Result<(), SimError> {
    staged.commit().map_err(|reason| SnapshotError::Io { file: path.display().to_string(), reason }.into())
}

/// `path` as a snapshot's output, checked against no input.
pub(crate) fn target(path: &Path) -> Result<Target, SimError> {
    Outputs::new()
        .file("snapshot", path)
        .map_err(|reason| SnapshotError::Io { file: path.display().to_string(), reason }.into())
}

/// A snapshot header for `cfg`'s state now (`precondition`: how it was made).
pub(crate) fn header_for(
    cfg: &DriveConfig,
    precondition: serde_json::Value,
    report: Option<PreconditionReport>,
    verify: bool,
) -> SnapshotHeader {
    SnapshotHeader {
        format_version: FORMAT_VERSION,
        ftlsim_version: env!("CARGO_PKG_VERSION").to_string(),
        config: cfg.clone(),
        precondition,
        precondition_report: report,
        verify,
    }
}

/// Read the snapshot at `path` for a drive of config `cfg` (`verify`: the run needs a data
/// oracle): the header, checked (format and ftlsim version, the state-shaping config, the
/// oracle), then the body, checked and decoded. Refused with the reason otherwise.
pub(crate) fn read_file<B: serde::de::DeserializeOwned>(
    path: &Path,
    cfg: &DriveConfig,
    verify: bool,
) -> Result<(SnapshotHeader, B), SimError> {
    let mut f = open_snapshot(path)?;
    let header = read_header(path, &mut f)?;
    let file = path.display().to_string();
    if header.format_version != FORMAT_VERSION || header.ftlsim_version != env!("CARGO_PKG_VERSION") {
        return Err(SnapshotError::Version {
            file,
            found: format!("format {} of ftlsim {}", header.format_version, header.ftlsim_version),
            expected: format!("format {FORMAT_VERSION} of ftlsim {}", env!("CARGO_PKG_VERSION")),
        }
        .into());
    }
    // Another FTL first: its sections differ too, and the name says more.
    let name = |c: &DriveConfig| serde_json::json!({ "ftl": { "name": c.ftl.name } });
    if let Some((key, there, here)) = first_difference("", &name(&header.config), &name(cfg))
        .or_else(|| first_difference("", &state_shaping(&header.config), &state_shaping(cfg)))
    {
        return Err(SnapshotError::OtherDrive { file, key, snapshot: there, run: here }.into());
    }
    if verify && !header.verify {
        return Err(SnapshotError::Unsupported {
            file,
            reason: "it was saved without --verify, so it holds no data oracle to check reads against".into(),
        }
        .into());
    }
    let mut compressed = Vec::new();
    f.read_to_end(&mut compressed).map_err(|e| io_err(path, e))?;
    let Some(split) = compressed.len().checked_sub(4) else {
        return Err(corrupt(path, "no body").into());
    };
    let crc = u32::from_le_bytes(compressed[split..].try_into().expect("four bytes"));
    compressed.truncate(split);
    if crc32fast::hash(&compressed) != crc {
        return Err(corrupt(path, "body checksum does not match").into());
    }
    let raw = zstd::stream::decode_all(compressed.as_slice()).map_err(|e| corrupt(path, format!("body: {e}")))?;
    drop(compressed);
    let body: B = state::decode(&raw).map_err(|e| corrupt(path, format!("body: {e}")))?;
    Ok((header, body))
}

/// The body does not fit the header's drive (a decodable file that is not what it says).
pub(crate) fn misfit(path: &Path) -> SimError {
    corrupt(path, "body does not fit the header's drive").into()
}

/// A snapshot cannot be saved now (`reason`).
pub(crate) fn unsupported(path: &Path, reason: &str) -> SimError {
    SnapshotError::Unsupported { file: path.display().to_string(), reason: reason.into() }.into()
}

impl Simulator {
    /// Save the drive to `path` ([`write_file`]) at once. `precondition` describes how the
    /// state was made, for the header. The host buffers must be empty (they are after
    /// preconditioning).
    pub fn save_state(&mut self, path: &Path, precondition: serde_json::Value) -> Result<(), SimError> {
        let staged = self.stage_state(&target(path)?, precondition)?;
        commit(staged, path)
    }

    /// [`Simulator::save_state`] into `to`, a checked output, renamed into place when the
    /// returned [`Staged`] is committed (a run commits it once it succeeded).
    pub fn stage_state(&mut self, to: &Target, precondition: serde_json::Value) -> Result<Staged, SimError> {
        let t0 = Instant::now();
        let path = to.shown();
        if self.wbuf.as_ref().is_some_and(|w| !w.is_empty()) || self.merge.as_ref().is_some_and(|m| !m.is_empty()) {
            return Err(unsupported(
                path,
                "the host write or merge buffer holds pages; save right after preconditioning",
            ));
        }
        let header = header_for(&self.cfg, precondition, self.precondition.clone(), self.oracle.is_some());
        let ftl = self.ftl.save_state();
        let body = BodyRef {
            flash: &self.dev.flash,
            ftl: &ftl,
            next_version: self.next_version,
            trimmed: &self.trimmed,
            oracle: self.oracle.as_deref(),
        };
        let staged = write_file(to, &header, &body)?;
        self.wall.save_state_s += t0.elapsed().as_secs_f64();
        Ok(staged)
    }

    /// Read the header of the snapshot at `path`, checking its magic and checksum.
    pub fn read_snapshot_header(path: &Path) -> Result<SnapshotHeader, SimError> {
        let mut f = open_snapshot(path)?;
        Ok(read_header(path, &mut f)?)
    }

    /// Replace the drive's state with the snapshot at `path`, instead of preconditioning.
    /// Refused, with the reason, when the file is not a snapshot of this ftlsim's format,
    /// belongs to another drive or FTL (a different geometry, over-provisioning, NAND or
    /// FTL setting), or is truncated or corrupted. Returns the header.
    pub fn load_state(&mut self, path: &Path) -> Result<SnapshotHeader, SimError> {
        let t0 = Instant::now();
        let (header, body): (SnapshotHeader, Body) = read_file(path, &self.cfg, self.oracle.is_some())?;
        if body.flash.geometry() != &self.cfg.geometry
            || body.trimmed.len() != self.trimmed.len()
            || body.oracle.as_ref().is_some_and(|o| o.len() != self.cfg.derived().logical_pages as usize)
        {
            return Err(misfit(path));
        }
        self.ftl.load_state(&body.ftl).map_err(|e| corrupt(path, format!("ftl state: {e}")))?;
        self.dev.flash = body.flash;
        self.next_version = body.next_version;
        self.trimmed = body.trimmed;
        if self.oracle.is_some() {
            self.oracle = body.oracle;
        }
        self.precondition = header.precondition_report.clone();
        // A decodable state could still be inconsistent (a bug, or a file edited by hand):
        // the whole-state checks panic rather than let a wrong run go on. The checksum makes
        // this a safety net, not the main defence.
        self.check_invariants();
        self.wall.load_state_s += t0.elapsed().as_secs_f64();
        Ok(header)
    }
}

/// A writer that passes bytes on and keeps their CRC-32.
struct Crc32Writer<W: Write> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Crc32Writer<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Read and check the magic line and the header, leaving `f` at the body.
fn read_header(path: &Path, f: &mut impl Read) -> Result<SnapshotHeader, SnapshotError> {
    let mut magic = [0u8; 16];
    f.read_exact(&mut magic).map_err(|_| SnapshotError::NotASnapshot { file: path.display().to_string() })?;
    if &magic != MAGIC {
        return Err(SnapshotError::NotASnapshot { file: path.display().to_string() });
    }
    let mut word = [0u8; 4];
    f.read_exact(&mut word).map_err(|e| corrupt(path, format!("header length: {e}")))?;
    let len = u32::from_le_bytes(word) as usize;
    f.read_exact(&mut word).map_err(|e| corrupt(path, format!("header checksum: {e}")))?;
    let crc = u32::from_le_bytes(word);
    if len > 1 << 24 {
        return Err(corrupt(path, format!("header length {len} bytes")));
    }
    let mut header = vec![0u8; len];
    f.read_exact(&mut header).map_err(|e| corrupt(path, format!("header: {e}")))?;
    if crc32fast::hash(&header) != crc {
        return Err(corrupt(path, "header checksum does not match"));
    }
    serde_json::from_slice(&header).map_err(|e| corrupt(path, format!("header: {e}")))
}
