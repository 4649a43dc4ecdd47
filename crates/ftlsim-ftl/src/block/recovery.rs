//! Recovery of the block-mapped FTLs ([`crate::block`], [`crate::fast`]) after a power cut.
//!
//! Their maps live in SRAM and their spare areas hold each page's logical page and version,
//! so recovery is a full scan (crates/ftlsim-core/src/recovery.rs: every written page and the
//! erased page ending each block that is not full; worst case m + n pages). The newest copy
//! of each logical page wins. A logical block whose newest copies all sit at their offsets in
//! one block holding nothing else becomes that block's data block as it is. Any other one
//! (its pages spread over its data block and a log block or a rewrite cut part-way, or in a
//! block shared with other logical blocks, as FAST's random log blocks are) is merged: its
//! newest copies are copied at their offsets into a fresh block, like the block FTL's rewrite
//! and FAST's full merge. A block left with no newest copy is erased as soon as it has none,
//! so merges need no more free blocks than the FTL's own. The FTL comes back with data blocks
//! only: no log block, no sequential stream (FAST starts its logs afresh).

use super::pools::{retire, skip_to, FreePools};
use ftlsim_core::error::SimError;
use ftlsim_core::ftl::FlashCtx;
use ftlsim_core::geometry::{BlockId, Lpn, Ppn, NONE};
use ftlsim_core::recovery;

/// A block holding pages of more than one logical block, or pages off their offsets.
const MIXED: u32 = u32::MAX - 1;

/// Rebuild the data block of every logical block from the flash; `pools` is built anew
/// (every usable block free). Returns the data block per logical block (NONE: unwritten).
pub(crate) fn rebuild_block_map(
    ctx: &mut FlashCtx,
    pools: &mut FreePools,
    logical_pages: u32,
) -> Result<Vec<BlockId>, SimError> {
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
    // How many newest copies each block holds, and which logical blocks need a merge.
    let mut refs = vec![0u32; g.blocks() as usize];
    let lbns = logical_pages.div_ceil(ppb);
    let mut home: Vec<BlockId> = vec![NONE; lbns as usize];
    let mut merge = vec![false; lbns as usize];
    for (lpn, &p) in newest.iter().enumerate().filter(|(_, &p)| p != NONE) {
        let (b, lbn) = (g.block_of(p), lpn as u32 / ppb);
        refs[b as usize] += 1;
        let l = lbn as usize;
        if home[l] == NONE {
            home[l] = b;
        }
        merge[l] |= home[l] != b || owner[b as usize] != lbn;
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
                retire(ctx, pools, b as BlockId)?;
            }
        }
        home[lbn as usize] = new;
    }
    // The kept data blocks' pages become valid (merged copies are valid as programmed).
    for (lbn, &b) in home.iter().enumerate().filter(|(l, &b)| b != NONE && !merge[*l]) {
        for off in 0..ppb {
            let lpn: Lpn = lbn as u32 * ppb + off;
            if let Some(&p) = newest.get(lpn as usize).filter(|&&p| p != NONE) {
                debug_assert_eq!(g.block_of(p), b);
                ctx.revalidate(p)?;
            }
        }
    }
    Ok(home)
}
