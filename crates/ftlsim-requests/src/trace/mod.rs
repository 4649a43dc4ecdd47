//! Block-trace ingestion: one line parser per format, a streaming reader over plain, gzip or
//! zstd files, format auto-detection, and the replay semantics a user controls (device
//! selection, address overflow, time, ordering, limits). Memory does not grow with the
//! trace length: files are read line by line and reordering uses a bounded window.
//!
//! Formats and their field meanings: docs/traces.md.

mod convert;
mod coverage;
mod formats;
mod reader;
pub mod samples;
mod stats;

pub use convert::{write_line, WRITABLE};
pub use coverage::PageRuns;
pub use formats::parser;
pub use reader::{detect, open, Overflow, RecordReader, ReplayInfo, TraceOptions, TraceSource};
pub use stats::{stats, TraceStats};

use crate::host::{IoOp, Request};
use std::fmt;

/// A trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TraceFormat {
    /// UMass/SPC CSV: `ASU,LBA,size_bytes,opcode,timestamp_s` (LBA in 512-byte sectors).
    UmassSpc,
    /// MSR Cambridge CSV: FILETIME (100 ns), host, disk, Read/Write, offset B, size B, response.
    Msr,
    /// DiskSim ASCII: `time_ms device block count flags` (flags bit 0 set = read).
    DiskSim,
    /// SSDsim ASCII: `time_ns device lsn size_sectors op` (op 1 = read, 0 = write).
    SsdSim,
    /// MQSim ASCII: `time_ns device start_sector size_sectors type` (0 = write, 1 = read).
    MqSim,
    /// Linux `blkparse` default text output (queue `Q` or dispatch `D` events).
    Blkparse,
    /// SNIA SYSTOR'17 CSV: `Timestamp,Response,IOType,LUN,Offset,Size` (s, s, R/W, -, B, B).
    Systor17,
    /// SNIA Tencent CBS CSV: `timestamp_s,offset_sectors,size_sectors,io_type,volume_id` (0 = read).
    TencentCbs,
    /// FIU SRCMap/homes text: `time_ns pid process lba size_sectors R/W major minor md5`.
    Fiu,
    /// fio iolog v2 or v3 (`fio version 2 iolog` / `fio version 3 iolog`).
    FioIolog,
    /// The byte-unit traces of the LinnOS, Heimdall and FlashNet storage-ML work:
    /// `timestamp_ms device offset_bytes size_bytes op` (op 1 = read, 0 = write).
    Linnos,
    /// The FlashNet platform's replayed traces (its replayer's output):
    /// `ts_record_ms,latency_us,io_type,size_bytes,offset_bytes,ts_submit_ms,size_after_replay_bytes`
    /// (io_type 1 = read, 0 = write), with each request's measured latency.
    FlashnetReplayed,
}

impl TraceFormat {
    /// Every format, in the order auto-detection tries them: the first that parses every
    /// sampled line wins, so stricter formats come first.
    pub const ALL: [TraceFormat; 12] = [
        TraceFormat::FioIolog,
        TraceFormat::Blkparse,
        TraceFormat::Systor17,
        TraceFormat::Msr,
        TraceFormat::FlashnetReplayed,
        TraceFormat::UmassSpc,
        TraceFormat::TencentCbs,
        TraceFormat::Fiu,
        // Integer nanoseconds before DiskSim's decimal milliseconds, which also accepts
        // integers. MQSim and SSDsim lines read alike (same fields and op codes), so a file
        // of either is read as MQSim, with the same result.
        TraceFormat::MqSim,
        TraceFormat::SsdSim,
        TraceFormat::DiskSim,
        // Fits whatever DiskSim fits, with sizes and offsets in bytes instead of sectors:
        // detection weighs the sizes to choose (`reader::detect`).
        TraceFormat::Linnos,
    ];

    /// Name used on the command line (`--format`).
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::UmassSpc => "umass",
            TraceFormat::Msr => "msr",
            TraceFormat::DiskSim => "disksim",
            TraceFormat::SsdSim => "ssdsim",
            TraceFormat::MqSim => "mqsim",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Systor17 => "systor17",
            TraceFormat::TencentCbs => "tencent",
            TraceFormat::Fiu => "fiu",
            TraceFormat::FioIolog => "fio",
            TraceFormat::Linnos => "linnos",
            TraceFormat::FlashnetReplayed => "flashnet",
        }
    }

    /// Units of the format's time, address and size fields (printed with the format).
    pub fn units(self) -> &'static str {
        match self {
            TraceFormat::UmassSpc => "time s, address in 512-byte sectors, size bytes",
            TraceFormat::Msr => "time 100 ns (FILETIME), offset and size bytes",
            TraceFormat::DiskSim => "time ms, address and size in 512-byte sectors",
            TraceFormat::SsdSim | TraceFormat::MqSim => "time ns, address and size in 512-byte sectors",
            TraceFormat::Blkparse => "time s, address and size in 512-byte sectors",
            TraceFormat::Systor17 => "time s, offset and size bytes",
            TraceFormat::TencentCbs => "time s, offset and size in 512-byte sectors",
            TraceFormat::Fiu => "time ns, address and size in 512-byte sectors",
            TraceFormat::FioIolog => "time us (v3), offset and size bytes",
            TraceFormat::Linnos => "time ms, offset and size bytes",
            TraceFormat::FlashnetReplayed => "time ms, latency us, offset and size bytes",
        }
    }

    /// Format by name.
    pub fn from_name(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL.iter().copied().find(|f| f.name() == name)
    }
}

impl std::str::FromStr for TraceFormat {
    type Err = String;

    /// A format by its name; the error lists every name, the one message every front gives.
    fn from_str(s: &str) -> Result<TraceFormat, String> {
        TraceFormat::from_name(s).ok_or_else(|| {
            format!(
                "unknown trace format `{s}` (one of {})",
                TraceFormat::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
            )
        })
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with one field of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Field name as the format documents it (e.g. `size_sectors`).
    pub field: &'static str,
    /// The text found (truncated to 80 characters).
    pub text: String,
    /// What was expected.
    pub rule: &'static str,
}

impl FieldError {
    /// An error for `field` holding `text`.
    pub fn new(field: &'static str, text: &str, rule: &'static str) -> FieldError {
        let text: String = text.chars().take(80).collect();
        FieldError { field, text, rule }
    }
}

/// Options that change how lines are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParserOptions {
    /// blkparse: the event action to replay, `b'D'` (dispatch, default) or `b'Q'` (queue).
    pub blkparse_event: u8,
}

impl Default for ParserOptions {
    fn default() -> Self {
        ParserOptions { blkparse_event: b'D' }
    }
}

/// One request as read from a line, before time normalisation and layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Timestamp in ns on the trace's own clock (may start anywhere).
    pub time_ns: u64,
    /// Device, disk, ASU, LUN or volume number.
    pub device: u32,
    /// First 512-byte sector.
    pub offset_sector: u64,
    /// Length in 512-byte sectors (byte sizes are rounded up; 0 is an error).
    pub sectors: u32,
    /// Type.
    pub op: IoOp,
}

impl TraceRecord {
    /// As a host request.
    pub fn request(&self, arrival_ns: u64) -> Request {
        Request {
            arrival_ns,
            think_ns: 0,
            device: self.device,
            offset_sector: self.offset_sector,
            sectors: self.sectors,
            op: self.op,
        }
    }
}

/// Parses the lines of one trace file, in order. Parsers may keep state across lines
/// (fio's file names, blkparse's event choice).
pub trait LineParser {
    /// Parse one line (without its newline). `Ok(None)` for lines that carry no request:
    /// blank lines, comments, headers, events of another kind.
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError>;

    /// Why the lines read so far held no request, when the format can tell (e.g. blkparse
    /// events of other actions only); the reader's error for a trace without requests.
    fn empty_hint(&self) -> Option<String> {
        None
    }

    /// Records the format allows but that carry no replayable request (SYSTOR'17 lines whose
    /// IOType is blank, "unknown" in the trace's README), read so far: reported, not replayed.
    fn untyped_records(&self) -> u64 {
        0
    }

    /// The latency the trace recorded for the request of the line parsed last (MSR's
    /// ResponseTime, SYSTOR'17's Response, FlashNet's latency), ns; `None` when the format
    /// records none or the line's request did not complete (FlashNet: fewer bytes replayed
    /// than asked).
    fn recorded_latency_ns(&self) -> Option<u64> {
        None
    }
}
