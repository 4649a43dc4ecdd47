//! Recovery of the zoned namespace after a power cut (issue 58; docs/power-loss.md, docs/zns.md).
//!
//! The mapping is arithmetic (page `o` of zone `z` is page `o / planes` of block `z` on plane
//! `o % planes`), so what recovery must find on flash is each zone's write pointer: the first
//! erased page of the zone in its striping order. Writes program a zone's pages in that order,
//! so the pages programmed are a prefix of it, whose length is the sum of the write pointers
//! of the zone's blocks; each block's is found by a binary search over its pages (a read of
//! the page's spare area tells erased from programmed), `ceil(log2(pages per block + 1))`
//! reads, and the zone's last programmed page is read to see whether its program finished.
//! Then, as ZNS Sec. 2.1.1 has a zone come back after a power loss:
//! - nothing written: Empty (an explicitly opened zone with nothing written included);
//! - written to its capacity: Full;
//! - its last program torn (the write in flight at the cut): the good pages before it stay,
//!   and the controller finishes the zone (Full there; ZNS's "zone finished by controller"),
//!   as the torn page can be neither read nor programmed until a reset erases the zone;
//! - a block of it torn by an erase, or its pages no longer a prefix (a reset in flight at the
//!   cut): the reset is finished, its blocks erased, Empty;
//! - otherwise Closed (opened zones close at a power loss), holding an active resource.
//!
//! Departure: Finish programs nothing, so nothing on flash tells a zone finished below its
//! capacity from a Closed one: it comes back Closed at its write pointer (a drive keeps zone
//! states in metadata of its own, not modelled). Its data is all there.

use super::{ZnsFtl, ZoneState};
use ftlsim_core::error::SimError;
use ftlsim_core::ftl::{FlashCtx, Recovery};

/// What the scan found of one zone.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    /// Its programmed pages, a prefix of its striping order, the last of them torn or not.
    Prefix { programmed: u32, last_torn: bool },
    /// A reset cut part-way: an erase torn, or a prefix broken.
    ResetCut,
}

impl ZnsFtl {
    /// The write pointer of `block`, found by a binary search over its pages, each probe a
    /// read of a spare area (programmed or torn: at or past it; erased: before it).
    fn probe_write_pointer(ctx: &mut FlashCtx, block: u32) -> u32 {
        let g = ctx.flash().geometry().clone();
        let first = g.first_page(block);
        let wp = ctx.flash().write_pointer(block);
        let (mut lo, mut hi) = (0, g.pages_per_block);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let _ = ctx.read_spare(first + mid);
            if mid < wp {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        debug_assert_eq!(lo, wp);
        lo
    }

    /// Scan zone `z`'s blocks.
    fn scan_zone(&self, ctx: &mut FlashCtx, z: u32) -> Found {
        let planes = self.geo.planes();
        let ppb = self.geo.pages_per_block;
        let mut written = Vec::with_capacity(planes as usize);
        for plane in 0..planes {
            let b = self.block(z, plane);
            let wp = Self::probe_write_pointer(ctx, b);
            let first = self.geo.first_page(b);
            // A block torn by an erase reads torn at its first page and is "programmed"
            // throughout; a torn program tears one page, the last of the zone's prefix.
            if wp == ppb && ctx.flash().is_torn(first) && ctx.flash().is_torn(first + ppb - 1) && ppb > 1 {
                return Found::ResetCut;
            }
            written.push(wp);
        }
        let programmed: u32 = written.iter().sum();
        // A prefix of the striping order: plane p holds pages p, p + planes, ...
        let prefix =
            (0..planes).all(|p| written[p as usize] == programmed / planes + u32::from(p < programmed % planes));
        if !prefix {
            return Found::ResetCut;
        }
        let last_torn = programmed > 0 && {
            let last = self.ppn(z, programmed - 1);
            ctx.read_spare(last).is_none() && ctx.flash().is_torn(last)
        };
        Found::Prefix { programmed, last_torn }
    }
}

impl Recovery for ZnsFtl {
    fn recover(&mut self, ctx: &mut FlashCtx, cfg: &ftlsim_core::config::Resolved) -> Result<(), SimError> {
        // Controller memory is gone: the zones' pointers and states come from flash. The run's
        // counters are the simulator's, not the drive's: they stay.
        let counts = std::mem::take(&mut self.counts);
        *self = ZnsFtl::new(cfg).map_err(|e| SimError::Ftl(format!("zns: recovery: {e}")))?;
        self.counts = counts;
        for z in 0..self.zones() {
            let zi = z as usize;
            let (wp, state) = match self.scan_zone(ctx, z) {
                Found::ResetCut => {
                    for plane in 0..self.geo.planes() {
                        let b = self.block(z, plane);
                        if ctx.flash().write_pointer(b) > 0 {
                            ctx.erase(b)?;
                        }
                    }
                    (0, ZoneState::Empty)
                }
                Found::Prefix { programmed: 0, .. } => (0, ZoneState::Empty),
                Found::Prefix { programmed, last_torn: true } => (programmed - 1, ZoneState::Full),
                Found::Prefix { programmed, .. } if programmed >= self.cap => (programmed, ZoneState::Full),
                Found::Prefix { programmed, .. } => (programmed, ZoneState::Closed),
            };
            for o in 0..wp {
                ctx.revalidate(self.ppn(z, o))?;
            }
            self.wp[zi] = wp;
            self.set_state(zi, state);
        }
        Ok(())
    }
}
