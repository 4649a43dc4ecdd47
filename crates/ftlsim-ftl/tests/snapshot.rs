//! Drive snapshots (issue 11): a loaded drive gives byte-identical results to the same
//! preconditioning done in the process (for every FTL: tests/conformance.rs); a snapshot of another drive, FTL or
//! version is refused with the reason; truncated or corrupted files are refused, never a
//! panic or a wrong run.

use crate::util;

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::{SimError, SnapshotError};
use ftlsim_core::sim::{Precondition, Simulator};
use proptest::prelude::*;
use std::path::Path;
use util::small_config;

fn cfg(ftl: &str, extra: &str) -> DriveConfig {
    small_config(48, 16, 0.3, &format!("[ftl]\nname = \"{ftl}\"\n{extra}"))
}

fn preconditioned(cfg: DriveConfig, verify: bool) -> Simulator {
    let mut sim = ftlsim_ftl::simulator(cfg, verify).unwrap();
    let pre =
        Precondition { fill: 0.9, steady_state: true, max_overwrite_passes: 2.0, seed: 4, ..Precondition::default() };
    sim.precondition(&pre).unwrap();
    sim
}

fn save(sim: &mut Simulator, dir: &Path) -> std::path::PathBuf {
    let path = dir.join("drive.snap");
    sim.save_state(&path, serde_json::json!({ "seed": 4 })).unwrap();
    path
}

fn snapshot_error(r: Result<ftlsim_core::sim::SnapshotHeader, SimError>) -> SnapshotError {
    match r {
        Err(SimError::Snapshot(e)) => e,
        other => panic!("expected a snapshot error, got {other:?}"),
    }
}

#[test]
fn timing_and_host_settings_may_differ_the_drive_may_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = preconditioned(cfg("page", ""), false);
    let path = save(&mut sim, dir.path());
    // Another timing and queue depth: the same aged drive, measured differently.
    let mut other_timing = cfg("page", "[host]\nqueue_depth = 4");
    other_timing.timing.t_prog_ns = 900_000;
    ftlsim_ftl::simulator(other_timing, false).unwrap().load_state(&path).unwrap();
    // Another FTL, GC policy or geometry: refused, naming the key.
    let cases = [
        (cfg("dftl", ""), "ftl.name"),
        (cfg("page", "gc_victim = \"fifo\""), "ftl.gc_victim"),
        (small_config(64, 16, 0.25, ""), "geometry.blocks_per_plane"),
        // Block wear and BER classes are flash state (a sweep over P/E counts once shared one).
        (cfg("page", "[reliability]\npe_cycles = 2500"), "reliability"),
    ];
    for (other, key) in cases {
        let e = snapshot_error(ftlsim_ftl::simulator(other, false).unwrap().load_state(&path));
        assert!(matches!(&e, SnapshotError::OtherDrive { key: k, .. } if k == key), "{e}");
        assert!(e.to_string().contains(key), "{e}");
    }
    // A verifying run needs a snapshot with the oracle.
    let e = snapshot_error(ftlsim_ftl::simulator(cfg("page", ""), true).unwrap().load_state(&path));
    assert!(e.to_string().contains("--verify"), "{e}");
}

/// The snapshot file with its header's JSON rewritten by `edit` (checksum recomputed).
fn with_header(bytes: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let len = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[24..24 + len]).unwrap();
    edit(&mut header);
    let h = serde_json::to_vec(&header).unwrap();
    let mut out = bytes[..16].to_vec();
    out.extend((h.len() as u32).to_le_bytes());
    out.extend(crc32fast::hash(&h).to_le_bytes());
    out.extend(&h);
    out.extend(&bytes[24 + len..]);
    out
}

#[test]
fn other_versions_and_other_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = preconditioned(cfg("page", ""), false);
    let path = save(&mut sim, dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let load = |b: &[u8]| {
        let p = dir.path().join("edited.snap");
        std::fs::write(&p, b).unwrap();
        snapshot_error(ftlsim_ftl::simulator(cfg("page", ""), false).unwrap().load_state(&p))
    };
    let e = load(&with_header(&bytes, |h| h["format_version"] = 99.into()));
    assert!(matches!(e, SnapshotError::Version { .. }) && e.to_string().contains("format 99"), "{e}");
    let e = load(&with_header(&bytes, |h| h["ftlsim_version"] = "0.0.1".into()));
    assert!(e.to_string().contains("ftlsim 0.0.1"), "{e}");
    let e = load(b"timestamp,offset,size\n1,2,3\n");
    assert!(matches!(e, SnapshotError::NotASnapshot { .. }), "{e}");
    let e = snapshot_error(ftlsim_ftl::simulator(cfg("page", ""), false).unwrap().load_state(&dir.path().join("none")));
    assert!(matches!(e, SnapshotError::Io { .. }), "{e}");
}

/// A small snapshot's bytes, made once.
fn small_snapshot() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut sim = preconditioned(small_config(24, 8, 0.3, "[ftl]\nname = \"dftl\""), false);
        std::fs::read(save(&mut sim, dir.path())).unwrap()
    })
}

fn load_bytes(bytes: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.snap");
    std::fs::write(&path, bytes).unwrap();
    let mut sim = ftlsim_ftl::simulator(small_config(24, 8, 0.3, "[ftl]\nname = \"dftl\""), false).unwrap();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.load_state(&path))) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("PANIC".into()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn truncated_snapshots_are_refused(cut in 0.0..1.0f64) {
        let bytes = small_snapshot();
        let n = (bytes.len() as f64 * cut) as usize;
        let e = load_bytes(&bytes[..n]).expect_err("a truncated snapshot must not load");
        prop_assert!(e != "PANIC" && e.starts_with("snapshot"), "cut at {} of {}: {}", n, bytes.len(), e);
    }

    #[test]
    fn flipped_bits_are_refused(at in 0.0..1.0f64, bit in 0u8..8) {
        let mut bytes = small_snapshot().to_vec();
        let i = ((bytes.len() as f64 * at) as usize).min(bytes.len() - 1);
        bytes[i] ^= 1 << bit;
        let e = load_bytes(&bytes).expect_err("a corrupted snapshot must not load");
        prop_assert!(e != "PANIC" && e.starts_with("snapshot"), "bit {} of byte {}: {}", bit, i, e);
    }
}

#[test]
fn the_intact_small_snapshot_loads() {
    // (The corruption tests above must fail for the corruption, not for the file.)
    load_bytes(small_snapshot()).unwrap();
}
