//! How often each page of a trace was touched, kept as runs of pages with equal counts
//! (issue 58): adding a request's pages costs the runs its range spans (never more than its
//! pages), and memory follows the requests (at most two new runs each), not their sizes, so a
//! 2 TiB request is one run where a map of pages needed half a billion entries.

use std::collections::{BTreeMap, HashMap};

/// Access counts per device over pages, as runs: a device's map holds, at each page where the
/// count changes, the count from there to the next such page (0 past the last run).
#[derive(Debug, Default, Clone)]
pub struct PageRuns {
    devices: HashMap<u32, BTreeMap<u64, u64>>,
}

impl PageRuns {
    /// No page touched.
    pub fn new() -> PageRuns {
        PageRuns::default()
    }

    /// Count one access to each page in `[first, end)` of `device`.
    pub fn add(&mut self, device: u32, first: u64, end: u64) {
        if first >= end {
            return;
        }
        let runs = self.devices.entry(device).or_default();
        split(runs, first);
        split(runs, end);
        for (_, c) in runs.range_mut(first..end) {
            *c += 1;
        }
        // Runs of equal counts either side of the range's edges join again.
        join(runs, first);
        join(runs, end);
        debug_assert!(runs.values().next_back() == Some(&0), "the last run of a device ends the touched pages");
    }

    /// Pages touched at least once.
    pub fn pages(&self) -> u64 {
        self.runs().map(|(_, first, end, _)| end - first).sum()
    }

    /// Every run of touched pages: (device, first page, end page, accesses of each page), by
    /// device and page (devices in no particular order).
    pub fn runs(&self) -> impl Iterator<Item = (u32, u64, u64, u64)> + '_ {
        self.devices.iter().flat_map(|(&d, runs)| {
            runs.iter()
                .zip(runs.iter().skip(1))
                .filter(|((_, &c), _)| c > 0)
                .map(move |((&first, &c), (&end, _))| (d, first, end, c))
        })
    }

    /// The share of all page accesses that go to the `share` most accessed of the touched
    /// pages (at least one page); 0 with no page touched.
    pub fn top_access_share(&self, share: f64) -> f64 {
        let mut runs: Vec<(u64, u64)> = self.runs().map(|(_, first, end, c)| (c, end - first)).collect();
        let pages: u64 = runs.iter().map(|r| r.1).sum();
        let total: u128 = runs.iter().map(|&(c, n)| u128::from(c) * u128::from(n)).sum();
        if total == 0 {
            return 0.0;
        }
        runs.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
        let mut want = ((pages as f64 * share).ceil() as u64).max(1);
        let mut top: u128 = 0;
        for (c, n) in runs {
            let take = n.min(want);
            top += u128::from(c) * u128::from(take);
            want -= take;
            if want == 0 {
                break;
            }
        }
        top as f64 / total as f64
    }
}

/// Make `at` a run boundary (its count: the run it falls in).
fn split(runs: &mut BTreeMap<u64, u64>, at: u64) {
    if !runs.contains_key(&at) {
        let c = runs.range(..at).next_back().map_or(0, |(_, &c)| c);
        runs.insert(at, c);
    }
}

/// Remove the boundary at `at` when the run before it has the same count.
fn join(runs: &mut BTreeMap<u64, u64>, at: u64) {
    let here = runs[&at];
    let before = runs.range(..at).next_back().map_or(0, |(_, &c)| c);
    if here == before {
        runs.remove(&at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_huge_request_is_one_run() {
        let mut r = PageRuns::new();
        r.add(0, 0, 1 << 29);
        r.add(0, 10, 20);
        assert_eq!(r.pages(), 1 << 29);
        assert_eq!(r.devices[&0].len(), 4, "{:?}", r.devices[&0]);
        // The ten pages accessed twice are the top of 2^29: 20 accesses of 2^29 + 10.
        let top = r.top_access_share(1e-9);
        assert!((top - 2.0 / ((1u64 << 29) + 10) as f64).abs() < 1e-12, "{top}");
    }

    proptest! {
        /// Against a map of pages: the same footprint, the same counts, the same top shares.
        #[test]
        fn runs_count_as_a_map_of_pages_does(reqs in prop::collection::vec((0u32..3, 0u64..200, 1u64..40), 1..60)) {
            let mut runs = PageRuns::new();
            let mut pages: HashMap<(u32, u64), u64> = HashMap::new();
            for &(d, first, len) in &reqs {
                runs.add(d, first, first + len);
                for p in first..first + len {
                    *pages.entry((d, p)).or_insert(0) += 1;
                }
            }
            prop_assert_eq!(runs.pages(), pages.len() as u64);
            for (d, first, end, c) in runs.runs() {
                for p in first..end {
                    prop_assert_eq!(pages[&(d, p)], c);
                }
            }
            let mut counts: Vec<u64> = pages.values().copied().collect();
            counts.sort_unstable_by(|a, b| b.cmp(a));
            let total: u64 = counts.iter().sum();
            for share in [0.01, 0.1, 0.5] {
                let n = ((counts.len() as f64 * share).ceil() as usize).max(1);
                let want = counts[..n].iter().sum::<u64>() as f64 / total as f64;
                prop_assert!((runs.top_access_share(share) - want).abs() < 1e-12);
            }
            // No two neighbouring runs of a device have equal counts.
            for m in runs.devices.values() {
                let v: Vec<u64> = m.values().copied().collect();
                prop_assert!(v.windows(2).all(|w| w[0] != w[1]), "{:?}", m);
            }
        }
    }
}
