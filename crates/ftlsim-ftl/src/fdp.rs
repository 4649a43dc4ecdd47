//! NVMe Flexible Data Placement (TP4146, NVMe Base Specification 2.1 Sec. 8.1.10) under the
//! page FTL and the demand FTLs (`demand.rs`): which blocks a write's placement handle and GC's moves may use, and the FDP
//! statistics (docs/fdp.md).
//!
//! - A **reclaim unit handle** (RUH) is a host write stream: writes placed on handle `h` go
//!   to `h`'s open block on each plane, never another handle's. A handle's **reclaim unit**
//!   (RU) is its open blocks, one per plane (a superblock under round-robin striping); when an
//!   RU is full the handle switches to a fresh one.
//! - **Initially isolated** handles (the spec's default type): GC may put valid pages of
//!   several handles into one block (one GC stream per plane for all).
//! - **Persistently isolated** handles: GC keeps each handle's pages apart (one GC stream per
//!   handle and plane), so no block ever holds two handles' pages.
//! - The statistics log (22h) counts host and media bytes written; here they are kept per
//!   handle (a page's handle is the one its latest host write named), which gives each
//!   handle's write amplification, and blocks that came to hold two handles' pages.
//!
//! One reclaim group (the whole drive); a write without a placement goes to handle 0, as a
//! controller's default placement handle.

use ftlsim_core::config::FdpHandleType;
use ftlsim_core::flash::{FlashArray, PageKind};
use ftlsim_core::ftl::FlashTime;
use ftlsim_core::geometry::{BlockId, Lpn, NONE};
use ftlsim_core::metrics::r6;
use serde::{Deserialize, Serialize};

/// A block holding no page yet.
const UNUSED: u8 = u8::MAX;
/// A block holding pages of two or more handles.
const MIXED: u8 = u8::MAX - 1;

/// Per-handle counters of a run (pages of the handle's data).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HandleCounts {
    /// Pages the host wrote on the handle.
    pub host_pages: u64,
    /// Pages GC moved of the handle's data.
    pub gc_pages: u64,
    /// Reclaim units (blocks) the handle's host writes opened.
    pub units_opened: u64,
    /// Pages erased in blocks that held only the handle's data.
    pub erased_pages: u64,
}

/// The FDP state of a page FTL.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fdp {
    handles: u32,
    handle_type: FdpHandleType,
    /// Each block's handle, [`MIXED`] or [`UNUSED`].
    block_handle: Vec<u8>,
    /// Each logical page's handle (its latest host write's).
    lpn_handle: Vec<u8>,
    counts: Vec<HandleCounts>,
    /// Blocks that came to hold two handles' pages (initially isolated GC).
    mixed_blocks: u64,
    /// Pages erased in mixed blocks.
    mixed_erased_pages: u64,
}

impl Fdp {
    /// `handles` handles (1..=16) of `kind` over `blocks` blocks and `logical_pages` pages.
    pub fn new(handles: u32, kind: FdpHandleType, blocks: u32, logical_pages: u32) -> Fdp {
        assert!((1..=16).contains(&handles), "FDP handles checked by the config");
        Fdp {
            handles,
            handle_type: kind,
            block_handle: vec![UNUSED; blocks as usize],
            lpn_handle: vec![0; logical_pages as usize],
            counts: vec![HandleCounts::default(); handles as usize],
            mixed_blocks: 0,
            mixed_erased_pages: 0,
        }
    }

    /// Host write streams: one per handle.
    pub fn handles(&self) -> u32 {
        self.handles
    }

    /// Whether GC keeps each handle's pages apart from every other's.
    fn persistent(&self) -> bool {
        self.handle_type == FdpHandleType::PersistentlyIsolated
    }

    /// GC streams: one per handle when persistently isolated, else one for all.
    pub fn gc_streams(&self) -> u32 {
        if self.persistent() {
            self.handles
        } else {
            1
        }
    }

    /// The handle of a write placed on `placement` (checked against the handles when the run
    /// was planned).
    #[inline]
    pub fn handle(&self, placement: u16) -> u32 {
        let h = u32::from(placement);
        assert!(h < self.handles, "placement {h} of {} handles: checked when planned", self.handles);
        h
    }

    /// The GC stream (among [`Fdp::gc_streams`]) for the valid pages of `victim`: its
    /// handle's when persistently isolated; 0 for a block that holds no data page (a demand
    /// FTL's translation pages that went with GC's data).
    #[inline]
    pub fn gc_stream(&self, victim: BlockId) -> u32 {
        let h = self.block_handle[victim as usize];
        if !self.persistent() || h == UNUSED {
            return 0;
        }
        assert!(u32::from(h) < self.handles, "block {victim} of a persistently isolated handle holds handle {h}");
        u32::from(h)
    }

    /// The host wrote `lpn` on handle `h` into `block`, at `page` of it. Counted when timed:
    /// a page given contents off the clock (a read of a never-written page) is not the host's
    /// write in the run, and the drive's counters leave it out too.
    #[inline]
    pub fn host_write(&mut self, lpn: Lpn, h: u32, block: BlockId, page: u32, time: FlashTime) {
        self.lpn_handle[lpn as usize] = h as u8;
        if time == FlashTime::Timed {
            let c = &mut self.counts[h as usize];
            c.host_pages += 1;
            c.units_opened += u64::from(page == 0);
        }
        self.note(block, h as u8);
    }

    /// GC moved `lpn` into `block` (counted when timed, as [`Fdp::host_write`]).
    #[inline]
    pub fn gc_move(&mut self, lpn: Lpn, block: BlockId, time: FlashTime) {
        let h = self.lpn_handle[lpn as usize];
        if time == FlashTime::Timed {
            self.counts[h as usize].gc_pages += 1;
        }
        self.note(block, h);
    }

    /// `block` now holds a page of handle `h`.
    #[inline]
    fn note(&mut self, block: BlockId, h: u8) {
        let persistent = self.persistent();
        let b = &mut self.block_handle[block as usize];
        if *b == UNUSED {
            *b = h;
        } else if *b != h && *b != MIXED {
            assert!(!persistent, "block {block}: persistently isolated handles {} and {h} in one block", *b);
            *b = MIXED;
            self.mixed_blocks += 1;
        }
    }

    /// `block` of `pages` pages was erased (counted when timed, as [`Fdp::host_write`]).
    pub fn erased(&mut self, block: BlockId, pages: u32, time: FlashTime) {
        let b = std::mem::replace(&mut self.block_handle[block as usize], UNUSED);
        match b {
            _ if time == FlashTime::Functional => {}
            UNUSED => {}
            MIXED => self.mixed_erased_pages += u64::from(pages),
            h => self.counts[h as usize].erased_pages += u64::from(pages),
        }
    }

    /// The measured run starts.
    pub fn begin_measurement(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = HandleCounts::default());
        self.mixed_blocks = 0;
        self.mixed_erased_pages = 0;
    }

    /// After recovery: blocks' handles are rebuilt from their pages' logical pages.
    pub fn recovered(&mut self, flash: &FlashArray, blocks: u32) {
        for b in 0..blocks {
            self.block_handle[b as usize] = UNUSED;
            for ppn in flash.valid_pages(b) {
                let h = self.lpn_handle[flash.owner(ppn) as usize];
                let slot = &mut self.block_handle[b as usize];
                *slot = if *slot == UNUSED || *slot == h { h } else { MIXED };
            }
        }
    }

    /// Every valid page lies in a block of its handle (or a mixed one, initially isolated).
    pub fn check(&self, flash: &FlashArray, blocks: u32) {
        for b in 0..blocks {
            let bh = self.block_handle[b as usize];
            for ppn in flash.valid_pages(b) {
                // Only data pages belong to a handle (not a demand FTL's translation pages).
                if flash.read(ppn).is_ok_and(|oob| oob.kind != PageKind::Data) {
                    continue;
                }
                let lpn = flash.owner(ppn);
                assert_ne!(lpn, NONE, "block {b}: a valid page without an owner");
                let h = self.lpn_handle[lpn as usize];
                assert!(
                    bh == h || (bh == MIXED && !self.persistent()),
                    "block {b} of handle {bh} holds lpn {lpn} of handle {h}"
                );
            }
        }
    }

    /// `fdp` of the FTL's metrics: per handle, host and media bytes written (`page_bytes` a
    /// page) and write amplification; the blocks that mixed handles.
    pub fn metrics(&self, page_bytes: u64) -> serde_json::Value {
        let handles: Vec<serde_json::Value> = self
            .counts
            .iter()
            .enumerate()
            .map(|(h, c)| {
                let media = c.host_pages + c.gc_pages;
                serde_json::json!({
                    "handle": h,
                    "host_pages_written": c.host_pages,
                    "gc_pages_written": c.gc_pages,
                    "host_bytes_written": c.host_pages * page_bytes,
                    "media_bytes_written": media * page_bytes,
                    "media_bytes_erased": c.erased_pages * page_bytes,
                    "write_amplification": if c.host_pages == 0 { 0.0 } else { r6(media as f64 / c.host_pages as f64) },
                    "reclaim_units_opened": c.units_opened,
                })
            })
            .collect();
        let host: u64 = self.counts.iter().map(|c| c.host_pages).sum();
        let media: u64 = self.counts.iter().map(|c| c.host_pages + c.gc_pages).sum();
        serde_json::json!({
            "handle_type": self.handle_type.name(),
            "host_bytes_written": host * page_bytes,
            "media_bytes_written": media * page_bytes,
            "mixed_blocks": self.mixed_blocks,
            "mixed_bytes_erased": self.mixed_erased_pages * page_bytes,
            "handles": handles,
        })
    }
}
