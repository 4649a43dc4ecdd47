//! A fixed number of flags, one bit each (64 to a word).

use serde::{Deserialize, Serialize};

/// Flags `0..n`, all clear at first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bits(Vec<u64>);

impl Bits {
    /// `n` clear flags.
    pub fn new(n: u64) -> Bits {
        Bits(vec![0; n.div_ceil(64) as usize])
    }

    /// Flag `i`.
    #[inline]
    pub fn get(&self, i: impl Into<u64>) -> bool {
        let i = i.into();
        self.0[(i / 64) as usize] & (1 << (i % 64)) != 0
    }

    /// The flags as words, flag `i` at bit `i % 64` of word `i / 64` (for scans 64 at a time).
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.0
    }

    /// Clear every flag.
    pub fn clear(&mut self) {
        self.0.fill(0);
    }

    /// Set flag `i` to `v`.
    #[inline]
    pub fn set(&mut self, i: impl Into<u64>, v: bool) {
        let i = i.into();
        let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
        if v {
            self.0[w] |= b;
        } else {
            self.0[w] &= !b;
        }
    }
}
