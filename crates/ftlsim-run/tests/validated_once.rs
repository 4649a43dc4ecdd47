//! Issue 59: a config is checked and derived once per run. Parsing a config checks its
//! syntax; `ftlsim_ftl::resolve` completes it against its FTL and checks it once; every
//! constructor after that (the FTL, the scheduler, the simulator, the memory estimate) takes
//! the checked config instead of checking it again. One test in its own binary: the count is
//! the process's.

use ftlsim_core::config::derivations;
use ftlsim_core::config::DriveConfig;
use ftlsim_run::{Drive, PowerCut, Quiet, RunSpec, Source};

mod common;
use common::SMALL;

/// The derivations one planned and executed run makes.
fn derivations_of(spec: &RunSpec) -> u64 {
    let before = derivations();
    let plan = spec.plan().unwrap_or_else(|e| panic!("{e}"));
    ftlsim_run::execute(spec, &plan, &mut Quiet).unwrap_or_else(|e| panic!("{e}"));
    derivations() - before
}

#[test]
fn a_run_checks_and_derives_its_config_once() {
    let spec = |ftl: &str| RunSpec {
        drive: Drive::Config(Box::new(DriveConfig::from_toml(SMALL, "tiny").unwrap())),
        ftl: Some(ftl.into()),
        source: Source::Synthetic("requests=2000,qd=4".into()),
        sets: vec![("ftl.gc_victim".into(), "fifo".into()), ("timing.t_r_ns".into(), "40000".into())],
        fill: Some(0.5),
        ..RunSpec::default()
    };
    for ftl in ["page", "dftl", "scftl", "fast", "block", "hotcold"] {
        assert_eq!(derivations_of(&spec(ftl)), 1, "{ftl}");
    }
    // A power cut rebuilds the FTL from the same checked config.
    let cut = RunSpec { power_cut: Some(PowerCut::parse("1000").unwrap()), ..spec("dftl") };
    assert_eq!(derivations_of(&cut), 1, "dftl with a power cut");
    // A preset, loaded, shrunk and run.
    let sets = vec![("geometry.blocks_per_plane".into(), "256".into())];
    let preset = RunSpec { drive: Drive::Preset("default".into()), sets, ..spec("page") };
    assert_eq!(derivations_of(&preset), 1, "the default preset");
}
