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
