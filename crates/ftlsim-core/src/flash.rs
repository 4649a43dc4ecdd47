//! The NAND flash array: page and block state as struct-of-arrays, enforcing NAND rules.
//!
//! What it models: every page's out-of-band (OOB) payload (owner LPN, data version, page
//! kind), validity, consecutive copy-back count and torn/wasted marks; every block's write
//! pointer, valid count, erase (P/E) count, open sequence number and reliability (BER) class;
//! with the reliability model on, every page's copy-back quota spent (`crate::reliability`).
//! The "data" of a page is the version number the host wrote, which lets
//! tests check that every read returns the newest version.
//!
//! Rules enforced in release builds too (each returns a [`FlashError`]):
//! - program only erased pages, in page order within a block (pages may be skipped forward
//!   with [`FlashArray::skip_to`]; skipped pages are counted as wasted);
//! - erase whole blocks, and never one that still holds valid pages;
//! - copy-back only within one plane and, with the same-parity rule on, between pages whose
//!   indices within their blocks have equal parity;
//! - read only pages that hold data;
//! - with the reliability model on, copy-back only what the page's quota and the source
//!   block's copyback threshold allow (seed 003 Table I).
//!
//! Power loss ([`FlashArray::arm_power_cut`]): the cut lands on one program, copy-back or
//! erase in the order the controller issues them; that operation is torn (a torn page, or
//! a block whose erase was cut, reads as unreadable and takes no program until erased) and
//! every later one fails with [`FlashError::PowerLost`]. [`FlashArray::restart`] then drops
//! what lives in controller memory (which pages are valid) and keeps what lives on flash:
//! pages' OOB, write pointers, erase counts and block sequence numbers. Recovery
//! re-validates pages with [`FlashArray::revalidate`].

use crate::address_map::FastDiv;
use crate::big_array;
use crate::error::FlashError;
use crate::geometry::{BlockId, Geometry, Lpn, PlaneId, Ppn, NONE};
use crate::reliability::ReliabilityModel;
use serde::{Deserialize, Serialize};

/// What a page holds; stored in its OOB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PageKind {
    /// Host data.
    Data = 0,
    /// A translation (mapping) page.
    Translation = 1,
    /// A log page (e.g. an invalidation log).
    Log = 2,
    /// Other FTL metadata.
    Meta = 3,
    /// Host data logged in a staging area before it reaches its home (WAFTL's Buffer Zone):
    /// recovery tells it from data at home by this kind.
    Staged = 4,
}

impl PageKind {
    fn from_bits(b: u8) -> PageKind {
        match b & KIND_MASK {
            0 => PageKind::Data,
            1 => PageKind::Translation,
            2 => PageKind::Log,
            3 => PageKind::Meta,
            _ => PageKind::Staged,
        }
    }
}

const KIND_MASK: u8 = 0b0000_0111;
const WRITTEN: u8 = 0b0000_1000;
const WASTED: u8 = 0b0001_0000;
const TORN: u8 = 0b0010_0000;

/// The OOB payload of a programmed page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oob {
    /// Owner logical page (or translation page number for translation pages).
    pub lpn: Lpn,
    /// Data version written by the host (the page's content in this model).
    pub version: u32,
    /// What the page holds.
    pub kind: PageKind,
}

/// Bytes of the OOB payload every page carries: LPN (4), version/sequence (4), kind (1).
pub const OOB_BASE_BYTES: u32 = 9;

/// Page and block state of the whole array.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlashArray {
    geo: Geometry,
    /// Pages per block and per plane as dividers (a division per page operation otherwise).
    per_block: FastDiv,
    per_plane: FastDiv,
    copyback_same_parity: bool,
    // Per page.
    #[serde(deserialize_with = "big_array::deserialize")]
    page_lpn: Vec<Lpn>,
    #[serde(deserialize_with = "big_array::deserialize")]
    page_version: Vec<u32>,
    #[serde(deserialize_with = "big_array::deserialize")]
    page_flags: Vec<u8>,
    #[serde(deserialize_with = "big_array::deserialize")]
    page_copybacks: Vec<u8>,
    #[serde(deserialize_with = "big_array::deserialize")]
    valid_bits: Vec<u64>,
    // Per block.
    write_ptr: Vec<u16>,
    valid_count: Vec<u16>,
    erase_count: Vec<u32>,
    open_seq: Vec<u64>,
    reliability_class: Vec<u8>,
    /// The reliability model, and per page the copy-back quota its data has spent since its
    /// last host write or off-chip copy (empty when the model is off).
    reliability: Option<ReliabilityModel>,
    #[serde(deserialize_with = "big_array::deserialize")]
    page_quota_spent: Vec<u16>,
    // Per plane.
    plane_programs: Vec<u64>,
    /// Blocks whose write pointer is 0 (erased, none of their pages programmed or skipped).
    plane_erased: Vec<u32>,
    next_seq: u64,
    wasted_pages: u64,
    /// Per page, the program stamp written in its spare area (the thesis's PSN, seed 001
    /// Fig. 8.1): the count of pages programmed before it, plus one. Kept only when
    /// [`FlashArray::keep_program_stamps`] asked for it (runs with power cuts): four bytes a page.
    #[serde(deserialize_with = "big_array::deserialize")]
    page_stamp: Vec<u32>,
    stamp_clock: u32,
    /// Programs, copy-backs and erases since the array was built (the power-cut clock).
    #[serde(skip)]
    mutations: u64,
    /// The mutation the armed power cut tears (`u64::MAX`: none armed); the ones after it
    /// fail until [`FlashArray::restart`].
    #[serde(skip, default = "no_cut")]
    power_cut_at: u64,
    /// The operation the last power cut tore, and what a torn program was writing.
    #[serde(skip)]
    torn_op: Option<TornOp>,
    #[serde(skip)]
    torn_kind: Option<PageKind>,
}

fn no_cut() -> u64 {
    u64::MAX
}

/// The kind of operation a power cut tore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TornOp {
    /// A page program from the controller.
    Program,
    /// An intra-plane copy-back (its destination page is torn).
    Copyback,
    /// A block erase (every page of the block is torn).
    Erase,
}

impl FlashArray {
    /// A fully erased array.
    pub fn new(geo: &Geometry, copyback_same_parity: bool) -> FlashArray {
        let pages = geo.pages() as usize;
        let blocks = geo.blocks() as usize;
        FlashArray {
            geo: geo.clone(),
            per_block: FastDiv::new(geo.pages_per_block),
            per_plane: FastDiv::new(geo.pages_per_plane()),
            copyback_same_parity,
            page_lpn: big_array::filled(pages, NONE),
            page_version: big_array::filled(pages, 0),
            page_flags: big_array::filled(pages, 0),
            page_copybacks: big_array::filled(pages, 0),
            valid_bits: big_array::filled(pages.div_ceil(64), 0),
            write_ptr: vec![0; blocks],
            valid_count: vec![0; blocks],
            erase_count: vec![0; blocks],
            open_seq: vec![0; blocks],
            reliability_class: vec![0; blocks],
            reliability: None,
            page_quota_spent: Vec::new(),
            plane_programs: vec![0; geo.planes() as usize],
            plane_erased: vec![geo.blocks_per_plane; geo.planes() as usize],
            next_seq: 1,
            wasted_pages: 0,
            page_stamp: Vec::new(),
            stamp_clock: 0,
            mutations: 0,
            power_cut_at: no_cut(),
            torn_op: None,
            torn_kind: None,
        }
    }

    /// The erased array of `cfg`'s drive: its geometry, NAND rules and, with `[reliability]`,
    /// the reliability model with each block's class drawn.
    pub fn for_config(cfg: &crate::config::DriveConfig) -> Result<FlashArray, crate::error::ConfigError> {
        let mut flash = FlashArray::new(&cfg.geometry, cfg.nand.copyback_same_parity);
        if let Some(r) = &cfg.reliability {
            let model = ReliabilityModel::new(r)?;
            let classes = crate::reliability::assign_classes(cfg.geometry.blocks(), r.class_shares, r.seed);
            flash.enable_reliability(model, classes);
        }
        Ok(flash)
    }

    /// The geometry this array was built with.
    #[inline]
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// Whether the same-parity copy-back rule is on.
    pub fn copyback_same_parity(&self) -> bool {
        self.copyback_same_parity
    }

    fn check_ppn(&self, ppn: Ppn) -> Result<(), FlashError> {
        if ppn as usize >= self.page_lpn.len() {
            return Err(FlashError::OutOfRange { addr: ppn });
        }
        Ok(())
    }

    /// Is the page valid (holding the live copy of its LPN)?
    #[inline]
    pub fn is_valid(&self, ppn: Ppn) -> bool {
        self.valid_bits[(ppn / 64) as usize] & (1u64 << (ppn % 64)) != 0
    }

    /// Program an erased page at the block's write pointer.
    pub fn program(&mut self, ppn: Ppn, oob: Oob) -> Result<(), FlashError> {
        self.program_inner(ppn, oob, 0, 0)
    }

    fn program_inner(&mut self, ppn: Ppn, oob: Oob, copybacks: u8, quota_spent: u16) -> Result<(), FlashError> {
        self.check_ppn(ppn)?;
        let cut = self.power_check()?;
        let block = self.per_block.quotient(ppn) as usize;
        let idx = self.per_block.remainder(ppn);
        if self.page_flags[ppn as usize] & (WRITTEN | WASTED | TORN) != 0 {
            return Err(FlashError::ProgramNotErased { ppn });
        }
        let wp = u32::from(self.write_ptr[block]);
        if idx != wp {
            return Err(FlashError::ProgramOutOfOrder { ppn, write_pointer: wp });
        }
        if wp == 0 {
            self.open_seq[block] = self.next_seq;
            self.next_seq += 1;
            self.plane_erased[self.per_plane.quotient(ppn) as usize] -= 1;
        }
        self.write_ptr[block] = (wp + 1) as u16;
        let p = ppn as usize;
        if cut {
            // The program was cut: the page is consumed but holds nothing readable.
            self.page_flags[p] = TORN;
            self.torn_op = Some(if copybacks > 0 { TornOp::Copyback } else { TornOp::Program });
            self.torn_kind = Some(oob.kind);
            return Err(FlashError::PowerLost);
        }
        if !self.page_stamp.is_empty() {
            self.stamp_clock = self.stamp_clock.checked_add(1).ok_or(FlashError::StampOverflow)?;
            self.page_stamp[p] = self.stamp_clock;
        }
        self.page_lpn[p] = oob.lpn;
        self.page_version[p] = oob.version;
        self.page_flags[p] = WRITTEN | oob.kind as u8;
        self.page_copybacks[p] = copybacks;
        if !self.page_quota_spent.is_empty() {
            self.page_quota_spent[p] = quota_spent;
        }
        self.valid_bits[p / 64] |= 1u64 << (p % 64);
        self.valid_count[block] += 1;
        self.plane_programs[self.per_plane.quotient(ppn) as usize] += 1;
        debug_assert!(u32::from(self.valid_count[block]) <= self.geo.pages_per_block);
        Ok(())
    }

    /// Skip a block's write pointer forward to page index `new_wp` (at most pages per
    /// block), wasting the pages in between. Returns how many pages were wasted.
    pub fn skip_to(&mut self, block: BlockId, new_wp: u32) -> Result<u32, FlashError> {
        if block >= self.geo.blocks() || new_wp > self.geo.pages_per_block {
            return Err(FlashError::OutOfRange { addr: self.geo.first_page(block.min(self.geo.blocks())) + new_wp });
        }
        let b = block as usize;
        let wp = u32::from(self.write_ptr[b]);
        if new_wp < wp {
            return Err(FlashError::ProgramOutOfOrder { ppn: self.geo.first_page(block) + new_wp, write_pointer: wp });
        }
        let first = self.geo.first_page(block);
        for i in wp..new_wp {
            self.page_flags[(first + i) as usize] = WASTED;
        }
        if wp == 0 && new_wp > 0 {
            self.open_seq[b] = self.next_seq;
            self.next_seq += 1;
            self.plane_erased[self.geo.plane_of_block(block) as usize] -= 1;
        }
        self.write_ptr[b] = new_wp as u16;
        self.wasted_pages += u64::from(new_wp - wp);
        Ok(new_wp - wp)
    }

    /// Read a page's OOB and data.
    pub fn read(&self, ppn: Ppn) -> Result<Oob, FlashError> {
        self.check_ppn(ppn)?;
        let p = ppn as usize;
        let f = self.page_flags[p];
        if f & WRITTEN == 0 || f & TORN != 0 {
            return Err(FlashError::ReadUnwritten { ppn });
        }
        Ok(Oob { lpn: self.page_lpn[p], version: self.page_version[p], kind: PageKind::from_bits(f) })
    }

    /// Intra-plane copy-back of `src` into the erased page `dst`; `src` stays valid (the FTL
    /// invalidates it once its mapping points at `dst`).
    pub fn copyback(&mut self, src: Ppn, dst: Ppn) -> Result<(), FlashError> {
        self.check_ppn(src)?;
        self.check_ppn(dst)?;
        if self.geo.plane_of(src) != self.geo.plane_of(dst) {
            return Err(FlashError::CopybackCrossPlane { src, dst });
        }
        if self.copyback_same_parity && self.geo.page_in_block(src) % 2 != self.geo.page_in_block(dst) % 2 {
            return Err(FlashError::CopybackParity { src, dst });
        }
        let oob = self.read(src)?;
        let count = self.page_copybacks[src as usize].saturating_add(1);
        let spent = match self.copyback_deduction(src) {
            None => 0,
            Some(Err(e)) => return Err(e),
            Some(Ok(d)) => self.page_quota_spent[src as usize] + d,
        };
        self.program_inner(dst, oob, count, spent)
    }

    /// With the reliability model on, the quota a copy-back of `src` spends, or why it may
    /// not run.
    fn copyback_deduction(&self, src: Ppn) -> Option<Result<u16, FlashError>> {
        let m = self.reliability.as_ref()?;
        let b = self.per_block.quotient(src) as usize;
        let left = m.q_init() - self.page_quota_spent[src as usize];
        Some(match m.deduction(self.reliability_class[b], m.pe(self.erase_count[b])) {
            Some(d) if d <= left => Ok(d),
            d => Err(FlashError::CopybackQuota { src, deduction: d.unwrap_or(0), left }),
        })
    }

    /// Whether a copy-back of `src` is allowed now (always, with the reliability model off).
    pub fn copyback_allowed(&self, src: Ppn) -> bool {
        !matches!(self.copyback_deduction(src), Some(Err(_)))
    }

    /// Turn the reliability model on: `classes` per block (0 best .. 2 worst), every page's
    /// quota whole.
    pub fn enable_reliability(&mut self, model: ReliabilityModel, classes: Vec<u8>) {
        assert_eq!(classes.len(), self.reliability_class.len(), "a class per block");
        self.reliability_class = classes;
        self.page_quota_spent = big_array::filled(self.page_lpn.len(), 0);
        self.reliability = Some(model);
    }

    /// The reliability model, when on.
    pub fn reliability(&self) -> Option<&ReliabilityModel> {
        self.reliability.as_ref()
    }

    /// Copy-back quota the data of `ppn` has spent since its last host write or off-chip
    /// copy (0 with the model off).
    pub fn quota_spent(&self, ppn: Ppn) -> u16 {
        self.page_quota_spent.get(ppn as usize).copied().unwrap_or(0)
    }

    /// P/E cycles of `block`: the run's starting wear plus its erases (the erases alone with
    /// the model off).
    pub fn pe_cycles(&self, block: BlockId) -> u32 {
        let e = self.erase_count[block as usize];
        self.reliability.as_ref().map_or(e, |m| m.pe(e))
    }

    /// Prefetch what [`FlashArray::invalidate`] of `ppn` touches (a hint).
    #[inline]
    pub fn prefetch_page_state(&self, ppn: Ppn) {
        big_array::prefetch(&self.valid_bits, (ppn / 64) as usize);
        big_array::prefetch(&self.valid_count, self.per_block.quotient(ppn) as usize);
    }

    /// Mark a valid page invalid (its LPN now lives elsewhere or was trimmed).
    pub fn invalidate(&mut self, ppn: Ppn) -> Result<(), FlashError> {
        self.check_ppn(ppn)?;
        if !self.is_valid(ppn) {
            return Err(FlashError::InvalidateInvalid { ppn });
        }
        let p = ppn as usize;
        self.valid_bits[p / 64] &= !(1u64 << (p % 64));
        let block = self.per_block.quotient(ppn) as usize;
        self.valid_count[block] -= 1;
        Ok(())
    }

    /// Erase a block that holds no valid page.
    pub fn erase(&mut self, block: BlockId) -> Result<(), FlashError> {
        if block >= self.geo.blocks() {
            return Err(FlashError::OutOfRange { addr: block });
        }
        let b = block as usize;
        if self.valid_count[b] != 0 {
            return Err(FlashError::EraseValidPages { block, valid: u32::from(self.valid_count[b]) });
        }
        let first = self.geo.first_page(block) as usize;
        let ppb = self.geo.pages_per_block as usize;
        let plane = self.geo.plane_of_block(block) as usize;
        if self.power_check()? {
            // An erase cut part-way: every page unreadable, the block unusable until erased.
            self.page_flags[first..first + ppb].fill(TORN);
            if self.write_ptr[b] == 0 {
                self.plane_erased[plane] -= 1;
            }
            self.write_ptr[b] = ppb as u16;
            self.erase_count[b] += 1;
            self.torn_op = Some(TornOp::Erase);
            return Err(FlashError::PowerLost);
        }
        self.page_flags[first..first + ppb].fill(0);
        self.page_lpn[first..first + ppb].fill(NONE);
        self.page_copybacks[first..first + ppb].fill(0);
        if self.write_ptr[b] != 0 {
            self.plane_erased[plane] += 1;
        }
        self.write_ptr[b] = 0;
        self.erase_count[b] += 1;
        Ok(())
    }

    /// Whether the next mutation goes ahead (`false`), is the one the armed cut tears
    /// (`true`), or fails because the power is already gone. One comparison when no cut is
    /// armed (programs and erases are hot).
    #[inline]
    fn power_check(&mut self) -> Result<bool, FlashError> {
        let n = self.mutations;
        if n < self.power_cut_at {
            self.mutations += 1;
            return Ok(false);
        }
        if n == self.power_cut_at {
            self.mutations += 1;
            return Ok(true);
        }
        Err(FlashError::PowerLost)
    }

    /// Cut the power at the `after`-th program, copy-back or erase from now (0: the next
    /// one), which is torn.
    pub fn arm_power_cut(&mut self, after: u64) {
        self.power_cut_at = self.mutations + after;
    }

    /// Programs, copy-backs and erases so far (the clock [`FlashArray::arm_power_cut`]
    /// counts in).
    pub fn mutations(&self) -> u64 {
        self.mutations
    }

    /// The operation the last power cut tore, if a cut happened.
    pub fn torn_op(&self) -> Option<TornOp> {
        self.torn_op
    }

    /// What the program or copy-back the last power cut tore was writing.
    pub fn torn_kind(&self) -> Option<PageKind> {
        self.torn_kind
    }

    /// Power comes back: what lived in controller memory is gone (every page's validity;
    /// copy-back quotas are kept, as a drive keeps them with its block metadata), flash
    /// contents stay, and an armed cut that did not happen is disarmed.
    pub fn restart(&mut self) {
        self.valid_bits.fill(0);
        self.valid_count.fill(0);
        self.power_cut_at = no_cut();
    }

    /// Recovery found `ppn` to hold the live copy of its logical page.
    pub fn revalidate(&mut self, ppn: Ppn) -> Result<(), FlashError> {
        self.read(ppn)?;
        let p = ppn as usize;
        assert!(!self.is_valid(ppn), "recovery revalidated page {ppn} twice");
        self.valid_bits[p / 64] |= 1u64 << (p % 64);
        self.valid_count[self.per_block.quotient(ppn) as usize] += 1;
        Ok(())
    }

    /// Stamp every page programmed from now on in its spare area ([`FlashArray::stamp`]); call
    /// before the first program (pages programmed earlier read as stamp 0).
    pub fn keep_program_stamps(&mut self) {
        if self.page_stamp.is_empty() {
            self.page_stamp = big_array::filled(self.geo.pages() as usize, 0);
        }
    }

    /// Whether pages carry program stamps.
    pub fn keeps_program_stamps(&self) -> bool {
        !self.page_stamp.is_empty()
    }

    /// The stamp of the page programmed last (0 before any, or without stamps): every page
    /// programmed later has a higher one.
    pub fn stamp_clock(&self) -> u32 {
        self.stamp_clock
    }

    /// The program stamp in a written page's spare area (recovery reads it with the page).
    pub fn stamp(&self, ppn: Ppn) -> u32 {
        self.page_stamp.get(ppn as usize).copied().unwrap_or(0)
    }

    /// Pages torn by power cuts and not erased since (unreadable).
    pub fn torn_pages(&self) -> u64 {
        self.page_flags.iter().filter(|&&f| f & TORN != 0).count() as u64
    }

    /// Whether a page is torn (a program or erase cut by power loss).
    pub fn is_torn(&self, ppn: Ppn) -> bool {
        self.page_flags[ppn as usize] & TORN != 0
    }

    /// Mark a page torn: a program cut by power loss. It reads as unwritten and cannot be
    /// programmed until its block is erased.
    pub fn tear(&mut self, ppn: Ppn) -> Result<(), FlashError> {
        self.check_ppn(ppn)?;
        if self.is_valid(ppn) {
            self.invalidate(ppn)?;
        }
        self.page_flags[ppn as usize] |= TORN;
        Ok(())
    }

    /// Ask the CPU to bring the OOB and flags of `block`'s first `pages` pages into cache at
    /// once: GC is about to read them page by page (with it, `GcJob::step` and its prefetches
    /// took 9.2% of the benchmark's replay samples instead of 10.4%). A hint only.
    pub fn prefetch_oob(&self, block: BlockId, pages: u32) {
        let (first, n) = (self.geo.first_page(block) as usize, pages as usize);
        big_array::prefetch_range(&self.page_lpn, first, n);
        big_array::prefetch_range(&self.page_version, first, n);
        big_array::prefetch_range(&self.page_flags, first, n);
    }

    /// Owner LPN in a page's OOB without checks (a hint; [`FlashArray::read`] checks).
    #[inline]
    pub fn owner(&self, ppn: Ppn) -> Lpn {
        self.page_lpn[ppn as usize]
    }

    /// Next programmable page index of a block.
    #[inline]
    pub fn write_pointer(&self, block: BlockId) -> u32 {
        u32::from(self.write_ptr[block as usize])
    }
    /// Valid pages in a block.
    #[inline]
    pub fn valid_count(&self, block: BlockId) -> u32 {
        u32::from(self.valid_count[block as usize])
    }
    /// P/E cycles of a block.
    #[inline]
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.erase_count[block as usize]
    }
    /// Sequence number given to the block when its first page was programmed (0 = never).
    #[inline]
    pub fn open_seq(&self, block: BlockId) -> u64 {
        self.open_seq[block as usize]
    }
    /// Consecutive copy-backs the page's data has been through (rcFTL).
    #[inline]
    pub fn copyback_count(&self, ppn: Ppn) -> u8 {
        self.page_copybacks[ppn as usize]
    }
    /// Whether a page was skipped (wasted).
    pub fn is_wasted(&self, ppn: Ppn) -> bool {
        self.page_flags[ppn as usize] & WASTED != 0
    }
    /// Reliability (BER) class of a block.
    pub fn reliability_class(&self, block: BlockId) -> u8 {
        self.reliability_class[block as usize]
    }
    /// Pages programmed per plane (host, GC and mapping together).
    pub fn plane_programs(&self) -> &[u64] {
        &self.plane_programs
    }
    /// Erased blocks per plane: blocks none of whose pages has been programmed (or skipped)
    /// since their last erase, free or just opened.
    pub fn erased_blocks(&self) -> &[u32] {
        &self.plane_erased
    }
    /// Pages wasted by skipping.
    pub fn wasted_pages(&self) -> u64 {
        self.wasted_pages
    }
    /// Erase counts of all blocks.
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    /// Check an OOB payload size against the usable spare bytes.
    pub fn check_oob_payload(&self, bytes: u32) -> Result<(), FlashError> {
        let usable = self.geo.spare_usable_bytes;
        if bytes > usable {
            return Err(FlashError::OobTooLarge { bytes, usable });
        }
        Ok(())
    }
    /// Valid pages of a block, in page order.
    pub fn valid_pages(&self, block: BlockId) -> impl Iterator<Item = Ppn> + '_ {
        let first = self.geo.first_page(block);
        (first..first + self.write_pointer(block)).filter(move |&p| self.is_valid(p))
    }
    /// Blocks of a plane.
    pub fn blocks_of(&self, plane: PlaneId) -> std::ops::Range<BlockId> {
        let first = self.geo.first_block(plane);
        first..first + self.geo.blocks_per_plane
    }

    /// Whole-state check (tests and debug builds): counts agree with bits, valid pages lie
    /// below the write pointer, erased pages above it hold nothing.
    pub fn check_invariants(&self) {
        let ppb = self.geo.pages_per_block;
        assert_eq!(u32::from(self.per_block), ppb, "block divider disagrees with the geometry");
        assert_eq!(u32::from(self.per_plane), self.geo.pages_per_plane(), "plane divider disagrees with the geometry");
        for p in 0..self.geo.planes() {
            let erased = self.blocks_of(p).filter(|&b| self.write_pointer(b) == 0).count() as u32;
            assert_eq!(
                self.plane_erased[p as usize], erased,
                "plane {p}: erased-block count disagrees with the write pointers"
            );
        }
        for b in 0..self.geo.blocks() {
            let wp = self.write_pointer(b);
            assert!(wp <= ppb, "block {b}: write pointer {wp} > pages per block {ppb}");
            let first = self.geo.first_page(b);
            let mut valid = 0;
            for i in 0..ppb {
                let p = first + i;
                let f = self.page_flags[p as usize];
                if self.is_valid(p) {
                    valid += 1;
                    assert!(i < wp, "block {b}: valid page {i} at or above write pointer {wp}");
                    assert!(f & WRITTEN != 0, "page {p}: valid but not written");
                }
                if i >= wp {
                    assert_eq!(f, 0, "page {p}: above write pointer {wp} but flags {f:#x}");
                }
            }
            assert_eq!(valid, self.valid_count(b), "block {b}: valid count disagrees with bitmap");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block: 8,
            page_size_bytes: 4096,
            spare_bytes_per_page: 128,
            spare_usable_bytes: 16,
        }
    }

    /// A page moved by copy-back block to block until the reliability model refuses: a block
    /// of class `class` at `pe` cycles allows CT consecutive copy-backs (Table I), an off-chip
    /// program restores the whole quota, and mixed sources spend Q_init / CT each.
    #[test]
    fn the_reliability_model_refuses_the_copy_back_past_a_pages_quota() {
        use crate::reliability::{ReliabilityConfig, ReliabilityModel};
        let oob = Oob { lpn: 1, version: 1, kind: PageKind::Data };
        for (pe, classes, allowed) in [(0, [1u8; 8], 5), (0, [2u8; 8], 3), (2000, [0u8; 8], 4), (4500, [2u8; 8], 0)] {
            let mut f = FlashArray::new(&geo(), false);
            let m = ReliabilityModel::new(&ReliabilityConfig { pe_cycles: pe, ..Default::default() }).unwrap();
            f.enable_reliability(m, classes.to_vec());
            assert_eq!(f.pe_cycles(0), pe);
            // Blocks 0-3 are plane 0: hop between them, one page each.
            f.program(0, oob).unwrap();
            let mut src = 0;
            let mut moves = 0;
            for hop in 1..8u32 {
                let dst = (hop % 4) * 8 + hop / 4;
                if !f.copyback_allowed(src) {
                    let e = f.copyback(src, dst).unwrap_err();
                    assert!(matches!(e, FlashError::CopybackQuota { .. }), "{e}");
                    break;
                }
                f.copyback(src, dst).unwrap();
                assert_eq!(f.copyback_count(dst), hop as u8);
                src = dst;
                moves += 1;
            }
            assert_eq!(moves, allowed, "pe {pe}, class {}", classes[0]);
        }
        // Mixed: a best block (12 of 60) then worst ones (20 each): 12 + 20 + 20 = 52, a
        // fourth from a worst block would need 20 of the 8 left.
        let mut f = FlashArray::new(&geo(), false);
        let m = ReliabilityModel::new(&ReliabilityConfig::default()).unwrap();
        f.enable_reliability(m, vec![0, 2, 2, 2, 0, 0, 0, 0]);
        f.program(0, oob).unwrap();
        f.copyback(0, 8).unwrap();
        f.copyback(8, 16).unwrap();
        f.copyback(16, 24).unwrap();
        assert_eq!(f.quota_spent(24), 52);
        assert!(!f.copyback_allowed(24));
        assert!(f.copyback(24, 9).is_err());
        // An off-chip copy (read, ECC, program) gives the quota back.
        let o = f.read(24).unwrap();
        f.program(9, o).unwrap();
        assert_eq!((f.quota_spent(9), f.copyback_count(9)), (0, 0));
        assert!(f.copyback_allowed(9));
    }
    fn data(lpn: u32, version: u32) -> Oob {
        Oob { lpn, version, kind: PageKind::Data }
    }

    #[test]
    fn erased_blocks_are_counted_per_plane_through_programs_skips_erases_and_torn_erases() {
        let mut f = FlashArray::new(&geo(), false);
        assert_eq!(f.erased_blocks(), &[4, 4]);
        f.program(0, data(1, 1)).unwrap();
        f.program(1, data(2, 1)).unwrap();
        f.skip_to(1, 3).unwrap();
        f.copyback(0, 16).unwrap();
        assert_eq!(f.erased_blocks(), &[1, 4], "blocks 0-2 of plane 0 opened (program, skip, copy-back)");
        f.invalidate(0).unwrap();
        f.invalidate(1).unwrap();
        f.erase(0).unwrap();
        f.erase(3).unwrap();
        assert_eq!(f.erased_blocks(), &[2, 4], "erasing an erased block changes nothing");
        f.arm_power_cut(0);
        assert_eq!(f.erase(3), Err(FlashError::PowerLost));
        assert_eq!(f.erased_blocks(), &[1, 4], "a torn erase leaves its block unusable");
        f.check_invariants();
    }

    #[test]
    fn program_in_order_only() {
        let mut f = FlashArray::new(&geo(), false);
        f.program(0, data(7, 1)).unwrap();
        assert_eq!(f.program(0, data(7, 2)), Err(FlashError::ProgramNotErased { ppn: 0 }));
        assert_eq!(f.program(2, data(7, 2)), Err(FlashError::ProgramOutOfOrder { ppn: 2, write_pointer: 1 }));
        f.program(1, data(8, 1)).unwrap();
        assert_eq!(f.read(1).unwrap(), data(8, 1));
        assert_eq!(f.read(2), Err(FlashError::ReadUnwritten { ppn: 2 }));
        assert_eq!(f.valid_count(0), 2);
        f.check_invariants();
    }

    #[test]
    fn erase_requires_no_valid_pages_and_resets() {
        let mut f = FlashArray::new(&geo(), false);
        f.program(8, data(1, 1)).unwrap();
        assert_eq!(f.erase(1), Err(FlashError::EraseValidPages { block: 1, valid: 1 }));
        f.invalidate(8).unwrap();
        assert_eq!(f.invalidate(8), Err(FlashError::InvalidateInvalid { ppn: 8 }));
        f.erase(1).unwrap();
        assert_eq!(f.erase_count(1), 1);
        assert_eq!(f.write_pointer(1), 0);
        f.program(8, data(1, 2)).unwrap();
        f.check_invariants();
    }

    #[test]
    fn copyback_stays_in_plane_and_keeps_parity() {
        let mut f = FlashArray::new(&geo(), true);
        f.program(0, data(3, 9)).unwrap();
        f.program(1, data(4, 9)).unwrap();
        // Plane 1 starts at page 32.
        assert_eq!(f.copyback(0, 32), Err(FlashError::CopybackCrossPlane { src: 0, dst: 32 }));
        // Block 1 (page 8..16): page 8 is even, page index 0; src page 1 is odd.
        assert_eq!(f.copyback(1, 8), Err(FlashError::CopybackParity { src: 1, dst: 8 }));
        f.copyback(0, 8).unwrap();
        assert_eq!(f.skip_to(1, 2).unwrap(), 1);
        assert!(f.skip_to(1, 1).is_err());
        assert!(f.is_wasted(9));
        assert_eq!(f.wasted_pages(), 1);
        f.copyback(8, 10).unwrap();
        assert_eq!(f.read(10).unwrap(), data(3, 9));
        assert_eq!(f.copyback_count(10), 2);
        f.check_invariants();
    }

    #[test]
    fn torn_pages_read_as_unwritten() {
        let mut f = FlashArray::new(&geo(), false);
        f.program(0, data(1, 1)).unwrap();
        f.tear(0).unwrap();
        assert_eq!(f.read(0), Err(FlashError::ReadUnwritten { ppn: 0 }));
        assert_eq!(f.program(0, data(1, 1)), Err(FlashError::ProgramNotErased { ppn: 0 }));
        assert_eq!(f.check_oob_payload(17), Err(FlashError::OobTooLarge { bytes: 17, usable: 16 }));
    }
}
