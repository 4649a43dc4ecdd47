//! Parsers of the other text trace formats: Linux `blkparse` output, FIU SRCMap/homes and
//! fio iologs. Fields are separated by ASCII whitespace. In every format, blank lines and
//! lines whose first non-blank character is `#` carry no request. Sectors are 512 bytes.
//!
//! # blkparse (`blkparse`)
//!
//! The default text output of Linux `blkparse`, one event per line:
//!
//! ```text
//!   8,16   0        5     0.000024673  5314  D   R 1611592 + 256 [java]
//! maj,min cpu     seq          time_s   pid  action rwbs sector + count [process]
//! ```
//!
//! - `maj,min`: the device; `device = major << 20 | minor` (the kernel's `dev_t` layout:
//!   major < 4096, minor < 2^20).
//! - `cpu`, `seq`, `pid`: checked to be numbers, otherwise unused.
//! - `time_s`: seconds since the start of the trace with up to 9 decimals (blkparse prints 9),
//!   converted to ns exactly. blkparse interleaves the CPUs' event streams, so times are not
//!   sorted: in the YCSB/f2fs sample 392 of 5,727 dispatches come earlier than the line
//!   before them, by up to 49 ms (the reader's reorder window deals with that).
//! - `action`: only events whose action is `ParserOptions::blkparse_event` are requests
//!   (`D`, dispatch to the device, by default; `Q`, queued by the block layer, on request).
//!   Other actions (`I`, `C`, `M`, `P`, `U`, ...), message lines (`m N ...`), blkparse's closing
//!   summary (`CPU0 (8,16):`, `Total (8,16):`, `Throughput ...`, lines that do not start with
//!   `maj,min`) and lines of fewer than 6 fields carry no request.
//! - `rwbs`: the zoned commands first, as blkparse prints them since its 2025 patches: `ZA` → zone append,
//!   `ZR` → zone reset, `ZRA` → reset of all zones, `ZF` → finish, `ZO` → open, `ZC` → close
//!   (docs/zns.md; only the `zns` FTL takes them); then `D` → trim (discard, also secure erase
//!   `DE`), else `W` → write (also write zeroes `WZ`), else `R` → read; otherwise (`N`: no
//!   data, `F`: flush) no request.
//! - `sector + count`: the range in sectors. An event without a range (a flush such as
//!   `FWS [kworker]`, a zero-length event printed as `sector [process]`, a SCSI passthrough
//!   printed as `bytes (cdb) [process]`) or with count 0 carries no request, except a zone
//!   management command (`ZR`, `ZRA`, `ZF`, `ZO`, `ZC`): its sector names the zone, its length
//!   is 0.
//!
//! # FIU SRCMap / homes (`fiu`)
//!
//! `time_ns pid process lba size_sectors R/W major minor md5`, exactly 9 fields:
//! `time_ns` in ns; `pid` a number; `process` one token (any text); `lba` the first sector;
//! `size_sectors` the length in sectors (>= 1); `R/W` `R` → read, `W` → write;
//! `device = major << 20 | minor`; `md5` the content hash (32 hex digits, checked, unused).
//!
//! # fio iolog (`fio`)
//!
//! What fio's `write_iolog` writes. The first line is a version header, `fio version 2 iolog`
//! or `fio version 3 iolog`; a data line before it is an error on field `header`.
//!
//! - v2: `filename action [offset length]`.
//! - v3: `timestamp_us filename action [offset length]`. The timestamp is in **microseconds**
//!   since the job started: fio writes `utime_since_now()` and sleeps that many µs on replay
//!   (checked with fio 3.33: `--thinktime=2ms` gives timestamps about 2,100 apart).
//! - `action`: `read` → read, `write` → write, `trim` → trim, each with `offset` and `length`
//!   in bytes: `offset_sector = offset / 512` (rounded down), `sectors = length / 512` rounded
//!   up (length >= 1). `sync`, `datasync`, `sync_file_range`, `wait` and the file actions `add`,
//!   `open`, `close` carry no request.
//! - `device`: each distinct filename gets the next device number (0, 1, ...) in order of
//!   first appearance (usually the `add` lines).
//! - v2 has no timestamps: every v2 request has `time_ns = 0`, so replay it closed-loop (at a
//!   queue depth); replayed open-loop all its requests arrive at once.

use std::collections::HashMap;
use std::str::{FromStr, SplitAsciiWhitespace};

use crate::host::IoOp;
use crate::trace::{FieldError, LineParser, ParserOptions, TraceFormat, TraceRecord};

/// The parser for `format` if it is one of this module's.
pub(super) fn parser(format: TraceFormat, opts: &ParserOptions) -> Option<Box<dyn LineParser>> {
    match format {
        TraceFormat::Blkparse => {
            Some(Box::new(Blkparse { event: opts.blkparse_event, skipped_actions: [0; 128], events: 0 }))
        }
        TraceFormat::Fiu => Some(Box::new(Fiu)),
        TraceFormat::FioIolog => Some(Box::new(FioIolog::default())),
        _ => None,
    }
}

/// Bytes per sector.
const SECTOR_BYTES: u64 = 512;
/// Minor bits of the kernel's `dev_t` (`MINORBITS`).
const MINOR_BITS: u32 = 20;
/// Largest major number that fits the 32-bit device number.
const MAX_MAJOR: u32 = (1 << (32 - MINOR_BITS)) - 1;
/// Largest minor number.
const MAX_MINOR: u32 = (1 << MINOR_BITS) - 1;
/// Most distinct fio file names (devices) one iolog may name, so garbage cannot grow memory
/// without bound.
const MAX_FIO_FILES: usize = 1 << 20;
/// Rule for a field the line ends before.
const MISSING: &str = "a value (the line ends before this field)";

/// Blank or comment line.
fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// Non-empty and ASCII digits only.
fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// An unsigned decimal number (digits only: no sign, no spaces), or an error on `field`.
fn number<T: FromStr>(field: &'static str, text: &str, rule: &'static str) -> Result<T, FieldError> {
    if all_digits(text) {
        if let Ok(v) = text.parse() {
            return Ok(v);
        }
    }
    Err(FieldError::new(field, text, rule))
}

/// The next field, or an error on `field` if the line ends.
fn next_field<'a>(it: &mut SplitAsciiWhitespace<'a>, field: &'static str) -> Result<&'a str, FieldError> {
    it.next().ok_or_else(|| FieldError::new(field, "", MISSING))
}

/// `major << 20 | minor`.
fn dev_t(major: u32, minor: u32) -> Option<u32> {
    (major <= MAX_MAJOR && minor <= MAX_MINOR).then_some((major << MINOR_BITS) | minor)
}

/// Checks that the range `offset + sectors` fits in 64 bits.
fn range_end_ok(field: &'static str, text: &str, offset: u64, sectors: u32) -> Result<(), FieldError> {
    match offset.checked_add(u64::from(sectors)) {
        Some(_) => Ok(()),
        None => Err(FieldError::new(field, text, "a start that leaves the request's end within 2^64 sectors")),
    }
}

/// `secs[.fraction]` (at most 9 decimals) as exact ns.
fn seconds_to_ns(text: &str) -> Option<u64> {
    let (int, frac) = match text.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (text, None),
    };
    if !all_digits(int) {
        return None;
    }
    let secs: u64 = int.parse().ok()?;
    let mut ns: u64 = 0;
    if let Some(frac) = frac {
        if !all_digits(frac) || frac.len() > 9 {
            return None;
        }
        for b in frac.bytes() {
            ns = ns * 10 + u64::from(b - b'0');
        }
        for _ in frac.len()..9 {
            ns *= 10;
        }
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

// ---------------------------------------------------------------------------------------------
// blkparse

/// Linux `blkparse` default output.
struct Blkparse {
    /// The action replayed (`b'D'` or `b'Q'`).
    event: u8,
    /// Event lines of other actions, by the action's first byte (for the empty-trace hint).
    skipped_actions: [u64; 128],
    /// Event lines of the replayed action (with or without data).
    events: u64,
}

impl LineParser for Blkparse {
    fn empty_hint(&self) -> Option<String> {
        let seen: Vec<String> = (0u8..128)
            .filter(|&a| self.skipped_actions[usize::from(a)] > 0)
            .map(|a| format!("{} {}", self.skipped_actions[usize::from(a)], char::from(a)))
            .collect();
        let event = char::from(self.event);
        if self.events > 0 {
            return Some(format!(
                "{} {event} events, none with data (a `sector + count` range and R, W or D in rwbs)",
                self.events
            ));
        }
        let other = if self.event == b'D' {
            "try --blkparse-queue (Q events), or a blkparse run that records dispatch (D) events"
        } else {
            "drop --blkparse-queue to replay dispatch (D) events"
        };
        Some(if seen.is_empty() {
            format!("no {event} events and no other event lines: is this blkparse output?")
        } else {
            format!("no {event} events; this file has only other events ({}): {other}", seen.join(", "))
        })
    }

    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        if is_blank_or_comment(line) {
            return Ok(None);
        }
        let mut it = line.split_ascii_whitespace();
        // An event line starts with `maj,min`; anything else is blkparse's summary text.
        let Some(dev) = it.next() else { return Ok(None) };
        let Some((major, minor)) = dev.split_once(',') else { return Ok(None) };
        if !all_digits(major) || !all_digits(minor) {
            return Ok(None);
        }
        let (Some(cpu), Some(seq), Some(time), Some(pid), Some(action)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            return Ok(None);
        };
        if action.as_bytes() != std::slice::from_ref(&self.event) {
            if let Some(n) = self.skipped_actions.get_mut(usize::from(action.as_bytes()[0])) {
                *n += 1;
            }
            return Ok(None);
        }
        self.events += 1;

        const DEV_RULE: &str = "maj,min with major < 4096 and minor < 1048576";
        let device = match (major.parse::<u32>(), minor.parse::<u32>()) {
            (Ok(major), Ok(minor)) => dev_t(major, minor),
            _ => None,
        }
        .ok_or_else(|| FieldError::new("device", dev, DEV_RULE))?;
        number::<u32>("cpu", cpu, "a CPU number")?;
        number::<u64>("seq", seq, "a sequence number")?;
        let time_ns = seconds_to_ns(time)
            .ok_or_else(|| FieldError::new("time_s", time, "seconds with at most 9 decimals, e.g. 12.000024673"))?;
        number::<u32>("pid", pid, "a process id")?;

        let rwbs = next_field(&mut it, "rwbs")?;
        let Some(op) = rwbs_op(rwbs)? else { return Ok(None) };
        // A zone management command has an address and no data: `sector + 0`, or `sector`.
        let no_data = op.is_zone_management();

        // `sector + count`, or no range at all: nothing, `[process]`, `(elapsed)`, or a
        // number directly followed by `[process]` / `(cdb)` (zero-length or passthrough).
        let sector_text = it.next().filter(|t| !t.starts_with('[') && !t.starts_with('('));
        let Some(sector_text) = sector_text else {
            return match op {
                // Select All names no zone: whatever address it has plays no part.
                IoOp::ZoneResetAll => Ok(Some(TraceRecord { time_ns, device, offset_sector: 0, sectors: 0, op })),
                // Any other zoned command acts on a zone it must name (an append, on its data).
                _ if op.is_zoned() => Err(FieldError::new(
                    "sector",
                    rwbs,
                    "a zoned command names its zone by its first sector (`ZR 524288 + 0`; an append, `ZA 0 + 64`): \
                     this line has no range",
                )),
                // A request without data (a flush, a passthrough command).
                _ => Ok(None),
            };
        };
        let offset_sector: u64 = number("sector", sector_text, "a sector number")?;
        let zone_command = TraceRecord { time_ns, device, offset_sector, sectors: 0, op };
        // A zone append without data is no append: refused, not dropped.
        let no_append = || {
            Err(FieldError::new(
                "count",
                sector_text,
                "a zone append carries data: `ZA sector + count` with a count of at least 1",
            ))
        };
        match it.next() {
            Some("+") => {}
            None if no_data => return Ok(Some(zone_command)),
            Some(t) if no_data && (t.starts_with('[') || t.starts_with('(')) => return Ok(Some(zone_command)),
            None | Some(_) if op == IoOp::ZoneAppend => return no_append(),
            None => return Ok(None),
            Some(t) if t.starts_with('[') || t.starts_with('(') => return Ok(None),
            Some(t) => return Err(FieldError::new("+", t, "`+ count` after the sector")),
        }
        let count_text = next_field(&mut it, "count")?;
        let sectors: u32 = number("count", count_text, "a sector count below 2^32")?;
        if sectors == 0 {
            return match op {
                IoOp::ZoneAppend => no_append(),
                _ => Ok(no_data.then_some(zone_command)),
            };
        }
        range_end_ok("sector", sector_text, offset_sector, sectors)?;
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

/// The command an RWBS field names; `None` for one that moves no data (`N`, a bare flush).
fn rwbs_op(rwbs: &str) -> Result<Option<IoOp>, FieldError> {
    if !rwbs.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(FieldError::new("rwbs", rwbs, "RWBS flags, upper-case letters such as R, WS, D, FWS, N"));
    }
    Ok(if let Some(op) = zone_op(rwbs) {
        Some(op)
    } else if rwbs.contains('D') {
        Some(IoOp::Trim)
    } else if rwbs.contains('W') {
        Some(IoOp::Write)
    } else if rwbs.contains('R') {
        Some(IoOp::Read)
    } else {
        None
    })
}

/// The zoned command an RWBS names, as blktrace and blkparse print them since their 2025
/// zoned-command patches: `ZA` zone append, `ZR`
/// reset, `ZRA` reset all, `ZF` finish, `ZO` open, `ZC` close (`WZ`, write zeroes, is none).
fn zone_op(rwbs: &str) -> Option<IoOp> {
    let at = rwbs.find('Z')?;
    if rwbs[..at].ends_with('W') {
        return None;
    }
    let rest = &rwbs.as_bytes()[at + 1..];
    Some(match rest {
        [b'A', ..] => IoOp::ZoneAppend,
        [b'R', b'A', ..] => IoOp::ZoneResetAll,
        [b'R', ..] => IoOp::ZoneReset,
        [b'F', ..] => IoOp::ZoneFinish,
        [b'O', ..] => IoOp::ZoneOpen,
        [b'C', ..] => IoOp::ZoneClose,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// FIU

/// FIU SRCMap / homes text.
struct Fiu;

impl LineParser for Fiu {
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        if is_blank_or_comment(line) {
            return Ok(None);
        }
        let mut it = line.split_ascii_whitespace();
        let time_ns: u64 = number("time_ns", next_field(&mut it, "time_ns")?, "a time in ns")?;
        number::<u32>("pid", next_field(&mut it, "pid")?, "a process id")?;
        next_field(&mut it, "process")?;
        let lba_text = next_field(&mut it, "lba")?;
        let offset_sector: u64 = number("lba", lba_text, "a sector number")?;
        let size_text = next_field(&mut it, "size_sectors")?;
        let sectors: u32 = number("size_sectors", size_text, "a sector count below 2^32")?;
        if sectors == 0 {
            return Err(FieldError::new("size_sectors", size_text, "must be >= 1 sector"));
        }
        let op_text = next_field(&mut it, "R/W")?;
        let op = match op_text {
            "R" => IoOp::Read,
            "W" => IoOp::Write,
            _ => return Err(FieldError::new("R/W", op_text, "R or W")),
        };
        let major_text = next_field(&mut it, "major")?;
        let major: u32 = number("major", major_text, "a major number below 4096")?;
        if major > MAX_MAJOR {
            return Err(FieldError::new("major", major_text, "a major number below 4096"));
        }
        let minor_text = next_field(&mut it, "minor")?;
        let minor: u32 = number("minor", minor_text, "a minor number below 1048576")?;
        let device =
            dev_t(major, minor).ok_or_else(|| FieldError::new("minor", minor_text, "a minor number below 1048576"))?;
        let md5 = next_field(&mut it, "md5")?;
        if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(FieldError::new("md5", md5, "32 hexadecimal digits"));
        }
        if let Some(extra) = it.next() {
            return Err(FieldError::new("md5", extra, "the end of the line after md5 (9 fields)"));
        }
        range_end_ok("lba", lba_text, offset_sector, sectors)?;
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

// ---------------------------------------------------------------------------------------------
// fio iolog

/// fio iolog v2 / v3.
#[derive(Default)]
struct FioIolog {
    /// 2 or 3 once the header was read, 0 before.
    version: u8,
    /// Device number of each file name seen.
    files: HashMap<String, u32>,
}

/// What a fio action does.
enum FioAction {
    /// A data request.
    Io(IoOp),
    /// sync, datasync, sync_file_range, wait: no request, offset and length optional.
    NoData,
    /// add, open, close: no request.
    File,
}

impl FioIolog {
    /// The device number of `name`, allocating the next one for a new name.
    fn device(&mut self, name: &str) -> Result<u32, FieldError> {
        if let Some(&d) = self.files.get(name) {
            return Ok(d);
        }
        let n = self.files.len();
        let d = u32::try_from(n)
            .ok()
            .filter(|_| n < MAX_FIO_FILES)
            .ok_or_else(|| FieldError::new("filename", name, "at most 1048576 distinct files"))?;
        self.files.insert(name.to_owned(), d);
        Ok(d)
    }

    /// A `fio version N iolog` line (its first two fields are `fio version`).
    fn header(line: &str) -> Result<u8, FieldError> {
        let mut it = line.split_ascii_whitespace();
        let (_, _, v, iolog, rest) = (it.next(), it.next(), it.next(), it.next(), it.next());
        match (v, iolog, rest) {
            (Some("2"), Some("iolog"), None) => Ok(2),
            (Some("3"), Some("iolog"), None) => Ok(3),
            _ => Err(FieldError::new("header", line.trim(), "`fio version 2 iolog` or `fio version 3 iolog`")),
        }
    }
}

impl LineParser for FioIolog {
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        if is_blank_or_comment(line) {
            return Ok(None);
        }
        let mut it = line.split_ascii_whitespace();
        let mut first_two = it.clone();
        if (first_two.next(), first_two.next()) == (Some("fio"), Some("version")) {
            self.version = Self::header(line)?;
            return Ok(None);
        }
        let time_ns = match self.version {
            2 => 0,
            3 => {
                let text = next_field(&mut it, "timestamp_us")?;
                let us: u64 = number("timestamp_us", text, "microseconds since the job started")?;
                us.checked_mul(1_000)
                    .ok_or_else(|| FieldError::new("timestamp_us", text, "below 2^64 ns (584 years)"))?
            }
            _ => {
                return Err(FieldError::new(
                    "header",
                    line.trim(),
                    "`fio version 2 iolog` or `fio version 3 iolog` before any data line",
                ))
            }
        };
        let filename = next_field(&mut it, "filename")?;
        let action_text = next_field(&mut it, "action")?;
        let action = match action_text {
            "read" => FioAction::Io(IoOp::Read),
            "write" => FioAction::Io(IoOp::Write),
            "trim" => FioAction::Io(IoOp::Trim),
            "sync" | "datasync" | "sync_file_range" | "wait" => FioAction::NoData,
            "add" | "open" | "close" => FioAction::File,
            _ => {
                return Err(FieldError::new(
                    "action",
                    action_text,
                    "read, write, trim, sync, datasync, sync_file_range, wait, add, open or close",
                ))
            }
        };
        let op = match action {
            FioAction::Io(op) => op,
            FioAction::NoData | FioAction::File => {
                self.device(filename)?;
                return Ok(None);
            }
        };
        let offset_text = next_field(&mut it, "offset")?;
        let offset: u64 = number("offset", offset_text, "a byte offset")?;
        let length_text = next_field(&mut it, "length")?;
        let length: u64 = number("length", length_text, "a length in bytes")?;
        if length == 0 {
            return Err(FieldError::new("length", length_text, "must be >= 1 byte"));
        }
        if let Some(extra) = it.next() {
            return Err(FieldError::new("length", extra, "the end of the line after length"));
        }
        let sectors = u32::try_from(length.div_ceil(SECTOR_BYTES))
            .map_err(|_| FieldError::new("length", length_text, "below 2^32 sectors (2 TiB)"))?;
        let offset_sector = offset / SECTOR_BYTES;
        range_end_ok("offset", offset_text, offset_sector, sectors)?;
        let device = self.device(filename)?;
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn blk(event: u8) -> Box<dyn LineParser> {
        parser(TraceFormat::Blkparse, &ParserOptions { blkparse_event: event }).expect("blkparse parser")
    }

    fn fiu() -> Box<dyn LineParser> {
        parser(TraceFormat::Fiu, &ParserOptions::default()).expect("fiu parser")
    }

    fn fio() -> Box<dyn LineParser> {
        parser(TraceFormat::FioIolog, &ParserOptions::default()).expect("fio parser")
    }

    fn rec(time_ns: u64, device: u32, offset_sector: u64, sectors: u32, op: IoOp) -> Option<TraceRecord> {
        Some(TraceRecord { time_ns, device, offset_sector, sectors, op })
    }

    /// Parses every line of `text`; panics on an error. Returns the records.
    fn parse_all(p: &mut dyn LineParser, text: &str) -> Vec<TraceRecord> {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            match p.parse(line) {
                Ok(Some(r)) => out.push(r),
                Ok(None) => {}
                Err(e) => panic!("line {}: {line:?}: {e:?}", i + 1),
            }
        }
        out
    }

    fn field_of(r: Result<Option<TraceRecord>, FieldError>) -> &'static str {
        match r {
            Err(e) => e.field,
            Ok(v) => panic!("expected an error, got {v:?}"),
        }
    }

    #[test]
    fn other_formats_are_not_ours() {
        let o = ParserOptions::default();
        for f in TraceFormat::ALL {
            let ours = matches!(f, TraceFormat::Blkparse | TraceFormat::Fiu | TraceFormat::FioIolog);
            assert_eq!(parser(f, &o).is_some(), ours, "{f}");
        }
    }

    // ---- blkparse ----

    const SDB: u32 = (8 << 20) | 16;

    #[test]
    fn blkparse_dispatch_lines() {
        let mut p = blk(b'D');
        assert_eq!(
            p.parse("  8,16   0        5     0.000024673  5314  D   R 1611592 + 256 [java]").unwrap(),
            rec(24_673, SDB, 1_611_592, 256, IoOp::Read)
        );
        assert_eq!(
            p.parse("  8,16   2     9848  1651.022339500   210  D WSM 12296 + 8 [kworker/2:1H]").unwrap(),
            rec(1_651_022_339_500, SDB, 12_296, 8, IoOp::Write)
        );
        // NVMe major 259 and a process name with spaces.
        assert_eq!(
            p.parse("259,3    1        7     3.5  77  D  RA 0 + 8 [Web Content]").unwrap(),
            rec(3_500_000_000, (259 << 20) | 3, 0, 8, IoOp::Read)
        );
        // Discards: `D` and secure erase `DE`, even with `W` next to it.
        assert_eq!(
            p.parse("8,0 0 1 1.000000001 1 D D 2048 + 4096 [fstrim]").unwrap(),
            rec(1_000_000_001, 8 << 20, 2048, 4096, IoOp::Trim)
        );
        assert_eq!(
            p.parse("8,0 0 1 1.0 1 D DE 8 + 8 [blkdiscard]").unwrap(),
            rec(1_000_000_000, 8 << 20, 8, 8, IoOp::Trim)
        );
        assert_eq!(p.parse("8,0 0 1 1.0 1 D WD 8 + 8 [x]").unwrap(), rec(1_000_000_000, 8 << 20, 8, 8, IoOp::Trim));
        // Tabs separate fields too.
        assert_eq!(
            p.parse("8,0\t0\t1\t0.000000000\t1\tD\tW\t0\t+\t1\t[x]").unwrap(),
            rec(0, 8 << 20, 0, 1, IoOp::Write)
        );
    }

    #[test]
    fn blkparse_zoned_commands() {
        let mut p = blk(b'D');
        let mut at = |line: &str| p.parse(&format!("259,1 0 1 2.0 9 D {line}")).unwrap();
        let t = 2_000_000_000;
        let dev = (259 << 20) | 1;
        // A zone append carries data; its sector is the zone's start.
        assert_eq!(at("ZA 524288 + 256 [f2fs]"), rec(t, dev, 524_288, 256, IoOp::ZoneAppend));
        assert_eq!(at("ZAS 524288 + 8 [f2fs]"), rec(t, dev, 524_288, 8, IoOp::ZoneAppend));
        // Zone management has no data: `+ 0`, or no range at all.
        assert_eq!(at("ZR 1048576 + 0 [f2fs]"), rec(t, dev, 1_048_576, 0, IoOp::ZoneReset));
        assert_eq!(at("ZRA 0 + 0 [blkzone]"), rec(t, dev, 0, 0, IoOp::ZoneResetAll));
        assert_eq!(at("ZF 524288 [blkzone]"), rec(t, dev, 524_288, 0, IoOp::ZoneFinish));
        assert_eq!(at("ZO 524288"), rec(t, dev, 524_288, 0, IoOp::ZoneOpen));
        assert_eq!(at("ZC 524288 + 0 [blkzone]"), rec(t, dev, 524_288, 0, IoOp::ZoneClose));
        // A reset of all zones names none: taken without a range (issue 58).
        assert_eq!(at("ZRA [blkzone]"), rec(t, dev, 0, 0, IoOp::ZoneResetAll));
        assert_eq!(at("ZRA"), rec(t, dev, 0, 0, IoOp::ZoneResetAll));
        // Write zeroes is a write, not a zoned command.
        assert_eq!(at("WZ 8 + 8 [x]"), rec(t, dev, 8, 8, IoOp::Write));
        // A zone append without data, and any other zoned command without its zone, are bad
        // lines, never dropped.
        for bad in ["ZA 8 + 0 [x]", "ZA 8 [x]", "ZR [x]", "ZO", "ZF (12)"] {
            let e = p.parse(&format!("259,1 0 1 2.0 9 D {bad}")).unwrap_err();
            assert!(e.field == "count" || e.field == "sector", "{bad}: {e:?}");
        }
    }

    #[test]
    fn blkparse_skips_non_events_and_other_actions() {
        let mut p = blk(b'D');
        for line in [
            "",
            "   ",
            "# comment",
            "  8,16   0        4     0.000017985  5314  I   R 1611592 + 256 [java]",
            "  8,16   0        7     0.001092325  5314  C   R 1611592 + 256 [0]",
            "  8,16   0        3     0.000010000  5314  Q   R 1611592 + 256 [java]",
            "  8,16   0        0     0.000000000     0  m   N cfq5314 alloced",
            "  8,16   1        2     0.000001000  5314  UT  N [java] 1",
            "  8,16   1        2     0.000001000  5314  P   N [java]",
            "CPU0 (8,16):",
            " Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB",
            " Read Dispatches:     1343,   150676KiB\t Write Dispatches:      107,    21448KiB",
            "Total (8,16):",
            "Throughput (R/W): 317KiB/s / 260KiB/s",
            "Events (8,16): 17181 entries",
            "Skips: 0 forward (0 -   0.0%)",
            "8,16 0 5 0.1 5314", // fewer fields
            "8,16",
        ] {
            assert_eq!(p.parse(line).unwrap(), None, "{line:?}");
        }
    }

    #[test]
    fn blkparse_events_without_range() {
        let mut p = blk(b'D');
        for line in [
            "  8,0    3        1     0.000000000   697  D FWS [kworker/3:1H]", // flush
            "  8,0    3        1     0.000000000   697  D FWS",
            "  8,0    3        1     0.000000000   697  D   N [kworker]",
            "  8,0    3        1     0.000000000   697  D   N 0 (12 00 00 00 24 00) [sg_inq]",
            "  8,0    3        1     0.000000000   697  D   R 36 (12 00 00 00 24 00) [sg_inq]",
            "  8,0    3        1     0.000000000   697  D   W 4096 [kworker]", // zero length
            "  8,0    3        1     0.000000000   697  D   W 4096 + 0 [kworker]",
            "  8,0    3        1     0.000000000   697  D   W 4096",
            "  8,0    3        1     0.000000000   697  D   W (     17) [x]",
        ] {
            assert_eq!(p.parse(line).unwrap(), None, "{line:?}");
        }
    }

    #[test]
    fn blkparse_queue_vs_dispatch() {
        let lines = [
            "  8,16   0        1     0.000010000  5314  Q   R 100 + 8 [java]",
            "  8,16   0        2     0.000011000  5314  G   R 100 + 8 [java]",
            "  8,16   0        3     0.000012000  5314  I   R 100 + 8 [java]",
            "  8,16   0        4     0.000020000  5314  D   R 100 + 8 [java]",
            "  8,16   0        5     0.000900000     0  C   R 100 + 8 [0]",
        ];
        let run = |event| -> Vec<TraceRecord> {
            let mut p = blk(event);
            lines.iter().filter_map(|l| p.parse(l).unwrap()).collect()
        };
        assert_eq!(
            run(b'D'),
            vec![TraceRecord { time_ns: 20_000, device: SDB, offset_sector: 100, sectors: 8, op: IoOp::Read }]
        );
        assert_eq!(
            run(b'Q'),
            vec![TraceRecord { time_ns: 10_000, device: SDB, offset_sector: 100, sectors: 8, op: IoOp::Read }]
        );
    }

    #[test]
    fn blkparse_bad_fields() {
        let mut p = blk(b'D');
        let cases = [
            ("8,1048576 0 5 0.1 5314 D R 1 + 8 [j]", "device"),
            ("4096,0 0 5 0.1 5314 D R 1 + 8 [j]", "device"),
            ("99999999999,0 0 5 0.1 5314 D R 1 + 8 [j]", "device"),
            ("8,16 x 5 0.1 5314 D R 1 + 8 [j]", "cpu"),
            ("8,16 0 -5 0.1 5314 D R 1 + 8 [j]", "seq"),
            ("8,16 0 5 0.1234567890 5314 D R 1 + 8 [j]", "time_s"),
            ("8,16 0 5 1e3 5314 D R 1 + 8 [j]", "time_s"),
            ("8,16 0 5 .5 5314 D R 1 + 8 [j]", "time_s"),
            ("8,16 0 5 5. 5314 D R 1 + 8 [j]", "time_s"),
            ("8,16 0 5 -0.5 5314 D R 1 + 8 [j]", "time_s"),
            ("8,16 0 5 99999999999999999999.0 5314 D R 1 + 8 [j]", "time_s"),
            ("8,16 0 5 18446744073.709551616 5314 D R 1 + 8 [j]", "time_s"),
            ("8,16 0 5 0.1 p5314 D R 1 + 8 [j]", "pid"),
            ("8,16 0 5 0.1 5314 D", "rwbs"),
            ("8,16 0 5 0.1 5314 D r 1 + 8 [j]", "rwbs"),
            ("8,16 0 5 0.1 5314 D R x1 + 8 [j]", "sector"),
            ("8,16 0 5 0.1 5314 D R 18446744073709551616 + 8 [j]", "sector"),
            ("8,16 0 5 0.1 5314 D R 18446744073709551615 + 8 [j]", "sector"),
            ("8,16 0 5 0.1 5314 D R 1 - 8 [j]", "+"),
            ("8,16 0 5 0.1 5314 D R 1 +", "count"),
            ("8,16 0 5 0.1 5314 D R 1 + 4294967296 [j]", "count"),
            ("8,16 0 5 0.1 5314 D R 1 + eight [j]", "count"),
        ];
        for (line, field) in cases {
            assert_eq!(field_of(p.parse(line)), field, "{line:?}");
        }
        // The same broken lines are not looked at when their action is not replayed.
        let mut q = blk(b'Q');
        for (line, _) in cases {
            assert_eq!(q.parse(line).unwrap(), None, "{line:?}");
        }
        // Largest time that fits.
        assert_eq!(
            p.parse("8,16 0 5 18446744073.709551615 1 D R 1 + 8 [j]").unwrap().map(|r| r.time_ns),
            Some(u64::MAX)
        );
    }

    #[test]
    fn blkparse_real_sample() {
        let Some(text) = super::super::testing::sample("ycsb-f2fs.blkparse.txt") else { return };
        let d = parse_all(&mut *blk(b'D'), &text);
        let q = parse_all(&mut *blk(b'Q'), &text);

        // All D events; every one has a `sector + count` range with count > 0, so none is skipped:
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D"' ycsb-f2fs.blkparse.txt | wc -l              -> 5727
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" && $9=="+" && $10>0' ycsb-f2fs.blkparse.txt | wc -l -> 5727
        assert_eq!(d.len(), 5727);
        // The trace has no Q events (the summary also says `Reads Queued: 0`, `Writes Queued: 0`):
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="Q"' ycsb-f2fs.blkparse.txt | wc -l              -> 0
        assert!(q.is_empty());
        // Reads: rwbs R, RA, RM (no D in any rwbs, so no trims):
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" && $7 !~ /D/ && $7 !~ /W/ && $7 ~ /R/' ... | wc -l -> 4722
        let reads: Vec<_> = d.iter().filter(|r| r.op == IoOp::Read).collect();
        assert_eq!(reads.len(), 4722);
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" && $7 ~ /W/' ... | wc -l                      -> 1005
        assert_eq!(d.iter().filter(|r| r.op == IoOp::Write).count(), 1005);
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" && $7 ~ /D/' ... | wc -l                      -> 0
        assert_eq!(d.iter().filter(|r| r.op == IoOp::Trim).count(), 0);
        // Total sectors (= blkparse's summary: 524572 KiB read + 429540 KiB written):
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" {s+=$10} END {print s}' ...                  -> 1908224
        assert_eq!(d.iter().map(|r| u64::from(r.sectors)).sum::<u64>(), 1_908_224);
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" && $7 ~ /R/ {s+=$10} END {print s}' ...       -> 1049144
        assert_eq!(reads.iter().map(|r| u64::from(r.sectors)).sum::<u64>(), 1_049_144);
        // One device, 8,16 (sdb).
        assert!(d.iter().all(|r| r.device == SDB));
        // First and last D lines:
        // awk '$6=="D"' ... | head -1 -> 8,16 0 5 0.000024673 5314 D R 1611592 + 256 [java]
        // awk '$6=="D"' ... | tail -1 -> 8,16 2 9858 1651.022740858 210 D WSM 4120 + 8 [kworker/2:1H]
        assert_eq!(
            d[0],
            TraceRecord { time_ns: 24_673, device: SDB, offset_sector: 1_611_592, sectors: 256, op: IoOp::Read }
        );
        assert_eq!(
            d[d.len() - 1],
            TraceRecord { time_ns: 1_651_022_740_858, device: SDB, offset_sector: 4120, sectors: 8, op: IoOp::Write }
        );
        // Lines interleave CPUs, so times are not sorted:
        // awk '$1 ~ /^[0-9]+,[0-9]+$/ && $6=="D" {if ($4+0 < p) n++; p=$4+0} END {print n}' ... -> 392
        assert_eq!(d.windows(2).filter(|w| w[1].time_ns < w[0].time_ns).count(), 392);
    }

    // ---- FIU ----

    #[test]
    fn fiu_lines() {
        let mut p = fiu();
        assert_eq!(
            p.parse("89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221").unwrap(),
            rec(89_966_522_969_723, 6 << 20, 18_579_576, 8, IoOp::Write)
        );
        assert_eq!(
            p.parse("\t1 0 swapper 0 1 R 8 17 81BB6BDB58A1D1355E4D7D81A5540E97  ").unwrap(),
            rec(1, (8 << 20) | 17, 0, 1, IoOp::Read)
        );
        for line in ["", "  ", "# time_ns pid process lba size R/W major minor md5"] {
            assert_eq!(p.parse(line).unwrap(), None);
        }
    }

    #[test]
    fn fiu_bad_fields() {
        let mut p = fiu();
        let md5 = "d6c75ba46e82326fefa545b57a12e221";
        let cases = [
            (format!("x 1 p 2 8 W 6 0 {md5}"), "time_ns"),
            (format!("-1 1 p 2 8 W 6 0 {md5}"), "time_ns"),
            (format!("1 1.5 p 2 8 W 6 0 {md5}"), "pid"),
            ("1 1".to_string(), "process"),
            ("1 1 p".to_string(), "lba"),
            (format!("1 1 p 0x10 8 W 6 0 {md5}"), "lba"),
            (format!("1 1 p 2 0 W 6 0 {md5}"), "size_sectors"),
            (format!("1 1 p 2 4294967296 W 6 0 {md5}"), "size_sectors"),
            (format!("1 1 p 2 8 w 6 0 {md5}"), "R/W"),
            (format!("1 1 p 2 8 Read 6 0 {md5}"), "R/W"),
            (format!("1 1 p 2 8 W 4096 0 {md5}"), "major"),
            (format!("1 1 p 2 8 W x 0 {md5}"), "major"),
            (format!("1 1 p 2 8 W 6 1048576 {md5}"), "minor"),
            ("1 1 p 2 8 W 6 0".to_string(), "md5"),
            ("1 1 p 2 8 W 6 0 d6c75ba4".to_string(), "md5"),
            (format!("1 1 p 2 8 W 6 0 {md5} extra"), "md5"),
            (format!("1 1 my process 2 8 W 6 0 {md5}"), "lba"),
            (format!("1 1 p 18446744073709551615 8 W 6 0 {md5}"), "lba"),
        ];
        for (line, field) in cases {
            assert_eq!(field_of(p.parse(&line)), field, "{line:?}");
        }
    }

    #[test]
    fn fiu_real_sample() {
        let Some(text) = super::super::testing::sample("fiu-homes-first10k.txt") else { return };
        let recs = parse_all(&mut *fiu(), &text);
        // awk 'END {print NR}' fiu-homes-first10k.txt                                   -> 9998
        assert_eq!(recs.len(), 9998);
        // awk '$6=="R"' fiu-homes-first10k.txt | wc -l                                   -> 8896
        assert_eq!(recs.iter().filter(|r| r.op == IoOp::Read).count(), 8896);
        // awk '$6=="W"' fiu-homes-first10k.txt | wc -l                                   -> 1102
        assert_eq!(recs.iter().filter(|r| r.op == IoOp::Write).count(), 1102);
        let bytes = |op: Option<IoOp>| -> u64 {
            recs.iter().filter(|r| op.is_none() || op == Some(r.op)).map(|r| u64::from(r.sectors) * 512).sum()
        };
        // awk '{b+=$5*512} END {print b}' fiu-homes-first10k.txt                         -> 40951808
        assert_eq!(bytes(None), 40_951_808);
        // awk '$6=="R" {b+=$5*512} END {print b}' fiu-homes-first10k.txt                 -> 36438016
        assert_eq!(bytes(Some(IoOp::Read)), 36_438_016);
        // Every request is 8 sectors on device 6,0: awk '{print $5, $7","$8}' ... | sort | uniq -c
        assert!(recs.iter().all(|r| r.sectors == 8 && r.device == 6 << 20));
        // head -1: 89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c7...
        assert_eq!(
            recs[0],
            TraceRecord {
                time_ns: 89_966_522_969_723,
                device: 6 << 20,
                offset_sector: 18_579_576,
                sectors: 8,
                op: IoOp::Write
            }
        );
        // Times never go back: awk '{if ($1+0 < p) n++; p=$1+0} END {print n+0}' ...     -> 0
        assert!(recs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    }

    // ---- fio ----

    #[test]
    fn fio_v2() {
        let log = "fio version 2 iolog\n\
                   /dev/sdb add\n\
                   /dev/sdc add\n\
                   /dev/sdb open\n\
                   /dev/sdb write 0 4096\n\
                   /dev/sdb read 8192 4096\n\
                   /dev/sdb sync 0 0\n\
                   /dev/sdb datasync 0 0\n\
                   /dev/sdb wait 1000 0\n\
                   \n\
                   # a comment\n\
                   /dev/sdc open\n\
                   /dev/sdc trim 1048576 65536\n\
                   /dev/sdc read 1000 100\n\
                   /dev/sdd read 512 513\n\
                   /dev/sdb close\n\
                   /dev/sdc close";
        let recs = parse_all(&mut *fio(), log);
        assert_eq!(
            recs,
            vec![
                TraceRecord { time_ns: 0, device: 0, offset_sector: 0, sectors: 8, op: IoOp::Write },
                TraceRecord { time_ns: 0, device: 0, offset_sector: 16, sectors: 8, op: IoOp::Read },
                TraceRecord { time_ns: 0, device: 1, offset_sector: 2048, sectors: 128, op: IoOp::Trim },
                // Offset rounded down, length rounded up.
                TraceRecord { time_ns: 0, device: 1, offset_sector: 1, sectors: 1, op: IoOp::Read },
                // A file never added gets the next number.
                TraceRecord { time_ns: 0, device: 2, offset_sector: 1, sectors: 2, op: IoOp::Read },
            ]
        );
    }

    /// Written by fio 3.33: `fio --name=j --filename=/tmp/fiot/a:/tmp/fiot/b --size=1m
    /// --rw=randrw --bs=4k --io_size=64k --ioengine=psync --thinktime=2ms --fsync=4
    /// --write_iolog=v3.log` (timestamps in µs: 2 ms think time between I/Os).
    const FIO_V3_LOG: &str = "fio version 3 iolog
18 /tmp/fiot/a add
21 /tmp/fiot/b add
115 /tmp/fiot/a open
121 /tmp/fiot/a read 28672 4096
2356 /tmp/fiot/b open
2363 /tmp/fiot/b read 385024 4096
4504 /tmp/fiot/a read 438272 4096
6597 /tmp/fiot/b write 245760 4096
8647 /tmp/fiot/a read 208896 4096
10795 /tmp/fiot/b read 438272 4096
12893 /tmp/fiot/a write 196608 4096
14929 /tmp/fiot/b write 184320 4096
16959 /tmp/fiot/a write 475136 4096
18989 /tmp/fiot/b sync 475136 0
19199 /tmp/fiot/a read 32768 4096
21276 /tmp/fiot/b sync 32768 0
23530 /tmp/fiot/a write 446464 4096
25559 /tmp/fiot/b read 339968 4096
27655 /tmp/fiot/a write 483328 4096
29681 /tmp/fiot/b read 126976 4096
31786 /tmp/fiot/a read 204800 4096
33852 /tmp/fiot/b read 290816 4096
35914 /tmp/fiot/a close
35938 /tmp/fiot/b close
";

    #[test]
    fn fio_v3_written_by_fio() {
        let recs = parse_all(&mut *fio(), FIO_V3_LOG);
        // awk '$3=="read" || $3=="write"' v3.log | wc -l -> 16 (10 reads, 6 writes, 2 syncs skipped)
        assert_eq!(recs.len(), 16);
        assert_eq!(recs.iter().filter(|r| r.op == IoOp::Read).count(), 10);
        assert_eq!(recs.iter().filter(|r| r.op == IoOp::Write).count(), 6);
        assert!(recs.iter().all(|r| r.sectors == 8));
        assert_eq!(recs[0], TraceRecord { time_ns: 121_000, device: 0, offset_sector: 56, sectors: 8, op: IoOp::Read });
        assert_eq!(
            recs[1],
            TraceRecord { time_ns: 2_363_000, device: 1, offset_sector: 752, sectors: 8, op: IoOp::Read }
        );
        assert_eq!(recs[15].time_ns, 33_852_000);
        assert!(recs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    }

    #[test]
    fn fio_header_rules() {
        let mut p = fio();
        assert_eq!(field_of(p.parse("/dev/sdb write 0 4096")), "header");
        assert_eq!(field_of(p.parse("0 /dev/sdb write 0 4096")), "header");
        assert_eq!(p.parse("# comment before the header").unwrap(), None);
        assert_eq!(field_of(p.parse("fio version 1 iolog")), "header");
        assert_eq!(field_of(p.parse("fio version 4 iolog")), "header");
        assert_eq!(field_of(p.parse("fio version 2 iolog extra")), "header");
        assert_eq!(field_of(p.parse("fio version")), "header");
        assert_eq!(p.parse("  fio version 3 iolog  ").unwrap(), None);
        assert_eq!(p.parse("5 /dev/sdb write 0 4096").unwrap(), rec(5_000, 0, 0, 8, IoOp::Write));
        // A later header switches the version (concatenated logs).
        assert_eq!(p.parse("fio version 2 iolog").unwrap(), None);
        assert_eq!(p.parse("/dev/sdb write 0 4096").unwrap(), rec(0, 0, 0, 8, IoOp::Write));
    }

    #[test]
    fn fio_bad_fields() {
        let v2 = [
            ("/dev/sdb", "action"),
            ("/dev/sdb erase 0 4096", "action"),
            ("/dev/sdb write", "offset"),
            ("/dev/sdb write -1 4096", "offset"),
            ("/dev/sdb write 0x10 4096", "offset"),
            ("/dev/sdb write 0", "length"),
            ("/dev/sdb write 0 0", "length"),
            ("/dev/sdb write 0 4k", "length"),
            ("/dev/sdb write 0 4096 extra", "length"),
            ("/dev/sdb write 0 2199023255553", "length"),
        ];
        let mut p = fio();
        p.parse("fio version 2 iolog").unwrap();
        for (line, field) in v2 {
            assert_eq!(field_of(p.parse(line)), field, "{line:?}");
        }
        let mut p = fio();
        p.parse("fio version 3 iolog").unwrap();
        for (line, field) in v2 {
            assert_eq!(field_of(p.parse(&format!("7 {line}"))), field, "{line:?}");
        }
        assert_eq!(field_of(p.parse("/dev/sdb write 0 4096")), "timestamp_us");
        assert_eq!(field_of(p.parse("1.5 /dev/sdb write 0 4096")), "timestamp_us");
        assert_eq!(field_of(p.parse("18446744073709552 /dev/sdb write 0 4096")), "timestamp_us");
        assert_eq!(field_of(p.parse("7")), "filename");
        // Bad lines allocate no device: the next file is still device 0.
        assert_eq!(p.parse("8 /dev/sdz read 0 512").unwrap(), rec(8_000, 0, 0, 1, IoOp::Read));
    }

    // ---- never panic ----

    /// Tokens that reach deep into the parsers when combined.
    fn token() -> impl Strategy<Value = String> {
        const TOKENS: &[&str] = &[
            "8,16",
            "4096,0",
            "D",
            "Q",
            "R",
            "W",
            "FWS",
            "+",
            "[x]",
            "(",
            "fio",
            "version",
            "2",
            "3",
            "iolog",
            "read",
            "write",
            "trim",
            "sync",
            "add",
            "0",
            "18446744073709551615",
            "18446744073.709551615",
            "4294967295",
            "4294967296",
            "d6c75ba46e82326fefa545b57a12e221",
        ];
        prop_oneof![
            proptest::sample::select(TOKENS).prop_map(str::to_string),
            "[0-9]{1,22}",
            "[0-9]{1,12}\\.[0-9]{0,11}",
            ".{0,6}",
        ]
    }

    fn parsers() -> Vec<Box<dyn LineParser>> {
        vec![blk(b'D'), blk(b'Q'), fiu(), fio()]
    }

    /// A valid first line for each parser of `parsers()`.
    const VALID: [&str; 4] = [
        "8,16 0 5 0.000024673 5314 D R 1611592 + 256 [java]",
        "8,16 0 5 0.000024673 5314 Q R 1611592 + 256 [java]",
        "89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221",
        "fio version 3 iolog",
    ];

    proptest! {
        #[test]
        fn arbitrary_lines_never_panic(line in proptest::string::string_regex(".{0,200}").unwrap()) {
            for mut p in parsers() {
                let _ = p.parse(&line);
            }
            for (mut p, first) in parsers().into_iter().zip(VALID) {
                prop_assert!(p.parse(first).is_ok());
                let _ = p.parse(&line);
            }
            let mut p = fio();
            prop_assert!(p.parse("fio version 2 iolog").is_ok());
            let _ = p.parse(&line);
        }

        #[test]
        fn token_soups_never_panic(tokens in proptest::collection::vec(token(), 0..12)) {
            let line = tokens.join(" ");
            for (mut p, first) in parsers().into_iter().zip(VALID) {
                let _ = p.parse(&line);
                prop_assert!(p.parse(first).is_ok());
                let _ = p.parse(&line);
            }
            let mut p = fio();
            prop_assert!(p.parse("fio version 2 iolog").is_ok());
            let _ = p.parse(&line);
        }
    }
}
