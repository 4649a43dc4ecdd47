//! The flash against the data oracle, whatever the FTL checks itself: every live logical page
//! has exactly one valid copy of host data on flash that holds its newest version, and nothing
//! else is valid host data, but for one thing: a page logged in a staging area
//! (`PageKind::Staged`, WAFTL's Buffer Zone) supersedes its home copy, which stays valid until
//! the staged page migrates home (seed 002 Sec. III-C), so a live page may have one staged
//! and one home copy, the staged one its newest. The read-back oracle finds a page the FTL lost or maps wrongly;
//! this finds what reads cannot see: a superseded copy left valid (a leak, which GC would
//! move for ever), a trimmed page still valid, and a valid copy of an old version beside a
//! mapping that happens to read right.

use super::Simulator;
use crate::flash::PageKind;
use crate::geometry::{Ppn, NONE};

impl Simulator {
    /// Check the flash's valid host-data pages against the oracle (a drive built with
    /// `verify`; `Ok` without one). Pages held in the write buffer are left out: their newest
    /// version is not on flash yet. `superseded_valid`: the FTL keeps a superseded copy valid
    /// until a move under way ends (WAFTL's block rewrites, its registry capability), so
    /// only the newest copy of each page is checked. The error names the logical page, its
    /// pages and versions, and what the FTL did wrong.
    pub fn check_flash_against_oracle(&self, superseded_valid: bool) -> Result<(), String> {
        let Some(oracle) = &self.oracle else { return Ok(()) };
        let flash = &self.dev.flash;
        let g = flash.geometry();
        let version = |ppn: Ppn| flash.read(ppn).map_or(0, |o| o.version);
        // Per logical page, its valid copy at home and its valid staged copy.
        let (mut home, mut staged) = (vec![NONE; oracle.len()], vec![NONE; oracle.len()]);
        for b in 0..g.blocks() {
            for ppn in flash.valid_pages(b) {
                let oob = flash.read(ppn).map_err(|e| format!("valid page {ppn} cannot be read: {e}"))?;
                let copies = match oob.kind {
                    PageKind::Data => &mut home,
                    PageKind::Staged => &mut staged,
                    _ => continue,
                };
                let lpn = oob.lpn as usize;
                let Some(slot) = copies.get_mut(lpn) else {
                    return Err(format!("valid page {ppn} holds lpn {lpn}, beyond the {} logical pages", oracle.len()));
                };
                if *slot != NONE && superseded_valid {
                    if oob.version > version(*slot) {
                        *slot = ppn;
                    }
                    continue;
                }
                if *slot != NONE {
                    return Err(format!(
                        "lpn {lpn} has two valid copies on flash: page {} (block {}, version {}) and page {ppn} \
                         (block {}, version {}); the newest written is {}: a superseded copy was left valid (a leak)",
                        *slot,
                        g.block_of(*slot),
                        version(*slot),
                        g.block_of(ppn),
                        oob.version,
                        oracle[lpn]
                    ));
                }
                *slot = ppn;
            }
        }
        // The newest copy of each page: the staged one where there is one.
        let newest = staged.iter().zip(&home).map(|(&s, &h)| if s != NONE { s } else { h });
        for (lpn, (&want, ppn)) in oracle.iter().zip(newest).enumerate() {
            if self.wbuf.as_ref().is_some_and(|w| w.get(lpn as u32).is_some()) {
                continue;
            }
            match (want, ppn) {
                (0, NONE) => {}
                (0, p) => {
                    return Err(format!(
                        "lpn {lpn} is trimmed or was never written, yet page {p} (block {}, version {}) holds it valid",
                        g.block_of(p),
                        version(p)
                    ))
                }
                (v, NONE) => {
                    return Err(format!(
                        "lpn {lpn}: its newest version {v} has no valid copy on flash (lost by a move, or invalidated \
                         before its successor was programmed)"
                    ))
                }
                (v, p) if version(p) != v => {
                    return Err(format!(
                        "lpn {lpn}: its valid copy, page {p} (block {}), holds version {}; the newest written is {v}",
                        g.block_of(p),
                        version(p)
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
