//! ftlsim-core: the flash array, timing engine, host interface, synthetic workloads,
//! shared GC pieces and metrics of the ftlsim SSD simulator. FTLs live in `ftlsim-ftl`.
//!
//! Data flow: requests (generator or trace) -> host interface (pages, partial-page policy)
//! -> [`ftl::Ftl`] (mapping, allocation, GC; changes [`flash::FlashArray`] state through
//! [`ftl::FlashCtx`]) -> [`scheduler::Scheduler`] (channels, dies, planes as timed
//! resources) -> [`metrics`]. See docs/architecture.md.
#![deny(missing_docs)]

pub use ftlsim_requests::{bits, fitted, host, locality, trace, workload};

pub mod address_map;
pub mod arbiter;
pub mod big_array;
pub mod config;
pub mod error;
pub mod flash;
pub mod ftl;
pub mod gc;
pub mod gc_driver;
pub mod geometry;
pub mod metrics;
pub mod multichannel;
pub mod outputs;
pub mod recovery;
pub mod reliability;
pub mod scheduler;
pub mod sim;
pub mod state;
pub mod write_behind;
pub mod write_buffer;
