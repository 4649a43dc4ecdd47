//! Line parsers, one per format, grouped by syntax (docs/traces.md gives each field's
//! meaning): whitespace-separated simulator formats, CSV formats, and other text formats.

mod ascii;
mod csvs;
#[cfg(test)]
mod testing;
mod text;

use super::{LineParser, ParserOptions, TraceFormat};

/// A parser for `format`.
pub fn parser(format: TraceFormat, opts: &ParserOptions) -> Box<dyn LineParser> {
    ascii::parser(format, opts)
        .or_else(|| csvs::parser(format, opts))
        .or_else(|| text::parser(format, opts))
        .unwrap_or_else(|| panic!("no parser for trace format {format}"))
}
