//! Host requests and their split into logical pages.
//!
//! A request covers `sectors` 512-byte sectors from `offset_sector`. Pages are
//! `page_size / 512` sectors; a request touches pages `offset / spp ..= (offset + len - 1) / spp`,
//! and its first and last page may be partial. Requests arrive already placed in the
//! drive's logical space: trace sources lay several devices side by side or select one
//! (`trace::TraceSource`), never overlaid.

use crate::error::RequestError;
use serde::Serialize;

/// Logical page number as seen by the host (page-sized sectors of the user space).
pub type Lpn = u32;

/// Request type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IoOp {
    /// Read.
    Read,
    /// Write.
    Write,
    /// Discard (TRIM / UNMAP).
    Trim,
    /// Zone Append (NVMe ZNS): a write placed at its zone's write pointer by the drive; the
    /// request's offset is the zone's first sector (ZSLBA).
    ZoneAppend,
    /// Zone Management Send, Open Zone: the zone starting at the offset.
    ZoneOpen,
    /// Zone Management Send, Close Zone.
    ZoneClose,
    /// Zone Management Send, Finish Zone.
    ZoneFinish,
    /// Zone Management Send, Reset Zone: the zone starting at the offset.
    ZoneReset,
    /// Zone Management Send, Reset Zone with Select All: every zone of the namespace (the
    /// replay gives it the queue's namespace as its range).
    ZoneResetAll,
}

impl IoOp {
    /// A Zone Management Send action: no data; one zone named by its first sector (length 0),
    /// or, Reset All, the namespace.
    pub fn is_zone_management(self) -> bool {
        matches!(self, IoOp::ZoneOpen | IoOp::ZoneClose | IoOp::ZoneFinish | IoOp::ZoneReset | IoOp::ZoneResetAll)
    }

    /// A command of the Zoned Namespace command set (only a zoned namespace takes it).
    pub fn is_zoned(self) -> bool {
        self == IoOp::ZoneAppend || self.is_zone_management()
    }

    /// Does it carry data to the drive (a write or a zone append)?
    pub fn writes_data(self) -> bool {
        matches!(self, IoOp::Write | IoOp::ZoneAppend)
    }

    /// The latency figure it counts in beside the overall one: 1 read, 2 write (a zone
    /// append too), 3 trim; zone management commands only in the overall figure (`None`).
    #[inline]
    pub fn latency_class(self) -> Option<usize> {
        match self {
            IoOp::Read => Some(1),
            IoOp::Write | IoOp::ZoneAppend => Some(2),
            IoOp::Trim => Some(3),
            _ => None,
        }
    }

    /// Its name in messages and traces: `read`, `zone_append`, ...
    pub fn name(self) -> &'static str {
        match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Trim => "trim",
            IoOp::ZoneAppend => "zone_append",
            IoOp::ZoneOpen => "zone_open",
            IoOp::ZoneClose => "zone_close",
            IoOp::ZoneFinish => "zone_finish",
            IoOp::ZoneReset => "zone_reset",
            IoOp::ZoneResetAll => "zone_reset_all",
        }
    }
}

/// Largest request in bytes: a request's length is a 32-bit count of 512-byte sectors.
pub const MAX_REQUEST_BYTES: u64 = u32::MAX as u64 * 512;

/// One host request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Arrival time, ns (ignored in closed-loop replay).
    pub arrival_ns: u64,
    /// Closed-loop replay only: the host's think time, ns, between a free queue slot and
    /// issuing this request (Fio's `thinktime`; 0 for traces).
    pub think_ns: u64,
    /// Device (disk/ASU/volume) number in the trace.
    pub device: u32,
    /// First 512-byte sector.
    pub offset_sector: u64,
    /// Length in sectors (>= 1).
    pub sectors: u32,
    /// Type.
    pub op: IoOp,
}

/// One logical page touched by a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSpan {
    /// Logical page.
    pub lpn: Lpn,
    /// First sector within the page.
    pub first_sector: u32,
    /// Sectors covered within the page.
    pub sectors: u32,
}

impl PageSpan {
    /// Does the span cover the whole page?
    pub fn is_full(&self, sectors_per_page: u32) -> bool {
        self.sectors == sectors_per_page
    }
    /// Bit mask of the covered sectors (pages of up to 64 sectors).
    pub fn sector_mask(&self) -> u64 {
        let ones = if self.sectors >= 64 { u64::MAX } else { (1u64 << self.sectors) - 1 };
        ones << self.first_sector
    }
}

/// Check a placed request against the logical capacity. `what` names the request's source
/// (e.g. `trace.csv line 12` or `request 57`); it is only called on error, so the hot path
/// does not format.
pub fn check_bounds(
    offset: u64,
    sectors: u32,
    logical_sectors: u64,
    what: impl FnOnce() -> String,
) -> Result<(), RequestError> {
    if sectors == 0 {
        return Err(RequestError::Request(format!("{}: length 0 sectors (must be >= 1)", what())));
    }
    let end = u128::from(offset) + u128::from(sectors);
    if end > u128::from(logical_sectors) {
        return Err(RequestError::Request(format!(
            "{}: sectors [{offset}, {end}) lie beyond the drive's {logical_sectors} logical sectors",
            what()
        )));
    }
    Ok(())
}

/// Iterate over the pages of a placed request.
pub fn pages(offset: u64, sectors: u32, sectors_per_page: u32) -> impl Iterator<Item = PageSpan> {
    let spp = u64::from(sectors_per_page);
    let end = offset + u64::from(sectors);
    let first = offset / spp;
    let last = (end - 1) / spp;
    (first..=last).map(move |p| {
        let lo = offset.max(p * spp);
        let hi = end.min((p + 1) * spp);
        PageSpan { lpn: p as Lpn, first_sector: (lo - p * spp) as u32, sectors: (hi - lo) as u32 }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_into_partial_and_full_pages() {
        let v: Vec<_> = pages(6, 12, 8).collect();
        assert_eq!(
            v,
            vec![
                PageSpan { lpn: 0, first_sector: 6, sectors: 2 },
                PageSpan { lpn: 1, first_sector: 0, sectors: 8 },
                PageSpan { lpn: 2, first_sector: 0, sectors: 2 },
            ]
        );
        assert!(v[1].is_full(8));
        assert_eq!(v[0].sector_mask(), 0b1100_0000);
    }

    #[test]
    fn bounds() {
        let e = check_bounds(95, 8, 100, || "request 3".into()).unwrap_err().to_string();
        assert_eq!(e, "invalid request: request 3: sectors [95, 103) lie beyond the drive's 100 logical sectors");
        assert!(check_bounds(0, 0, 100, || "x".into()).is_err());
    }
}
