//! Where the real sample traces are (issue 59: the repository stands alone). The samples are
//! not part of the repository: they live in the directory `FTLSIM_TRACES` names, else in
//! `../shared/traces` beside it. Tests and experiments that want one ask here and, when it is
//! absent, go without it, saying so ([`missing`]); the suite's own small traces, one per
//! format, are in the repository's tests/traces (made by tools/make-test-traces).

use std::path::PathBuf;

/// The environment variable that names the directory of the real sample traces.
pub const VAR: &str = "FTLSIM_TRACES";

/// The directory of the real sample traces: `FTLSIM_TRACES`, else `../shared/traces` beside
/// the repository.
pub fn dir() -> PathBuf {
    match std::env::var_os(VAR) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces")),
    }
}

/// The real sample `name`, if it is there.
pub fn find(name: &str) -> Option<PathBuf> {
    let p = dir().join(name);
    p.is_file().then_some(p)
}

/// The line a test that wanted sample `name` prints when it goes without it.
pub fn missing(name: &str) -> String {
    format!(
        "skipped: the real sample trace {name} is not in {} (the samples of ../shared/traces, not part of the \
         repository; set {VAR} to their directory)",
        dir().display()
    )
}

/// The real sample `name`, or `None` after printing [`missing`]'s line: for a test that goes
/// without it.
pub fn find_or_say(name: &str) -> Option<PathBuf> {
    let found = find(name);
    if found.is_none() {
        eprintln!("{}", missing(name));
    }
    found
}

/// The repository's own small trace `name` (tests/traces, one per format).
pub fn small(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/traces")).join(name)
}
