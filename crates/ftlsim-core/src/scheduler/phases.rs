//! The phases of each kind of flash operation, the formulas of docs/timing.md, written once:
//! placement (one operation, a multi-plane command of `n`, a run of page copies), the serial
//! mode and the load estimates all read [`PhaseTable`].
//!
//! A read is its command on the bus, the array's tR, the data out on the bus, then ECC decode
//! and (a whole page) the DRAM port; a program is the page out of DRAM, command and data on
//! the bus, then tPROG; an erase or a copy-back is its command, then the array. A multi-plane
//! command of `n` planes carries `n` commands and `n` pages on the bus and runs the array
//! once for all.

use super::bus::Bus;
use super::channel_bus::ChannelBus;
use super::{OpKind, SimTime};
use crate::config::{Derived, Timing};

/// How an operation's phases follow one another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Command, array, data out, ECC; the DRAM port when the data is a whole page.
    ReadOut,
    /// DRAM port, command and data in, array.
    WriteIn,
    /// Command, array (no data on the bus).
    CommandOnly,
}

/// One kind of operation on one plane, in ns.
#[derive(Debug, Clone, Copy)]
pub(super) struct Phases {
    /// Command and address cycles on the bus.
    pub cmd: u64,
    /// Data on the bus.
    pub data: u64,
    /// The array's work (tR, tPROG, tBERS, tCB).
    pub array: u64,
    /// ECC decode of data read to the controller.
    pub ecc: u64,
    /// DRAM port time of the data (0: an unlimited port, or no DRAM transfer).
    pub dram: u64,
    pub shape: Shape,
}

impl Phases {
    /// Bus time of one plane's part.
    #[inline(always)]
    pub fn bus(&self) -> u64 {
        self.cmd + self.data
    }

    /// Array time and bus time, the load an operation adds to its plane (dynamic
    /// allocation's and deferred work's estimates).
    #[inline(always)]
    pub fn estimate(&self) -> u64 {
        self.cmd + self.array + self.data
    }

    /// The controller's part (ECC, the DRAM port): in serial mode it runs in the same line
    /// of work.
    pub fn controller(&self) -> u64 {
        self.ecc + self.dram
    }

    /// A read of `n` planes on `unit`, its array free at `a0`, `array` its array time (0 on
    /// a register hit): (command start, plane free, data at the controller).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn read_out(
        &self,
        n: u64,
        bus: &mut ChannelBus,
        dram: &mut Bus,
        unit: usize,
        a0: SimTime,
        array: u64,
        now: SimTime,
    ) -> (SimTime, SimTime, SimTime) {
        let c = bus.reserve(unit, a0, n * self.cmd, now);
        let x = bus.reserve(unit, c + n * self.cmd + array, n * self.data, now);
        let out = x + n * self.data;
        (c, out, through_dram(dram, out + self.ecc, n * self.dram, now))
    }

    /// A program of `n` planes whose data is ready at `ready`, on `unit`, its array free at
    /// `a0`: the pages leave DRAM just before the planes can take them. (Transfer start,
    /// plane free.)
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn write_in(
        &self,
        n: u64,
        bus: &mut ChannelBus,
        dram: &mut Bus,
        unit: usize,
        ready: SimTime,
        a0: SimTime,
        now: SimTime,
    ) -> (SimTime, SimTime) {
        let from = through_dram(dram, ready.max(a0.saturating_sub(n * self.dram)), n * self.dram, now).max(a0);
        let b = bus.reserve(unit, from, n * self.bus(), now);
        (b, b + n * self.bus() + self.array)
    }

    /// An erase or copy-back of `n` planes on `unit`, its array free at `a0`: (command
    /// start, plane free).
    #[inline(always)]
    pub fn command_only(
        &self,
        n: u64,
        bus: &mut ChannelBus,
        unit: usize,
        a0: SimTime,
        now: SimTime,
    ) -> (SimTime, SimTime) {
        let b = bus.reserve(unit, a0, n * self.cmd, now);
        (b, b + n * self.cmd + self.array)
    }
}

/// The phases of every kind of operation but barriers, from the timing config.
#[derive(Debug, Clone)]
pub(super) struct PhaseTable {
    by_kind: [Phases; 5],
}

impl PhaseTable {
    /// The drive's phases: `t` its timing, `d` what the config derives from it.
    pub fn new(t: &Timing, d: &Derived) -> PhaseTable {
        let (cmd, ecc, dram) = (t.cmd_addr_ns, t.ecc_decode_ns, d.dram_page_transfer_ns);
        let phases = |cmd, data, array, ecc, dram, shape| Phases { cmd, data, array, ecc, dram, shape };
        PhaseTable {
            by_kind: [
                phases(cmd, d.page_transfer_ns, t.t_r_ns, ecc, dram, Shape::ReadOut),
                // The spare bytes go to the controller's SRAM, not through the DRAM port.
                phases(cmd, d.spare_transfer_ns, t.t_r_ns, ecc, 0, Shape::ReadOut),
                phases(cmd, d.page_transfer_ns, t.t_prog_ns, 0, dram, Shape::WriteIn),
                phases(cmd, 0, t.t_bers_ns, 0, 0, Shape::CommandOnly),
                // Copy-back: a read command and a program command.
                phases(2 * cmd, 0, d.t_copyback_ns, 0, 0, Shape::CommandOnly),
            ],
        }
    }

    /// The phases of `kind`.
    #[inline(always)]
    pub fn of(&self, kind: OpKind) -> &Phases {
        &self.by_kind[match kind {
            OpKind::Read => 0,
            OpKind::ReadSpare => 1,
            OpKind::Program => 2,
            OpKind::Erase => 3,
            OpKind::Copyback => 4,
            OpKind::Barrier => unreachable!("a barrier has no phases"),
        }]
    }
}

/// When data ready at `ready` is through the DRAM port, which it holds for `dur` at the
/// port's first gap (`dur` 0: an unlimited port).
#[inline]
pub(super) fn through_dram(dram: &mut Bus, ready: SimTime, dur: u64, now: SimTime) -> SimTime {
    if dur == 0 {
        return ready;
    }
    dram.reserve(ready, dur, now) + dur
}
