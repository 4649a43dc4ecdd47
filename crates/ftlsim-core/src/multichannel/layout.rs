//! Static channel binding (seed 004 Sec. 3.1): logical pages striped RAID-0 style over the
//! channels, and the memory unit that serves each one.
//!
//! A *unit* is what runs its own FTL instance and its own operations: a channel (FI, GCA),
//! a plane of a channel (CF, which addresses planes independently, Sec. 3.3.3), or the
//! whole drive (SYNC, whose channels all perform one command). A *unit page* is what a unit
//! programs at once: one flash page, or the pages of synchronized planes (FI/GCA with
//! multi-plane chips: "doubles the block size and page size", Sec. 4.5), or a super page
//! across every channel and plane (SYNC, Sec. 2.2).

use crate::config::{ChannelMode, DriveConfig, Resolved};
use crate::error::ConfigError;
use crate::geometry::Lpn;

/// Where a host page lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Place {
    /// Unit index.
    pub unit: u32,
    /// The unit's logical (unit) page.
    pub unit_lpn: Lpn,
    /// Which flash page of the unit page (0 unless pages are synchronized).
    pub sub: u32,
}

/// RAID-0 striping of host pages over channels, then planes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeLayout {
    channels: u32,
    planes: u32,
    mode: ChannelMode,
}

impl StripeLayout {
    /// The layout of a `[multichannel]` drive.
    pub fn new(channels: u32, planes: u32, mode: ChannelMode) -> StripeLayout {
        assert!(channels >= 1 && planes >= 1);
        StripeLayout { channels, planes, mode }
    }

    /// Units with their own FTL.
    pub fn units(&self) -> u32 {
        match self.mode {
            ChannelMode::Sync => 1,
            ChannelMode::Fi | ChannelMode::Gca => self.channels,
            ChannelMode::Cf => self.channels * self.planes,
        }
    }

    /// Flash pages in a unit page.
    pub fn pages_per_unit_page(&self) -> u32 {
        match self.mode {
            ChannelMode::Sync => self.channels * self.planes,
            ChannelMode::Fi | ChannelMode::Gca => self.planes,
            ChannelMode::Cf => 1,
        }
    }

    /// The chip (channel) a unit belongs to: its planes must perform one operation type at
    /// a time (multi-plane commands, Sec. 3.3.3).
    pub fn chip_of(&self, unit: u32) -> u32 {
        match self.mode {
            ChannelMode::Cf => unit / self.planes,
            _ => unit,
        }
    }

    /// Units on the same chip as `unit`, itself included.
    pub fn siblings(&self, unit: u32) -> std::ops::Range<u32> {
        match self.mode {
            ChannelMode::Cf => {
                let first = self.chip_of(unit) * self.planes;
                first..first + self.planes
            }
            _ => unit..unit + 1,
        }
    }

    /// Where host page `lpn` (of one flash page's size) lives: channel `lpn % channels`
    /// (Sec. 3.1's `[logical page number [channel number]]`), then the channel's pages
    /// in turn over its planes.
    #[inline]
    pub fn place(&self, lpn: u64) -> Place {
        let (c, p) = (u64::from(self.channels), u64::from(self.planes));
        match self.mode {
            ChannelMode::Sync => {
                let k = c * p;
                Place { unit: 0, unit_lpn: (lpn / k) as Lpn, sub: (lpn % k) as u32 }
            }
            ChannelMode::Fi | ChannelMode::Gca => {
                let l = lpn / c;
                Place { unit: (lpn % c) as u32, unit_lpn: (l / p) as Lpn, sub: (l % p) as u32 }
            }
            ChannelMode::Cf => {
                let l = lpn / c;
                let unit = (lpn % c) * p + l % p;
                Place { unit: unit as u32, unit_lpn: (l / p) as Lpn, sub: 0 }
            }
        }
    }

    /// The drive config of one unit: one channel, chip, die and plane whose pages are unit
    /// pages; the same blocks per plane, pages per block and over-provisioning rule, so
    /// every unit holds the same logical space. No write buffer of its own (the channel
    /// system's buffer is in front of it) and no `[multichannel]` section.
    pub fn unit_config(&self, cfg: &DriveConfig) -> Result<Resolved, ConfigError> {
        let mut u = cfg.clone();
        u.multichannel = None;
        let k = self.pages_per_unit_page();
        u.geometry.channels = 1;
        u.geometry.chips_per_channel = 1;
        u.geometry.dies_per_chip = 1;
        u.geometry.planes_per_die = 1;
        u.geometry.page_size_bytes = cfg.geometry.page_size_bytes * k;
        u.geometry.spare_bytes_per_page = cfg.geometry.spare_bytes_per_page * k;
        u.geometry.spare_usable_bytes = cfg.geometry.spare_usable_bytes * k;
        u.host.write_buffer_bytes = Some(0);
        Resolved::validate(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fi_stripes_pages_over_channels_then_synchronized_planes() {
        let l = StripeLayout::new(4, 2, ChannelMode::Fi);
        assert_eq!((l.units(), l.pages_per_unit_page()), (4, 2));
        // Sec. 3.1: lsns 0-7 (page 0) in channel 0, page 1 in channel 1.
        assert_eq!(l.place(0), Place { unit: 0, unit_lpn: 0, sub: 0 });
        assert_eq!(l.place(1), Place { unit: 1, unit_lpn: 0, sub: 0 });
        assert_eq!(l.place(4), Place { unit: 0, unit_lpn: 0, sub: 1 });
        assert_eq!(l.place(8), Place { unit: 0, unit_lpn: 1, sub: 0 });
    }

    #[test]
    fn cf_addresses_planes_independently_and_sync_makes_super_pages() {
        let cf = StripeLayout::new(4, 2, ChannelMode::Cf);
        assert_eq!((cf.units(), cf.pages_per_unit_page()), (8, 1));
        assert_eq!(cf.place(4), Place { unit: 1, unit_lpn: 0, sub: 0 });
        assert_eq!(cf.place(5), Place { unit: 3, unit_lpn: 0, sub: 0 });
        assert_eq!(cf.place(8), Place { unit: 0, unit_lpn: 1, sub: 0 });
        assert_eq!((cf.chip_of(3), cf.siblings(3)), (1, 2..4));
        let s = StripeLayout::new(4, 2, ChannelMode::Sync);
        assert_eq!((s.units(), s.pages_per_unit_page()), (1, 8));
        assert_eq!(s.place(13), Place { unit: 0, unit_lpn: 1, sub: 5 });
        // Every host page has exactly one place.
        for l in [cf, s, StripeLayout::new(3, 2, ChannelMode::Gca)] {
            let mut seen = std::collections::HashSet::new();
            for lpn in 0..96u64 {
                assert!(seen.insert(l.place(lpn)), "{l:?}: {lpn} collides");
            }
        }
    }
}
