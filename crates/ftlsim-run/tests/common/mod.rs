//! What the run crate's test files share.

/// 2 channels x 2 planes x 32 blocks x 16 pages of 4 KiB: runs take milliseconds.
pub const SMALL: &str = r#"
name = "tiny"
source = "ftlsim-run tests"
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
