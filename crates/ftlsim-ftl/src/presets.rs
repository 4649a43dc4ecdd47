//! Drive presets shipped in `presets/`, compiled in so the binary works from anywhere.

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::ConfigError;

/// (name, TOML text) of every preset.
pub const PRESETS: &[(&str, &str)] = &[
    ("default", include_str!("../../../presets/default.toml")),
    ("pcftl", include_str!("../../../presets/pcftl.toml")),
    ("thesis", include_str!("../../../presets/thesis.toml")),
    ("waftl", include_str!("../../../presets/waftl.toml")),
    ("rcftl", include_str!("../../../presets/rcftl.toml")),
    ("changwen", include_str!("../../../presets/changwen.toml")),
];

/// Names of all presets.
pub fn names() -> Vec<String> {
    PRESETS.iter().map(|p| p.0.to_string()).collect()
}

/// Load a preset by name.
pub fn load(name: &str) -> Result<DriveConfig, ConfigError> {
    let (_, text) = PRESETS
        .iter()
        .find(|p| p.0 == name)
        .ok_or_else(|| ConfigError::UnknownPreset { name: name.to_string(), available: names() })?;
    DriveConfig::from_toml(text, &format!("preset {name}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_preset_loads() {
        for (name, _) in super::PRESETS {
            let c = super::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&c.name, name);
            assert!(!c.source.is_empty(), "{name}: cite the source table");
        }
        assert!(super::load("nope").unwrap_err().to_string().contains("available: default"));
    }
}
