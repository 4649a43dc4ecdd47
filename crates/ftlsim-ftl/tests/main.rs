//! The integration tests, one module per file, built as one test binary: each file its own
//! binary compiled the library's generic simulator once per file and linked it once per file
//! (a fresh clone's test build spent 190 s of CPU on 25 such binaries), and ran one binary
//! after another, leaving a core idle behind each long test.

mod block_fast;
mod conformance;
mod crash;
mod dftl;
mod fdp;
mod gc_control;
mod multichannel;
mod oracle;
mod partial_pages;
mod pcftl;
mod power_cut_run;
mod precondition;
mod rcftl;
mod scftl;
mod snapshot;
mod tenants;
mod threedftl;
mod timing;
mod trace_replay;
mod util;
mod waf_analytic;
mod waftl;
mod write_buffer;
mod zns;

/// With `autotests = false` a test file that no `tests/main.rs` declares would never be
/// built or run: every crate's test files must be modules of its test binary.
#[test]
fn every_test_file_of_the_workspace_is_a_module_of_its_crates_test_binary() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut undeclared = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap() {
        let tests = krate.unwrap().path().join("tests");
        let Ok(main) = std::fs::read_to_string(tests.join("main.rs")) else { continue };
        for entry in std::fs::read_dir(&tests).unwrap() {
            let path = entry.unwrap().path();
            let name = match path.extension() {
                Some(e) if e == "rs" => path.file_stem(),
                None if path.join("mod.rs").is_file() => path.file_name(),
                _ => continue,
            };
            let name = name.unwrap().to_string_lossy();
            if name != "main" && !main.lines().any(|l| l.trim() == format!("mod {name};")) {
                undeclared.push(path.display().to_string());
            }
        }
    }
    assert!(undeclared.is_empty(), "test files no tests/main.rs declares (add `mod NAME;`): {undeclared:?}");
}
