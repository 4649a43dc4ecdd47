//! `ftlsim trace convert`: write records in a simulator's ASCII format, so the same trace
//! can be fed to MQSim, SSDsim or DiskSim for side-by-side comparison.

use super::{TraceFormat, TraceRecord};
use crate::host::IoOp;
use std::io::{self, Write};

/// Formats `convert` can write.
pub const WRITABLE: [TraceFormat; 3] = [TraceFormat::MqSim, TraceFormat::SsdSim, TraceFormat::DiskSim];

/// Write one record as a line of `format`; times are relative to `t0_ns`. Trims have no
/// representation in these formats and are skipped (`Ok(false)`).
pub fn write_line(
    out: &mut (impl Write + ?Sized),
    format: TraceFormat,
    r: &TraceRecord,
    t0_ns: u64,
) -> io::Result<bool> {
    let t = r.time_ns.saturating_sub(t0_ns);
    let read = match r.op {
        IoOp::Read => 1,
        IoOp::Write => 0,
        // No representation in these formats.
        _ => return Ok(false),
    };
    match format {
        // time_ns device start_sector size_sectors type(0 = write, 1 = read)
        TraceFormat::MqSim | TraceFormat::SsdSim => {
            writeln!(out, "{t} {} {} {} {read}", r.device, r.offset_sector, r.sectors)?
        }
        // time_ms device block_number block_count flags(bit 0 = read)
        TraceFormat::DiskSim => writeln!(
            out,
            "{}.{:06} {} {} {} {read}",
            t / 1_000_000,
            t % 1_000_000,
            r.device,
            r.offset_sector,
            r.sectors
        )?,
        other => return Err(io::Error::new(io::ErrorKind::Unsupported, format!("cannot write format {other}"))),
    }
    Ok(true)
}
