//! Mapping-table sizes as WAFTL's Fig. 16 compares them (seed 002 Sec. IV, L404-409): the
//! paper computes DFTL's (and the page FTL's) map "on the basis of whole SSD space" (4 bytes
//! per physical page: "32MB ... for 32GB SSD") and WAFTL's "according to distribution of PMB
//! and BMB": a 4-byte GMT entry per logical block plus a 4-byte PMT entry per page of the
//! page-mapped logical blocks. The paper prints no formula; this is the one its two sentences
//! give, and it reaches the "up to 50%" reduction when about half the data is page-mapped.

/// Bytes per mapping entry (a block or page number).
pub const ENTRY_BYTES: u64 = 4;

/// A page-level map over the whole drive (DFTL, the page FTL in Fig. 16).
pub fn page_level_bytes(physical_pages: u64) -> u64 {
    physical_pages * ENTRY_BYTES
}

/// WAFTL's map: the GMT over `logical_blocks` and the PMT of `page_mapped_blocks` of them,
/// `pages_per_block` entries each.
pub fn waftl_bytes(logical_blocks: u64, page_mapped_blocks: u64, pages_per_block: u64) -> u64 {
    assert!(page_mapped_blocks <= logical_blocks, "{page_mapped_blocks} page-mapped of {logical_blocks} blocks");
    (logical_blocks + page_mapped_blocks * pages_per_block) * ENTRY_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_of_fig_16() {
        // 32 GB of 4 KB pages and 256 KB blocks (Table II): the page-level map is 32 MB (L404).
        let (pages, blocks, ppb) = (32u64 << 30 >> 12, 32u64 << 30 >> 18, 64);
        assert_eq!(page_level_bytes(pages), 32 << 20);
        // All page-mapped: the PMT is the page-level map, plus the GMT (512 KB).
        assert_eq!(waftl_bytes(blocks, blocks, ppb), (32 << 20) + (512 << 10));
        // Half page-mapped: about half of DFTL's, the paper's "up to 50%" (L409).
        let half = waftl_bytes(blocks, blocks / 2, ppb) as f64 / page_level_bytes(pages) as f64;
        assert!((half - 0.5156).abs() < 1e-3, "{half}");
        assert_eq!(waftl_bytes(blocks, 0, ppb), 512 << 10, "all block-mapped: the GMT alone");
    }
}
