//! Recovery of the demand-based FTLs after a power cut: seed 001 Fig. 8.1 (Sec. 8.1, before
//! ILog), shared by DFTL, CDFTL, SCFTL, DLOOP and PCFTL.
//!
//! What the spare areas hold: every page its logical page (data) or translation page number,
//! its kind and its program stamp (the thesis's PSN); the first page of a block gives the
//! block's sequence number (BSN). A translation page also carries its backup stamp (MinPSN): every
//! mapping change made before that stamp is in the entries of that copy, so only data pages
//! programmed after it can be newer than what it says (set when it is programmed, see
//! `program_translation`).
//!
//! The procedure, with the pages it reads:
//! 1. the first page of every block (m reads; a block whose first pages are torn or skipped
//!    is read until a page answers), for the BSN and the block's kind (lines 3-9);
//! 2. every page of the translation blocks (first page a translation page): the newest copy
//!    of each translation page becomes its directory entry, with its backup stamp (lines
//!    10-19);
//! 3. the other blocks newest first, each from its last written page down, until a page
//!    older than the oldest backup stamp (lines 20-33): a data page newer than its
//!    translation page's backup is a change the cut lost from the cache. A block not full
//!    costs one more read, the erased page that ends it. A translation page met here (GC
//!    put it with data on a plane down to its last free block) counts like one of step 2.
//!    While a translation page step 2 did not find is missing, step 3 reads blocks to the
//!    bottom; once it has met the last one, the oldest backup point of all of them is the
//!    floor again. A translation page met in a block read earlier may have a newer copy in a
//!    block read later, whose backup is no older: the floor is then lower than it could be,
//!    never higher, so the scan reads more, never less. A translation page never written keeps
//!    the floor at the drive's first program (m + n).
//!
//! With ILog (Fig. 8.4): step 1 also finds ILog's blocks (first page an IP), whose every
//! page is read (lines 13-21) to rebuild the BIFT and IPT from the newest copy of each LIPN;
//! in step 3 each data block first costs one read of the IP holding its BIF (line 35), and
//! the pages that BIF flags invalid are not read (line 38), under the BSN rule
//! (`IlogOnFlash::mark_flagged`). Worst case 2m + n (L1286), plus ILog's blocks.
//!
//! Worst case, with no backup point (no translation page written, or one whose backup is
//! the drive's first program): m + n pages, as the thesis says. Departure: the thesis caches
//! the changes found in the CMT; here they go to their translation pages, which are
//! rewritten before the drive serves the host (recovery's writes are counted with its reads),
//! so a second cut right after recovery finds them too.
//!
//! The simulator keeps one set of entries per translation page (the flash map), which may be
//! newer than the newest readable copy when the cut tore that copy's rewrite or came before a
//! queued rewrite. That never changes the result: any entry newer than a copy's backup stamp
//! records a data page programmed after it, which step 3 reads and which wins.

use super::{DemandFtl, DemandState, GC, HOST, IP_STREAM, TRANSLATION};
use crate::ilog::on_flash::{FoundIp, IlogOnFlash};
use ftlsim_core::error::SimError;
use ftlsim_core::flash::{Oob, PageKind};
use ftlsim_core::ftl::FlashCtx;
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, Ppn, NONE};
use std::collections::BTreeMap;

/// What step 1 learnt of a written block: its first readable page and that page's spare area.
struct FirstPage {
    block: BlockId,
    index: u32,
    oob: Oob,
}

/// Recover `ftl`, built anew, from the flash; `contents` are the translation-page entries
/// of the FTL that lost power (flash contents the flash array does not hold).
pub(crate) fn recover<F: DemandFtl + ?Sized>(
    ftl: &mut F,
    ctx: &mut FlashCtx,
    contents: Vec<Ppn>,
) -> Result<(), SimError> {
    let name = ftl.state().name;
    if !ctx.flash().keeps_program_stamps() {
        return Err(SimError::Ftl(format!(
            "{name}: recovery (seed 001 Fig. 8.1) needs program stamps in the spare areas; \
             a run with a power cut keeps them from its start"
        )));
    }
    let g = ftl.state().geo.clone();
    let firsts = first_pages(ctx, &g);
    // Fig. 8.4 lines 12-22: ILog's BIFT and IPT from the IPs on flash.
    let ips = match ftl.state().ilog.as_ref() {
        Some(il) => il.read_ips(ctx),
        None => Vec::new(),
    };
    if let Some(il) = ftl.state_mut().ilog.as_mut() {
        il.restore(ctx, &ips)?;
    }
    let mut scan = Scan::new(name, ftl.state().directory.len());
    scan.translation_blocks(ctx, &g, &firsts);
    scan.data_blocks(ctx, &g, &firsts, ftl.state().ilog.as_ref().map(|il| (il, ips.as_slice())));
    let changes = scan.newest_changes(ctx, ftl.state().per_tp);
    install(ftl.state_mut(), contents, &scan.newest_tp, &changes);
    let s = ftl.state_mut();
    revalidate(s, ctx)?;
    restore_streams(s, ctx, &g, &firsts)?;
    ftl.flush_write_backs(ctx, true)
}

/// Step 1: the first readable page of every written block, newest block first (the order
/// of lines 11 and 21; the stamps decide, not the order).
fn first_pages(ctx: &mut FlashCtx, g: &Geometry) -> Vec<FirstPage> {
    let mut firsts = Vec::new();
    for b in 0..g.blocks() {
        let first = g.first_page(b);
        let wp = ctx.flash().write_pointer(b);
        for i in 0..wp.max(1) {
            if let Some(oob) = ctx.read_spare(first + i) {
                firsts.push(FirstPage { block: b, index: i, oob });
                break;
            }
        }
    }
    firsts.sort_by_key(|f| std::cmp::Reverse(ctx.flash().open_seq(f.block)));
    firsts
}

/// What steps 2 and 3 found: the newest copy of each translation page and the data pages
/// that may be newer than their translation page's copy.
struct Scan {
    /// The FTL's name, for messages.
    name: &'static str,
    /// Per translation page, `(program stamp, page, backup stamp)` of its newest copy
    /// (page NONE: none found).
    newest_tp: Vec<(u32, Ppn, u32)>,
    /// Data pages met, `(page, logical page)`.
    candidates: Vec<(Ppn, Lpn)>,
}

impl Scan {
    fn new(name: &'static str, tps: usize) -> Scan {
        Scan { name, newest_tp: vec![(0, NONE, 0); tps], candidates: Vec::new() }
    }

    /// Take in the page `ppn` with spare area `oob`.
    fn consider(&mut self, ctx: &FlashCtx, ppn: Ppn, oob: Oob) {
        let stamp = ctx.flash().stamp(ppn);
        match oob.kind {
            PageKind::Translation => {
                let slot = &mut self.newest_tp[oob.lpn as usize];
                if slot.1 == NONE || stamp > slot.0 {
                    *slot = (stamp, ppn, oob.version);
                }
            }
            PageKind::Data => self.candidates.push((ppn, oob.lpn)),
            other => unreachable!("{} writes no {other:?} pages", self.name),
        }
    }

    /// The backup stamp of translation page `tvpn`'s newest copy; a translation page never
    /// written has no backup: every data page of it counts.
    fn backup_of(&self, tvpn: usize) -> u32 {
        if self.newest_tp[tvpn].1 == NONE {
            0
        } else {
            self.newest_tp[tvpn].2
        }
    }

    fn oldest_backup(&self) -> u32 {
        (0..self.newest_tp.len()).map(|t| self.backup_of(t)).min().unwrap_or(0)
    }

    /// Step 2: every page of the translation blocks; data pages met on the way are kept.
    fn translation_blocks(&mut self, ctx: &mut FlashCtx, g: &Geometry, firsts: &[FirstPage]) {
        for f in firsts.iter().filter(|f| f.oob.kind == PageKind::Translation) {
            let first = g.first_page(f.block);
            let wp = ctx.flash().write_pointer(f.block);
            self.consider(ctx, first + f.index, f.oob);
            for i in f.index + 1..wp {
                if let Some(oob) = ctx.read_spare(first + i) {
                    self.consider(ctx, first + i, oob);
                }
            }
            if wp < g.pages_per_block {
                let _ = ctx.read_spare(first + wp);
            }
        }
    }

    /// Step 3: data blocks from their last page down to the oldest backup point. A
    /// translation page step 2 did not find (GC moved it into a GC block that begins with
    /// data) is looked for here: blocks are read to the bottom only until every missing one
    /// has been met. With ILog (`ilog`: it and the IPs found), the pages a block's BIF flags
    /// invalid are not read.
    fn data_blocks(
        &mut self,
        ctx: &mut FlashCtx,
        g: &Geometry,
        firsts: &[FirstPage],
        ilog: Option<(&IlogOnFlash, &[FoundIp])>,
    ) {
        let mut flagged = ftlsim_core::bits::Bits::new(u64::from(g.blocks()) * u64::from(g.pages_per_block));
        let mut missing = self.newest_tp.iter().filter(|t| t.1 == NONE).count();
        let mut floor = if missing == 0 { self.oldest_backup() } else { 0 };
        for f in firsts.iter().filter(|f| !matches!(f.oob.kind, PageKind::Translation | PageKind::Log)) {
            let first = g.first_page(f.block);
            let wp = ctx.flash().write_pointer(f.block);
            if let Some((il, ips)) = ilog {
                // Line 35: the block's BIF, read from its IP.
                if let Some(ip) = il.ilog.ip_of(f.block) {
                    let _ = ctx.read_spare(ip);
                    let found = ips.iter().find(|x| x.ppn == ip).expect("a restored IP was found on flash");
                    il.mark_flagged(ctx.flash(), found, f.block, &mut flagged);
                }
            }
            if wp < g.pages_per_block {
                let _ = ctx.read_spare(first + wp);
            }
            for i in (f.index..wp).rev() {
                if i != f.index && flagged.get(first + i) {
                    continue;
                }
                let oob = if i == f.index { Some(f.oob) } else { ctx.read_spare(first + i) };
                let Some(oob) = oob else { continue };
                if ctx.flash().stamp(first + i) <= floor {
                    break;
                }
                let found = oob.kind == PageKind::Translation && self.newest_tp[oob.lpn as usize].1 == NONE;
                self.consider(ctx, first + i, oob);
                if found {
                    missing -= 1;
                    if missing == 0 {
                        floor = self.oldest_backup();
                    }
                }
            }
        }
    }

    /// The newest change per logical page after its translation page's backup
    /// (`per_tp` entries per translation page): `(program stamp, page)`.
    fn newest_changes(&self, ctx: &FlashCtx, per_tp: u32) -> BTreeMap<Lpn, (u32, Ppn)> {
        let mut changes: BTreeMap<Lpn, (u32, Ppn)> = BTreeMap::new();
        for &(ppn, lpn) in &self.candidates {
            let stamp = ctx.flash().stamp(ppn);
            if stamp <= self.backup_of((lpn / per_tp) as usize) {
                continue;
            }
            let e = changes.entry(lpn).or_insert((0, NONE));
            if stamp > e.0 {
                *e = (stamp, ppn);
            }
        }
        changes
    }
}

/// Install what the scan found: the directory and backups from `newest_tp`, the entries
/// from `contents` and the `changes`, whose translation pages are rewritten.
fn install(
    s: &mut DemandState,
    contents: Vec<Ppn>,
    newest_tp: &[(u32, Ppn, u32)],
    changes: &BTreeMap<Lpn, (u32, Ppn)>,
) {
    let per_tp = s.per_tp;
    s.flash_map = contents;
    for (tvpn, &(_, ppn, backup)) in newest_tp.iter().enumerate() {
        s.directory[tvpn] = ppn;
        s.backup[tvpn] = backup;
        if ppn == NONE {
            // No copy on flash: no entries either, whatever the lost controller had queued.
            let lo = tvpn * per_tp as usize;
            let hi = (lo + per_tp as usize).min(s.flash_map.len());
            s.flash_map[lo..hi].fill(NONE);
        }
    }
    for (&lpn, &(_, ppn)) in changes {
        s.flash_map[lpn as usize] = ppn;
        s.pending_write_back.insert(lpn / per_tp);
    }
}

/// Partly written blocks go back to a stream of their first page's kind, so a later
/// recovery finds translation pages where step 1 looks for them.
fn restore_streams(
    s: &mut DemandState,
    ctx: &mut FlashCtx,
    g: &Geometry,
    firsts: &[FirstPage],
) -> Result<(), SimError> {
    let data_streams = 1 << HOST | 1 << GC;
    let mut streams = vec![data_streams; g.blocks() as usize];
    for f in firsts {
        match f.oob.kind {
            PageKind::Translation => streams[f.block as usize] = 1 << TRANSLATION,
            PageKind::Log => streams[f.block as usize] = 1 << IP_STREAM,
            _ => {}
        }
    }
    s.bm.rebuild(ctx, |b| streams[b as usize])?;
    if let Some(il) = s.ilog.as_mut() {
        il.rebuilt(ctx.flash());
    }
    Ok(())
}

/// Restore `ftl`, built anew, from a scan another FTL made (WAFTL, whose data blocks the
/// demand engine's scan above would misread): `pmt`, the newest copy of each page-mapped
/// logical page (NONE elsewhere); `newest_tp`, the newest copy of each translation page,
/// `(program stamp, page, backup stamp)` (page NONE: none found); `contents`, the entries the
/// FTL that lost power had (flash contents the array does not hold); `lent`, the blocks the
/// other FTL keeps itself. A translation page is rewritten when its entries differ from
/// `contents`, when it has entries but no copy, or when a page it maps was programmed after
/// its copy's backup; then the blocks are rebuilt and the rewrites programmed.
pub(crate) fn restore_scanned<F: DemandFtl + ?Sized>(
    ftl: &mut F,
    ctx: &mut FlashCtx,
    contents: Vec<Ppn>,
    pmt: Vec<Ppn>,
    newest_tp: &[(u32, Ppn, u32)],
    lent: impl Fn(BlockId) -> bool,
) -> Result<(), SimError> {
    let name = ftl.state().name;
    let s = ftl.state_mut();
    let per_tp = s.per_tp as usize;
    assert_eq!(pmt.len(), s.flash_map.len(), "{name}: a page map of another size");
    for (tvpn, &(_, ppn, backup)) in newest_tp.iter().enumerate() {
        s.directory[tvpn] = ppn;
        s.backup[tvpn] = if ppn == NONE { 0 } else { backup };
        let range = tvpn * per_tp..((tvpn + 1) * per_tp).min(pmt.len());
        let changed = pmt[range.clone()] != contents[range.clone()];
        let mapped = pmt[range.clone()].iter().any(|&p| p != NONE);
        let newer = pmt[range].iter().any(|&p| p != NONE && ctx.flash().stamp(p) > s.backup[tvpn]);
        if (mapped && (ppn == NONE || newer)) || (changed && ppn != NONE) {
            s.pending_write_back.insert(tvpn as u32);
        }
    }
    s.flash_map = pmt;
    revalidate(s, ctx)?;
    // Partly written blocks go back to a stream of their first page's kind, as above.
    let g = s.geo.clone();
    let data_streams = 1 << HOST | 1 << GC;
    let streams: Vec<u64> = (0..g.blocks())
        .map(|b| {
            let first = g.first_page(b);
            let kind = (0..ctx.flash().write_pointer(b)).find_map(|i| ctx.flash().read(first + i).ok()).map(|o| o.kind);
            if kind == Some(PageKind::Translation) {
                1 << TRANSLATION
            } else {
                data_streams
            }
        })
        .collect();
    s.bm.rebuild_lending(ctx, |b| streams[b as usize], lent)?;
    ftl.flush_write_backs(ctx, true)
}

/// Mark valid every data page the page map points at and every translation page the
/// directory does (after [`FlashArray::restart`] none is).
///
/// [`FlashArray::restart`]: ftlsim_core::flash::FlashArray::restart
fn revalidate(s: &mut super::DemandState, ctx: &mut FlashCtx) -> Result<(), SimError> {
    let per_tp = s.per_tp;
    for lpn in 0..s.flash_map.len() {
        let ppn = s.flash_map[lpn];
        if ppn == NONE {
            continue;
        }
        // A trim whose mapping change the cut lost leaves the translation page's copy mapping
        // the page the data was in, which GC may since have erased or filled with another
        // logical page: the mapping is dropped (the page reads as trimmed, as NVMe allows of
        // a deallocated block) and the translation page rewritten. Any other stale mapping
        // would be a lost write, which the data oracle catches.
        let holds = ctx.flash().read(ppn).is_ok_and(|o| o.kind == PageKind::Data && o.lpn as usize == lpn);
        if !holds {
            s.flash_map[lpn] = NONE;
            s.pending_write_back.insert(lpn as u32 / per_tp);
            continue;
        }
        ctx.revalidate(ppn)?;
    }
    for &ppn in s.directory.iter().filter(|&&p| p != NONE) {
        ctx.revalidate(ppn)?;
    }
    Ok(())
}
