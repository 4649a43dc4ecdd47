//! Typed errors for bad requests: a workload spec, a trace file or line, a request the drive
//! cannot take. Messages are lowercase and name the key or field, the value found and the
//! rule broken, so that a user can fix the input without reading the source.

use std::fmt;

/// A workload specification that cannot be parsed or is out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkloadError {
    /// The key of the spec (`read`, `size`, ...), or `spec` for the whole string.
    pub key: String,
    /// The text found.
    pub value: String,
    /// What was expected.
    pub rule: String,
}

impl WorkloadError {
    /// An error for `key` holding `value`, breaking `rule`.
    pub fn new(key: impl Into<String>, value: impl Into<String>, rule: impl Into<String>) -> WorkloadError {
        WorkloadError { key: key.into(), value: value.into(), rule: rule.into() }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid workload spec: {} = `{}` ({})", self.key, self.value, self.rule)
    }
}

impl std::error::Error for WorkloadError {}

/// A trace line that cannot be used, or a trace file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceError {
    /// File path.
    pub file: String,
    /// 1-based line number (0 when the error is about the whole file).
    pub line: u64,
    /// Field name, or `file` / `line` for whole-file or whole-line problems.
    pub field: String,
    /// The text found.
    pub text: String,
    /// What was expected, and how to fix it.
    pub rule: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = Printable(&self.text);
        if self.line == 0 {
            write!(f, "trace {}: {text} ({})", self.file, self.rule)
        } else {
            write!(f, "trace {}:{}: field {} = `{text}` ({})", self.file, self.line, self.field, self.rule)
        }
    }
}

/// Text from an input file as it can be shown on a terminal: control characters (a binary
/// file's bytes, escape sequences) escaped as `\u{..}`, `\n` and the like.
struct Printable<'a>(&'a str);

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for TraceError {}

/// Why a request source (a trace, a generator) could not give its next request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// Bad workload spec.
    Workload(WorkloadError),
    /// Bad trace file or line.
    Trace(TraceError),
    /// A request the drive cannot take (names the source and line).
    Request(String),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Workload(e) => e.fmt(f),
            RequestError::Trace(e) => e.fmt(f),
            RequestError::Request(m) => write!(f, "invalid request: {m}"),
        }
    }
}

impl std::error::Error for RequestError {}

impl From<WorkloadError> for RequestError {
    fn from(e: WorkloadError) -> Self {
        RequestError::Workload(e)
    }
}

impl From<TraceError> for RequestError {
    fn from(e: TraceError) -> Self {
        RequestError::Trace(e)
    }
}
