//! Recovery after a power cut (issue 15; seed 001 Ch. 8, Sec. 8.1): what an FTL rebuilds
//! from flash alone once the controller's memory is gone.
//!
//! Every FTL stamps each page's spare area with its logical page, its kind and a sequence
//! number. In this model the sequence of a data page is its data version: the host's writes
//! to one logical page are numbered in order and a GC copy carries its source's number, which
//! is what a drive's global write stamp gives for telling copies of one page apart (the later
//! stamp wins; equal stamps are the same data, and the copy in the block opened later is
//! taken). Blocks carry the sequence number given when their first page was programmed.
//!
//! [`scan_blocks`] reads the spare area of every page a full scan must read: in each block
//! the pages up to its write pointer and, where the block is not full, the first erased page
//! that ends it (a scan finds a block's write pointer by reading until an erased page). A
//! torn page (cut program, cut erase) costs its read and gives nothing.

use crate::flash::{FlashArray, Oob, PageKind};
use crate::ftl::FlashCtx;
use crate::geometry::{BlockId, Ppn, NONE};

/// Read the spare area of every written page of `blocks` (and the erased page ending each
/// block that is not full), in block order, handing each readable page to `page`.
pub fn scan_blocks(
    ctx: &mut FlashCtx,
    blocks: impl Iterator<Item = BlockId>,
    mut page: impl FnMut(&FlashArray, Ppn, Oob),
) {
    let ppb = ctx.flash().geometry().pages_per_block;
    for b in blocks {
        let first = ctx.flash().geometry().first_page(b);
        let wp = ctx.flash().write_pointer(b);
        for i in 0..wp {
            if let Some(oob) = ctx.read_spare(first + i) {
                page(ctx.flash(), first + i, oob);
            }
        }
        if wp < ppb {
            // The erased page that tells the scan where the block ends.
            let _ = ctx.read_spare(first + wp);
        }
    }
}

/// Keep in `map` (logical page -> physical page) the newest copy of a data page found by a
/// scan: the higher sequence (version), and on equal sequences the copy in the block opened
/// later (a GC copy of the same data).
#[inline]
pub fn keep_newest(map: &mut [Ppn], flash: &FlashArray, ppn: Ppn, oob: Oob) {
    if oob.kind != PageKind::Data {
        return;
    }
    let slot = &mut map[oob.lpn as usize];
    if *slot == NONE || newer(flash, ppn, oob, *slot) {
        *slot = ppn;
    }
}

/// Whether `ppn` holding `oob` is a newer copy of its logical page than `than`.
pub fn newer(flash: &FlashArray, ppn: Ppn, oob: Oob, than: Ppn) -> bool {
    let old = flash.read(than).expect("a page kept by the scan is readable");
    let g = flash.geometry();
    (oob.version, flash.open_seq(g.block_of(ppn)), ppn) > (old.version, flash.open_seq(g.block_of(than)), than)
}

/// Mark valid every page `map` points at (after [`FlashArray::restart`] none is).
pub fn revalidate_map(ctx: &mut FlashCtx, map: &[Ppn]) -> Result<(), crate::error::SimError> {
    for &ppn in map.iter().filter(|&&p| p != NONE) {
        ctx.revalidate(ppn)?;
    }
    Ok(())
}
