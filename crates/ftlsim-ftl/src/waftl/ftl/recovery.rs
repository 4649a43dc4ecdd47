//! WAFTL's recovery after a power cut: a full scan. Beyond the paper (seed 002 has none);
//! docs/power-loss.md, "WAFTL", gives the cases a cut can leave and why none loses data.
//!
//! WAFTL writes no metadata of its own: the GMT, BZMT and erase queue live in SRAM. What the
//! flash holds is enough to rebuild them, because the zone's pages are programmed `Staged`
//! and every page at its home (a BMB, a PMB) `Data`, each with its logical page and version:
//!
//! 1. One scan of every written page (and the erased page ending each block that is not
//!    full: m + n reads at worst, as the page FTL's) keeps the newest zone copy and the newest
//!    home copy of each logical page, the newest copy of each translation page, and per block
//!    whether it holds only one logical block's pages at their offsets (its owner).
//! 2. Each logical block's home follows from the blocks holding its newest home copies: none,
//!    unmapped; one block it owns, that BMB; any block it does not own (a PMB, a mapping
//!    block), page-mapped; several blocks it owns, a BMB rewrite the cut stopped part-way,
//!    merged into a fresh BMB (rolled forward, as the block FTL's recovery does).
//! 3. A zone copy is a dirty BZMT entry only if strictly newer than its home copy: a copy of
//!    equal version is a read miss's clean copy, or one a migration already moved home, and
//!    the home copy serves it. The zone blocks holding entries, and the one being written,
//!    become the zone (the newest, up to its size) and the zone still draining (the rest).
//! 4. The page-mapped part takes the page-mapped blocks' newest copies as its map
//!    (`demand::restore_scanned`: translation pages rewritten where they disagree); every
//!    other written block with no live page is erased, the zone's blocks and the BMBs stay
//!    lent.
//!
//! Lost with the controller's memory and started anew: popularity and clean copies, the
//! dynamic threshold's history, the idle predictor, the page-mapped part's cache.

use super::{Waftl, PAGE_MAPPED};
use crate::block::pools::skip_to;
use crate::demand::{restore_scanned, DemandFtl};
use crate::waftl::zone::Bzmt;
use ftlsim_core::config::Resolved;
use ftlsim_core::error::SimError;
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::FlashCtx;
use ftlsim_core::geometry::{BlockId, Lpn, Ppn, NONE};
use ftlsim_core::recovery;

/// `owner` of a block holding pages of more than one logical block, a page off its offset,
/// or a translation page.
const MIXED: u32 = u32::MAX - 1;

/// Where a logical block's newest copies outside the zone were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Nowhere: never migrated (or only in the zone).
    Unmapped,
    /// All in this block, which holds nothing else: its BMB.
    BlockMapped(BlockId),
    /// In a block holding other logical blocks' pages too: page-mapped.
    PageMapped,
    /// In several blocks each holding only its pages at their offsets: a BMB rewrite cut
    /// part-way (the old BMB and the new one).
    Merge,
}

/// What is known of a logical block once one more block holding a newest copy of it is seen:
/// block `b`, whose `owner` is the one logical block all its pages belong to (or MIXED).
fn found_in(known: Found, lbn: u32, b: BlockId, owner: u32) -> Found {
    match known {
        _ if owner != lbn => Found::PageMapped,
        Found::Unmapped => Found::BlockMapped(b),
        Found::BlockMapped(h) if h == b => known,
        Found::BlockMapped(_) => Found::Merge,
        Found::PageMapped | Found::Merge => known,
    }
}

/// A block's owner once one more of its pages, of `lpn` at index `index`, is read.
fn owner_with(owner: u32, lpn: Lpn, index: u32, ppb: u32) -> u32 {
    match owner {
        _ if lpn % ppb != index => MIXED,
        NONE => lpn / ppb,
        o if o == lpn / ppb => o,
        _ => MIXED,
    }
}

/// The zone blocks kept, oldest first, split into the zone (the newest `z`) and the zone
/// still draining (the older ones).
fn zone_split(kept: &[BlockId], z: usize) -> (&[BlockId], &[BlockId]) {
    let cut = kept.len().saturating_sub(z);
    (&kept[cut..], &kept[..cut])
}

/// Keep in `map` the newest copy of `oob.lpn` (`recovery::newer`: version, then the block
/// opened later).
fn keep(map: &mut [Ppn], flash: &FlashArray, ppn: Ppn, oob: Oob) {
    let slot = &mut map[oob.lpn as usize];
    if *slot == NONE || recovery::newer(flash, ppn, oob, *slot) {
        *slot = ppn;
    }
}

/// What the scan found.
struct Scan {
    /// Per logical page, its newest zone copy and its newest home copy.
    staged: Vec<Ppn>,
    home: Vec<Ppn>,
    /// Per translation page, its newest copy: (program stamp, page, backup stamp).
    translation: Vec<(u32, Ppn, u32)>,
    /// Per block: the logical block it holds alone (NONE: no data page; MIXED).
    owner: Vec<u32>,
    /// Per block: it holds zone pages.
    zone: Vec<bool>,
}

fn scan(ctx: &mut FlashCtx, logical_pages: usize, translation_pages: usize) -> Result<Scan, SimError> {
    let g = ctx.flash().geometry().clone();
    let ppb = g.pages_per_block;
    let mut s = Scan {
        staged: vec![NONE; logical_pages],
        home: vec![NONE; logical_pages],
        translation: vec![(0, NONE, 0); translation_pages],
        owner: vec![NONE; g.blocks() as usize],
        zone: vec![false; g.blocks() as usize],
    };
    let mut unexpected = None;
    recovery::scan_blocks(ctx, 0..g.blocks(), |flash, ppn, oob| {
        let b = g.block_of(ppn) as usize;
        match oob.kind {
            PageKind::Staged => {
                s.zone[b] = true;
                keep(&mut s.staged, flash, ppn, oob);
            }
            PageKind::Data => {
                s.owner[b] = owner_with(s.owner[b], oob.lpn, g.page_in_block(ppn), ppb);
                keep(&mut s.home, flash, ppn, oob);
            }
            PageKind::Translation => {
                s.owner[b] = MIXED;
                let stamp = flash.stamp(ppn);
                let slot = &mut s.translation[oob.lpn as usize];
                if slot.1 == NONE || stamp > slot.0 {
                    *slot = (stamp, ppn, oob.version);
                }
            }
            other => {
                unexpected.get_or_insert((ppn, other));
            }
        }
    });
    if let Some((ppn, kind)) = unexpected {
        return Err(SimError::Ftl(format!("waftl: recovery found a {kind:?} page at {ppn}; WAFTL writes none")));
    }
    if let Some(b) = (0..g.blocks() as usize).find(|&b| s.zone[b] && s.owner[b] != NONE) {
        return Err(SimError::Ftl(format!(
            "waftl: recovery found block {b} holding both Buffer Zone pages and pages at their home; \
             WAFTL never writes both into one block"
        )));
    }
    Ok(s)
}

impl Waftl {
    /// Rebuild from the flash alone (the module header); `self` is the WAFTL that lost power.
    pub(super) fn recover_by_scan(&mut self, ctx: &mut FlashCtx, cfg: &Resolved) -> Result<(), SimError> {
        if !ctx.flash().keeps_program_stamps() {
            return Err(SimError::Ftl(
                "waftl: recovery needs program stamps in the spare areas (the translation pages' backup points); \
                 a run with a power cut keeps them from its start"
                    .into(),
            ));
        }
        // The translation pages' entries are flash contents the array does not hold.
        let contents = std::mem::take(&mut self.pm.state_mut().flash_map);
        *self = Waftl::new(cfg)?;
        let g = self.geo.clone();
        let ppb = self.ppb;
        let s = scan(ctx, self.logical_pages as usize, self.pm.state().directory.len())?;
        let version = |ctx: &FlashCtx, p: Ppn| ctx.flash().read(p).expect("a page the scan kept is readable").version;

        // Homes.
        let mut found = vec![Found::Unmapped; self.gmt.len()];
        for (lpn, &p) in s.home.iter().enumerate().filter(|(_, &p)| p != NONE) {
            let (lbn, b) = (lpn as u32 / ppb, g.block_of(p));
            found[lbn as usize] = found_in(found[lbn as usize], lbn, b, s.owner[b as usize]);
        }

        // The zone: host writes newer than their home copy.
        let live: Vec<(Lpn, Ppn)> = (0..self.logical_pages)
            .map(|lpn| (lpn, s.staged[lpn as usize], s.home[lpn as usize]))
            .filter(|&(_, z, h)| z != NONE && (h == NONE || version(ctx, z) > version(ctx, h)))
            .map(|(lpn, z, _)| (lpn, z))
            .collect();
        let mut kept_zone = vec![false; g.blocks() as usize];
        for &(_, z) in &live {
            kept_zone[g.block_of(z) as usize] = true;
        }
        // The newest zone block, if partly written, stays open (the zone's other open blocks,
        // one per plane, are kept if they hold live pages and erased like any block if not).
        let newest = (0..g.blocks()).filter(|&b| s.zone[b as usize]).max_by_key(|&b| ctx.flash().open_seq(b));
        if let Some(b) = newest.filter(|&b| ctx.flash().write_pointer(b) < ppb) {
            kept_zone[b as usize] = true;
        }
        let mut kept: Vec<BlockId> = (0..g.blocks()).filter(|&b| kept_zone[b as usize]).collect();
        kept.sort_by_key(|&b| ctx.flash().open_seq(b));
        let z = self.zone.size_blocks() as usize;
        let (zone, draining) = zone_split(&kept, z);
        let mut in_zone = vec![false; g.blocks() as usize];
        for &b in zone {
            in_zone[b as usize] = true;
        }
        let mut older = Bzmt::new(ppb);
        for &(lpn, p) in &live {
            ctx.revalidate(p)?;
            let map = if in_zone[g.block_of(p) as usize] { &mut self.bzmt } else { &mut older };
            map.log_write(lpn, p);
        }
        self.zone.restore(zone, &g, ctx.flash());
        if !draining.is_empty() {
            self.draining.start(older.take(), draining.to_vec(), None);
        }

        // Blocks WAFTL keeps lent: the zones and every block holding a block-mapped logical
        // block's newest copies. The rest belongs to the page-mapped part.
        let mut lent = kept_zone;
        let mut pmt = vec![NONE; self.logical_pages as usize];
        for (lpn, &p) in s.home.iter().enumerate().filter(|(_, &p)| p != NONE) {
            match found[lpn / ppb as usize] {
                Found::PageMapped => pmt[lpn] = p,
                Found::BlockMapped(_) | Found::Merge => {
                    lent[g.block_of(p) as usize] = true;
                    ctx.revalidate(p)?;
                }
                Found::Unmapped => unreachable!("lpn {lpn} has a home copy"),
            }
        }
        restore_scanned(&mut self.pm, ctx, contents, pmt, &s.translation, |b| lent[b as usize])?;
        for (lbn, f) in found.iter().enumerate() {
            match *f {
                Found::PageMapped => self.set_gmt(lbn as u32, PAGE_MAPPED),
                Found::BlockMapped(b) => self.set_gmt(lbn as u32, b),
                Found::Unmapped | Found::Merge => {}
            }
        }
        for lbn in (0..found.len() as u32).filter(|&l| found[l as usize] == Found::Merge) {
            self.finish_rewrite(ctx, lbn, &s.home)?;
        }
        Ok(())
    }

    /// Finish a BMB rewrite the cut stopped part-way: `lbn`'s newest copies (`home`), spread
    /// over the old BMB and the new one, go at their offsets into a fresh BMB and the sources
    /// are erased; with no block to lend, the logical block turns page-mapped as at run time
    /// (`bmb_to_pmb`).
    fn finish_rewrite(&mut self, ctx: &mut FlashCtx, lbn: u32, home: &[Ppn]) -> Result<(), SimError> {
        self.counts.rewrites_finished_by_recovery += 1;
        let g = self.geo.clone();
        let lpns = lbn * self.ppb..((lbn + 1) * self.ppb).min(self.logical_pages);
        let sources: Vec<(Lpn, Ppn)> = lpns.map(|lpn| (lpn, home[lpn as usize])).filter(|&(_, p)| p != NONE).collect();
        let mut blocks: Vec<BlockId> = sources.iter().map(|&(_, p)| g.block_of(p)).collect();
        blocks.sort_unstable();
        blocks.dedup();
        let latest = *blocks.iter().max_by_key(|&&b| ctx.flash().open_seq(b)).expect("a merge has sources");
        match self.lend(ctx, g.plane_of_block(latest), false)? {
            Some(new) => {
                let first = g.first_page(new);
                for &(lpn, src) in &sources {
                    let off = lpn % self.ppb;
                    skip_to(ctx, new, off)?;
                    super::copy_home(ctx, src, first + off)?;
                    ctx.invalidate(src)?;
                }
                self.set_gmt(lbn, new);
            }
            None => {
                self.counts.bmb_to_pmb += 1;
                self.set_gmt(lbn, PAGE_MAPPED);
                for &(lpn, src) in &sources {
                    self.migrate_to_pmb(ctx, lpn, src)?;
                }
            }
        }
        for b in blocks {
            self.erase_lent(ctx, b)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_owned_while_its_pages_are_one_logical_blocks_at_their_offsets() {
        let o = owner_with(NONE, 9, 1, 8);
        assert_eq!(o, 1);
        assert_eq!(owner_with(o, 14, 6, 8), 1);
        assert_eq!(owner_with(o, 17, 1, 8), MIXED, "another logical block");
        assert_eq!(owner_with(o, 10, 1, 8), MIXED, "off its offset");
        assert_eq!(owner_with(MIXED, 9, 1, 8), MIXED);
    }

    #[test]
    fn a_home_is_one_owned_block_and_a_foreign_block_makes_it_page_mapped() {
        let f = found_in(Found::Unmapped, 3, 40, 3);
        assert_eq!(f, Found::BlockMapped(40));
        assert_eq!(found_in(f, 3, 40, 3), f, "the same BMB again");
        let merge = found_in(f, 3, 41, 3);
        assert_eq!(merge, Found::Merge, "an old and a new BMB: a rewrite cut part-way");
        assert_eq!(found_in(merge, 3, 42, 3), Found::Merge);
        for known in [Found::Unmapped, f, merge] {
            assert_eq!(found_in(known, 3, 50, MIXED), Found::PageMapped, "{known:?} then a PMB");
            assert_eq!(found_in(known, 3, 50, 4), Found::PageMapped, "{known:?} then another block's BMB");
        }
        assert_eq!(found_in(Found::PageMapped, 3, 40, 3), Found::PageMapped, "a torn bmb_to_pmb: absorbed");
    }

    #[test]
    fn the_newest_zone_blocks_are_the_zone_and_the_rest_drains() {
        assert_eq!(zone_split(&[5, 6, 7], 2), (&[6, 7][..], &[5][..]));
        assert_eq!(zone_split(&[5], 2), (&[5][..], &[][..]));
        assert_eq!(zone_split(&[], 2), (&[][..], &[][..]));
    }
}
