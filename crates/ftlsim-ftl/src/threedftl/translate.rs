//! 3DFTL's address translation (seed 001 Secs. 6.1.1, 6.1.3, 6.1.4; L959-980): what the
//! spare areas say about each group and what the cache of group lines knows, with the flash
//! reads each lookup costs. Flash-agnostic: the FTL issues the reads and programs.
//!
//! - GTD (SRAM): per group, the group's latest programmed page. Its spare area holds the
//!   group's current LTD entries (no later page of the group exists to change them).
//! - LTD entry of a sub-group: the page whose spare area holds the sub-group's current PMT
//!   entries ("LTD entries ... always equal to their latest PMT entries", L969): the latest
//!   page that carried them (its own sub-group always; others when written compressed).
//! - CMT: lines of whole groups (one per GTD entry, L976), least recently used out first,
//!   written through (a victim leaves at once, L980; no translation page is ever written). A
//!   line knows the sub-groups fetched into it; the others it holds as LTD pointers.
//!
//! A lookup of an LPN whose line knows its sub-group is a hit. Its line without the
//! sub-group costs one read (the LTD entry's page). No line: the GTD's page is read (its LTD
//! field, and the PMT entries it carries); if that page does not carry the sub-group, the LTD
//! entry's page too: one-read and two-read misses (Sec. 6.2.1, L1003). A group never written
//! costs nothing. Every page read adds to the line every sub-group that page carries (those
//! whose LTD entry it is).
//!
//! The values of the entries are not kept here: write-through keeps the FTL's map equal to
//! what the spare areas say, so a known sub-group's entries are the map's.

use super::spare::{choose, Format, GroupView, Layout};
use ftlsim_core::geometry::{Lpn, Ppn, NONE};
use serde::{Deserialize, Serialize};

/// How a lookup went (the thesis's classes for 3DFTL, Sec. 6.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The line knows the entry.
    Hit,
    /// The line is cached but holds the sub-group as an LTD pointer: one read.
    PointerHit,
    /// No line; the GTD's page carried the entry: one read.
    OneRead,
    /// No line; the GTD's page, then the LTD entry's page: two reads.
    TwoReads,
    /// No page of the group was ever written: nothing to read.
    Unwritten,
}

/// The pages a lookup reads, in order (the second waits for the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Its class.
    pub class: Lookup,
    reads: [Ppn; 2],
    n: usize,
}

impl Access {
    /// The spare areas to read, in order.
    pub fn reads(&self) -> &[Ppn] {
        &self.reads[..self.n]
    }
}

/// Lookups by class and by who asked, and pages written by format.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranslationCounts {
    /// Host lookups the line answered.
    pub hits: u64,
    /// Host lookups whose line held the sub-group as a pointer (one read).
    pub pointer_hits: u64,
    /// Host lookups without a line answered by the GTD's page (one read).
    pub one_read_misses: u64,
    /// Host lookups without a line needing the LTD entry's page too (two reads).
    pub two_read_misses: u64,
    /// Host lookups of groups never written (no read).
    pub unwritten: u64,
    /// GC's lookups (a page moved must be rewritten with its group's entries) that read.
    pub gc_misses: u64,
    /// Spare areas read for translation.
    pub spare_reads: u64,
    /// Pages written carrying a whole group's entries (Fig. 6.7's "Compress").
    pub compressed_pages: u64,
    /// Pages carrying some sub-groups besides their own ("Semicompress": 48 or 32 of 64).
    pub semi_compressed_pages: u64,
    /// Pages carrying their own sub-group only ("Uncompress": 16).
    pub uncompressed_pages: u64,
}

/// One cached group line in the LRU list.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Line {
    group: u32,
    known: u8,
    prev: u32,
    next: u32,
}

/// The CMT: group lines, least recently used first out, O(1) per access.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LineCache {
    lines: Vec<Line>,
    /// Line index per group, NONE when not cached.
    slot_of: Vec<u32>,
    capacity: usize,
    /// Most and least recently used lines.
    head: u32,
    tail: u32,
}

impl LineCache {
    fn new(groups: u32, capacity: usize) -> LineCache {
        assert!(capacity > 0, "a CMT of no lines");
        LineCache {
            lines: Vec::with_capacity(capacity),
            slot_of: vec![NONE; groups as usize],
            capacity,
            head: NONE,
            tail: NONE,
        }
    }

    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.lines[i as usize].prev, self.lines[i as usize].next);
        if p == NONE {
            self.head = n
        } else {
            self.lines[p as usize].next = n
        }
        if n == NONE {
            self.tail = p
        } else {
            self.lines[n as usize].prev = p
        }
    }

    fn push_front(&mut self, i: u32) {
        self.lines[i as usize].prev = NONE;
        self.lines[i as usize].next = self.head;
        if self.head != NONE {
            self.lines[self.head as usize].prev = i;
        }
        self.head = i;
        if self.tail == NONE {
            self.tail = i;
        }
    }

    /// The line of `group`, made most recent, if cached.
    fn touch(&mut self, group: u32) -> Option<&mut Line> {
        let i = self.slot_of[group as usize];
        if i == NONE {
            return None;
        }
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
        Some(&mut self.lines[i as usize])
    }

    /// A new line for `group` knowing nothing, the least recent one leaving if full.
    fn insert(&mut self, group: u32) -> &mut Line {
        debug_assert_eq!(self.slot_of[group as usize], NONE, "group {group} cached twice");
        let i = if self.lines.len() < self.capacity {
            self.lines.push(Line { group, known: 0, prev: NONE, next: NONE });
            (self.lines.len() - 1) as u32
        } else {
            let victim = self.tail;
            self.unlink(victim);
            let old = self.lines[victim as usize].group;
            self.slot_of[old as usize] = NONE;
            self.lines[victim as usize] = Line { group, known: 0, prev: NONE, next: NONE };
            victim
        };
        self.slot_of[group as usize] = i;
        self.push_front(i);
        &mut self.lines[i as usize]
    }

    fn known(&self, group: u32) -> u8 {
        match self.slot_of[group as usize] {
            NONE => 0,
            i => self.lines[i as usize].known,
        }
    }
}

/// The translation state of 3DFTL.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Translation {
    layout: Layout,
    gtd: Vec<Ppn>,
    /// `layout.subgroups` entries per group.
    ltd: Vec<Ppn>,
    cmt: LineCache,
    /// Counters since creation or the last reset.
    pub counts: TranslationCounts,
}

impl Translation {
    /// No page written yet; `groups` groups, a CMT of `lines` lines.
    pub fn new(layout: Layout, groups: u32, lines: usize) -> Translation {
        Translation {
            layout,
            gtd: vec![NONE; groups as usize],
            ltd: vec![NONE; (groups * layout.subgroups) as usize],
            cmt: LineCache::new(groups, lines),
            counts: TranslationCounts::default(),
        }
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn ltd_of(&self, group: u32) -> &[Ppn] {
        let s = self.layout.subgroups as usize;
        &self.ltd[group as usize * s..][..s]
    }

    /// Sub-groups of `group` whose LTD entry is `ppn` (the ones its spare area carries now).
    pub fn carried_by(&self, group: u32, ppn: Ppn) -> u8 {
        self.ltd_of(group).iter().enumerate().filter(|(_, &p)| p == ppn && p != NONE).fold(0, |m, (k, _)| m | 1 << k)
    }

    /// The GTD entry of `group`.
    pub fn gtd(&self, group: u32) -> Ppn {
        self.gtd[group as usize]
    }

    /// The LTD entries of `group`.
    pub fn ltd(&self, group: u32) -> &[Ppn] {
        self.ltd_of(group)
    }

    /// Make the line of `lpn`'s group know its sub-group, returning the spare areas to read.
    /// `gc`: GC is moving the page (its class is counted apart).
    pub fn lookup(&mut self, lpn: Lpn, gc: bool) -> Access {
        let (group, k) = (lpn / self.layout.group, self.layout.subgroup_of(lpn % self.layout.group));
        let mut reads = [NONE; 2];
        let mut n = 0;
        let class = if let Some(line) = self.cmt.touch(group) {
            if line.known & (1 << k) != 0 {
                Lookup::Hit
            } else {
                let p = self.ltd[(group * self.layout.subgroups + k) as usize];
                reads[0] = p;
                n = 1;
                Lookup::PointerHit
            }
        } else {
            self.cmt.insert(group);
            let top = self.gtd[group as usize];
            if top == NONE {
                Lookup::Unwritten
            } else {
                reads[0] = top;
                n = 1;
                if self.carried_by(group, top) & (1 << k) != 0 {
                    Lookup::OneRead
                } else {
                    reads[1] = self.ltd[(group * self.layout.subgroups + k) as usize];
                    n = 2;
                    Lookup::TwoReads
                }
            }
        };
        // A sub-group never written has no entries to fetch: known at once (all unmapped).
        let reads_n = reads[..n].iter().filter(|&&p| p != NONE).count();
        let mut learned = if class == Lookup::Unwritten { (1 << self.layout.subgroups) - 1 } else { 1 << k };
        for &p in reads[..n].iter().filter(|&&p| p != NONE) {
            learned |= self.carried_by(group, p);
        }
        let i = self.cmt.slot_of[group as usize];
        self.cmt.lines[i as usize].known |= learned;
        let c = &mut self.counts;
        c.spare_reads += reads_n as u64;
        if gc {
            c.gc_misses += u64::from(reads_n > 0);
        } else {
            match class {
                Lookup::Hit => c.hits += 1,
                Lookup::PointerHit => c.pointer_hits += 1,
                Lookup::OneRead => c.one_read_misses += 1,
                Lookup::TwoReads => c.two_read_misses += 1,
                Lookup::Unwritten => c.unwritten += 1,
            }
        }
        let mut out = [NONE; 2];
        let mut m = 0;
        for &p in reads[..n].iter().filter(|&&p| p != NONE) {
            out[m] = p;
            m += 1;
        }
        Access { class, reads: out, n: m }
    }

    /// `lpn` was just programmed at `ppn` (`map` already says so): the page's spare area
    /// gets the entries its group's line knows, in the format that fits; the GTD and the
    /// carried sub-groups' LTD entries point at it. The line must know `lpn`'s sub-group
    /// ([`Translation::lookup`] first).
    pub fn written(&mut self, lpn: Lpn, ppn: Ppn, map: &[Ppn]) -> Format {
        let l = self.layout;
        let group = lpn / l.group;
        assert_eq!(map[lpn as usize], ppn, "lpn {lpn}: the map must hold the page being written");
        let known = self.cmt.known(group);
        let first = (group * l.group) as usize;
        let end = (first + l.group as usize).min(map.len());
        let mut entries = [NONE; 64];
        entries[..end - first].copy_from_slice(&map[first..end]);
        let view = GroupView { entries: &entries[..l.group as usize], known, ltd: self.ltd_of(group) };
        let format = choose(&l, &view, lpn);
        let own = l.subgroup_of(lpn % l.group);
        for k in 0..l.subgroups {
            if format.carries(k, own) {
                self.ltd[(group * l.subgroups + k) as usize] = ppn;
            }
        }
        self.gtd[group as usize] = ppn;
        let c = &mut self.counts;
        match format.entries(&l) {
            e if e == l.group => c.compressed_pages += 1,
            e if e == l.per_subgroup() => c.uncompressed_pages += 1,
            _ => c.semi_compressed_pages += 1,
        }
        format
    }

    /// Sub-group `k` of `group` has no mapped LPN left (and none of its pages is needed): its
    /// LTD entry goes; the group's GTD entry too when no sub-group is left.
    pub fn forget_subgroup(&mut self, group: u32, k: u32) {
        self.ltd[(group * self.layout.subgroups + k) as usize] = NONE;
        if self.ltd_of(group).iter().all(|&p| p == NONE) {
            self.gtd[group as usize] = NONE;
        }
    }

    /// After a power cut: `group`'s GTD entry and LTD entries as the scan found them (the
    /// CMT starts empty).
    pub fn restore(&mut self, group: u32, gtd: Ppn, ltd: &[Ppn]) {
        self.gtd[group as usize] = gtd;
        let s = self.layout.subgroups as usize;
        self.ltd[group as usize * s..][..s].copy_from_slice(ltd);
    }

    /// SRAM of the GTD (4 bytes per group) and the CMT, bytes.
    pub fn sram_bytes(&self) -> (u64, u64) {
        (self.gtd.len() as u64 * super::sram::GTD_ENTRY_BYTES, super::sram::cmt_bytes(self.cmt.capacity as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sec. 6.1.4's toy layout: 8-bit PPNs, groups of 4 LPNs (2 LTD x 2 PMT), compressed
    /// spare areas of at most two distinct indices (6-bit index, 2-bit offset).
    const TOY: Layout = Layout { group: 4, subgroups: 2, offset_bits: 2, ppn_indices: 2, own_indexed: true };

    fn write(t: &mut Translation, map: &mut [Ppn], lpn: Lpn, ppn: Ppn) -> Format {
        t.lookup(lpn, false);
        map[lpn as usize] = ppn;
        t.written(lpn, ppn, map)
    }

    /// The worked example of Sec. 6.1.4 (L980), step by step.
    #[test]
    fn the_worked_example_of_section_6_1_4() {
        let mut map = vec![NONE; 256];
        let mut t = Translation::new(TOY, 64, 1);
        // A history leaving L967's state: PPN6 compressed, holding LPN 144 and the entries
        // 6, 2, 5, 0; PPN9 (LPN 147) uncompressed, its LTD field pointing LTD0 at PPN6.
        write(&mut t, &mut map, 147, 0);
        write(&mut t, &mut map, 145, 2);
        write(&mut t, &mut map, 146, 5);
        assert_eq!(write(&mut t, &mut map, 144, 6), Format::Compressed { carried: 0b11 });
        assert_eq!(write(&mut t, &mut map, 147, 9), Format::Uncompressed, "entries 6, 2, 5, 9: three indices");
        assert_eq!((t.gtd(36), t.ltd(36)), (9, &[6, 9][..]));
        // GTD25 is in the (one-line) CMT.
        assert_eq!(t.lookup(25 * 4, false).class, Lookup::Unwritten);
        // Write C at LPN 145 (GTD36, LTD0, PMT1): a miss, GTD25 evicted at once (write-through,
        // nothing written back); three-level translation: PPN9 read (step 3), then, as it is
        // uncompressed and LPN 147's (LTD1), PPN6 for LTD0's entries (step 5).
        let a = t.lookup(145, false);
        assert_eq!(a.class, Lookup::TwoReads);
        assert_eq!(a.reads(), &[9, 6]);
        assert_eq!(map[145], 2, "the PPN of LPN 145 is known to be 2");
        // Step 7: PPN2 invalidated, PPN11 written; step 8: the line compressed into it
        // (entries 6, 11, 5, 9: two indices); GTD36 updated.
        map[145] = 11;
        assert_eq!(t.written(145, 11, &map), Format::Compressed { carried: 0b11 });
        assert_eq!((t.gtd(36), t.ltd(36)), (11, &[11, 11][..]));
        // Nothing of it was a translation-page write; the next access to the group hits.
        assert_eq!(t.lookup(146, false).class, Lookup::Hit);
        assert_eq!(t.counts.spare_reads, 2);
    }

    #[test]
    fn a_cached_line_without_the_sub_group_reads_its_ltd_page_once() {
        let mut map = vec![NONE; 256];
        let mut t = Translation::new(TOY, 64, 4);
        // LPNs 0 and 1 (sub-group 0) and 2 (sub-group 1) on pages of three indices: the last
        // page cannot carry sub-group 0 and is written uncompressed.
        write(&mut t, &mut map, 0, 0);
        write(&mut t, &mut map, 1, 100);
        assert_eq!(write(&mut t, &mut map, 2, 200), Format::Uncompressed);
        assert_eq!(t.ltd(0), &[100, 200]);
        // Evict group 0's line, then look LPN 2 up: the GTD's page (200) carries it.
        for g in 1..5 {
            t.lookup(g * 4, false);
        }
        let a = t.lookup(2, false);
        assert_eq!((a.class, a.reads()), (Lookup::OneRead, &[200][..]));
        // LPN 0's sub-group is a pointer in that line: one read of its LTD page.
        let a = t.lookup(0, false);
        assert_eq!((a.class, a.reads()), (Lookup::PointerHit, &[100][..]));
        assert_eq!(t.lookup(1, false).class, Lookup::Hit);
        assert_eq!(t.counts.one_read_misses, 1);
        assert_eq!(t.counts.pointer_hits, 1);
    }

    #[test]
    fn gc_lookups_are_counted_apart_and_forgotten_sub_groups_leave_the_gtd() {
        let mut map = vec![NONE; 256];
        let mut t = Translation::new(TOY, 64, 1);
        write(&mut t, &mut map, 0, 40);
        t.lookup(8, false);
        let a = t.lookup(0, true);
        assert_eq!(a.reads(), &[40]);
        assert_eq!(t.counts.gc_misses, 1);
        assert_eq!(t.counts.one_read_misses, 0);
        t.forget_subgroup(0, 0);
        assert_eq!(t.gtd(0), 40, "sub-group 1 still has its page");
        t.forget_subgroup(0, 1);
        assert_eq!(t.gtd(0), NONE);
    }
}
