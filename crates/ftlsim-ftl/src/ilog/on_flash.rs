//! ILog on a drive (seed 001 Secs. 8.1.1-8.1.4): where an FTL's invalidation pages (IPs) go,
//! how GC moves them, and what recovery reads of them (Figs. 8.4 and 8.6). Shared by 3DFTL
//! and the demand-based FTLs (L1404: "Its can be applied to other page-level FTLs").
//!
//! - The IPs are pages of their own write stream (kind `Log`, LPN = LIPN), one block of it
//!   open on the whole drive, a new one opened on the plane with the most free blocks: an IP
//!   can live anywhere, and a plane down to its last free blocks may have none to spare for
//!   another open stream. Their reads and writes are tagged mapping traffic.
//! - What an IP on flash says is kept beside the flash model, which stores no page payload:
//!   per IP page, the blocks whose BIFs it holds; per data page, when it was invalidated. A
//!   BIF in an IP flags the pages of its block invalidated before the IP was written, and the
//!   IP's own stamp is the "latest BSN" of L1280: a flag is trusted only for a page programmed
//!   before it, in a block not erased since (a fresh block's flags start clear).
//!
//! Approximation (cost only): a BIF dropped because its block became all invalid (L1270)
//! keeps its older copy in its IP, which flags fewer pages than the mirror says; recovery may
//! then skip pages the thesis's would read. Skipping a page that is truly invalid never loses
//! data.

use super::{Ilog, IpStore};
use ftlsim_core::bits::Bits;
use ftlsim_core::config::{DriveConfig, InvalidTracking};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::FlashCtx;
use ftlsim_core::gc::BlockManager;
use ftlsim_core::geometry::{BlockId, Geometry, PlaneId, Ppn, NONE};
use ftlsim_core::scheduler::Tag;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An IP recovery found on flash: the newest copy of its LIPN.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoundIp {
    pub lipn: u32,
    pub ppn: Ppn,
    pub stamp: u32,
}

/// ILog's SRAM state, its IPs' write stream, and the content of its IPs on flash.
#[derive(Serialize, Deserialize)]
pub(crate) struct IlogOnFlash {
    pub ilog: Ilog,
    stream: u32,
    geo: Geometry,
    bifq_bytes: u32,
    /// Per IP page on flash, the blocks whose BIFs it holds.
    contents: BTreeMap<Ppn, Vec<BlockId>>,
    /// Per physical page, the stamp clock when it was invalidated (0: not since its erase).
    invalidated_at: Vec<u32>,
}

/// The IP pages of an [`IlogOnFlash`], for [`Ilog`]'s reads and write-backs.
struct Store<'a, 'c> {
    ctx: &'a mut FlashCtx<'c>,
    bm: &'a mut BlockManager,
    contents: &'a mut BTreeMap<Ppn, Vec<BlockId>>,
    stream: u32,
}

/// The plane for the next IP: the one whose open IP block has room (one IP block open on the
/// whole drive, as the thesis's IPs fill one block, Table 8.1), else the plane with the most
/// free blocks (the lowest on ties); and whether it can take one without its last free block,
/// which its GC needs.
fn ip_plane(bm: &BlockManager, flash: &FlashArray, stream: u32) -> (PlaneId, bool) {
    let g = flash.geometry();
    let open =
        (0..g.planes()).find(|&p| bm.active(p, stream).is_some_and(|b| flash.write_pointer(b) < g.pages_per_block));
    match open {
        Some(p) => (p, true),
        None => {
            let p = (0..g.planes()).max_by_key(|&p| (bm.free_blocks(p), std::cmp::Reverse(p))).unwrap_or(0);
            (p, bm.free_blocks(p) >= 2)
        }
    }
}

impl IpStore for Store<'_, '_> {
    fn read_ip(&mut self, ppn: Ppn) -> Result<(), SimError> {
        let prev = self.ctx.set_tag(Tag::Mapping);
        let r = self.ctx.read(ppn);
        self.ctx.set_tag(prev);
        r?;
        Ok(())
    }

    fn write_ip(&mut self, lipn: u32, old: Ppn, blocks: &[BlockId]) -> Result<Ppn, SimError> {
        let (plane, _) = ip_plane(self.bm, self.ctx.flash(), self.stream);
        let ppn = self.bm.allocate(self.ctx.flash(), plane, self.stream)?;
        let prev = self.ctx.set_tag(Tag::Mapping);
        let r = self.ctx.program(ppn, Oob { lpn: lipn, version: 0, kind: PageKind::Log });
        self.ctx.set_tag(prev);
        r?;
        self.contents.insert(ppn, blocks.to_vec());
        if old != NONE {
            self.ctx.invalidate(old)?;
            self.bm.on_invalidate(self.ctx.flash(), old);
        }
        Ok(ppn)
    }

    fn has_room(&self) -> bool {
        ip_plane(self.bm, self.ctx.flash(), self.stream).1
    }
}

/// ILog's options (`[ftl.ilog]`), read with `ftl.invalid_tracking = "ilog"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IlogOptions {
    /// The BIF queue in SRAM, bytes (seed 001 Table 8.1: 8 KB, 234 BIFs of 35 bytes).
    pub bifq_bytes: u32,
}

impl Default for IlogOptions {
    fn default() -> Self {
        IlogOptions { bifq_bytes: 8 << 10 }
    }
}

impl crate::options::Options for IlogOptions {
    const SECTION: &'static str = "ilog";

    fn check(&self, _cfg: &DriveConfig) -> Result<(), ConfigError> {
        if self.bifq_bytes < super::BIF_BYTES {
            return Err(crate::options::invalid(
                "ilog",
                "bifq_bytes",
                self.bifq_bytes,
                format!("must hold at least one BIF of {} bytes", super::BIF_BYTES),
            ));
        }
        Ok(())
    }
}

impl IlogOnFlash {
    /// ILog for `cfg`'s drive, its IPs in write stream `stream`; `None` unless
    /// `ftl.invalid_tracking = "ilog"`. `name` is the FTL's, for errors.
    pub fn for_config(cfg: &DriveConfig, stream: u32, name: &str) -> Result<Option<IlogOnFlash>, ConfigError> {
        if cfg.ftl.invalid_tracking != InvalidTracking::Ilog {
            return Ok(None);
        }
        let g = &cfg.geometry;
        let bifq_bytes = <IlogOptions as crate::options::Options>::of(cfg)?.bifq_bytes;
        if !Ilog::fits(g.blocks(), g.page_size_bytes) {
            return Err(ConfigError::Invalid {
                key: "ftl.invalid_tracking".into(),
                value: "ilog".into(),
                rule: format!(
                    "{name}: the BIFs of {} blocks need more than {} IPs of {}-byte pages (the BIFT's 1-byte LIPN)",
                    g.blocks(),
                    super::LIPNS,
                    g.page_size_bytes
                ),
            });
        }
        Ok(Some(IlogOnFlash {
            ilog: Ilog::new(g.blocks(), g.pages_per_block, g.page_size_bytes, bifq_bytes),
            stream,
            geo: g.clone(),
            bifq_bytes,
            contents: BTreeMap::new(),
            invalidated_at: vec![0; (u64::from(g.blocks()) * u64::from(g.pages_per_block)) as usize],
        }))
    }

    /// What a power cut leaves: the IPs on flash, SRAM state anew.
    pub fn after_power_cut(self) -> IlogOnFlash {
        let g = &self.geo;
        IlogOnFlash { ilog: Ilog::new(g.blocks(), g.pages_per_block, g.page_size_bytes, self.bifq_bytes), ..self }
    }

    fn store<'a, 'c>(
        &'a mut self,
        ctx: &'a mut FlashCtx<'c>,
        bm: &'a mut BlockManager,
    ) -> (&'a mut Ilog, Store<'a, 'c>) {
        (&mut self.ilog, Store { ctx, bm, contents: &mut self.contents, stream: self.stream })
    }

    /// Data page `old`, already invalidated in the flash and `bm`, is logged (Fig. 8.3).
    pub fn invalidated(&mut self, ctx: &mut FlashCtx, bm: &mut BlockManager, old: Ppn) -> Result<(), SimError> {
        self.invalidated_at[old as usize] = ctx.flash().stamp_clock().max(1);
        let b = self.geo.block_of(old);
        let left = ctx.flash().valid_count(b);
        let (ilog, mut store) = self.store(ctx, bm);
        ilog.invalidate(b, left, &mut store)
    }

    /// GC is about to collect `victim`: its flags completed with one IP read at most (L1274).
    pub fn validate(&mut self, ctx: &mut FlashCtx, bm: &mut BlockManager, victim: BlockId) -> Result<(), SimError> {
        let (ilog, mut store) = self.store(ctx, bm);
        ilog.validate(victim, &mut store)
    }

    /// GC moves the IP at `src` (spare area `oob`) off its victim into the open IP block,
    /// through the controller; its new page.
    pub fn relocate(&mut self, ctx: &mut FlashCtx, bm: &mut BlockManager, src: Ppn, oob: Oob) -> Result<Ppn, SimError> {
        debug_assert_eq!(oob.kind, PageKind::Log);
        // GC moving an IP frees its victim's block: it may take a plane's last one.
        let dst = bm.allocate(ctx.flash(), ip_plane(bm, ctx.flash(), self.stream).0, self.stream)?;
        ctx.copy(src, dst, false)?;
        ctx.invalidate(src)?;
        bm.on_invalidate(ctx.flash(), src);
        self.ilog.ip_moved(oob.lpn, dst);
        // The old copy's content stays until its erase: a cut tearing the new one leaves it
        // the newest readable copy.
        let blocks = self.contents.get(&src).expect("an IP's content").clone();
        self.contents.insert(dst, blocks);
        Ok(dst)
    }

    /// Block `b` was erased: its pages flag nothing, an IP it held is gone, its BIF starts anew.
    pub fn erased(&mut self, b: BlockId) {
        let first = self.geo.first_page(b);
        let pages = first..first + self.geo.pages_per_block;
        self.invalidated_at[pages.start as usize..pages.end as usize].fill(0);
        let ips: Vec<Ppn> = self.contents.range(pages).map(|(&p, _)| p).collect();
        for p in ips {
            self.contents.remove(&p);
        }
        self.ilog.erased(b);
    }

    /// Recovery's block rebuild erased the blocks left without a valid page: each starts anew,
    /// as after GC's erase (else a BIF restored for it, written back later, would flag the
    /// pages programmed there since).
    pub fn rebuilt(&mut self, flash: &FlashArray) {
        for b in 0..self.geo.blocks() {
            if flash.write_pointer(b) == 0 {
                self.erased(b);
            }
        }
    }

    /// Whether block `b`'s first page is an IP (so the block is one of ILog's).
    pub fn is_ip_block(flash: &FlashArray, b: BlockId) -> bool {
        matches!(flash.read(flash.geometry().first_page(b)), Ok(o) if o.kind == PageKind::Log)
    }

    /// Recovery, Fig. 8.4 lines 13-21 (Fig. 8.6 alike): every page of the IP blocks read; the
    /// newest copy of each LIPN, oldest first.
    pub fn read_ips(&self, ctx: &mut FlashCtx) -> Vec<FoundIp> {
        let mut newest: BTreeMap<u32, FoundIp> = BTreeMap::new();
        for b in 0..self.geo.blocks() {
            if !Self::is_ip_block(ctx.flash(), b) {
                continue;
            }
            let first = self.geo.first_page(b);
            for off in 0..ctx.flash().write_pointer(b) {
                let p = first + off;
                let Some(oob) = ctx.read_spare(p) else { continue };
                let found = FoundIp { lipn: oob.lpn, ppn: p, stamp: ctx.flash().stamp(p) };
                let e = newest.entry(oob.lpn).or_insert(found);
                if found.stamp > e.stamp {
                    *e = found;
                }
            }
        }
        let mut ips: Vec<FoundIp> = newest.into_values().collect();
        ips.sort_by_key(|ip| ip.stamp);
        ips
    }

    /// Whether `ip`'s BIF of block `b` can be trusted: the block was programmed before the IP
    /// and not erased since (L1280's BSN rule).
    fn trusted(flash: &FlashArray, ip: &FoundIp, b: BlockId) -> bool {
        let first = flash.geometry().first_page(b);
        flash.write_pointer(b) > 0 && flash.read(first).is_ok() && flash.stamp(first) < ip.stamp
    }

    /// Mark in `skip` the pages of block `b` that `ip`'s copy of its BIF flags invalid:
    /// invalidated and programmed before the IP was.
    pub fn mark_flagged(&self, flash: &FlashArray, ip: &FoundIp, b: BlockId, skip: &mut Bits) {
        if !Self::trusted(flash, ip, b) {
            return;
        }
        let first = self.geo.first_page(b);
        for p in first..first + flash.write_pointer(b) {
            let at = self.invalidated_at[p as usize];
            if at != 0 && at < ip.stamp && flash.read(p).is_ok() && flash.stamp(p) < ip.stamp {
                skip.set(p, true);
            }
        }
    }

    /// The blocks whose BIFs `ip` holds.
    pub fn blocks_of(&self, ip: &FoundIp) -> &[BlockId] {
        self.contents.get(&ip.ppn).map_or(&[][..], |v| &v[..])
    }

    /// Recovery: the BIFT and IPT rebuilt from the IPs found (oldest first), each holding the
    /// BIFs it can be trusted for; the IP pages valid again.
    pub fn restore(&mut self, ctx: &mut FlashCtx, ips: &[FoundIp]) -> Result<(), SimError> {
        for ip in ips {
            ctx.revalidate(ip.ppn)?;
            let trusted: Vec<BlockId> =
                self.blocks_of(ip).iter().copied().filter(|&b| Self::trusted(ctx.flash(), ip, b)).collect();
            self.ilog.restore(ip.lipn, ip.ppn, &trusted);
        }
        Ok(())
    }

    /// The IPs the IPT locates are valid IP pages of their LIPN; their number.
    pub fn check_invariants(&self, flash: &FlashArray) -> u64 {
        let mut ips = 0;
        for (lipn, p) in self.ilog.ip_pages() {
            assert!(flash.is_valid(p), "IP {lipn} at page {p}, not valid");
            let oob = flash.read(p).expect("an IP page is readable");
            assert_eq!((oob.kind, oob.lpn), (PageKind::Log, lipn), "page {p} is not IP {lipn}");
            assert!(self.contents.contains_key(&p), "IP {lipn} at page {p} has no recorded content");
            ips += 1;
        }
        ips
    }

    /// ILog's traffic by name (docs/metrics.md), Table 8.2's ratios among them.
    pub fn put_metrics(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let c = &self.ilog.counts;
        let per = |x: u64| if c.invalidations > 0 { x as f64 / c.invalidations as f64 } else { 0.0 };
        m.insert("ilog_invalidations".into(), c.invalidations.into());
        m.insert("ilog_ip_reads_invalidation".into(), c.ip_reads_invalidation.into());
        m.insert("ilog_ip_reads_validation".into(), c.ip_reads_validation.into());
        m.insert("ilog_ip_writes".into(), c.ip_writes.into());
        m.insert("ilog_ip_reads_per_invalidation".into(), per(c.ip_reads_invalidation).into());
        m.insert("ilog_ip_writes_per_invalidation".into(), per(c.ip_writes).into());
        m.insert("ilog_dropped_bifs".into(), c.dropped_bifs.into());
        m.insert("ilog_bifq_misses".into(), c.bifq_misses.into());
        m.insert("ilog_bifq_capacity".into(), self.ilog.bifq_capacity().into());
        m.insert("ilog_deferred_write_backs".into(), c.deferred_write_backs.into());
    }
}
