//! Recovery of the block-mapped FTLs ([`crate::block`], [`crate::fast`]) after a power cut.
//!
//! Their maps live in SRAM and their spare areas hold each page's logical page and version,
//! so recovery is a full scan (crates/ftlsim-core/src/recovery.rs: every written page and the
//! erased page ending each block that is not full; worst case m + n pages). The newest copy
//! of each logical page wins. A block holding pages of several logical blocks, or pages off
//! their offsets, is a log block (FAST's random log blocks): up to `max_logs` of them, the
//! newest, stay log blocks with their newest copies in the log map, as FAST rebuilds its log
//! page map from their spare areas. A logical block whose other newest copies all sit at their
//! offsets in one block holding nothing else keeps that block as its data block. Any other one
//! (its pages spread over its data block and its SW block, or a block FTL rewrite or a merge
//! cut part-way, or in a log block beyond `max_logs`) is merged: its newest copies are copied
//! at their offsets into a fresh block, like the block FTL's rewrite and FAST's full merge. A
//! block left with no newest copy is erased as soon as it has none, so merges need no more
//! free blocks than the FTL's own. There is no SW block after recovery (FAST starts a new
//! sequential stream at the next write at offset 0).

use super::pools::{retire, skip_to, FreePools};
use ftlsim_core::error::SimError;
use ftlsim_core::ftl::FlashCtx;
use ftlsim_core::geometry::{BlockId, Ppn, NONE};
use ftlsim_core::recovery;

/// A block holding pages of more than one logical block, or pages off their offsets.
const MIXED: u32 = u32::MAX - 1;

/// What recovery rebuilt.
pub(crate) struct Recovered {
    /// The data block of each logical block (NONE: none).
    pub data: Vec<BlockId>,
    /// Log blocks, oldest first.
    pub logs: Vec<BlockId>,
    /// Per logical page, its newest copy when that is in a log block (NONE otherwise).
    pub log_map: Vec<Ppn>,
}

/// Rebuild the block map (and up to `max_logs` log blocks) from the flash; `pools` is built
/// anew (every usable block free).
pub(crate) fn rebuild_block_map(
    ctx: &mut FlashCtx,
    pools: &mut FreePools,
    logical_pages: u32,
    max_logs: usize,
) -> Result<Recovered, SimError> {
    let g = ctx.flash().geometry().clone();
    let ppb = g.pages_per_block;
    let mut newest: Vec<Ppn> = vec![NONE; logical_pages as usize];
    // Per block: the one logical block all its readable pages belong to, at their offsets.
    let mut owner: Vec<u32> = vec![NONE; g.blocks() as usize];
    recovery::scan_blocks(ctx, 0..g.blocks(), |flash, ppn, oob| {
        let b = g.block_of(ppn) as usize;
        let lbn = oob.lpn / ppb;
        owner[b] = match owner[b] {
            _ if oob.lpn % ppb != g.page_in_block(ppn) => MIXED,
            NONE => lbn,
            o if o == lbn => lbn,
            _ => MIXED,
        };
        recovery::keep_newest(&mut newest, flash, ppn, oob);
    });
    let mut refs = vec![0u32; g.blocks() as usize];
    for &p in newest.iter().filter(|&&p| p != NONE) {
        refs[g.block_of(p) as usize] += 1;
    }
    // The newest log blocks stay log blocks.
    let mut logs: Vec<BlockId> =
        (0..g.blocks()).filter(|&b| owner[b as usize] == MIXED && refs[b as usize] > 0).collect();
    logs.sort_by_key(|&b| ctx.flash().open_seq(b));
    let mut is_log = vec![false; g.blocks() as usize];
    for &b in logs.iter().rev().take(max_logs) {
        is_log[b as usize] = true;
    }
    // Each logical block's home (the one block holding its newest copies outside the logs)
    // and whether it must be merged.
    let lbns = logical_pages.div_ceil(ppb);
    let mut home: Vec<BlockId> = vec![NONE; lbns as usize];
    let mut merge = vec![false; lbns as usize];
    for (lpn, &p) in newest.iter().enumerate().filter(|(_, &p)| p != NONE) {
        let (b, l) = (g.block_of(p), lpn / ppb as usize);
        if is_log[b as usize] {
            continue;
        }
        if home[l] == NONE {
            home[l] = b;
        }
        merge[l] |= home[l] != b || owner[b as usize] != l as u32;
    }
    let written: Vec<BlockId> = (0..g.blocks()).filter(|&b| ctx.flash().write_pointer(b) > 0).collect();
    for b in written {
        pools.claim(b);
        if refs[b as usize] == 0 {
            retire(ctx, pools, b)?;
        }
    }
    for lbn in (0..lbns).filter(|&l| merge[l as usize]) {
        let new = pools.alloc(Some(g.plane_of_block(home[lbn as usize])))?;
        let first = g.first_page(new);
        for off in 0..ppb {
            let lpn = (lbn * ppb + off) as usize;
            let Some(&src) = newest.get(lpn).filter(|&&p| p != NONE) else { continue };
            skip_to(ctx, new, off)?;
            ctx.copy(src, first + off, false)?;
            newest[lpn] = first + off;
            let b = g.block_of(src) as usize;
            refs[b] -= 1;
            if refs[b] == 0 {
                is_log[b] = false;
                retire(ctx, pools, b as BlockId)?;
            }
        }
        home[lbn as usize] = new;
    }
    // The kept pages become valid (merged copies are valid as programmed).
    let mut log_map = vec![NONE; logical_pages as usize];
    for (lpn, &p) in newest.iter().enumerate().filter(|(_, &p)| p != NONE) {
        let b = g.block_of(p) as usize;
        if is_log[b] {
            log_map[lpn] = p;
            ctx.revalidate(p)?;
        } else if !merge[lpn / ppb as usize] {
            ctx.revalidate(p)?;
        }
    }
    logs.retain(|&b| is_log[b as usize]);
    Ok(Recovered { data: home, logs, log_map })
}
