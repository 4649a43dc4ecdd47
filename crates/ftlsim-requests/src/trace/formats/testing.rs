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

/// The text of a real sample (crate::trace::samples), or `None`, said, when it is absent.
pub fn sample(file: &str) -> Option<String> {
    let path = crate::trace::samples::find_or_say(file)?;
    Some(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// Requests, reads, bytes (sectors * 512) and skipped lines of a real sample, each line
/// asserted to parse; `None` when the sample is absent.
pub fn tally(format: TraceFormat, file: &str) -> Option<(u64, u64, u64, u64)> {
    let mut parser = p(format);
    let (mut n, mut reads, mut bytes, mut skipped) = (0, 0, 0, 0);
    for (i, line) in sample(file)?.lines().enumerate() {
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
    Some((n, reads, bytes, skipped))
}

/// Assert the tally of real sample `file` is `want`, when the sample is there.
pub fn expect_tally(format: TraceFormat, file: &str, want: (u64, u64, u64, u64)) {
    if let Some(got) = tally(format, file) {
        assert_eq!(got, want, "{file}");
    }
}
