//! Helpers shared by the CLI test files.

use std::path::Path;
use std::process::{Command, Output};

/// Run the binary under test.
pub fn ftlsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args).output().expect("ftlsim runs")
}

/// A fresh scratch directory for one test, removed with everything in it when the test
/// drops it (a run of the suite once left about forty behind in the temporary directory).
pub fn tmp(name: &str) -> Scratch {
    Scratch(tempfile::Builder::new().prefix(&format!("ftlsim-cli-test-{name}-")).tempdir().unwrap())
}

/// A scratch directory: a path while the test holds it.
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

/// One of the repository's own small traces (tests/traces, one per format).
pub fn small_trace(name: &str) -> String {
    ftlsim_core::trace::samples::small(name).to_str().unwrap().to_owned()
}

/// A real sample trace (ftlsim_core::trace::samples), or `None`, said on stderr, when the
/// samples are not beside the repository.
#[allow(dead_code)] // not every test file wants the real samples
pub fn shared_trace(name: &str) -> Option<String> {
    Some(ftlsim_core::trace::samples::find_or_say(name)?.to_str().unwrap().to_owned())
}

/// A small drive: 2 channels x 2 planes x 64 blocks x 32 pages.
pub const SMALL: &str = r#"
name = "small"
source = "cli test"
[geometry]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 32
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = 0.1
[timing]
channel_mb_per_s = 200.0
t_r_ns = 50000
t_prog_ns = 500000
t_bers_ns = 3000000
"#;
