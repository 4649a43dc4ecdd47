//! ftlsim-requests: what the host asks of a drive, before any drive is simulated. Requests and
//! their operations ([`host`]), the trace formats and their reader, statistics and conversion
//! ([`trace`]), synthetic workloads ([`workload`]) and workloads fitted to a trace
//! ([`fitted`], [`locality`]), their errors ([`error`]), the simulated-time limit every
//! arrival is checked against ([`time`]) and the latency histograms a trace's recorded
//! latencies and a run's response times share ([`latency`]).
//!
//! The simulator (ftlsim-core) depends on it and re-exports its modules under their old
//! paths (`ftlsim_core::trace`, ...); `ftlsim trace` and Python's trace functions read traces
//! with it alone. See docs/architecture.md.
#![deny(missing_docs)]

pub mod bits;
pub mod error;
pub mod fitted;
pub mod host;
pub mod latency;
pub mod locality;
pub mod round;
pub mod time;
pub mod trace;
pub mod workload;
