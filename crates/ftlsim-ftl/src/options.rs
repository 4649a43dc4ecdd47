//! FTL-owned config sections (`[ftl.NAME]`). The core keeps an FTL's section as a TOML table
//! it does not read; the FTL's module declares the section's type ([`Options`]) and its rules,
//! and the registry ([`crate::resolve`]) parses, checks and completes every section of a
//! config before anything runs, so that errors still name the key (`ftl.waftl.idle_alpha`)
//! and the effective config written beside results holds every default.

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::ConfigError;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// An FTL's options: one section of the config.
pub trait Options: Serialize + DeserializeOwned + Default {
    /// The section's name: `[ftl.NAME]`.
    const SECTION: &'static str;

    /// The rules the values keep on `cfg`'s drive; errors name `ftl.SECTION.key`.
    fn check(&self, _cfg: &DriveConfig) -> Result<(), ConfigError> {
        Ok(())
    }

    /// The section of `cfg`, parsed (its defaults where it is absent) and checked.
    fn of(cfg: &DriveConfig) -> Result<Self, ConfigError> {
        let o: Self = cfg.ftl.section(Self::SECTION)?;
        o.check(cfg)?;
        Ok(o)
    }
}

/// A section the registry knows: its name and how to parse, check and complete it.
#[derive(Clone, Copy)]
pub struct Section {
    /// `[ftl.NAME]`.
    pub name: &'static str,
    /// The section of a config with every default filled in, or the rule it breaks.
    pub resolve: fn(&DriveConfig) -> Result<toml::Table, ConfigError>,
}

impl std::fmt::Debug for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[ftl.{}]", self.name)
    }
}

fn complete<T: Options>(cfg: &DriveConfig) -> Result<toml::Table, ConfigError> {
    let o = T::of(cfg)?;
    Ok(toml::Table::try_from(&o).expect("FTL options serialise to a TOML table"))
}

/// The registry's entry for the section of `T`.
pub const fn section<T: Options>() -> Section {
    Section { name: T::SECTION, resolve: complete::<T> }
}

/// An invalid value of section `section`, key `key`.
pub(crate) fn invalid(section: &str, key: &str, value: impl std::fmt::Display, rule: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { key: format!("ftl.{section}.{key}"), value: value.to_string(), rule: rule.into() }
}
