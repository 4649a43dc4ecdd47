//! Division-free address arithmetic for the hot paths.
//!
//! [`Geometry`]'s `plane_of`, `page_in_block`, `channel_of` and `die_of` divide by sizes
//! known only at run time, and a 32-bit division costs 20-30 cycles: the scheduler does
//! several per flash operation, a sixth of the benchmark's time (docs/performance.md).
//! [`AddressMap`] answers the same questions with a multiply ([`FastDiv`], Lemire, Kaser and
//! Kurz, "Faster remainder by direct computation", 2019) or a table lookup per plane.

use crate::geometry::{Geometry, PlaneId, Ppn};
use serde::{Deserialize, Serialize};

/// Exact division and remainder of any `u32` by a fixed `u32` divisor, by multiplication.
/// Serialised as the divisor.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(from = "u32", into = "u32")]
pub struct FastDiv {
    d: u32,
    /// ceil(2^64 / d); 0 for d = 1 (then the quotient is the dividend).
    m: u64,
}

impl FastDiv {
    /// A divider by `d` (> 0).
    pub fn new(d: u32) -> FastDiv {
        assert!(d > 0, "division by zero");
        FastDiv { d, m: if d == 1 { 0 } else { u64::MAX / u64::from(d) + 1 } }
    }

    /// `n / d`.
    #[inline]
    pub fn quotient(self, n: u32) -> u32 {
        if self.m == 0 {
            return n;
        }
        ((u128::from(self.m) * u128::from(n)) >> 64) as u32
    }

    /// `n % d`.
    #[inline]
    pub fn remainder(self, n: u32) -> u32 {
        if self.m == 0 {
            return 0;
        }
        let low = self.m.wrapping_mul(u64::from(n));
        ((u128::from(low) * u128::from(self.d)) >> 64) as u32
    }
}

impl From<u32> for FastDiv {
    fn from(d: u32) -> FastDiv {
        FastDiv::new(d.max(1))
    }
}

impl From<FastDiv> for u32 {
    fn from(f: FastDiv) -> u32 {
        f.d
    }
}

/// Per-plane coordinates, looked up instead of computed.
#[derive(Debug, Clone, Copy)]
struct PlaneCoords {
    channel: u32,
    die: u32,
    /// Plane index within its die.
    plane_in_die: u32,
}

/// [`Geometry`]'s address arithmetic without divisions; agrees with it everywhere (tested).
#[derive(Debug, Clone)]
pub struct AddressMap {
    per_plane: FastDiv,
    per_block: FastDiv,
    planes: Vec<PlaneCoords>,
}

impl AddressMap {
    /// The map of `g`.
    pub fn new(g: &Geometry) -> AddressMap {
        let planes = (0..g.planes())
            .map(|p| PlaneCoords { channel: g.channel_of(p), die: g.die_of(p), plane_in_die: g.plane_addr(p).plane })
            .collect();
        AddressMap { per_plane: FastDiv::new(g.pages_per_plane()), per_block: FastDiv::new(g.pages_per_block), planes }
    }

    /// Plane of a physical page ([`Geometry::plane_of`]).
    #[inline]
    pub fn plane_of(&self, ppn: Ppn) -> PlaneId {
        self.per_plane.quotient(ppn)
    }

    /// Page index within its block ([`Geometry::page_in_block`]).
    #[inline]
    pub fn page_in_block(&self, ppn: Ppn) -> u32 {
        self.per_block.remainder(ppn)
    }

    /// Channel of a plane ([`Geometry::channel_of`]).
    #[inline]
    pub fn channel_of(&self, plane: PlaneId) -> u32 {
        self.planes[plane as usize].channel
    }

    /// Global die index of a plane ([`Geometry::die_of`]).
    #[inline]
    pub fn die_of(&self, plane: PlaneId) -> u32 {
        self.planes[plane as usize].die
    }

    /// Plane index within its die ([`Geometry::plane_addr`]`.plane`).
    #[inline]
    pub fn plane_in_die(&self, plane: PlaneId) -> u32 {
        self.planes[plane as usize].plane_in_die
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fast_division_is_exact(n in any::<u32>(), d in 1u32..) {
            let f = FastDiv::new(d);
            prop_assert_eq!(f.quotient(n), n / d);
            prop_assert_eq!(f.remainder(n), n % d);
        }

        #[test]
        fn fast_division_is_exact_at_the_edges(d in prop_oneof![1u32..70, Just(u32::MAX), Just(u32::MAX - 1), Just(1 << 31)]) {
            let f = FastDiv::new(d);
            for n in [0, 1, d - 1, d, d.saturating_add(1), u32::MAX - 1, u32::MAX] {
                prop_assert_eq!((f.quotient(n), f.remainder(n)), (n / d, n % d), "{} / {}", n, d);
            }
        }
    }

    #[test]
    fn address_map_agrees_with_the_geometry() {
        // Sizes that are not powers of two, as some presets have.
        let g = Geometry {
            channels: 3,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 3,
            blocks_per_plane: 7,
            pages_per_block: 6,
            page_size_bytes: 4096,
            spare_bytes_per_page: 128,
            spare_usable_bytes: 32,
        };
        let m = AddressMap::new(&g);
        for ppn in 0..g.pages() {
            assert_eq!((m.plane_of(ppn), m.page_in_block(ppn)), (g.plane_of(ppn), g.page_in_block(ppn)));
        }
        for p in 0..g.planes() {
            assert_eq!(
                (m.channel_of(p), m.die_of(p), m.plane_in_die(p)),
                (g.channel_of(p), g.die_of(p), g.plane_addr(p).plane)
            );
        }
    }
}
