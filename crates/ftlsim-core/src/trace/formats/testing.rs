//! Helpers for the parser tests: parse one line, blame a bad one, tally a sample trace.

use super::super::{IoOp, LineParser, ParserOptions, TraceFormat, TraceRecord};

pub fn p(format: TraceFormat) -> Box<dyn LineParser> {
    super::parser(format, &ParserOptions::default())
}

pub fn rec(format: TraceFormat, line: &str) -> TraceRecord {
    match p(format).parse(line) {
        Ok(Some(r)) => r,
        other => panic!("{format} {line:?}: {other:?}"),
    }
}

/// The field a bad line is blamed on.
pub fn bad(format: TraceFormat, line: &str) -> &'static str {
    match p(format).parse(line) {
        Err(e) => e.field,
        other => panic!("{format} {line:?} should fail, got {other:?}"),
    }
}

pub fn r(time_ns: u64, device: u32, offset_sector: u64, sectors: u32, op: IoOp) -> TraceRecord {
    TraceRecord { time_ns, device, offset_sector, sectors, op }
}

/// The text of a sample in ../shared/traces.
pub fn sample(file: &str) -> String {
    let path = format!("{}/../../../shared/traces/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Requests, reads, bytes (sectors * 512) and skipped lines of a sample trace, each line
/// asserted to parse.
pub fn tally(format: TraceFormat, file: &str) -> (u64, u64, u64, u64) {
    let mut parser = p(format);
    let (mut n, mut reads, mut bytes, mut skipped) = (0, 0, 0, 0);
    for (i, line) in sample(file).lines().enumerate() {
        match parser.parse(line) {
            Ok(Some(rec)) => {
                n += 1;
                reads += u64::from(rec.op == IoOp::Read);
                bytes += u64::from(rec.sectors) * 512;
            }
            Ok(None) => skipped += 1,
            Err(e) => panic!("{file}:{}: {e:?}", i + 1),
        }
    }
    (n, reads, bytes, skipped)
}
