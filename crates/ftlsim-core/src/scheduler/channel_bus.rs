//! A channel bus's busy intervals, kept per array unit (a die, or a plane where planes run
//! apart): first fit over the channel, appends only.
//!
//! A unit's operations run one after another on its array, and each starts no earlier than
//! the array frees, after every bus transfer of the unit's earlier operations. So each
//! unit's intervals arrive in time order: a reservation appends to its unit's list and
//! searches only the other units' lists for a gap, where [`super::bus::Bus`], which holds
//! every interval of the bus in one sorted list, inserts between them. The starts are the
//! same as first fit over one list (property-tested against it below); what goes is the
//! insert's shifting of the list and its chunk bookkeeping, 10% of the benchmark's
//! instructions (docs/performance.md).

use super::SimTime;

/// Busy intervals of one channel bus, one time-ordered list per array unit on the channel.
#[derive(Debug, Clone)]
pub(super) struct ChannelBus {
    units: Vec<Lane>,
    /// `cursor[u * n + v]`: where unit `u`'s last search stopped in unit `v`'s list (an index
    /// counted from the list's first interval ever). A unit books in time order, so its next
    /// search in `v`'s list starts there and steps forward a few intervals at most instead
    /// of searching the list (the search was half of this bus's instructions).
    cursor: Vec<u64>,
    /// The latest end of any interval (0 when none was ever booked).
    last_end: SimTime,
}

/// One unit's intervals in time order: those before `head` ended (the later ones may have
/// too: the front is dropped only to make room); `iv[k]` is the `base + k`-th interval the
/// unit ever booked (touching ones merged).
#[derive(Debug, Clone, Default)]
struct Lane {
    iv: Vec<(SimTime, SimTime)>,
    head: usize,
    base: u64,
}

/// Intervals a cursor steps over before it searches the rest of the list instead.
const CURSOR_STEPS: usize = 8;

impl Lane {
    /// Append an interval. A full list first drops the intervals that ended at or before
    /// `now`, when they are half of it or more, rather than grow (so each interval is moved
    /// once on average): its capacity follows the live intervals, not their history, and
    /// nothing else touches its cold front (a search starts from a cursor, and an interval
    /// that ended cannot overlap a reservation from `now` on).
    #[inline(always)]
    fn push(&mut self, interval: (SimTime, SimTime), now: SimTime) {
        if self.iv.len() == self.iv.capacity() {
            self.make_room(now);
        }
        self.iv.push(interval);
    }

    /// The full list's part of [`Lane::push`], once every few hundred intervals.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, now: SimTime) {
        while self.head < self.iv.len() && self.iv[self.head].1 <= now {
            self.head += 1;
        }
        if self.head > 0 && 2 * self.head >= self.iv.len() {
            self.iv.drain(..self.head);
            self.base += self.head as u64;
            self.head = 0;
        }
    }

    /// Position of the first live interval that ends after `t`, starting from `cursor` (an
    /// absolute index: where the searching unit's last search stopped, at an earlier `t`).
    #[inline(always)]
    fn first_ending_after(&self, t: SimTime, cursor: u64) -> usize {
        let mut i = (cursor.saturating_sub(self.base) as usize).clamp(self.head, self.iv.len());
        // A unit searches after its own last transfer, which no other unit's interval before
        // the cursor outlasts (an interval that touched it and grew would overlap it).
        assert!(i == self.head || self.iv[i - 1].1 <= t, "a unit searched the bus back in time");
        for _ in 0..CURSOR_STEPS {
            match self.iv.get(i) {
                Some(&(_, e)) if e <= t => i += 1,
                _ => return i,
            }
        }
        i + self.iv[i..].partition_point(|&(_, e)| e <= t)
    }
}

impl ChannelBus {
    /// A bus shared by `units` array units.
    pub(super) fn new(units: usize) -> ChannelBus {
        assert!(units > 0, "a channel has at least one array unit");
        ChannelBus { units: vec![Lane::default(); units], cursor: vec![0; units * units], last_end: 0 }
    }

    /// Reserve `dur` for `unit` at the first gap of the channel at or after `earliest`; returns
    /// the start. `earliest` must not be before `now` nor before the end of the unit's last
    /// reservation (its array is busy until then).
    ///
    /// Inlined at the scheduler's calls: about half of them find the bus free after every
    /// interval booked, and the search for a gap is a call apart.
    #[inline(always)]
    pub(super) fn reserve(&mut self, unit: usize, earliest: SimTime, dur: SimTime, now: SimTime) -> SimTime {
        assert!(earliest >= now, "bus reservation at {earliest} before the clock {now}");
        if dur == 0 {
            return earliest;
        }
        let t = if self.last_end > earliest { self.first_gap(unit, earliest, dur) } else { earliest };
        let lane = &mut self.units[unit];
        match lane.iv.last_mut() {
            Some(last) if last.1 == t => last.1 = t + dur,
            Some(&mut (_, e)) => {
                assert!(e < t, "unit {unit} booked the bus at {t}, before its last transfer ends ({e})");
                lane.push((t, t + dur), now);
            }
            None => lane.push((t, t + dur), now),
        }
        self.last_end = self.last_end.max(t + dur);
        t
    }

    /// Where `unit` can book `dur` from `earliest` on, some interval ending after `earliest`.
    #[inline(never)]
    fn first_gap(&mut self, unit: usize, earliest: SimTime, dur: SimTime) -> SimTime {
        let n = self.units.len();
        let mut t = earliest;
        if n == 2 {
            // Two units (the `default` drive's two dies on a channel): the unit's own intervals
            // all end by `earliest` (see `reserve`), so the other's list alone is searched, once.
            self.move_past(unit, 1 - unit, &mut t, dur);
            return t;
        }
        // Move past every interval that overlaps [t, t + dur) until none does: each move
        // goes to the end of an overlapping interval, which no earlier start can pass.
        let mut moved = true;
        while moved {
            moved = false;
            for v in 0..n {
                moved |= self.move_past(unit, v, &mut t, dur);
            }
        }
        t
    }

    /// Move `t` past the intervals of unit `v`'s list that overlap `[t, t + dur)`, searching
    /// from where `unit`'s last search of that list stopped; whether `t` moved.
    #[inline(always)]
    fn move_past(&mut self, unit: usize, v: usize, t: &mut SimTime, dur: SimTime) -> bool {
        let lane = &self.units[v];
        if lane.iv.last().is_none_or(|&(_, e)| e <= *t) {
            return false;
        }
        let cursor = &mut self.cursor[unit * self.units.len() + v];
        let mut i = lane.first_ending_after(*t, *cursor);
        *cursor = lane.base + i as u64;
        let mut moved = false;
        while let Some(&(s, e)) = lane.iv.get(i) {
            if *t + dur <= s {
                break;
            }
            *t = e;
            moved = true;
            i += 1;
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::super::bus::tests::reference;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_unit_fills_the_gaps_between_other_units_transfers() {
        let mut bus = ChannelBus::new(2);
        for k in 0..100u64 {
            assert_eq!(bus.reserve(0, k * 10_000, 5_000, 0), k * 10_000);
        }
        // Unit 1 fits between unit 0's transfers, and a longer one waits past them.
        assert_eq!(bus.reserve(1, 2_000, 5_000, 0), 5_000);
        assert_eq!(bus.reserve(1, 10_000, 6_000, 0), 995_000);
        // Touching intervals of one unit merge.
        assert_eq!(bus.reserve(1, 1_001_000, 1_000, 990_000), 1_001_000);
        assert_eq!(bus.units[1].iv.last(), Some(&(995_000, 1_002_000)));
        // Unit 0 waits for unit 1.
        assert_eq!(bus.reserve(0, 995_000, 1_000, 990_000), 1_002_000);
    }

    #[test]
    fn a_list_stays_as_long_as_its_live_intervals() {
        // Two units book a million transfers as the clock follows them: each list keeps
        // about the intervals still to come (here 100), not the million.
        let mut bus = ChannelBus::new(2);
        for k in 0..1_000_000u64 {
            let now = k.saturating_sub(100) * 10_000;
            assert_eq!(bus.reserve((k % 2) as usize, k * 10_000, 5_000, now), k * 10_000);
        }
        for lane in &bus.units {
            assert!(lane.iv.capacity() <= 512, "a list of capacity {} for about 50 live intervals", lane.iv.capacity());
            assert_eq!(lane.base + lane.iv.len() as u64, 500_000, "every interval counted");
        }
    }

    #[test]
    #[should_panic(expected = "before its last transfer ends")]
    fn a_unit_booking_before_its_last_transfer_is_refused() {
        let mut bus = ChannelBus::new(2);
        bus.reserve(0, 10_000, 5_000, 0);
        bus.reserve(1, 0, 5_000, 0);
        // Unit 0 asks for the free gap [0, 5 us): its array was still busy then.
        bus.reserve(0, 0, 2_000, 0);
    }

    proptest! {
        /// Units whose arrays take turns with their transfers (each books at or after the end
        /// of its last transfer plus some array time), some near the clock and some far ahead
        /// of it, as host I/O and foreground GC make them: every start agrees with first fit
        /// over one list of all intervals.
        #[test]
        fn channel_bus_agrees_with_plain_first_fit(
            units in 1usize..5,
            ops in proptest::collection::vec((0usize..8, 0u64..2_000_000, 0u64..12_000, 0u64..3_000, any::<bool>()), 1..3000)
        ) {
            let (mut bus, mut list, mut now) = (ChannelBus::new(units), Vec::new(), 0u64);
            let mut unit_free = vec![0u64; units];
            for (u, ahead, dur, step, far) in ops {
                let u = u % units;
                now += step;
                let earliest = unit_free[u].max(now) + if far { ahead * 50 } else { ahead % 20_000 };
                let got = bus.reserve(u, earliest, dur, now);
                prop_assert_eq!(got, reference(&mut list, earliest, dur, now));
                prop_assert!(got >= earliest);
                unit_free[u] = got + dur;
            }
        }
    }
}
