//! Reading first on dies that run one command at a time: when each die's queued work can
//! start next, kept up to date as queues and dies change, so that the replay loop's question
//! ("when does queued work start?"), asked several times a request, costs a lookup instead of
//! a scan of every waiting plane (over half the run time of a reading-first benchmark).
//!
//! A die's start is the earliest of its planes' front entries' starts (their ready time, or
//! when the die frees, whichever is later), `NONE` with nothing queued. Whatever may change it
//! (an entry queued or taken off, a command placed on the die, a barrier) marks the die; the
//! marked dies are recomputed together before the next question. A min-tree over the dies
//! answers "the earliest" at its root and finds the die holding it in log(dies) steps.

use super::SimTime;

/// A die with nothing queued.
pub(super) const NONE: SimTime = SimTime::MAX;

#[derive(Debug, Clone)]
pub(super) struct DieStarts {
    /// `tree[1]` is the root; die `d`'s start is the leaf `tree[leaves + d]`; every inner
    /// node holds the smaller of its children.
    tree: Vec<SimTime>,
    leaves: usize,
    marked: Vec<u32>,
    is_marked: Vec<bool>,
}

impl DieStarts {
    pub fn new(dies: u32) -> DieStarts {
        let leaves = (dies as usize).next_power_of_two();
        DieStarts { tree: vec![NONE; 2 * leaves], leaves, marked: Vec::new(), is_marked: vec![false; dies as usize] }
    }

    /// Die `die`'s start may have changed.
    #[inline]
    pub fn mark(&mut self, die: u32) {
        if !self.is_marked[die as usize] {
            self.is_marked[die as usize] = true;
            self.marked.push(die);
        }
    }

    /// The marked dies, taken off the list (recompute each and [`Self::set`] it).
    pub fn take_marked(&mut self, out: &mut Vec<u32>) {
        out.clear();
        out.append(&mut self.marked);
        for &d in out.iter() {
            self.is_marked[d as usize] = false;
        }
    }

    pub fn is_clean(&self) -> bool {
        self.marked.is_empty()
    }

    pub fn set(&mut self, die: u32, start: SimTime) {
        let mut i = self.leaves + die as usize;
        self.tree[i] = start;
        while i > 1 {
            i /= 2;
            let m = self.tree[2 * i].min(self.tree[2 * i + 1]);
            if self.tree[i] == m {
                break;
            }
            self.tree[i] = m;
        }
    }

    /// The earliest start of any die (`NONE` if nothing is queued). Only when clean.
    pub fn earliest(&self) -> SimTime {
        debug_assert!(self.is_clean(), "die starts read with dies still marked");
        self.tree[1]
    }

    /// The die with the earliest start, the lowest-numbered of equals. Only when clean.
    pub fn earliest_die(&self) -> u32 {
        debug_assert!(self.is_clean(), "die starts read with dies still marked");
        let mut i = 1;
        while i < self.leaves {
            i = if self.tree[2 * i] == self.tree[i] { 2 * i } else { 2 * i + 1 };
        }
        (i - self.leaves) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_finds_the_earliest_die_and_the_lowest_of_equals() {
        let mut s = DieStarts::new(5);
        assert_eq!(s.earliest(), NONE);
        for (d, t) in [(0, 50), (1, 30), (2, 70), (3, 30), (4, 90)] {
            s.set(d, t);
        }
        assert_eq!((s.earliest(), s.earliest_die()), (30, 1));
        s.set(1, NONE);
        assert_eq!((s.earliest(), s.earliest_die()), (30, 3));
        s.set(3, 100);
        assert_eq!((s.earliest(), s.earliest_die()), (50, 0));
        s.mark(2);
        s.mark(2);
        let mut m = Vec::new();
        s.take_marked(&mut m);
        assert_eq!(m, vec![2]);
        assert!(s.is_clean());
    }
}
