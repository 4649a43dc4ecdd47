//! Simulated time and its limit.

/// Simulated time in nanoseconds.
pub type SimTime = u64;

/// The latest instant a run may reach: 2^62 ns, about 146 years. Arrival times, durations
/// and think times are checked against it before they are used (a workload spec at parse
/// time, each request as it is issued), so that no sum of times (an arrival, queueing and
/// flash work) overflows a [`SimTime`] and the scheduler never sees time run backwards.
pub const SIM_TIME_LIMIT_NS: SimTime = 1 << 62;

/// [`SIM_TIME_LIMIT_NS`] in words, for error messages.
pub const SIM_TIME_LIMIT_TEXT: &str = "2^62 ns, about 146 years";
