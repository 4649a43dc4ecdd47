//! Which FDP placement handle a tenant's write names (docs/fdp.md): fio's `plid_select`
//! rules (`roundrobin`, `random`, `scheme` with its `dp_scheme` file) and two of ftlsim's, by
//! the write's size (a flash cache's small and large objects) and by the trace's device
//! (volume) column.

use crate::error::SimError;
use crate::host::Request;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One line of fio's `dp_scheme` file: writes starting in `[start, end)` bytes of the
/// namespace name `plid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemeEntry {
    /// First byte.
    pub start: u64,
    /// Byte past the last.
    pub end: u64,
    /// The placement handle.
    pub plid: u16,
    /// Its line in the file, for messages.
    pub line: u32,
}

/// How a tenant's writes pick their placement handle.
#[derive(Debug, Clone, PartialEq)]
pub enum PlacementRule {
    /// Every write on the controller's default handle 0 (no `plids`).
    Default,
    /// The handles in turn, one per write (fio's `roundrobin`, its default).
    RoundRobin(Vec<u16>),
    /// A handle drawn per write (fio's `random`), from the tenant's seed.
    Random {
        /// The handles drawn from.
        plids: Vec<u16>,
        /// Seed of the draw.
        seed: u64,
    },
    /// By the byte of the namespace where the write starts: the first entry holding it, and
    /// handle 0 when none does (fio's `scheme`).
    Scheme(Vec<SchemeEntry>),
    /// By the write's size: the handle of the first `(up_to_bytes, plid)` whose bound holds
    /// it, `beyond` for larger writes.
    Size {
        /// Upper bounds in bytes, increasing, with their handles.
        bounds: Vec<(u64, u16)>,
        /// The handle of writes larger than every bound.
        beyond: u16,
    },
    /// The request's device (volume) number in the trace is its handle.
    Device,
}

impl PlacementRule {
    /// The handles the rule can name, known before the run (the device rule's are not).
    pub fn handles(&self) -> Vec<u16> {
        match self {
            PlacementRule::Default | PlacementRule::Device => Vec::new(),
            PlacementRule::RoundRobin(p) | PlacementRule::Random { plids: p, .. } => p.clone(),
            PlacementRule::Scheme(s) => s.iter().map(|e| e.plid).collect(),
            PlacementRule::Size { bounds, beyond } => bounds.iter().map(|b| b.1).chain([*beyond]).collect(),
        }
    }
}

/// A queue's placement state: its rule, the round robin's position, the draw.
pub(super) struct Placer {
    rule: PlacementRule,
    next: usize,
    rng: Option<Xoshiro256PlusPlus>,
    /// The drive's handles (`None`: no `[fdp]`), for the device rule's check.
    handles: Option<u32>,
}

impl Placer {
    pub fn new(rule: PlacementRule, handles: Option<u32>) -> Placer {
        let rng = match rule {
            PlacementRule::Random { seed, .. } => Some(Xoshiro256PlusPlus::seed_from_u64(seed)),
            _ => None,
        };
        Placer { rule, next: 0, rng, handles }
    }

    /// The handle of write `req`, which starts `offset_bytes` into the namespace; `what`
    /// names it in an error (a device with no handle of that number).
    #[inline]
    pub fn place(&mut self, req: &Request, offset_bytes: u64, what: impl FnOnce() -> String) -> Result<u16, SimError> {
        Ok(match &self.rule {
            PlacementRule::Default => 0,
            PlacementRule::RoundRobin(p) => {
                let h = p[self.next];
                self.next = (self.next + 1) % p.len();
                h
            }
            PlacementRule::Random { plids, .. } => {
                let rng = self.rng.as_mut().expect("seeded for the random rule");
                plids[rng.gen_range(0..plids.len())]
            }
            PlacementRule::Scheme(s) => {
                s.iter().find(|e| (e.start..e.end).contains(&offset_bytes)).map_or(0, |e| e.plid)
            }
            PlacementRule::Size { bounds, beyond } => {
                let bytes = u64::from(req.sectors) * 512;
                bounds.iter().find(|b| bytes <= b.0).map_or(*beyond, |b| b.1)
            }
            PlacementRule::Device => {
                let n = self.handles.unwrap_or(0);
                if req.device >= n {
                    return Err(SimError::Request(format!(
                        "{}: plid_select=device names handle {} (the trace's device), beyond the drive's {n} \
                         (fdp.handles)",
                        what(),
                        req.device
                    )));
                }
                req.device as u16
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::IoOp;

    fn write(bytes: u64, device: u32) -> Request {
        Request { arrival_ns: 0, think_ns: 0, device, offset_sector: 0, sectors: (bytes / 512) as u32, op: IoOp::Write }
    }

    fn place(p: &mut Placer, bytes: u64, offset: u64, device: u32) -> Result<u16, SimError> {
        p.place(&write(bytes, device), offset, || "request 1".into())
    }

    #[test]
    fn each_rule_names_its_handle() {
        let mut rr = Placer::new(PlacementRule::RoundRobin(vec![2, 0, 1]), Some(3));
        let got: Vec<u16> = (0..5).map(|_| place(&mut rr, 4096, 0, 0).unwrap()).collect();
        assert_eq!(got, [2, 0, 1, 2, 0]);

        let scheme = vec![
            SchemeEntry { start: 0, end: 4096, plid: 1, line: 1 },
            SchemeEntry { start: 8192, end: 1 << 20, plid: 2, line: 2 },
        ];
        let mut s = Placer::new(PlacementRule::Scheme(scheme), Some(3));
        let got: Vec<u16> =
            [0, 4095, 4096, 8192, 1 << 20].iter().map(|&o| place(&mut s, 4096, o, 0).unwrap()).collect();
        assert_eq!(got, [1, 1, 0, 2, 0], "no entry holding the offset: handle 0, as fio");

        let mut z = Placer::new(PlacementRule::Size { bounds: vec![(4096, 1), (65536, 2)], beyond: 3 }, Some(4));
        let got: Vec<u16> =
            [512, 4096, 8192, 65536, 65536 + 512].iter().map(|&b| place(&mut z, b, 0, 0).unwrap()).collect();
        assert_eq!(got, [1, 1, 2, 2, 3]);

        let mut d = Placer::new(PlacementRule::Device, Some(4));
        assert_eq!(place(&mut d, 4096, 0, 3).unwrap(), 3);
        let e = place(&mut d, 4096, 0, 4).unwrap_err().to_string();
        assert!(e.contains("request 1") && e.contains("handle 4") && e.contains("fdp.handles"), "{e}");
    }

    #[test]
    fn the_random_rule_draws_every_handle_about_equally_and_repeats_with_its_seed() {
        let draw = |seed| {
            let mut r = Placer::new(PlacementRule::Random { plids: vec![0, 1, 2, 3], seed }, Some(4));
            (0..4000).map(|_| place(&mut r, 4096, 0, 0).unwrap()).collect::<Vec<_>>()
        };
        let a = draw(7);
        assert_eq!(a, draw(7));
        assert_ne!(a, draw(8));
        for h in 0..4 {
            let n = a.iter().filter(|&&x| x == h).count();
            assert!((900..1100).contains(&n), "handle {h}: {n} of 4000");
        }
    }
}
