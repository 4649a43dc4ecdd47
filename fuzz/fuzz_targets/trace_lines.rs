//! Every trace parser on arbitrary input: no panic, whatever the bytes. The first byte
//! picks the format, the rest is split into lines and fed in order (parsers keep state).
#![no_main]

use ftlsim_core::trace::{parser, ParserOptions, TraceFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let format = TraceFormat::ALL[pick as usize % TraceFormat::ALL.len()];
    let opts = ParserOptions { blkparse_event: if pick & 0x80 != 0 { b'Q' } else { b'D' } };
    let mut p = parser(format, &opts);
    for line in String::from_utf8_lossy(rest).lines() {
        let _ = p.parse(line);
    }
});
