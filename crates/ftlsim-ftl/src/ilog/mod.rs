//! ILog (seed 001 Ch. 8, Secs. 8.1.1-8.1.2, Fig. 8.3; L1241-1274): block invalid flags
//! (BIFs) logged in invalidation pages (IPs) on flash, cached in a FIFO queue (BIFQ) in SRAM,
//! located by a table (BIFT) of logical IP numbers (LIPNs) and an IP table (IPT) of their
//! physical pages. FTL-agnostic (L1404): it needs only the block of each page invalidated and
//! the block GC validates; the FTL reads and programs the IPs ([`IpStore`]).
//!
//! - A BIF is 35 bytes (a 3-byte PBN and 256 flag bits, L1251); an IP holds
//!   floor(page / 35) of them (234 of 8 KB); the BIFQ holds floor(8 KB / 35) = 234 (Table 8.1).
//! - Invalidation (Fig. 8.3): a BIF in the BIFQ takes the flag and moves to the tail (L1266);
//!   otherwise the head leaves, written back first when modified, and the block's BIF joins
//!   at the tail, its IP not read until it must be (L1270). A write-back takes the oldest LIPN
//!   (round-robin), reads its IP to keep the BIFs still located there, fills the rest with the
//!   BIFQ's modified BIFs from the head ("first-modified-first-out", L1268), reading the IP
//!   of each not yet merged with its copy on flash (once per IP, merging every queued BIF
//!   located there), and programs the new IP.
//! - A BIF whose block has no valid page left is dropped without a write-back (L1270).
//! - Validation (L1274): GC learns a victim's stale pages with at most one IP read.
//!
//! Flags are not stored: in normal operation every invalidation reaches the BIFQ copy, and
//! the copy on flash is what an IP read merges in, so what GC learns is the flash model's
//! validity; ILog's cost is the IP reads and writes counted here. What the IPs on flash say,
//! which recovery reads, is kept by [`on_flash::IlogOnFlash`], which also places the IPs.

pub(crate) mod on_flash;
pub use on_flash::IlogOptions;

use ftlsim_core::error::SimError;
use ftlsim_core::geometry::{BlockId, Ppn, NONE};
use serde::{Deserialize, Serialize};

/// Bytes of one BIF (L1251).
pub const BIF_BYTES: u32 = 35;
/// BIFT bytes per block: a 1-byte LIPN and a 1-byte invalid counter (Table 8.1: 8 KB for
/// 4,096 blocks, the counters inside, L1304).
pub const BIFT_BYTES_PER_BLOCK: u32 = 2;
/// LIPNs at most (a 1-byte field of the BIFT; Table 8.1: "IP: max. 256 pages", one block of
/// the thesis's chip). A drive uses as many as one block has pages, and at least enough to
/// hold every block's BIF.
pub const LIPNS: u32 = 256;

/// Where the FTL keeps the IPs: it reads one, and programs a new copy of one (returning its
/// page), the old copy then stale.
pub trait IpStore {
    /// Read the IP at `ppn`.
    fn read_ip(&mut self, ppn: Ppn) -> Result<(), SimError>;
    /// Program a new copy of IP `lipn` holding the BIFs of `blocks` (the old copy at `old`,
    /// NONE if none); its page.
    fn write_ip(&mut self, lipn: u32, old: Ppn, blocks: &[BlockId]) -> Result<Ppn, SimError>;
    /// Whether an IP can be programmed now without taking a block GC needs.
    fn has_room(&self) -> bool;
}

/// ILog's traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IlogCounts {
    /// Pages invalidated (calls of [`Ilog::invalidate`]).
    pub invalidations: u64,
    /// IPs read by invalidations (write-backs; Table 8.2's "IP reads").
    pub ip_reads_invalidation: u64,
    /// IPs read by GC's validations.
    pub ip_reads_validation: u64,
    /// IPs programmed.
    pub ip_writes: u64,
    /// BIFs dropped because their block had no valid page left.
    pub dropped_bifs: u64,
    /// Invalidations whose block's BIF was not queued, so it joined the BIFQ (evicting the
    /// head once the queue is full): IPs are written only after more of these than the
    /// BIFQ holds.
    pub bifq_misses: u64,
    /// Write-backs put off because no plane could spare a block for an IP: the BIFQ then
    /// holds one BIF more than its size until GC frees one.
    pub deferred_write_backs: u64,
}

/// A queued BIF's state (indexed by block).
const QUEUED: u8 = 1;
const MODIFIED: u8 = 2;
const COMPLETE: u8 = 4;

/// ILog's SRAM state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ilog {
    /// LIPNs in use.
    lipns: u32,
    bifs_per_ip: usize,
    bifq_capacity: u32,
    /// BIFT: per block, the LIPN of the IP holding its BIF (NONE: none).
    bift: Vec<u32>,
    /// IPT: per LIPN, its page (NONE: never written); and the blocks whose BIF it holds.
    ipt: Vec<Ppn>,
    members: Vec<Vec<BlockId>>,
    next_lipn: u32,
    /// The BIFQ: a FIFO list threaded through per-block links, and per-block flags.
    state: Vec<u8>,
    prev: Vec<BlockId>,
    next: Vec<BlockId>,
    head: BlockId,
    tail: BlockId,
    len: u32,
    /// Counters since creation or the last reset.
    pub counts: IlogCounts,
}

impl Ilog {
    /// Whether the BIFs of `blocks` blocks fit in the IPs of `page_bytes` pages (the BIFT's
    /// 1-byte LIPN allows 256 IPs).
    pub fn fits(blocks: u32, page_bytes: u32) -> bool {
        u64::from(blocks) <= u64::from(page_bytes / BIF_BYTES) * u64::from(LIPNS)
    }

    /// ILog for `blocks` blocks of `pages_per_block` pages of `page_bytes` ([`Ilog::fits`])
    /// and a BIFQ of `bifq_bytes` (Table 8.1: 8 KB).
    pub fn new(blocks: u32, pages_per_block: u32, page_bytes: u32, bifq_bytes: u32) -> Ilog {
        let bifs_per_ip = (page_bytes / BIF_BYTES) as usize;
        assert!(bifs_per_ip > 0, "a page of {page_bytes} bytes holds no BIF");
        assert!(
            blocks as usize <= bifs_per_ip * LIPNS as usize,
            "{blocks} blocks need more than {LIPNS} IPs of {bifs_per_ip} BIFs"
        );
        let lipns = (blocks as usize).div_ceil(bifs_per_ip).max(pages_per_block.min(LIPNS) as usize);
        Ilog {
            lipns: lipns as u32,
            bifs_per_ip,
            bifq_capacity: (bifq_bytes / BIF_BYTES).max(1),
            bift: vec![NONE; blocks as usize],
            ipt: vec![NONE; lipns],
            members: vec![Vec::new(); lipns],
            next_lipn: 0,
            state: vec![0; blocks as usize],
            prev: vec![NONE; blocks as usize],
            next: vec![NONE; blocks as usize],
            head: NONE,
            tail: NONE,
            len: 0,
            counts: IlogCounts::default(),
        }
    }

    /// BIFs the BIFQ holds.
    pub fn bifq_capacity(&self) -> u32 {
        self.bifq_capacity
    }

    /// SRAM of the BIFT and the BIFQ, bytes.
    pub fn sram_bytes(&self) -> u64 {
        self.bift.len() as u64 * u64::from(BIFT_BYTES_PER_BLOCK) + u64::from(self.bifq_capacity * BIF_BYTES)
    }

    /// The IP pages on flash (for GC and invariants): LIPN and page.
    pub fn ip_pages(&self) -> impl Iterator<Item = (u32, Ppn)> + '_ {
        self.ipt.iter().enumerate().filter(|(_, &p)| p != NONE).map(|(l, &p)| (l as u32, p))
    }

    /// The IP holding block `b`'s BIF, if any.
    pub fn ip_of(&self, b: BlockId) -> Option<Ppn> {
        let lipn = self.bift[b as usize];
        (lipn != NONE).then(|| self.ipt[lipn as usize]).filter(|&p| p != NONE)
    }

    /// GC moved IP `lipn` to `ppn`.
    pub fn ip_moved(&mut self, lipn: u32, ppn: Ppn) {
        self.ipt[lipn as usize] = ppn;
    }

    fn unlink(&mut self, b: BlockId) {
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p == NONE {
            self.head = n
        } else {
            self.next[p as usize] = n
        }
        if n == NONE {
            self.tail = p
        } else {
            self.prev[n as usize] = p
        }
        self.state[b as usize] = 0;
        self.len -= 1;
    }

    fn push_tail(&mut self, b: BlockId, flags: u8) {
        self.prev[b as usize] = self.tail;
        self.next[b as usize] = NONE;
        if self.tail != NONE {
            self.next[self.tail as usize] = b;
        } else {
            self.head = b;
        }
        self.tail = b;
        self.state[b as usize] = QUEUED | flags;
        self.len += 1;
    }

    fn locate(&mut self, b: BlockId, lipn: u32) {
        let old = self.bift[b as usize];
        if old != NONE {
            let m = &mut self.members[old as usize];
            let i = m.iter().position(|&x| x == b).expect("a block in its IP's member list");
            m.swap_remove(i);
        }
        self.bift[b as usize] = lipn;
        if lipn != NONE {
            self.members[lipn as usize].push(b);
        }
    }

    /// A page of block `b` was invalidated; `valid_left` pages of it are still valid.
    pub fn invalidate(&mut self, b: BlockId, valid_left: u32, store: &mut dyn IpStore) -> Result<(), SimError> {
        self.counts.invalidations += 1;
        if self.state[b as usize] & QUEUED != 0 {
            let keep = self.state[b as usize] & COMPLETE;
            self.unlink(b);
            self.push_tail(b, keep | MODIFIED);
        } else {
            self.counts.bifq_misses += 1;
            while self.len >= self.bifq_capacity {
                if !self.evict_head(store)? {
                    self.counts.deferred_write_backs += 1;
                    break;
                }
            }
            // With no copy on flash the queued BIF is complete at once.
            let complete = if self.bift[b as usize] == NONE { COMPLETE } else { 0 };
            self.push_tail(b, complete | MODIFIED);
        }
        if valid_left == 0 {
            // Every page invalid: the BIF is not needed (GC needs no validation; L1270).
            self.unlink(b);
            self.counts.dropped_bifs += 1;
        }
        Ok(())
    }

    /// Evict the BIFQ's head, written back first when modified; `false` (nothing evicted)
    /// when that needs an IP and the store has no room for one now.
    fn evict_head(&mut self, store: &mut dyn IpStore) -> Result<bool, SimError> {
        let h = self.head;
        if self.state[h as usize] & MODIFIED != 0 {
            // The head must reach an IP: the victim IP may be full of BIFs still located
            // there, then the next LIPN is tried.
            for _ in 0..self.lipns {
                if !store.has_room() {
                    return Ok(false);
                }
                self.write_back(store)?;
                if self.state[h as usize] & MODIFIED == 0 {
                    break;
                }
            }
            assert_eq!(self.state[h as usize] & MODIFIED, 0, "BIFQ head {h} found no room in any IP");
        }
        self.unlink(h);
        Ok(true)
    }

    /// Fig. 8.3's write-back of one IP: the oldest LIPN's.
    fn write_back(&mut self, store: &mut dyn IpStore) -> Result<(), SimError> {
        let victim = self.next_lipn;
        self.next_lipn = (victim + 1) % self.lipns;
        let old = self.ipt[victim as usize];
        if old != NONE {
            store.read_ip(old)?;
            self.counts.ip_reads_invalidation += 1;
            self.merged(victim);
        }
        let mut room = self.bifs_per_ip - self.members[victim as usize].len();
        let mut b = self.head;
        while b != NONE && room > 0 {
            let next = self.next[b as usize];
            let st = self.state[b as usize];
            if st & MODIFIED != 0 {
                if st & COMPLETE == 0 {
                    let lipn = self.bift[b as usize];
                    store.read_ip(self.ipt[lipn as usize])?;
                    self.counts.ip_reads_invalidation += 1;
                    self.merged(lipn);
                }
                if self.bift[b as usize] != victim {
                    self.locate(b, victim);
                    room -= 1;
                }
                self.state[b as usize] = QUEUED | COMPLETE;
            }
            b = next;
        }
        self.ipt[victim as usize] = store.write_ip(victim, old, &self.members[victim as usize])?;
        self.counts.ip_writes += 1;
        Ok(())
    }

    /// IP `lipn` was read: every queued BIF located there is merged with its copy.
    fn merged(&mut self, lipn: u32) {
        for &m in &self.members[lipn as usize] {
            if self.state[m as usize] & QUEUED != 0 {
                self.state[m as usize] |= COMPLETE;
            }
        }
    }

    /// GC is about to collect block `b`: its flags complete (one IP read at most).
    pub fn validate(&mut self, b: BlockId, store: &mut dyn IpStore) -> Result<(), SimError> {
        let st = self.state[b as usize];
        if st & QUEUED != 0 && st & COMPLETE != 0 {
            return Ok(());
        }
        let lipn = self.bift[b as usize];
        if lipn != NONE {
            store.read_ip(self.ipt[lipn as usize])?;
            self.counts.ip_reads_validation += 1;
            self.merged(lipn);
        }
        Ok(())
    }

    /// After a power cut (Figs. 8.4, 8.6), called for each IP in the order they were
    /// written: IP `lipn` is at `ppn` and holds the BIFs of `blocks` (those still trusted);
    /// the round-robin goes on after the last one; the BIFQ starts empty.
    pub fn restore(&mut self, lipn: u32, ppn: Ppn, blocks: &[BlockId]) {
        self.ipt[lipn as usize] = ppn;
        for &b in blocks {
            self.locate(b, lipn);
        }
        self.next_lipn = (lipn + 1) % self.lipns;
    }

    /// Block `b` was erased: its BIF starts anew (the copy in an IP is stale, L1270).
    pub fn erased(&mut self, b: BlockId) {
        if self.state[b as usize] & QUEUED != 0 {
            self.unlink(b);
        }
        self.locate(b, NONE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IP store counting what ILog asks of it; pages numbered as written.
    #[derive(Default)]
    struct Store {
        reads: Vec<Ppn>,
        writes: u32,
        /// No block to spare for an IP (GC has not caught up).
        full: bool,
    }

    impl IpStore for Store {
        fn read_ip(&mut self, ppn: Ppn) -> Result<(), SimError> {
            assert_ne!(ppn, NONE, "read of an IP never written");
            self.reads.push(ppn);
            Ok(())
        }
        fn has_room(&self) -> bool {
            !self.full
        }

        fn write_ip(&mut self, _lipn: u32, _old: Ppn, _blocks: &[BlockId]) -> Result<Ppn, SimError> {
            self.writes += 1;
            Ok(1000 + self.writes)
        }
    }

    #[test]
    fn the_sizes_are_table_8_1s() {
        let i = Ilog::new(4096, 256, 8192, 8192);
        assert_eq!(i.bifq_capacity(), 234, "8 KB of 35-byte BIFs");
        assert_eq!(i.bifs_per_ip, 234);
        // 4,096 BIFs fit in 18 IPs (L1251).
        assert_eq!(4096usize.div_ceil(i.bifs_per_ip), 18);
    }

    #[test]
    fn invalidations_of_queued_blocks_cost_nothing() {
        let (mut i, mut s) = (Ilog::new(4096, 256, 8192, 8192), Store::default());
        for n in 0..10_000u32 {
            i.invalidate(n % 200, 100, &mut s).unwrap();
        }
        assert_eq!((s.reads.len(), s.writes), (0, 0));
        assert_eq!(i.counts.invalidations, 10_000);
    }

    #[test]
    fn a_full_queue_writes_back_first_modified_first_out_and_reads_each_ip_once() {
        let (mut i, mut s) = (Ilog::new(4096, 256, 8192, 8192), Store::default());
        for b in 0..234 {
            i.invalidate(b, 100, &mut s).unwrap();
        }
        // The 235th block evicts the head: one IP written holding all 234 modified BIFs.
        i.invalidate(234, 100, &mut s).unwrap();
        assert_eq!((s.reads.len(), s.writes), (0, 1), "no IP on flash yet to read");
        assert!((0..234).all(|b| i.bift[b as usize] == 0));
        // Now blocks 1..233 are unmodified (complete); invalidating 233 more new blocks
        // evicts them without a write-back, until the new, modified ones come to the head.
        for b in 235..235 + 233 {
            i.invalidate(b, 100, &mut s).unwrap();
        }
        assert_eq!(s.writes, 1);
        // Block 5 again: its BIF is on flash (IP 0), so its queued copy is incomplete; a
        // write-back merging it reads IP 0 once.
        i.invalidate(5, 100, &mut s).unwrap();
        let before = s.reads.len();
        for b in 500..760 {
            i.invalidate(b, 100, &mut s).unwrap();
        }
        assert!(s.writes >= 2);
        assert_eq!(s.reads.len() - before, 1, "IP 0 read once for block 5's merge: {:?}", s.reads);
    }

    #[test]
    fn a_write_back_with_no_room_waits_and_the_queue_catches_up_after() {
        let (mut i, mut s) = (Ilog::new(4096, 256, 8192, 350), Store::default());
        for b in 0..10 {
            i.invalidate(b, 100, &mut s).unwrap();
        }
        s.full = true;
        for b in 10..13 {
            i.invalidate(b, 100, &mut s).unwrap();
        }
        assert_eq!((s.writes, i.len, i.counts.deferred_write_backs), (0, 13, 3), "nothing written, nothing lost");
        s.full = false;
        i.invalidate(13, 100, &mut s).unwrap();
        assert_eq!(s.writes, 1, "one IP takes every modified BIF");
        assert_eq!(i.len, 10, "back to its size");
        assert!((0..13).all(|b| i.bift[b as usize] == 0), "the BIFs held over reached the IP");
    }

    #[test]
    fn validation_reads_one_ip_at_most_and_blocks_all_invalid_are_dropped() {
        let (mut i, mut s) = (Ilog::new(4096, 256, 8192, 8192), Store::default());
        for b in 0..300 {
            i.invalidate(b, 10, &mut s).unwrap();
        }
        // Block 0 went to an IP and left the queue: validating it reads that IP.
        i.validate(0, &mut s).unwrap();
        assert_eq!(i.counts.ip_reads_validation, 1);
        // Block 299 is queued with no copy on flash: complete, nothing to read.
        i.validate(299, &mut s).unwrap();
        assert_eq!(i.counts.ip_reads_validation, 1);
        // A block whose last valid page goes is dropped, not written back.
        i.invalidate(3000, 0, &mut s).unwrap();
        assert_eq!(i.counts.dropped_bifs, 1);
        assert_eq!(i.state[3000], 0);
        // An erased block's BIF starts anew.
        i.erased(0);
        assert_eq!(i.bift[0], NONE);
        i.validate(0, &mut s).unwrap();
        assert_eq!(i.counts.ip_reads_validation, 1);
    }
}
