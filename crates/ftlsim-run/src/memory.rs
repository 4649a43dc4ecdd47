//! Memory: the refusal of a drive too large for the machine, and the figures reported.

use ftlsim_core::config::Resolved;
use ftlsim_core::error::SimError;

/// Human-readable binary size (`1.5 GiB`).
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A `kB` line of `/proc/<file>` in bytes.
fn proc_kb(file: &str, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(file).ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Memory the system has available for a new process (Linux `MemAvailable`), bytes.
pub fn available_memory() -> Option<u64> {
    proc_kb("/proc/meminfo", "MemAvailable:")
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), if known. In Python this
/// is the interpreter's peak, everything it loaded included.
pub fn peak_rss_bytes() -> Option<u64> {
    proc_kb("/proc/self/status", "VmHWM:")
}

/// Refuse, before allocating, a drive whose simulator would not fit: its memory estimate
/// against `max` or else the memory available; `power_cut`: pages carry program stamps (4
/// bytes per physical page). Returns the estimate.
pub fn check_drive(cfg: &Resolved, verify: bool, power_cut: bool, max: Option<u64>) -> Result<u64, SimError> {
    let stamps = if power_cut { u64::from(cfg.derived().physical_pages) * 4 } else { 0 };
    let need = ftlsim_ftl::memory_estimate(cfg, verify)? + stamps;
    check_need(need, &format!("drive `{}`", cfg.name), max)?;
    Ok(need)
}

/// Refuse `need` bytes for `what` when they exceed `max` or else the memory available.
pub fn check_need(need: u64, what: &str, max: Option<u64>) -> Result<(), SimError> {
    let limit = match max {
        Some(m) => Some((m, "the limit given (--max-memory)")),
        None => available_memory().map(|a| (a, "the memory available (MemAvailable)")),
    };
    if let Some((limit, against)) = limit.filter(|&(l, _)| need > l) {
        return Err(SimError::Input(format!(
            "{what} needs about {} of simulator memory (estimate: docs/configuration.md), more than {against}, {}: \
             use a smaller geometry{}",
            bytes(need),
            bytes(limit),
            if max.is_some() {
                " or raise the limit"
            } else {
                ", or give a memory limit (--max-memory) to go ahead anyway"
            }
        )));
    }
    Ok(())
}
