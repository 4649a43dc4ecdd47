//! Helpers shared by the FTL integration tests.
#![allow(dead_code)]

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::SimError;
use ftlsim_core::host::{IoOp, Request};

/// A small drive: 2 channels x 1 chip x 1 die x 2 planes, `blocks` blocks of `ppb` pages of
/// 4 KiB, PCFTL-like timing, `share` over-provisioning; `extra` TOML lines are appended to
/// the `[ftl]`, `[timing]`, `[nand]` or `[host]` sections by prefixing them with the header.
pub fn small_config(blocks: u32, ppb: u32, share: f64, extra: &str) -> DriveConfig {
    let text = format!(
        r#"
name = "small"
source = "test"
[geometry]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = {blocks}
pages_per_block = {ppb}
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = {share}
[timing]
cmd_addr_ns = 100
channel_mb_per_s = 81.92
t_r_ns = 25000
t_prog_ns = 200000
t_bers_ns = 1500000
{extra}
"#
    );
    DriveConfig::from_toml(&text, "test config").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Read every logical page once, in order, one page per request.
pub fn read_all(logical_pages: u32) -> impl Iterator<Item = Result<Request, SimError>> {
    (0..logical_pages)
        .map(|p| Ok(Request { arrival_ns: 0, device: 0, offset_sector: u64::from(p) * 8, sectors: 8, op: IoOp::Read }))
}
