//! 3DFTL's SRAM (seed 001 Tables 6.1, 7.1 and 8.1): the GTD, the CMT of GTD-entry lines and
//! the GC metadata of each way of tracking invalid pages (Sec. 8.1).
//!
//! - GTD: 4 bytes per group of 64 pages over the whole chip (Table 6.1: 64.00 KB for the
//!   thesis's 2^20 pages, as DFTL's GTD covers every translation page of the chip).
//! - CMT line: 2,095 bits, what Table 7.1's sizes give for every cache (2.05 KB = 8 lines,
//!   32.73 KB = 128 lines, 8,380 KB = 32,768 lines); the thesis does not break it down (64
//!   entries of 32 bits are 2,048 of them).
//! - GC metadata: one invalid flag per page (Table 6.1's 128 KB), one 1-byte invalid counter
//!   per block (Table 8.1's 4 KB), or ILog's BIFT and BIFQ (8 KB each, Table 8.1, with the
//!   counters inside the BIFT, L1304).

use super::spare::GROUP;

/// Bits of one CMT line (Table 7.1).
pub const LINE_BITS: u64 = 2_095;
/// Bytes of a GTD entry.
pub const GTD_ENTRY_BYTES: u64 = 4;
/// ILog's block-invalid-flag table (Table 8.1: 8 KB).
pub const ILOG_BIFT_BYTES: u64 = 8 << 10;
/// ILog's block-invalid-flag queue (Table 8.1: 8 KB).
pub const ILOG_BIFQ_BYTES: u64 = 8 << 10;

pub use ftlsim_core::config::InvalidTracking;

/// GTD bytes for a chip of `pages` physical pages.
pub fn gtd_bytes(pages: u64) -> u64 {
    pages.div_ceil(u64::from(GROUP)) * GTD_ENTRY_BYTES
}

/// CMT bytes of `lines` lines (fractional bytes rounded up).
pub fn cmt_bytes(lines: u64) -> u64 {
    (lines * LINE_BITS).div_ceil(8)
}

/// Lines a CMT of `bytes` holds.
pub fn cmt_lines(bytes: u64) -> u64 {
    bytes * 8 / LINE_BITS
}

/// GC metadata bytes of `tracking` for `blocks` blocks of `pages_per_block` pages.
pub fn gc_metadata_bytes(tracking: InvalidTracking, blocks: u64, pages_per_block: u64) -> u64 {
    match tracking {
        InvalidTracking::Counters => blocks,
        InvalidTracking::Ilog => ILOG_BIFT_BYTES + ILOG_BIFQ_BYTES,
        InvalidTracking::Flags => (blocks * pages_per_block).div_ceil(8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// KB with two decimals, as the thesis's tables print them.
    fn kb(bytes: u64) -> String {
        format!("{:.2}", bytes as f64 / 1024.0)
    }

    const PAGES: u64 = 1 << 20; // the thesis's 8 GB chip: 4,096 blocks of 256 pages
    const BLOCKS: u64 = 4096;

    #[test]
    fn table_6_1_3dftl_column() {
        assert_eq!(kb(gtd_bytes(PAGES)), "64.00");
        assert_eq!(kb(cmt_bytes(128)), "32.73");
        assert_eq!(kb(gc_metadata_bytes(InvalidTracking::Flags, BLOCKS, 256)), "128.00");
        // Total without GC 96.73 KB, with GC 224.73 KB.
        assert_eq!(kb(gtd_bytes(PAGES) + cmt_bytes(128)), "96.73");
        let with_gc = gtd_bytes(PAGES) + cmt_bytes(128) + gc_metadata_bytes(InvalidTracking::Flags, BLOCKS, 256);
        assert_eq!(kb(with_gc), "224.73");
    }

    #[test]
    fn table_8_1_3dftl_columns() {
        // 3DFTL with invalid counters: GC 4 KB, total 100.73 KB.
        let counters = gc_metadata_bytes(InvalidTracking::Counters, BLOCKS, 256);
        assert_eq!(kb(counters), "4.00");
        assert_eq!(kb(gtd_bytes(PAGES) + cmt_bytes(128) + counters), "100.73");
        // With ILog: GC 16 KB, the CMT shrunk to 80 lines (20.46 KB), total 100.46 KB.
        let ilog = gc_metadata_bytes(InvalidTracking::Ilog, BLOCKS, 256);
        assert_eq!(kb(ilog), "16.00");
        assert_eq!(kb(cmt_bytes(80)), "20.46");
        assert_eq!(kb(gtd_bytes(PAGES) + cmt_bytes(80) + ilog), "100.46");
        // The "212KB 3DFTL" (L1376): ILog's CMT with every flag in SRAM.
        let flags = gc_metadata_bytes(InvalidTracking::Flags, BLOCKS, 256);
        assert_eq!(kb(gtd_bytes(PAGES) + cmt_bytes(80) + flags), "212.46");
    }

    #[test]
    fn table_7_1_3dftl_cache_sizes() {
        // Nominal 2 KB ... 8,192 KB: 4 lines per nominal KB.
        let want = [
            "2.05", "4.09", "8.18", "16.37", "32.73", "65.47", "130.94", "261.88", "523.75", "1047.50", "2095.00",
            "4190.00", "8380.00",
        ];
        for (i, w) in want.iter().enumerate() {
            let lines = 8u64 << i;
            assert_eq!(kb(cmt_bytes(lines)), *w, "{lines} lines");
            assert_eq!(cmt_lines(cmt_bytes(lines)), lines);
        }
    }
}
