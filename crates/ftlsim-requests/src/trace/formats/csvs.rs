//! Parsers of the comma-separated trace formats. Fields are split on `,` and trimmed of
//! ASCII spaces and tabs (a trailing `\r` of CRLF files included); blank lines and lines
//! starting with `#` carry no request. Byte offsets become sectors rounded down, byte sizes
//! whole sectors rounded up; a size of 0 or above 2^32 - 1 sectors is an error. Decimal
//! seconds are converted to ns exactly (no floating point, up to 9 decimals).
//!
//! - UMass/SPC (`umass`): `ASU,LBA,size_bytes,opcode,timestamp_s[,...]`
//!   - `ASU`: application storage unit, the device (u32);
//!   - `LBA`: first 512-byte sector;
//!   - `size_bytes`: length in bytes;
//!   - `opcode`: `r`/`R` = read, `w`/`W` = write;
//!   - `timestamp_s`: seconds with decimals; further fields are ignored.
//! - MSR Cambridge (`msr`): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`
//!   - `Timestamp`: Windows FILETIME, an integer count of 100 ns (x 100 = ns; error on overflow);
//!   - `Hostname`: server name, non-empty, not used;
//!   - `DiskNumber`: the device (u32);
//!   - `Type`: `Read` or `Write` (any case);
//!   - `Offset`, `Size`: bytes;
//!   - `ResponseTime`: integer count of 100 ns, checked but not used.
//! - SNIA SYSTOR'17 (`systor17`): `Timestamp,Response,IOType,LUN,Offset,Size`; a header line
//!   whose first field is `Timestamp` is skipped
//!   - `Timestamp`: seconds with decimals;
//!   - `Response`: response time, seconds with decimals, checked but not used;
//!   - `IOType`: `R` = read, `W` = write (any case);
//!   - `LUN`: the device (u32);
//!   - `Offset`, `Size`: bytes.
//! - SNIA Tencent CBS (`tencent`): `timestamp_s,offset_sectors,size_sectors,io_type,volume_id`
//!   - `timestamp_s`: seconds (integer in the published traces; decimals accepted);
//!   - `offset_sectors`: first 512-byte sector;
//!   - `size_sectors`: length in 512-byte sectors;
//!   - `io_type`: 0 = read, 1 = write;
//!   - `volume_id`: the device (u32; larger ids are an error).
//! - FlashNet replayed traces (`flashnet`): the output of the FlashNet storage-ML platform's
//!   replayer (UChicago UCARE; its replayer's format comment: "ts_record(ms),latency(us),
//!   io_type(r=1/w=0),size(B),offset,ts_submit(ms),size(B)", the last `size_after_replay`):
//!   `ts_record,latency,io_type,size,offset,ts_submit,size_after_replay`, no header
//!   - `ts_record`: when the request was issued in the original trace, ms with decimals;
//!   - `latency`: its measured latency, us (integer or decimals);
//!   - `io_type`: 1 = read, 0 = write;
//!   - `size`, `offset`: bytes;
//!   - `ts_submit`: when the replayer submitted it, ms with decimals, checked but not used;
//!   - `size_after_replay`: bytes the device completed; FlashNet's scripts drop rows where it
//!     differs from `size`: the request is replayed, its latency is not counted;
//!   - the device is 0 (the replayer's output has none).

use super::ascii::{
    byte_range, check_end, decimal_to_ns, next_field, no_more_fields, parse_device, parse_u64, sectors_from_bytes,
    sectors_from_count,
};
use crate::host::IoOp;
use crate::trace::{FieldError, LineParser, ParserOptions, TraceFormat, TraceRecord};

/// The parser for `format` if it is one of this module's.
pub(super) fn parser(format: TraceFormat, _opts: &ParserOptions) -> Option<Box<dyn LineParser>> {
    match format {
        TraceFormat::UmassSpc => Some(Box::new(UmassParser)),
        TraceFormat::Msr => Some(Box::new(MsrParser::default())),
        TraceFormat::Systor17 => Some(Box::new(Systor17Parser::default())),
        TraceFormat::TencentCbs => Some(Box::new(TencentParser)),
        TraceFormat::FlashnetReplayed => Some(Box::new(FlashnetParser::default())),
        _ => None,
    }
}

const NS_PER_S: u64 = 1_000_000_000;
const BYTES_RULE: &str = "an unsigned integer number of bytes below 2^64";
const SECTOR_RULE: &str = "an unsigned integer sector number below 2^64";

/// The line without surrounding whitespace, or `None` if it is blank or a `#` comment.
#[inline]
fn content(line: &str) -> Option<&str> {
    let line = line.trim_ascii();
    if line.is_empty() || line.starts_with('#') {
        None
    } else {
        Some(line)
    }
}

/// The comma-separated fields of `line`, each trimmed.
#[inline]
fn fields(line: &str) -> impl Iterator<Item = &str> {
    line.split(',').map(str::trim_ascii)
}

/// UMass/SPC: `ASU,LBA,size_bytes,opcode,timestamp_s[,...]`.
struct UmassParser;

impl LineParser for UmassParser {
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        let Some(line) = content(line) else { return Ok(None) };
        let mut f = fields(line);
        let device = parse_device(next_field(&mut f, "ASU")?, "ASU")?;
        let lba_text = next_field(&mut f, "LBA")?;
        let offset_sector = parse_u64(lba_text, "LBA", SECTOR_RULE)?;
        let size_text = next_field(&mut f, "size_bytes")?;
        let size = parse_u64(size_text, "size_bytes", BYTES_RULE)?;
        let sectors = sectors_from_bytes(size, size_text, "size_bytes")?;
        check_end(offset_sector, sectors, lba_text, "LBA")?;
        let op_text = next_field(&mut f, "opcode")?;
        let op = match op_text {
            "r" | "R" => IoOp::Read,
            "w" | "W" => IoOp::Write,
            _ => return Err(FieldError::new("opcode", op_text, "r or R (read), w or W (write)")),
        };
        let time_ns = decimal_to_ns(next_field(&mut f, "timestamp_s")?, NS_PER_S, "timestamp_s")?;
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

/// MSR Cambridge: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
#[derive(Default)]
struct MsrParser {
    latency_ns: Option<u64>,
}

impl LineParser for MsrParser {
    fn recorded_latency_ns(&self) -> Option<u64> {
        self.latency_ns
    }

    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        const FILETIME_RULE: &str = "an unsigned integer count of 100 ns whose value in ns is below 2^64";
        let Some(line) = content(line) else { return Ok(None) };
        let mut f = fields(line);
        let time_text = next_field(&mut f, "Timestamp")?;
        let time_ns = parse_u64(time_text, "Timestamp", FILETIME_RULE)?
            .checked_mul(100)
            .ok_or_else(|| FieldError::new("Timestamp", time_text, FILETIME_RULE))?;
        if next_field(&mut f, "Hostname")?.is_empty() {
            return Err(FieldError::new("Hostname", "", "a host name"));
        }
        let device = parse_device(next_field(&mut f, "DiskNumber")?, "DiskNumber")?;
        let type_text = next_field(&mut f, "Type")?;
        let op = if type_text.eq_ignore_ascii_case("read") {
            IoOp::Read
        } else if type_text.eq_ignore_ascii_case("write") {
            IoOp::Write
        } else {
            return Err(FieldError::new("Type", type_text, "Read or Write"));
        };
        let offset_text = next_field(&mut f, "Offset")?;
        let size_text = next_field(&mut f, "Size")?;
        let (offset_sector, sectors) = byte_range(offset_text, size_text, "Offset", "Size")?;
        let response_text = next_field(&mut f, "ResponseTime")?;
        let response = parse_u64(response_text, "ResponseTime", "an unsigned integer count of 100 ns")?;
        no_more_fields(&mut f, "exactly 7 comma-separated fields")?;
        self.latency_ns = response.checked_mul(100);
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

/// SNIA SYSTOR'17: `Timestamp,Response,IOType,LUN,Offset,Size` after a header line.
#[derive(Default)]
struct Systor17Parser {
    /// Records with a blank IOType (the README allows it: type unknown).
    untyped: u64,
    latency_ns: Option<u64>,
}

impl LineParser for Systor17Parser {
    fn recorded_latency_ns(&self) -> Option<u64> {
        self.latency_ns
    }

    fn untyped_records(&self) -> u64 {
        self.untyped
    }

    fn empty_hint(&self) -> Option<String> {
        (self.untyped > 0)
            .then(|| format!("all {} records have a blank IOType (type unknown): nothing to replay", self.untyped))
    }

    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        let Some(line) = content(line) else { return Ok(None) };
        let mut f = fields(line);
        let time_text = next_field(&mut f, "Timestamp")?;
        if time_text.eq_ignore_ascii_case("timestamp") {
            return Ok(None); // header
        }
        let time_ns = decimal_to_ns(time_text, NS_PER_S, "Timestamp")?;
        let response_ns = decimal_to_ns(next_field(&mut f, "Response")?, NS_PER_S, "Response")?;
        let op_text = next_field(&mut f, "IOType")?;
        let op = match op_text.trim() {
            "R" | "r" => Some(IoOp::Read),
            "W" | "w" => Some(IoOp::Write),
            "" => None,
            _ => return Err(FieldError::new("IOType", op_text, "R (read), W (write) or blank (unknown)")),
        };
        let device = parse_device(next_field(&mut f, "LUN")?, "LUN")?;
        let offset_text = next_field(&mut f, "Offset")?;
        let size_text = next_field(&mut f, "Size")?;
        let (offset_sector, sectors) = byte_range(offset_text, size_text, "Offset", "Size")?;
        no_more_fields(&mut f, "exactly 6 comma-separated fields")?;
        let Some(op) = op else {
            // The rest of the line is checked: a blank type is allowed, a broken line is not.
            self.untyped += 1;
            return Ok(None);
        };
        self.latency_ns = Some(response_ns);
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

/// SNIA Tencent CBS: `timestamp_s,offset_sectors,size_sectors,io_type,volume_id`.
struct TencentParser;

impl LineParser for TencentParser {
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        let Some(line) = content(line) else { return Ok(None) };
        let mut f = fields(line);
        let time_ns = decimal_to_ns(next_field(&mut f, "timestamp_s")?, NS_PER_S, "timestamp_s")?;
        let offset_text = next_field(&mut f, "offset_sectors")?;
        let offset_sector = parse_u64(offset_text, "offset_sectors", SECTOR_RULE)?;
        let size_text = next_field(&mut f, "size_sectors")?;
        let count = parse_u64(size_text, "size_sectors", "an unsigned integer number of sectors")?;
        let sectors = sectors_from_count(count, size_text, "size_sectors")?;
        check_end(offset_sector, sectors, offset_text, "offset_sectors")?;
        let op_text = next_field(&mut f, "io_type")?;
        let op = match op_text {
            "0" => IoOp::Read,
            "1" => IoOp::Write,
            _ => return Err(FieldError::new("io_type", op_text, "0 (read) or 1 (write)")),
        };
        let device = parse_device(next_field(&mut f, "volume_id")?, "volume_id")?;
        no_more_fields(&mut f, "exactly 5 comma-separated fields")?;
        Ok(Some(TraceRecord { time_ns, device, offset_sector, sectors, op }))
    }
}

/// FlashNet replayed: `ts_record,latency,io_type,size,offset,ts_submit,size_after_replay`.
#[derive(Default)]
struct FlashnetParser {
    latency_ns: Option<u64>,
}

impl LineParser for FlashnetParser {
    fn recorded_latency_ns(&self) -> Option<u64> {
        self.latency_ns
    }

    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, FieldError> {
        const MS: u64 = 1_000_000;
        let Some(line) = content(line) else { return Ok(None) };
        let mut f = fields(line);
        let time_ns = decimal_to_ns(next_field(&mut f, "ts_record")?, MS, "ts_record")?;
        let latency_ns = decimal_to_ns(next_field(&mut f, "latency")?, 1_000, "latency")?;
        let op_text = next_field(&mut f, "io_type")?;
        let op = match op_text {
            "1" => IoOp::Read,
            "0" => IoOp::Write,
            _ => return Err(FieldError::new("io_type", op_text, "1 (read) or 0 (write)")),
        };
        let size_text = next_field(&mut f, "size")?;
        let offset_text = next_field(&mut f, "offset")?;
        let (offset_sector, sectors) = byte_range(offset_text, size_text, "offset", "size")?;
        decimal_to_ns(next_field(&mut f, "ts_submit")?, MS, "ts_submit")?;
        let done_text = next_field(&mut f, "size_after_replay")?;
        let done = parse_u64(done_text, "size_after_replay", BYTES_RULE)?;
        no_more_fields(&mut f, "exactly 7 comma-separated fields")?;
        let size = parse_u64(size_text, "size", BYTES_RULE)?;
        self.latency_ns = (done == size).then_some(latency_ns);
        Ok(Some(TraceRecord { time_ns, device: 0, offset_sector, sectors, op }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{bad, expect_tally, p, r, rec, sample};
    use super::*;
    use proptest::prelude::*;

    const FORMATS: [TraceFormat; 5] = [
        TraceFormat::UmassSpc,
        TraceFormat::Msr,
        TraceFormat::Systor17,
        TraceFormat::TencentCbs,
        TraceFormat::FlashnetReplayed,
    ];

    #[test]
    fn only_this_modules_formats() {
        for f in TraceFormat::ALL {
            assert_eq!(parser(f, &ParserOptions::default()).is_some(), FORMATS.contains(&f), "{f}");
        }
    }

    #[test]
    fn blank_and_comment_lines_carry_no_request() {
        for f in FORMATS {
            for skip in ["", "  ", "\t", "\r", "# a comment", "  #,1,2,3", "#"] {
                assert_eq!(p(f).parse(skip), Ok(None), "{f} {skip:?}");
            }
        }
    }

    /// Hand-written lines in the UMass/SPC format (no sample file in ../shared/traces):
    /// the first Financial1 and WebSearch1 requests.
    #[test]
    fn umass_lines() {
        let f = TraceFormat::UmassSpc;
        assert_eq!(rec(f, "0,20941264,8192,W,0.551706"), r(551_706_000, 0, 20_941_264, 16, IoOp::Write));
        assert_eq!(rec(f, "1,3436288,15872,w,0.554041"), r(554_041_000, 1, 3_436_288, 31, IoOp::Write));
        assert_eq!(rec(f, "0,303567,3584,R,0.000000"), r(0, 0, 303_567, 7, IoOp::Read));
        assert_eq!(rec(f, "2,1135288,8192,r,0.004443"), r(4_443_000, 2, 1_135_288, 16, IoOp::Read));
        assert_eq!(rec(f, "0,7,1,W,12"), r(12_000_000_000, 0, 7, 1, IoOp::Write)); // 1 byte -> 1 sector
        assert_eq!(rec(f, "0,7,513,W,12").sectors, 2);
        assert_eq!(rec(f, " 3 , 8 , 512 , R , 1.5 \r"), r(1_500_000_000, 3, 8, 1, IoOp::Read));
        assert_eq!(rec(f, "3,8,512,R,1.5,extra,fields"), r(1_500_000_000, 3, 8, 1, IoOp::Read));
        assert_eq!(rec(f, "0,0,2199023255040,W,0").sectors, u32::MAX); // (2^32 - 1) * 512 bytes
        assert_eq!(bad(f, "x,8,512,R,1.5"), "ASU");
        assert_eq!(bad(f, "4294967296,8,512,R,1.5"), "ASU");
        assert_eq!(bad(f, "0"), "LBA");
        assert_eq!(bad(f, "0,-8,512,R,1.5"), "LBA");
        assert_eq!(bad(f, "0,18446744073709551615,512,R,1.5"), "LBA");
        assert_eq!(bad(f, "0,8,0,R,1.5"), "size_bytes");
        assert_eq!(bad(f, "0,8,2199023255041,R,1.5"), "size_bytes");
        assert_eq!(bad(f, "0,8,5.5,R,1.5"), "size_bytes");
        assert_eq!(bad(f, "0,8,512"), "opcode");
        assert_eq!(bad(f, "0,8,512,Read,1.5"), "opcode");
        assert_eq!(bad(f, "0,8,512,,1.5"), "opcode");
        assert_eq!(bad(f, "0,8,512,R"), "timestamp_s");
        assert_eq!(bad(f, "0,8,512,R,-1"), "timestamp_s");
        assert_eq!(bad(f, "0,8,512,R,1e3"), "timestamp_s");
        assert_eq!(bad(f, "0,8,512,R,18446744074"), "timestamp_s");
        assert_eq!(bad(f, "0 8 512 R 1.5"), "ASU");
        let e = p(f).parse("0,8,0,R,1.5").unwrap_err();
        assert_eq!((e.text.as_str(), e.rule), ("0", "must be >= 1 sector"));
    }

    #[test]
    fn msr_lines() {
        let f = TraceFormat::Msr;
        assert_eq!(
            rec(f, "128166385295514663,hm,0,Write,9056014336,2048,2833"),
            r(12_816_638_529_551_466_300, 0, 17_687_528, 4, IoOp::Write)
        );
        assert_eq!(rec(f, "1,src1,2,read,1000,1,5"), r(100, 2, 1, 1, IoOp::Read)); // offset floor, size ceil
        assert_eq!(rec(f, "1,src1,2,READ,1024,1025,5"), r(100, 2, 2, 3, IoOp::Read));
        assert_eq!(rec(f, "184467440737095516,h,0,Write,0,512,0").time_ns, 18_446_744_073_709_551_600);
        assert_eq!(bad(f, "184467440737095517,h,0,Write,0,512,0"), "Timestamp"); // x 100 overflows
        assert_eq!(bad(f, "1.5,h,0,Write,0,512,0"), "Timestamp");
        assert_eq!(bad(f, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"), "Timestamp");
        assert_eq!(bad(f, "1"), "Hostname");
        assert_eq!(bad(f, "1,,0,Write,0,512,0"), "Hostname");
        assert_eq!(bad(f, "1,h,-1,Write,0,512,0"), "DiskNumber");
        assert_eq!(bad(f, "1,h,99999999999,Write,0,512,0"), "DiskNumber");
        assert_eq!(bad(f, "1,h,0,W,0,512,0"), "Type");
        assert_eq!(bad(f, "1,h,0,Trim,0,512,0"), "Type");
        assert_eq!(bad(f, "1,h,0,Write,x,512,0"), "Offset");
        assert_eq!(bad(f, "1,h,0,Write,0,0,0"), "Size");
        assert_eq!(bad(f, "1,h,0,Write,0,2199023255041,0"), "Size");
        assert_eq!(bad(f, "1,h,0,Write,0,512"), "ResponseTime");
        assert_eq!(bad(f, "1,h,0,Write,0,512,1.5"), "ResponseTime");
        assert_eq!(bad(f, "1,h,0,Write,0,512,0,0"), "line");
    }

    #[test]
    fn systor17_lines() {
        let f = TraceFormat::Systor17;
        let mut parser = p(f);
        assert_eq!(parser.parse("Timestamp,Response,IOType,LUN,Offset,Size"), Ok(None));
        assert_eq!(
            parser.parse("1456095145.133076000,0.000806000,R,0,899056122368,131072"),
            Ok(Some(r(1_456_095_145_133_076_000, 0, 1_755_968_989, 256, IoOp::Read)))
        );
        assert_eq!(rec(f, "1.5,0.1,w,3,513,100"), r(1_500_000_000, 3, 1, 1, IoOp::Write));
        assert_eq!(rec(f, "1.5,0.1,W,3,512,1000\r").sectors, 2);
        assert_eq!(bad(f, "1,5,0.1,R,0,0,512"), "IOType");
        assert_eq!(bad(f, "-1.5,0.1,R,0,0,512"), "Timestamp");
        assert_eq!(bad(f, "1.5"), "Response");
        assert_eq!(bad(f, "1.5,x,R,0,0,512"), "Response");
        assert_eq!(bad(f, "1.5,0.1,Read,0,0,512"), "IOType");
        assert_eq!(bad(f, "1.5,0.1,R,a,0,512"), "LUN");
        assert_eq!(bad(f, "1.5,0.1,R,0,1.5,512"), "Offset");
        assert_eq!(bad(f, "1.5,0.1,R,0,0"), "Size");
        assert_eq!(bad(f, "1.5,0.1,R,0,0,0"), "Size");
        assert_eq!(bad(f, "1.5,0.1,R,0,0,512,9"), "line");
    }

    #[test]
    fn tencent_lines() {
        let f = TraceFormat::TencentCbs;
        assert_eq!(
            rec(f, "1538323200,4247200,128,1,1058"),
            r(1_538_323_200_000_000_000, 1058, 4_247_200, 128, IoOp::Write)
        );
        assert_eq!(rec(f, "1538323199,13896880,128,0,1063").op, IoOp::Read);
        assert_eq!(rec(f, "1.25,0,1,0,4294967295"), r(1_250_000_000, u32::MAX, 0, 1, IoOp::Read));
        assert_eq!(bad(f, "x,0,1,0,1"), "timestamp_s");
        assert_eq!(bad(f, "1"), "offset_sectors");
        assert_eq!(bad(f, "1,-1,1,0,1"), "offset_sectors");
        assert_eq!(bad(f, "1,18446744073709551615,1,0,1"), "offset_sectors");
        assert_eq!(bad(f, "1,0,0,0,1"), "size_sectors");
        assert_eq!(bad(f, "1,0,4294967296,0,1"), "size_sectors");
        assert_eq!(bad(f, "1,0,1,2,1"), "io_type");
        assert_eq!(bad(f, "1,0,1,R,1"), "io_type");
        assert_eq!(bad(f, "1,0,1,0"), "volume_id");
        assert_eq!(bad(f, "1,0,1,0,4294967296"), "volume_id");
        assert_eq!(bad(f, "1,0,1,0,1,1"), "line");
    }

    #[test]
    fn flashnet_replayed_lines_and_their_latency() {
        let f = TraceFormat::FlashnetReplayed;
        // The issue's example line: a 4 KiB read at 4,923,392 bytes, 120 us.
        let mut parser = p(f);
        let got = parser.parse("0.000,120,1,4096,4923392,0.091,4096").unwrap().unwrap();
        assert_eq!(got, r(0, 0, 9_616, 8, IoOp::Read));
        assert_eq!(parser.recorded_latency_ns(), Some(120_000));
        let got = parser.parse("12.5,87.25,0,8192,0,12.6,8192").unwrap().unwrap();
        assert_eq!(got, r(12_500_000, 0, 0, 16, IoOp::Write));
        assert_eq!(parser.recorded_latency_ns(), Some(87_250));
        // Fewer bytes completed than asked: replayed, its latency not counted.
        parser.parse("13,50,0,8192,0,13.1,4096").unwrap().unwrap();
        assert_eq!(parser.recorded_latency_ns(), None);
        assert_eq!(bad(f, "x,1,1,4096,0,0,4096"), "ts_record");
        assert_eq!(bad(f, "0,-1,1,4096,0,0,4096"), "latency");
        assert_eq!(bad(f, "0,1,2,4096,0,0,4096"), "io_type");
        assert_eq!(bad(f, "0,1,1,0,0,0,0"), "size");
        assert_eq!(bad(f, "0,1,1,4096,x,0,4096"), "offset");
        assert_eq!(bad(f, "0,1,1,4096,0,y,4096"), "ts_submit");
        assert_eq!(bad(f, "0,1,1,4096,0,0"), "size_after_replay");
        assert_eq!(bad(f, "0,1,1,4096,0,0,4096,9"), "line");
        // MSR and SYSTOR'17 give their response times too.
        let mut msr = p(TraceFormat::Msr);
        msr.parse("128166372003061629,hm,0,Read,3216090112,4096,30000").unwrap().unwrap();
        assert_eq!(msr.recorded_latency_ns(), Some(3_000_000));
        let mut systor = p(TraceFormat::Systor17);
        systor.parse("1487304000.0,0.000254,R,1,4096,512").unwrap().unwrap();
        assert_eq!(systor.recorded_latency_ns(), Some(254_000));
    }

    #[test]
    fn real_msr_hm0() {
        // All offsets and sizes are multiples of 512, so rounding changes nothing.
        // awk -F, '{n++; if(tolower($4)=="read") r++; s+=int(($6+511)/512)*512} END {printf "%d %d %d\n", n, r, s}' \
        //     /work/shared/traces/msr-hm0-first1k.csv   -> 1000 508 9689600
        expect_tally(TraceFormat::Msr, "msr-hm0-first1k.csv", (1_000, 508, 9_689_600, 0));
    }

    #[test]
    fn real_systor17() {
        // One header line skipped. All offsets and sizes are multiples of 512.
        // awk -F, 'NR>1 {n++; if($3=="R") r++; s+=int(($6+511)/512)*512} END {printf "%d %d %d\n", n, r, s}' \
        //     /work/shared/traces/systor17-sample.csv   -> 999 826 39122432
        expect_tally(TraceFormat::Systor17, "systor17-sample.csv", (999, 826, 39_122_432, 1));
    }

    #[test]
    fn real_tencent_cbs() {
        // awk -F, '{n++; if($4==0) r++; s+=$3*512} END {printf "%d %d %d\n", n, r, s}' \
        //     /work/shared/traces/tencent-cbs-sample.csv   -> 50000 24521 1518392320
        expect_tally(TraceFormat::TencentCbs, "tencent-cbs-sample.csv", (50_000, 24_521, 1_518_392_320, 0));
    }

    #[test]
    fn real_systor17_timestamps_are_out_of_order() {
        // The sample is not sorted by time: 243 of its 999 requests come before the one above.
        // awk -F, 'NR>2 && $1+0<p {o++} NR>1 {p=$1+0} END {print o}' /work/shared/traces/systor17-sample.csv -> 243
        let Some(text) = sample("systor17-sample.csv") else { return };
        let mut parser = p(TraceFormat::Systor17);
        let times: Vec<u64> = text.lines().filter_map(|l| parser.parse(l).ok().flatten()).map(|r| r.time_ns).collect();
        assert_eq!(times.windows(2).filter(|w| w[1] < w[0]).count(), 243);
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
        fn never_panics_on_csv_like_lines(
            fields in proptest::collection::vec(
                prop_oneof![
                    proptest::string::string_regex("[0-9]{1,22}").expect("regex"),
                    proptest::string::string_regex("[0-9]{0,21}\\.[0-9]{0,11}").expect("regex"),
                    proptest::string::string_regex("(r|R|w|W|0|1|Read|write|hm| )").expect("regex"),
                    proptest::string::string_regex("[-+# ]?[0-9]{0,3}").expect("regex"),
                ],
                0..9,
            ),
        ) {
            let line = fields.join(",");
            for f in FORMATS {
                let _ = p(f).parse(&line);
            }
        }
    }
}
