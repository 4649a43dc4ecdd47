//! Blocks waiting for an erase (Dirty Buffer Zones, replaced BMBs), kept per plane: online GC
//! asks for a given plane's on the migration path, once per page moved, so finding them must
//! not scan every waiting block.

use ftlsim_core::geometry::BlockId;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Per-plane FIFO queues of blocks to erase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EraseQueue {
    planes: Vec<VecDeque<BlockId>>,
    len: usize,
    /// The plane offline GC takes from next (round-robin over the planes).
    cursor: usize,
}

impl EraseQueue {
    pub(crate) fn new(planes: u32) -> EraseQueue {
        EraseQueue { planes: vec![VecDeque::new(); planes as usize], len: 0, cursor: 0 }
    }

    pub(crate) fn push(&mut self, plane: u32, b: BlockId) {
        self.planes[plane as usize].push_back(b);
        self.len += 1;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The oldest waiting block of `plane`.
    pub(crate) fn pop_plane(&mut self, plane: u32) -> Option<BlockId> {
        let b = self.planes[plane as usize].pop_front()?;
        self.len -= 1;
        Some(b)
    }

    /// The oldest waiting block of the next plane that has one, round-robin.
    pub(crate) fn pop_any(&mut self) -> Option<BlockId> {
        let n = self.planes.len();
        let p = (0..n).map(|i| (self.cursor + i) % n).find(|&p| !self.planes[p].is_empty())?;
        self.cursor = (p + 1) % n;
        self.pop_plane(p as u32)
    }

    /// Blocks waiting on `plane`.
    pub(crate) fn on_plane(&self, plane: u32) -> usize {
        self.planes[plane as usize].len()
    }

    /// Planes with a block waiting.
    pub(crate) fn planes_waiting(&self) -> impl Iterator<Item = u32> + '_ {
        self.planes.iter().enumerate().filter(|(_, q)| !q.is_empty()).map(|(p, _)| p as u32)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = BlockId> + '_ {
        self.planes.iter().flatten().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_plane_fifo_and_round_robin() {
        let mut q = EraseQueue::new(3);
        q.push(0, 10);
        q.push(0, 11);
        q.push(2, 20);
        assert_eq!((q.on_plane(0), q.planes_waiting().collect::<Vec<_>>()), (2, vec![0, 2]));
        assert_eq!(q.pop_plane(1), None);
        assert_eq!(q.pop_any(), Some(10));
        assert_eq!(q.pop_any(), Some(20), "round-robin moves to the next plane");
        assert_eq!(q.pop_any(), Some(11));
        assert!(q.is_empty() && q.pop_any().is_none());
    }
}
