//! 3DFTL's spare-area formats (seed 001 Sec. 6.1.2, L965-986): the mapping entries written
//! with every data page, bit for bit.
//!
//! A GTD entry covers a group of 64 LPNs, four LTD sub-groups of 16 (the thesis's "4 LTD
//! entries and 16 PMT entries in an uncompressed spare area, while a compressed spare area
//! has 4 LTD entries and 64 PMT entries by employing 8 25-bit indices", L986). Of the 448
//! spare bytes 112 are usable after ECC (L984: eight 1,080-byte codewords of 24-bit BCH over
//! GF(2^14), 42 parity bytes each). The thesis gives the sizes (81 and 106 bytes, L986, where
//! "KB" must mean bytes) but not the bit layout; the one here meets both exactly:
//!
//! - header, 8 bits: bit 7 set for the compressed layout; compressed, bits 0-3 the sub-groups
//!   whose 16 entries the page carries; uncompressed, bits 0-3 the page's own slot in its
//!   sub-group.
//! - uncompressed (81 B): the header, the 4 LTD entries and the own sub-group's 16 PMT
//!   entries, 32 bits each; the page's own slot holds its LPN instead of its own PPN (which
//!   the reader knows, L969). Unmapped is all ones.
//! - compressed (106 B): the header, 8 indices of 25 bits (the upper bits of a 32-bit PPN;
//!   index 0 is the page's group number), then 64 slots of a 3-bit index position and a
//!   7-bit offset, one per LPN of the group in order. The page's own slot is (0, 0), an
//!   unmapped LPN (0, 1). A sub-group the page does not carry has each of its 16 slots
//!   hold its LTD entry instead ("a PMT entry is replaced with the related LTD entry until
//!   every distinct index can be packed", L969), so at most 7 distinct PPN indices remain.
//!   A carried sub-group's LTD entry is the page itself.
//!
//! Which sub-groups a page carries (`choose`): every sub-group whose current entries the
//! writer knows, dropping the others' one at a time (the one whose removal leaves the fewest
//! distinct indices, ties to the higher sub-group) until the indices fit; the own sub-group
//! alone is written uncompressed. The thesis's classes (Fig. 6.7, L1015) count the entries a
//! page carries: 64 compressed, 32 or 48 semi-compressed, 16 uncompressed.

use bitvec::prelude::*;
use ftlsim_core::geometry::{Lpn, Ppn, NONE};
use serde::{Deserialize, Serialize};

/// The shape of a group and how many PPN indices a compressed spare area holds: the
/// thesis's (`THESIS`), or another for worked examples (Sec. 6.1.4 uses groups of 4 LPNs, 2
/// sub-groups and 2 indices). [`encode`] and [`decode`] are the thesis's layout only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// LPNs per GTD entry.
    pub group: u32,
    /// LTD entries (sub-groups) per GTD entry.
    pub subgroups: u32,
    /// PPN bits below the index.
    pub offset_bits: u32,
    /// Distinct PPN indices a compressed page holds besides its group's.
    pub ppn_indices: usize,
    /// Whether the page's own PPN takes an index like any entry (the worked example's toy
    /// layout, whose "two distinct indices" count it) or its slot holds the LPN (the thesis's
    /// layout, L969).
    pub own_indexed: bool,
}

impl Layout {
    /// PMT entries per LTD entry.
    pub fn per_subgroup(&self) -> u32 {
        self.group / self.subgroups
    }

    /// The sub-group of slot `slot` of a group.
    pub fn subgroup_of(&self, slot: u32) -> u32 {
        slot / self.per_subgroup()
    }
}

/// The thesis's layout (L986).
pub const THESIS: Layout = Layout {
    group: GROUP,
    subgroups: SUBGROUPS,
    offset_bits: OFFSET_BITS as u32,
    ppn_indices: INDICES - 1,
    own_indexed: false,
};

/// LPNs per GTD entry.
pub const GROUP: u32 = 64;
/// LTD entries (sub-groups) per GTD entry.
pub const SUBGROUPS: u32 = 4;
/// PMT entries per LTD entry.
pub const PER_SUBGROUP: u32 = GROUP / SUBGROUPS;
/// Bits of a PPN entry.
pub const ENTRY_BITS: usize = 32;
/// Bits of a PPN's index (its upper bits) in the compressed layout.
pub const INDEX_BITS: usize = 25;
/// Bits of a PPN's offset (its lower bits) in the compressed layout.
pub const OFFSET_BITS: usize = 7;
/// Index slots in the compressed layout (slot 0 the group number).
pub const INDICES: usize = 8;
const POSITION_BITS: usize = 3;
const HEADER_BITS: usize = 8;
/// Spare bytes of the uncompressed layout (L986: 81).
pub const UNCOMPRESSED_BYTES: usize = (HEADER_BITS + (SUBGROUPS + PER_SUBGROUP) as usize * ENTRY_BITS) / 8;
/// Spare bytes of the compressed layout (L986: 106).
pub const COMPRESSED_BYTES: usize =
    (HEADER_BITS + INDICES * INDEX_BITS + GROUP as usize * (POSITION_BITS + OFFSET_BITS)).div_ceil(8);
/// What a 32-bit entry field holds for an unmapped LPN.
const UNMAPPED: u32 = u32::MAX;

/// The layout a page is written in, by the sub-groups it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The own sub-group's 16 entries (and all 4 LTD entries) in 32-bit fields.
    Uncompressed,
    /// The entries of the sub-groups in `carried` (a bit per sub-group, the own one
    /// included), the others' LTD entries, in indices and offsets.
    Compressed {
        /// A bit per sub-group carried.
        carried: u8,
    },
}

impl Format {
    /// PMT entries the page carries (the thesis's classes: 64, 48 or 32, 16).
    pub fn entries(self, layout: &Layout) -> u32 {
        match self {
            Format::Uncompressed => layout.per_subgroup(),
            Format::Compressed { carried } => carried.count_ones() * layout.per_subgroup(),
        }
    }

    /// Whether the page carries sub-group `k`'s entries; `own` is the page's sub-group.
    pub fn carries(self, k: u32, own: u32) -> bool {
        match self {
            Format::Uncompressed => k == own,
            Format::Compressed { carried } => carried & (1 << k) != 0,
        }
    }
}

/// What a writer knows of the page's group: the current PPN of each of its LPNs for the
/// sub-groups in `known` (a bit each; the page's own LPN at the page being written), and the
/// LTD entry of every sub-group.
#[derive(Debug, Clone, Copy)]
pub struct GroupView<'a> {
    /// PPN per slot (NONE unmapped); read only for known sub-groups.
    pub entries: &'a [Ppn],
    /// A bit per sub-group whose entries are known.
    pub known: u8,
    /// LTD entry per sub-group (NONE: never written).
    pub ltd: &'a [Ppn],
}

/// A decoded spare area.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The page's LPN.
    pub lpn: Lpn,
    /// Its layout.
    pub format: Format,
    /// LTD entry per sub-group (a carried sub-group's is the page itself).
    pub ltd: [Ppn; SUBGROUPS as usize],
    /// PPN per slot of the carried sub-groups, NONE elsewhere (and for unmapped LPNs).
    pub entries: [Ppn; GROUP as usize],
}

fn index(p: Ppn) -> u32 {
    p >> OFFSET_BITS
}

fn subgroup_of(slot: u32) -> u32 {
    THESIS.subgroup_of(slot)
}

/// Distinct PPN indices a compressed page carrying `carried` needs (the own page's slot
/// aside when it holds the LPN), counted up to `cap` (the count stops there). One pass, no
/// allocation: this runs for every page written.
fn distinct(layout: &Layout, view: &GroupView, own_slot: u32, carried: u8, cap: usize) -> usize {
    let mut seen = [0u32; 17];
    let cap = cap.min(seen.len());
    let mut n = 0;
    let per = layout.per_subgroup();
    let slots = (0..layout.subgroups).flat_map(|k| {
        let carried_k = carried & (1 << k) != 0;
        let (from, to) = if carried_k { (k * per, (k + 1) * per) } else { (0, 0) };
        (from..to)
            .filter(move |&s| layout.own_indexed || s != own_slot)
            .map(|s| view.entries[s as usize])
            .chain((!carried_k).then(|| view.ltd[k as usize]))
    });
    for p in slots.filter(|&p| p != NONE) {
        let i = p >> layout.offset_bits;
        if !seen[..n].contains(&i) {
            seen[n] = i;
            n += 1;
            if n == cap {
                break;
            }
        }
    }
    n
}

/// Whether a compressed page carrying `carried` fits `layout`'s indices.
fn fits(layout: &Layout, view: &GroupView, own_slot: u32, carried: u8) -> bool {
    distinct(layout, view, own_slot, carried, layout.ppn_indices + 1) <= layout.ppn_indices
}

/// The layout for the page of `lpn` (the own sub-group must be known).
pub fn choose(layout: &Layout, view: &GroupView, lpn: Lpn) -> Format {
    let own_slot = lpn % layout.group;
    let own = layout.subgroup_of(own_slot);
    assert!(view.known & (1 << own) != 0, "lpn {lpn}: the page's own sub-group must be known to write it");
    let mut carried = view.known & ((1 << layout.subgroups) - 1);
    loop {
        if carried == 1 << own {
            return Format::Uncompressed;
        }
        if fits(layout, view, own_slot, carried) {
            return Format::Compressed { carried };
        }
        let drop = (0..layout.subgroups)
            .rev()
            .filter(|&k| k != own && carried & (1 << k) != 0)
            .min_by_key(|&k| distinct(layout, view, own_slot, carried & !(1 << k), 17))
            .expect("a sub-group besides the own one is carried");
        carried &= !(1 << drop);
    }
}

/// The spare area of the page of `lpn` written at `own_ppn` in `format` (from [`choose`]).
pub fn encode(view: &GroupView, lpn: Lpn, own_ppn: Ppn, format: Format) -> Vec<u8> {
    assert!(view.entries.len() == GROUP as usize && view.ltd.len() == SUBGROUPS as usize, "the thesis's layout");
    let own_slot = lpn % GROUP;
    let own = subgroup_of(own_slot);
    let mut bits: BitVec<u8, Msb0> = BitVec::new();
    let put = |bits: &mut BitVec<u8, Msb0>, value: u32, width: usize| {
        let start = bits.len();
        bits.resize(start + width, false);
        bits[start..].store_be(value);
    };
    match format {
        Format::Uncompressed => {
            put(&mut bits, own_slot % PER_SUBGROUP, HEADER_BITS);
            for k in 0..SUBGROUPS {
                let p = if k == own { own_ppn } else { view.ltd[k as usize] };
                put(&mut bits, if p == NONE { UNMAPPED } else { p }, ENTRY_BITS);
            }
            for s in own * PER_SUBGROUP..(own + 1) * PER_SUBGROUP {
                let p = if s == own_slot { lpn } else { view.entries[s as usize] };
                put(&mut bits, if p == NONE && s != own_slot { UNMAPPED } else { p }, ENTRY_BITS);
            }
        }
        Format::Compressed { carried } => {
            assert!(carried & (1 << own) != 0, "a compressed page carries its own sub-group");
            put(&mut bits, 0x80 | u32::from(carried), HEADER_BITS);
            let slot_value = |s: u32| {
                let k = subgroup_of(s);
                if carried & (1 << k) != 0 {
                    view.entries[s as usize]
                } else {
                    view.ltd[k as usize]
                }
            };
            let mut indices = vec![lpn / GROUP];
            for s in (0..GROUP).filter(|&s| s != own_slot) {
                let p = slot_value(s);
                if p != NONE && !indices[1..].contains(&index(p)) {
                    indices.push(index(p));
                }
            }
            assert!(indices.len() <= INDICES, "lpn {lpn}: {} indices do not fit", indices.len());
            indices.resize(INDICES, 0);
            for &i in &indices {
                put(&mut bits, i, INDEX_BITS);
            }
            for s in 0..GROUP {
                let (position, offset) = match slot_value(s) {
                    _ if s == own_slot => (0, 0),
                    NONE => (0, 1),
                    p => {
                        let at = indices[1..].iter().position(|&i| i == index(p)).expect("indexed") + 1;
                        (at as u32, p & ((1 << OFFSET_BITS) - 1))
                    }
                };
                put(&mut bits, position, POSITION_BITS);
                put(&mut bits, offset, OFFSET_BITS);
            }
        }
    }
    bits.into_vec()
}

/// Read back the spare area `bytes` of the page at `own_ppn`.
pub fn decode(bytes: &[u8], own_ppn: Ppn) -> Decoded {
    let bits = bytes.view_bits::<Msb0>();
    let mut at = 0;
    let mut take = |width: usize| -> u32 {
        let v = bits[at..at + width].load_be::<u32>();
        at += width;
        v
    };
    let header = take(HEADER_BITS);
    let mut entries = [NONE; GROUP as usize];
    let mut ltd = [NONE; SUBGROUPS as usize];
    let field = |v: u32| if v == UNMAPPED { NONE } else { v };
    if header & 0x80 == 0 {
        let own_in_sub = header & 0xf;
        for l in &mut ltd {
            *l = field(take(ENTRY_BITS));
        }
        let values: Vec<u32> = (0..PER_SUBGROUP).map(|_| take(ENTRY_BITS)).collect();
        let lpn = values[own_in_sub as usize];
        let own = subgroup_of(lpn % GROUP);
        for (i, &v) in values.iter().enumerate() {
            let s = own * PER_SUBGROUP + i as u32;
            entries[s as usize] = if i as u32 == own_in_sub { own_ppn } else { field(v) };
        }
        ltd[own as usize] = own_ppn;
        return Decoded { lpn, format: Format::Uncompressed, ltd, entries };
    }
    let carried = (header & 0xf) as u8;
    let indices: Vec<u32> = (0..INDICES).map(|_| take(INDEX_BITS)).collect();
    let mut lpn = None;
    for s in 0..GROUP {
        let (position, offset) = (take(POSITION_BITS), take(OFFSET_BITS));
        let p = match (position, offset) {
            (0, 0) => {
                lpn = Some(indices[0] * GROUP + s);
                own_ppn
            }
            (0, _) => NONE,
            (i, o) => (indices[i as usize] << OFFSET_BITS) | o,
        };
        let k = subgroup_of(s);
        if carried & (1 << k) != 0 {
            entries[s as usize] = p;
            ltd[k as usize] = own_ppn;
        } else {
            ltd[k as usize] = p;
        }
    }
    let lpn = lpn.expect("a compressed spare area holds its own slot");
    Decoded { lpn, format: Format::Compressed { carried }, ltd, entries }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_layouts_have_the_thesis_sizes_within_its_usable_spare() {
        // L986: "only 106KB ... for compressed mapping entries, while the uncompressed ...
        // take only 81KB" (bytes per spare area), of 112 usable (L984).
        assert_eq!(UNCOMPRESSED_BYTES, 81);
        assert_eq!(COMPRESSED_BYTES, 106);
        const { assert!(COMPRESSED_BYTES <= 112) };
        // 112 = 448 - 8 codewords x (24 bits x 14) / 8 of BCH parity.
        assert_eq!(448 - 8 * (24 * 14) / 8, 112);
        assert_eq!(INDEX_BITS + OFFSET_BITS, ENTRY_BITS);
    }

    struct Owned {
        entries: [Ppn; GROUP as usize],
        known: u8,
        ltd: [Ppn; SUBGROUPS as usize],
    }

    impl Owned {
        fn view(&self) -> GroupView<'_> {
            GroupView { entries: &self.entries, known: self.known, ltd: &self.ltd }
        }
    }

    fn view(base: Ppn, spread: u32, seed: u64, known: u8) -> Owned {
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut entries = [NONE; GROUP as usize];
        for e in entries.iter_mut() {
            let r = next();
            *e = if r % 11 == 0 { NONE } else { base + (r % u64::from(spread.max(1))) as u32 };
        }
        let ltd = [0, 1, 2, 3].map(|_| base + (next() % u64::from(spread.max(1))) as u32);
        Owned { entries, known, ltd }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever the entries, the chosen layout fits its size, and decoding gives back the
        /// LPN, the carried sub-groups' entries and every other sub-group's LTD entry.
        #[test]
        fn every_spare_area_decodes_to_what_was_written(
            base in 0u32..(1 << 24),
            spread in prop::sample::select(vec![1u32, 100, 400, 1000, 5000, 1 << 20]),
            seed in any::<u64>(),
            known in 0u8..16,
            group in 0u32..(1 << 20),
            slot in 0u32..GROUP,
            own_ppn in 0u32..(1 << 30),
        ) {
            let lpn = group * GROUP + slot;
            let own = slot / PER_SUBGROUP;
            let v = view(base, spread, seed, known | (1 << own));
            let format = choose(&THESIS, &v.view(), lpn);
            let bytes = encode(&v.view(), lpn, own_ppn, format);
            let size = if format == Format::Uncompressed { UNCOMPRESSED_BYTES } else { COMPRESSED_BYTES };
            prop_assert_eq!(bytes.len(), size);
            let d = decode(&bytes, own_ppn);
            prop_assert_eq!(d.lpn, lpn);
            prop_assert_eq!(d.format, format);
            for k in 0..SUBGROUPS {
                if format.carries(k, own) {
                    prop_assert_eq!(d.ltd[k as usize], own_ppn);
                    for s in k * PER_SUBGROUP..(k + 1) * PER_SUBGROUP {
                        let want = if s == slot { own_ppn } else { v.entries[s as usize] };
                        prop_assert_eq!(d.entries[s as usize], want, "slot {}", s);
                    }
                } else {
                    prop_assert_eq!(d.ltd[k as usize], v.ltd[k as usize], "LTD {}", k);
                }
            }
        }
    }

    #[test]
    fn clustered_entries_compress_scattered_ones_do_not() {
        // All 64 entries within 7 x 128 pages: one compressed page carries the whole group.
        let v = view(4096, 7 * 128, 5, 0b1111);
        assert_eq!(choose(&THESIS, &v.view(), 0), Format::Compressed { carried: 0b1111 });
        assert_eq!(choose(&THESIS, &v.view(), 0).entries(&THESIS), 64);
        // Scattered over a million pages: only the own sub-group's 16, uncompressed.
        let v = view(0, 1 << 20, 5, 0b1111);
        assert_eq!(choose(&THESIS, &v.view(), 17), Format::Uncompressed);
        assert_eq!(choose(&THESIS, &v.view(), 17).entries(&THESIS), 16);
        // Unknown sub-groups are never carried.
        let v = view(4096, 7 * 128, 5, 0b0101);
        assert_eq!(choose(&THESIS, &v.view(), 0), Format::Compressed { carried: 0b0101 });
    }

    #[test]
    fn semi_compressed_pages_drop_the_sub_group_that_spreads_most() {
        // Sub-groups 0-2 within 3 indices, sub-group 3 over 16 distinct ones.
        let mut v = view(0, 3 * 128, 9, 0b1111);
        for s in 48..64 {
            v.entries[s] = 100_000 + (s as u32) * 1000;
        }
        v.ltd = [1, 2, 3, 200 * 128];
        let f = choose(&THESIS, &v.view(), 5);
        assert_eq!(f, Format::Compressed { carried: 0b0111 });
        assert_eq!(f.entries(&THESIS), 48);
        let d = decode(&encode(&v.view(), 5, 77, f), 77);
        assert_eq!(d.ltd[3], 200 * 128, "the dropped sub-group keeps its LTD entry");
    }
}
