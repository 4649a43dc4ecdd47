//! Drive geometry and packed physical addresses.
//!
//! Planes are numbered so that consecutive plane indices stripe across channels first,
//! then chips, dies and planes within a die (channel-way-die-plane order, as MQSim's
//! default allocation scheme). Round-robin allocation over plane indices therefore
//! spreads consecutive writes over every channel before it reuses one.
//!
//! A physical page number (`Ppn`) packs `(plane, block, page)` as
//! `(plane * blocks_per_plane + block) * pages_per_block + page`; a global block id is
//! `plane * blocks_per_plane + block`. Both fit in `u32` (checked at validation), which
//! keeps every per-page array at four bytes an entry.

use serde::{Deserialize, Serialize};

pub use ftlsim_requests::host::Lpn;
/// Physical page number, packed as described in the module header.
pub type Ppn = u32;
/// Global block id: `plane * blocks_per_plane + block_in_plane`.
pub type BlockId = u32;
/// Global plane index in channel-way-die-plane order.
pub type PlaneId = u32;

/// Marker for "no page" / "no block" in compact arrays.
pub const NONE: u32 = u32::MAX;

/// The physical shape of the flash array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    /// Independent channel buses.
    pub channels: u32,
    /// Chips (packages/ways) sharing one channel bus.
    pub chips_per_channel: u32,
    /// Dies per chip; dies run operations independently.
    pub dies_per_chip: u32,
    /// Planes per die; see `timing.plane_concurrency` for how they may overlap.
    pub planes_per_die: u32,
    /// Physical blocks per plane, over-provisioning included.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Data bytes per page.
    pub page_size_bytes: u32,
    /// Spare (out-of-band) bytes per page.
    pub spare_bytes_per_page: u32,
    /// Spare bytes left for FTL metadata after ECC parity.
    pub spare_usable_bytes: u32,
}

/// Coordinates of one plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaneAddr {
    /// Channel index.
    pub channel: u32,
    /// Chip index within the channel.
    pub chip: u32,
    /// Die index within the chip.
    pub die: u32,
    /// Plane index within the die.
    pub plane: u32,
}

impl Geometry {
    /// Total number of planes.
    pub fn planes(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip * self.planes_per_die
    }
    /// Total number of dies.
    pub fn dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    /// Total number of blocks.
    pub fn blocks(&self) -> u32 {
        self.planes() * self.blocks_per_plane
    }
    /// Total number of physical pages.
    pub fn pages(&self) -> u32 {
        self.blocks() * self.pages_per_block
    }
    /// Pages per plane.
    pub fn pages_per_plane(&self) -> u32 {
        self.blocks_per_plane * self.pages_per_block
    }
    /// Raw capacity in bytes (data area only).
    pub fn raw_bytes(&self) -> u64 {
        u64::from(self.pages()) * u64::from(self.page_size_bytes)
    }
    /// 512-byte sectors per page.
    pub fn sectors_per_page(&self) -> u32 {
        self.page_size_bytes / 512
    }
    /// Plane of a global block id.
    #[inline]
    pub fn plane_of_block(&self, block: BlockId) -> PlaneId {
        block / self.blocks_per_plane
    }
    /// Block of a physical page.
    #[inline]
    pub fn block_of(&self, ppn: Ppn) -> BlockId {
        ppn / self.pages_per_block
    }
    /// Page index within its block.
    #[inline]
    pub fn page_in_block(&self, ppn: Ppn) -> u32 {
        ppn % self.pages_per_block
    }
    /// Plane of a physical page.
    #[inline]
    pub fn plane_of(&self, ppn: Ppn) -> PlaneId {
        ppn / self.pages_per_plane()
    }
    /// First page of a block.
    #[inline]
    pub fn first_page(&self, block: BlockId) -> Ppn {
        block * self.pages_per_block
    }
    /// First block of a plane.
    #[inline]
    pub fn first_block(&self, plane: PlaneId) -> BlockId {
        plane * self.blocks_per_plane
    }
    /// Channel of a plane (the fastest-varying coordinate).
    #[inline]
    pub fn channel_of(&self, plane: PlaneId) -> u32 {
        plane % self.channels
    }
    /// Global die index of a plane (planes of one die share it).
    #[inline]
    pub fn die_of(&self, plane: PlaneId) -> u32 {
        plane % self.dies()
    }
    /// Chips in the drive.
    #[inline]
    pub fn chips(&self) -> u32 {
        self.channels * self.chips_per_channel
    }
    /// Global chip index of a plane.
    #[inline]
    pub fn chip_of(&self, plane: PlaneId) -> u32 {
        plane % self.chips()
    }
    /// Coordinates of a plane.
    pub fn plane_addr(&self, plane: PlaneId) -> PlaneAddr {
        let channel = plane % self.channels;
        let rest = plane / self.channels;
        let chip = rest % self.chips_per_channel;
        let rest = rest / self.chips_per_channel;
        let die = rest % self.dies_per_chip;
        PlaneAddr { channel, chip, die, plane: rest / self.dies_per_chip }
    }
    /// Inverse of [`Geometry::plane_addr`].
    pub fn plane_id(&self, a: PlaneAddr) -> PlaneId {
        ((a.plane * self.dies_per_chip + a.die) * self.chips_per_channel + a.chip) * self.channels + a.channel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn small() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 3,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size_bytes: 4096,
            spare_bytes_per_page: 128,
            spare_usable_bytes: 32,
        }
    }

    #[test]
    fn plane_addr_round_trips_and_stripes_channels_first() {
        let g = small();
        for p in 0..g.planes() {
            let a = g.plane_addr(p);
            assert_eq!(g.plane_id(a), p);
            assert_eq!(g.channel_of(p), a.channel);
        }
        assert_eq!(g.plane_addr(1).channel, 1);
        assert_eq!(g.plane_addr(2).chip, 1);
        // Planes of one die share the die index.
        let a = PlaneAddr { channel: 1, chip: 2, die: 1, plane: 0 };
        let b = PlaneAddr { plane: 1, ..a };
        assert_eq!(g.die_of(g.plane_id(a)), g.die_of(g.plane_id(b)));
        assert_ne!(g.plane_id(a), g.plane_id(b));
    }

    #[test]
    fn ppn_packing() {
        let g = small();
        let ppn = g.first_page(g.first_block(5) + 3) + 2;
        assert_eq!(g.plane_of(ppn), 5);
        assert_eq!(g.block_of(ppn), 5 * 8 + 3);
        assert_eq!(g.page_in_block(ppn), 2);
        assert_eq!(g.pages(), 2 * 3 * 2 * 2 * 8 * 4);
    }
}
