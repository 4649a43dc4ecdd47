//! Bad input never panics (issue 12): what the cargo-fuzz target `fuzz/fuzz_targets/
//! trace_lines.rs` does, as a proptest that runs in CI, extended to drive configs and
//! workload specs. Arbitrary bytes, and valid inputs with one field replaced by junk.

use ftlsim_core::config::DriveConfig;
use ftlsim_core::trace::{parser, ParserOptions, TraceFormat};
use ftlsim_core::workload::WorkloadSpec;
use proptest::prelude::*;

const VALID_TOML: &str = include_str!("../../../presets/default.toml");

/// Values that break parsers and validators: signs, huge and non-finite numbers, wrong types.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("1e308".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("4294967296".to_string()),
        Just("18446744073709551616".to_string()),
        Just("\"x\"".to_string()),
        Just("[]".to_string()),
        Just("true".to_string()),
        "[ -~]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn trace_parsers_never_panic(pick in any::<u8>(), text in "(?s).{0,400}") {
        let format = TraceFormat::ALL[pick as usize % TraceFormat::ALL.len()];
        let opts = ParserOptions { blkparse_event: if pick & 0x80 != 0 { b'Q' } else { b'D' } };
        let mut p = parser(format, &opts);
        for line in text.lines() {
            let _ = p.parse(line);
        }
        let _ = p.empty_hint();
    }

    #[test]
    fn configs_with_a_junk_value_are_errors_not_panics(line in 0usize..40, value in junk()) {
        // Replace the value of the `line`-th `key = value` line of a valid config.
        let mut n = 0;
        let text: String = VALID_TOML
            .lines()
            .map(|l| {
                let is_kv = l.contains(" = ") && !l.trim_start().starts_with('#');
                let out = if is_kv && n == line { format!("{} = {value}", l.split(" = ").next().unwrap()) } else { l.to_string() };
                n += usize::from(is_kv);
                out + "\n"
            })
            .collect();
        let _ = DriveConfig::from_toml(&text, "junk").and_then(ftlsim_core::config::Resolved::validate);
    }

    #[test]
    fn arbitrary_config_text_is_an_error_not_a_panic(text in "(?s).{0,300}") {
        let _ = DriveConfig::from_toml(&text, "arbitrary");
    }

    #[test]
    fn workload_specs_never_panic(
        key in prop::sample::select(vec!["pattern", "read", "trim", "size", "arrival", "qd", "requests", "duration", "span", "align", "x"]),
        value in junk(),
        text in "[ -~]{0,60}",
    ) {
        let _ = WorkloadSpec::parse(&format!("{key}={value}"));
        let _ = WorkloadSpec::parse(&text);
    }
}
