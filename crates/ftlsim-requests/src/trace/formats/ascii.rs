//! Parsers of the whitespace-separated simulator trace formats. Fields are split on any run
//! of spaces or tabs; blank lines and lines whose first field starts with `#` carry no
//! request; a line must have exactly five fields.
//!
//! - SSDsim (`ssdsim`): `time_ns device lsn size_sectors op`
//!   - `time_ns`: arrival time, an integer number of ns (a decimal point is rejected, so
//!     auto-detection can tell DiskSim's decimal milliseconds apart);
//!   - `device`: device number (u32);
//!   - `lsn`: first 512-byte sector;
//!   - `size_sectors`: length in 512-byte sectors, 1 ..= 2^32 - 1;
//!   - `op`: 0 = write, 1 = read.
//! - MQSim (`mqsim`): `time_ns device start_sector size_sectors type`
//!   - `time_ns`, `device`, `size_sectors`: as SSDsim;
//!   - `start_sector`: first 512-byte sector;
//!   - `type`: 0 = write, 1 = read.
//! - DiskSim (`disksim`): `time_ms device block_number block_count flags`
//!   - `time_ms`: arrival time in ms, with up to 9 decimals, converted exactly to ns
//!     (rounded half up to the nearest ns);
//!   - `device`: device number (u32);
//!   - `block_number`: first 512-byte sector;
//!   - `block_count`: length in 512-byte sectors, 1 ..= 2^32 - 1;
//!   - `flags`: decimal or `0x` hexadecimal; bit 0 set = read, clear = write.
//!
//! Also the small helpers shared with the CSV formats (`csvs.rs`): the exact decimal time
//! parser [`decimal_to_ns`], field access, integer and size checks. No line allocates unless
//! it is malformed.

use crate::host::IoOp;
use crate::trace::{FieldError, LineParser, ParserOptions, TraceFormat, TraceRecord};

/// The parser for `format` if it is one of this module's.
pub(super) fn parser(format: TraceFormat, _opts: &ParserOptions) -> Option<Box<dyn LineParser>> {
    match format {
        TraceFormat::SsdSim => Some(five(SSDSIM_FIELDS, Time::IntegerNs, Units::Sectors, OpCode::ZeroWriteOneRead)),
        TraceFormat::MqSim => Some(five(MQSIM_FIELDS, Time::IntegerNs, Units::Sectors, OpCode::ZeroWriteOneRead)),
        TraceFormat::DiskSim => Some(five(DISKSIM_FIELDS, Time::DecimalMs, Units::Sectors, OpCode::ReadBit)),
        TraceFormat::Linnos => Some(five(LINNOS_FIELDS, Time::DecimalMs, Units::Bytes, OpCode::ZeroWriteOneRead)),
        _ => None,
    }
}

fn five(names: [&'static str; 5], time: Time, units: Units, op: OpCode) -> Box<dyn LineParser> {
    Box::new(FiveFieldParser { names, time, units, op })
}

const SSDSIM_FIELDS: [&str; 5] = ["time_ns", "device", "lsn", "size_sectors", "op"];
const MQSIM_FIELDS: [&str; 5] = ["time_ns", "device", "start_sector", "size_sectors", "type"];
const DISKSIM_FIELDS: [&str; 5] = ["time_ms", "device", "block_number", "block_count", "flags"];
const LINNOS_FIELDS: [&str; 5] = ["timestamp_ms", "device", "offset_bytes", "size_bytes", "op"];

/// 10^n for n = 0..=9 (how [`decimal_to_ns`] pads 1 to 9 fractional digits to 9).
const POW10: [u64; 10] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

/// Exact conversion of a non-negative decimal number of `unit_ns`-long units (e.g.
/// `1_000_000_000` for seconds, `1_000_000` for ms) to ns, without floating point: an
/// integer part of ASCII digits, optionally `.` and 1 to 9 fractional digits. Sub-ns
/// remainders are rounded half up. Errors (naming `field`) on any other text and on
/// results beyond `u64::MAX` ns.
pub(super) fn decimal_to_ns(text: &str, unit_ns: u64, field: &'static str) -> Result<u64, FieldError> {
    const RULE: &str = "a non-negative decimal number (digits, optionally '.' and 1 to 9 digits) below 2^64 ns";
    const BILLION: u64 = 1_000_000_000;
    let err = || FieldError::new(field, text, RULE);
    let (int_text, frac_text) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text, None),
    };
    // `str::parse` would accept a leading '+'; require a digit first.
    if !int_text.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return Err(err());
    }
    let int: u64 = int_text.parse().map_err(|_| err())?;
    let mut ns = int.checked_mul(unit_ns).ok_or_else(err)?;
    if let Some(frac_text) = frac_text {
        // Read 1 to 9 digits, then pad to 9 (units of 10^-9) so the division below is by a constant.
        let pad = match 9usize.checked_sub(frac_text.len()).and_then(|p| POW10.get(p)) {
            Some(&pad) if !frac_text.is_empty() => pad,
            _ => return Err(err()),
        };
        let mut frac: u64 = 0;
        for b in frac_text.bytes() {
            if !b.is_ascii_digit() {
                return Err(err());
            }
            frac = frac * 10 + u64::from(b - b'0');
        }
        // In units of 10^-9, < 10^9. Rounded half up below; frac * unit_ns fits u64 for any
        // unit up to ~1.8e10 ns, else u128.
        let frac = frac * pad;
        let part = match frac.checked_mul(unit_ns) {
            Some(p) => (p / BILLION) + u64::from(p % BILLION >= BILLION / 2),
            None => {
                u64::try_from((u128::from(frac) * u128::from(unit_ns) + u128::from(BILLION / 2)) / u128::from(BILLION))
                    .map_err(|_| err())?
            }
        };
        ns = ns.checked_add(part).ok_or_else(err)?;
    }
    Ok(ns)
}

/// The next field of a split line, or an error naming the missing `field`.
#[inline]
pub(super) fn next_field<'a>(
    fields: &mut impl Iterator<Item = &'a str>,
    field: &'static str,
) -> Result<&'a str, FieldError> {
    fields.next().ok_or_else(|| FieldError::new(field, "", "a value (the line ends before this field)"))
}

/// Error if the split line has a field left after the last documented one.
#[inline]
pub(super) fn no_more_fields<'a>(
    fields: &mut impl Iterator<Item = &'a str>,
    rule: &'static str,
) -> Result<(), FieldError> {
    match fields.next() {
        Some(extra) => Err(FieldError::new("line", extra, rule)),
        None => Ok(()),
    }
}

/// An unsigned decimal integer (digits only: no sign, no decimal point).
#[inline]
pub(super) fn parse_u64(text: &str, field: &'static str, rule: &'static str) -> Result<u64, FieldError> {
    match text.as_bytes().first() {
        Some(b) if b.is_ascii_digit() => text.parse().map_err(|_| FieldError::new(field, text, rule)),
        _ => Err(FieldError::new(field, text, rule)),
    }
}

/// A device number: an unsigned decimal integer that fits u32.
#[inline]
pub(super) fn parse_device(text: &str, field: &'static str) -> Result<u32, FieldError> {
    const RULE: &str = "an unsigned integer below 2^32";
    match text.as_bytes().first() {
        Some(b) if b.is_ascii_digit() => text.parse().map_err(|_| FieldError::new(field, text, RULE)),
        _ => Err(FieldError::new(field, text, RULE)),
    }
}

/// A request length given in sectors: 1 ..= u32::MAX.
#[inline]
pub(super) fn sectors_from_count(count: u64, text: &str, field: &'static str) -> Result<u32, FieldError> {
    if count == 0 {
        return Err(FieldError::new(field, text, "must be >= 1 sector"));
    }
    u32::try_from(count).map_err(|_| FieldError::new(field, text, "at most 2^32 - 1 sectors"))
}

/// A request length given in bytes, rounded up to whole 512-byte sectors: 1 ..= u32::MAX.
#[inline]
pub(super) fn sectors_from_bytes(bytes: u64, text: &str, field: &'static str) -> Result<u32, FieldError> {
    let sectors = bytes.div_ceil(512);
    sectors_from_count(sectors, text, field)
}

/// Error unless the request `[offset, offset + sectors)` ends within 2^64 sectors.
#[inline]
pub(super) fn check_end(offset: u64, sectors: u32, text: &str, field: &'static str) -> Result<(), FieldError> {
    match offset.checked_add(u64::from(sectors)) {
        Some(_) => Ok(()),
        None => Err(FieldError::new(field, text, "a start whose request end fits below 2^64 sectors")),
    }
}

/// Offset and size given in bytes: (first sector rounded down, sectors rounded up), as every
/// byte-unit format reads them.
#[inline]
pub(super) fn byte_range(
    offset_text: &str,
    size_text: &str,
    offset_field: &'static str,
    size_field: &'static str,
) -> Result<(u64, u32), FieldError> {
    const BYTES_RULE: &str = "an unsigned integer number of bytes below 2^64";
    let offset = parse_u64(offset_text, offset_field, BYTES_RULE)? / 512;
    let size = parse_u64(size_text, size_field, BYTES_RULE)?;
    let sectors = sectors_from_bytes(size, size_text, size_field)?;
    check_end(offset, sectors, offset_text, offset_field)?;
    Ok((offset, sectors))
}

/// Rule for the sector-number fields.
const SECTOR_RULE: &str = "an unsigned integer sector number below 2^64";
/// Rule for the sector-count fields.
const COUNT_RULE: &str = "an unsigned integer number of sectors";

/// Parse `offset` and `size` (both in sectors) into checked values.
#[inline]
fn offset_and_size(
    offset_text: &str,
    size_text: &str,
    offset_field: &'static str,
    size_field: &'static str,
) -> Result<(u64, u32), FieldError> {
    let offset = parse_u64(offset_text, offset_field, SECTOR_RULE)?;
    let count = parse_u64(size_text, size_field, COUNT_RULE)?;
    let sectors = sectors_from_count(count, size_text, size_field)?;
    check_end(offset, sectors, offset_text, offset_field)?;
    Ok((offset, sectors))
}

/// How a five-field format writes its time.
#[derive(Clone, Copy)]
enum Time {
    /// Integer ns (a decimal point is an error, so detection can tell DiskSim apart).
    IntegerNs,
    /// Decimal ms, up to 9 decimals.
    DecimalMs,
}

/// How a five-field format writes its address and length.
#[derive(Clone, Copy)]
enum Units {
    Sectors,
    /// Offset rounded down, size rounded up to sectors ([`byte_range`]).
    Bytes,
}

/// How a five-field format writes the request type.
#[derive(Clone, Copy)]
enum OpCode {
    /// `0` = write, `1` = read.
    ZeroWriteOneRead,
    /// DiskSim flags: bit 0 set = read.
    ReadBit,
}

/// The five-field simulator formats: `time device offset size op`, differing only in units
/// and op encoding (SSDsim, MQSim, DiskSim, LinnOS).
struct FiveFieldParser {
    names: [&'static str; 5],
    time: Time,
    units: Units,
    op: OpCode,
}

impl LineParser for FiveFieldParser {
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        let mut fields = line.split_ascii_whitespace();
        let Some(time_text) = fields.next() else { return Ok(None) };
        if time_text.starts_with('#') {
            return Ok(None);
        }
        let [time_f, device_f, offset_f, size_f, op_f] = self.names;
        let time_ns = match self.time {
            Time::IntegerNs => parse_u64(time_text, time_f, "an integer number of ns (no decimal point) below 2^64")?,
            Time::DecimalMs => decimal_to_ns(time_text, 1_000_000, time_f)?,
        };
        let device = parse_device(next_field(&mut fields, device_f)?, device_f)?;
        let offset_text = next_field(&mut fields, offset_f)?;
        let size_text = next_field(&mut fields, size_f)?;
        let (offset_sector, sectors) = match self.units {
            Units::Sectors => offset_and_size(offset_text, size_text, offset_f, size_f)?,
            Units::Bytes => byte_range(offset_text, size_text, offset_f, size_f)?,
        };
        let op_text = next_field(&mut fields, op_f)?;
        let op = match (self.op, op_text) {
            (OpCode::ZeroWriteOneRead, "0") => IoOp::Write,
            (OpCode::ZeroWriteOneRead, "1") => IoOp::Read,
            (OpCode::ZeroWriteOneRead, _) => return Err(FieldError::new(op_f, op_text, "0 (write) or 1 (read)")),
            (OpCode::ReadBit, _) if parse_flags(op_text, op_f)? & 1 == 1 => IoOp::Read,
            (OpCode::ReadBit, _) => IoOp::Write,
        };
        no_more_fields(&mut fields, "exactly 5 whitespace-separated fields")?;
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

/// DiskSim flags: unsigned decimal, or hexadecimal after `0x` / `0X`.
fn parse_flags(text: &str, field: &'static str) -> Result<u64, FieldError> {
    const RULE: &str = "an unsigned decimal or 0x-hexadecimal integer below 2^64";
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    // `from_str_radix` would accept a leading '+'; require a digit first.
    if !digits.as_bytes().first().is_some_and(u8::is_ascii_hexdigit) {
        return Err(FieldError::new(field, text, RULE));
    }
    u64::from_str_radix(digits, radix).map_err(|_| FieldError::new(field, text, RULE))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{bad, expect_tally, p, r, rec, sample};
    use super::*;
    use proptest::prelude::*;

    const FORMATS: [TraceFormat; 4] =
        [TraceFormat::SsdSim, TraceFormat::MqSim, TraceFormat::DiskSim, TraceFormat::Linnos];

    #[test]
    fn linnos_reads_bytes_and_milliseconds() {
        let mut parser = p(TraceFormat::Linnos);
        let r = parser.parse("223.412 0 3159347200 36864 0").unwrap().unwrap();
        assert_eq!(
            (r.time_ns, r.device, r.offset_sector, r.sectors, r.op),
            (223_412_000, 0, 6_170_600, 72, IoOp::Write)
        );
        let r = parser.parse("1.5 3 1000 100 1").unwrap().unwrap();
        assert_eq!((r.offset_sector, r.sectors, r.op), (1, 1, IoOp::Read), "offset down, size up");
        assert_eq!(parser.parse("# comment"), Ok(None));
        let field = |l: &str| p(TraceFormat::Linnos).parse(l).unwrap_err().field;
        assert_eq!(field("1.0 0 0 0 1"), "size_bytes");
        assert_eq!(field("1.0 0 0 512 2"), "op");
        assert_eq!(field("1.0 0 x 512 1"), "offset_bytes");
        assert_eq!(field("1.0 0 0 512 1 9"), "line");
    }

    #[test]
    fn only_this_modules_formats() {
        for f in TraceFormat::ALL {
            assert_eq!(parser(f, &ParserOptions::default()).is_some(), FORMATS.contains(&f), "{f}");
        }
    }

    #[test]
    fn decimal_to_ns_is_exact() {
        let s = 1_000_000_000;
        assert_eq!(decimal_to_ns("0", s, "t"), Ok(0));
        assert_eq!(decimal_to_ns("0.551706", s, "t"), Ok(551_706_000));
        assert_eq!(decimal_to_ns("1456095145.133076000", s, "t"), Ok(1_456_095_145_133_076_000));
        assert_eq!(decimal_to_ns("1538323200", s, "t"), Ok(1_538_323_200_000_000_000));
        assert_eq!(decimal_to_ns("0.000000001", s, "t"), Ok(1));
        assert_eq!(decimal_to_ns("007.5", s, "t"), Ok(7_500_000_000));
        // ms: 9 decimals are sub-ns, rounded half up.
        assert_eq!(decimal_to_ns("13.191135", 1_000_000, "t"), Ok(13_191_135));
        assert_eq!(decimal_to_ns("0.0000005", 1_000_000, "t"), Ok(1));
        assert_eq!(decimal_to_ns("0.0000004", 1_000_000, "t"), Ok(0));
        assert_eq!(decimal_to_ns("1532949.045363", 1_000_000, "t"), Ok(1_532_949_045_363));
        // Up to u64::MAX and no further.
        assert_eq!(decimal_to_ns("18446744073709551615", 1, "t"), Ok(u64::MAX));
        assert_eq!(decimal_to_ns("18446744073.709551615", s, "t"), Ok(u64::MAX));
        // Huge units go through u128.
        assert_eq!(decimal_to_ns("0.5", u64::MAX, "t"), Ok(u64::MAX / 2 + 1));
        for text in [
            "",
            ".",
            ".5",
            "5.",
            "+5",
            "-5",
            "5.-1",
            "5.+1",
            "1e9",
            "0x10",
            " 5",
            "5 ",
            "1.2.3",
            "1.0000000001",
            "NaN",
            "18446744073.709551616",
            "18446744073709551616",
            "18446744074",
            "١",
        ] {
            let e = decimal_to_ns(text, s, "timestamp_s").unwrap_err();
            assert_eq!(e.field, "timestamp_s", "{text:?}");
            assert_eq!(e.text, text);
        }
    }

    #[test]
    fn ssdsim_lines() {
        let f = TraceFormat::SsdSim;
        assert_eq!(rec(f, "26214000 1 240840 6 0"), r(26_214_000, 1, 240_840, 6, IoOp::Write));
        assert_eq!(rec(f, "  5\t2   7 \t 8 1  "), r(5, 2, 7, 8, IoOp::Read));
        assert_eq!(rec(f, "5 2 7 8 1\r"), r(5, 2, 7, 8, IoOp::Read));
        assert_eq!(rec(f, "0 4294967295 18446744073709551614 1 0"), r(0, u32::MAX, u64::MAX - 1, 1, IoOp::Write));
        assert_eq!(rec(f, "0 0 0 4294967295 0").sectors, u32::MAX);
        for skip in ["", "   ", "\t", "# time_ns device lsn size_sectors op", "  #x", "#"] {
            assert_eq!(p(f).parse(skip), Ok(None), "{skip:?}");
        }
        assert_eq!(bad(f, "1.5 0 0 8 0"), "time_ns");
        assert_eq!(bad(f, "-1 0 0 8 0"), "time_ns");
        assert_eq!(bad(f, "18446744073709551616 0 0 8 0"), "time_ns");
        assert_eq!(bad(f, "x 0 0 8 0"), "time_ns");
        assert_eq!(bad(f, "1"), "device");
        assert_eq!(bad(f, "1 4294967296 0 8 0"), "device");
        assert_eq!(bad(f, "1 -1 0 8 0"), "device");
        assert_eq!(bad(f, "1 0"), "lsn");
        assert_eq!(bad(f, "1 0 a 8 0"), "lsn");
        assert_eq!(bad(f, "1 0 18446744073709551615 1 0"), "lsn");
        assert_eq!(bad(f, "1 0 0"), "size_sectors");
        assert_eq!(bad(f, "1 0 0 0 0"), "size_sectors");
        assert_eq!(bad(f, "1 0 0 4294967296 0"), "size_sectors");
        assert_eq!(bad(f, "1 0 0 8.0 0"), "size_sectors");
        assert_eq!(bad(f, "1 0 0 8"), "op");
        assert_eq!(bad(f, "1 0 0 8 2"), "op");
        assert_eq!(bad(f, "1 0 0 8 R"), "op");
        assert_eq!(bad(f, "1 0 0 8 1 extra"), "line");
        let e = p(f).parse("1 0 0 0 0").unwrap_err();
        assert_eq!((e.text.as_str(), e.rule), ("0", "must be >= 1 sector"));
    }

    #[test]
    fn mqsim_lines() {
        let f = TraceFormat::MqSim;
        assert_eq!(rec(f, "11565000 1 31244784 64 1"), r(11_565_000, 1, 31_244_784, 64, IoOp::Read));
        assert_eq!(rec(f, "938513000\t4\t264719034\t16\t0"), r(938_513_000, 4, 264_719_034, 16, IoOp::Write));
        for skip in ["", " \t ", "# comment"] {
            assert_eq!(p(f).parse(skip), Ok(None));
        }
        assert_eq!(bad(f, "11.5 1 3 64 1"), "time_ns");
        assert_eq!(bad(f, "11 x 3 64 1"), "device");
        assert_eq!(bad(f, "11 1 3.5 64 1"), "start_sector");
        assert_eq!(bad(f, "11 1 3 0 1"), "size_sectors");
        assert_eq!(bad(f, "11 1 3 64 3"), "type");
        assert_eq!(bad(f, "11 1 3 64"), "type");
        assert_eq!(bad(f, "11 1 3 64 1 0"), "line");
    }

    #[test]
    fn disksim_lines() {
        let f = TraceFormat::DiskSim;
        assert_eq!(rec(f, "13.191135\t30\t0\t5\t1"), r(13_191_135, 30, 0, 5, IoOp::Read));
        assert_eq!(rec(f, "25.911729 18 28601 12 0"), r(25_911_729, 18, 28_601, 12, IoOp::Write));
        assert_eq!(rec(f, "7 0 1 2 0x3").op, IoOp::Read);
        assert_eq!(rec(f, "7 0 1 2 0X10").op, IoOp::Write);
        assert_eq!(rec(f, "7 0 1 2 4").op, IoOp::Write);
        assert_eq!(rec(f, "7 0 1 2 0xff").op, IoOp::Read);
        assert_eq!(rec(f, "0.0000015 0 1 2 0").time_ns, 2);
        for skip in ["", "\t\t", "#DiskSim"] {
            assert_eq!(p(f).parse(skip), Ok(None));
        }
        assert_eq!(bad(f, "-1.0 0 0 8 0"), "time_ms");
        assert_eq!(bad(f, "1,5 0 0 8 0"), "time_ms");
        assert_eq!(bad(f, "18446744073709.551616 0 0 8 0"), "time_ms");
        assert_eq!(bad(f, "1.0 a 0 8 0"), "device");
        assert_eq!(bad(f, "1.0 0 -3 8 0"), "block_number");
        assert_eq!(bad(f, "1.0 0 3 0 0"), "block_count");
        assert_eq!(bad(f, "1.0 0 3 99999999999 0"), "block_count");
        assert_eq!(bad(f, "1.0 0 3 8 0x"), "flags");
        assert_eq!(bad(f, "1.0 0 3 8 0xg"), "flags");
        assert_eq!(bad(f, "1.0 0 3 8 +1"), "flags");
        assert_eq!(bad(f, "1.0 0 3 8 0x+1"), "flags");
        assert_eq!(bad(f, "1.0 0 3 8 R"), "flags");
        assert_eq!(bad(f, "1.0 0 3 8"), "flags");
        assert_eq!(bad(f, "1.0 0 3 8 1 2"), "line");
    }

    #[test]
    fn real_financial1_ssdsim() {
        // awk '{n++; if($5==1) r++; s+=$4*512} END {printf "%d %d %d\n", n, r, s}' \
        //     /work/shared/traces/financial1-first10k.ssdsim.ascii   -> 10000 4078 55279104
        expect_tally(TraceFormat::SsdSim, "financial1-first10k.ssdsim.ascii", (10_000, 4_078, 55_279_104, 0));
    }

    #[test]
    fn real_websearch_mqsim() {
        // The file has no final newline: 24783 requests, `wc -l` says 24782.
        // awk '{n++; if($5==1) r++; s+=$4*512} END {printf "%d %d %d\n", n, r, s}' \
        //     /work/shared/traces/websearch-small.mqsim.trace   -> 24783 24779 382117888
        expect_tally(TraceFormat::MqSim, "websearch-small.mqsim.trace", (24_783, 24_779, 382_117_888, 0));
    }

    #[test]
    fn real_tpcc_mqsim() {
        // awk '{n++; if($5==1) r++; s+=$4*512} END {printf "%d %d %d\n", n, r, s}' \
        //     /work/shared/traces/tpcc-small.mqsim.trace   -> 6999 4381 59718656
        expect_tally(TraceFormat::MqSim, "tpcc-small.mqsim.trace", (6_999, 4_381, 59_718_656, 0));
    }

    #[test]
    fn real_disksim_validate() {
        // awk '{n++; if($5%2==1) r++; s+=$4*512} END {printf "%d %d %d\n", n, r, s}' \
        //     /work/shared/traces/disksim-validate.ascii   -> 100000 79634 520539136
        expect_tally(TraceFormat::DiskSim, "disksim-validate.ascii", (100_000, 79_634, 520_539_136, 0));
    }

    #[test]
    fn real_disksim_times_are_exact() {
        // First and last lines: 13.191135 ms and 1532949.045363 ms.
        let Some(text) = sample("disksim-validate.ascii") else { return };
        let mut parser = p(TraceFormat::DiskSim);
        let times: Vec<u64> = text.lines().filter_map(|l| parser.parse(l).ok().flatten()).map(|r| r.time_ns).collect();
        assert_eq!(times.first(), Some(&13_191_135));
        assert_eq!(times.last(), Some(&1_532_949_045_363));
    }

    proptest! {
        #[test]
        fn never_panics_on_strings(line in proptest::string::string_regex(".{0,200}").expect("regex")) {
            for f in FORMATS {
                let _ = p(f).parse(&line);
            }
        }

        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let line = String::from_utf8_lossy(&bytes);
            for f in FORMATS {
                let _ = p(f).parse(&line);
            }
        }

        #[test]
        fn never_panics_on_numeric_fields(
            fields in proptest::collection::vec(
                prop_oneof![
                    proptest::string::string_regex("[0-9]{1,22}").expect("regex"),
                    proptest::string::string_regex("[0-9]{0,21}\\.[0-9]{0,11}").expect("regex"),
                    proptest::string::string_regex("0x[0-9a-fA-F]{0,18}").expect("regex"),
                    proptest::string::string_regex("[-+#]?[0-9]{0,3}").expect("regex"),
                ],
                0..7,
            ),
            sep in prop_oneof![Just(" "), Just("\t"), Just(" \t ")],
        ) {
            let line = fields.join(sep);
            for f in FORMATS {
                let _ = p(f).parse(&line);
            }
        }

        #[test]
        fn decimal_matches_integer_arithmetic(int in 0u64..100_000_000_000, frac in "[0-9]{1,9}", unit_pow in 0usize..10) {
            let unit = POW10.get(unit_pow).copied().unwrap_or(1);
            let text = format!("{int}.{frac}");
            let scale = 10u128.pow(frac.len() as u32);
            let frac_v: u128 = frac.parse().expect("digits");
            let want = u128::from(int) * u128::from(unit) + (frac_v * u128::from(unit) * 2 + scale) / (2 * scale);
            let got = decimal_to_ns(&text, unit, "t");
            match u64::try_from(want) {
                Ok(w) => prop_assert_eq!(got, Ok(w)),
                Err(_) => prop_assert!(got.is_err()),
            }
        }
    }
}
