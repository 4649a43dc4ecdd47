//! Issue 59: a config is checked and derived once per run. Parsing a config checks its
//! syntax; `ftlsim_ftl::resolve` completes it against its FTL and checks it once; every
//! constructor after that (the FTL, the scheduler, the simulator, the memory estimate) takes
//! the checked config instead of checking it again. One test in its own binary: the count is
//! the process's.

use ftlsim_core::config::derivations;
use ftlsim_core::config::DriveConfig;
use ftlsim_run::{Drive, PowerCut, Quiet, RunSpec, Source};

const SMALL: &str = r#"
name = "tiny"
source = "validated_once test"
[geometry]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 32
pages_per_block = 16
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = 0.2
[timing]
channel_mb_per_s = 200.0
t_r_ns = 50000
t_prog_ns = 500000
t_bers_ns = 3000000
"#;

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
