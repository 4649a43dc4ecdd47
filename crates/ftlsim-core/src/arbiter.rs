//! Command arbitration among submission queues, as the NVMe Base Specification defines it
//! ("Command Arbitration"; issue 39): which tenant's queue the controller takes its next
//! command from.
//!
//! - Round robin: the queues take turns; a queue's turn launches up to `burst` commands
//!   (the Arbitration Burst) while it has commands ready.
//! - Weighted round robin with urgent priority class: urgent queues come first, strictly,
//!   round robin among themselves; then the high, medium and low classes share what is left
//!   by their weights, round robin within a class. A class spends one credit per command; when
//!   no class with a ready queue has credit left, every class gets its weight again. The
//!   specification leaves the credit scheme to the controller: this is the usual one (and
//!   gives each class exactly its weight's share while all are busy).
//!
//! Weights and the burst are counts of commands; the Arbitration feature (01h) stores each
//! weight as one less and the burst as a power of two, 111b for no limit (`u32::MAX` here).
//! Spec: NVMe Base Specification 2.1, Sec. 3.4.4.
//!
//! The arbiter holds no requests: `next` asks the caller which queues have a command ready,
//! and asserts that the queue it chose has one. The replay loop's tenants use it
//! (`sim/tenants.rs`): a command is ready when its tenant's request issues first.

/// A submission queue's priority class (weighted round robin only; round robin ignores it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorityClass {
    /// Served before every other class.
    Urgent,
    /// Weighted classes, in the order the arbiter visits them.
    High,
    /// See [`PriorityClass::High`].
    Medium,
    /// See [`PriorityClass::High`].
    Low,
}

impl PriorityClass {
    /// Every class, urgent first.
    pub const ALL: [PriorityClass; 4] =
        [PriorityClass::Urgent, PriorityClass::High, PriorityClass::Medium, PriorityClass::Low];

    /// Its name in tenant specs and results.json.
    pub fn name(self) -> &'static str {
        match self {
            PriorityClass::Urgent => "urgent",
            PriorityClass::High => "high",
            PriorityClass::Medium => "medium",
            PriorityClass::Low => "low",
        }
    }

    /// Index of a weighted class (high 0, medium 1, low 2); None for urgent.
    fn weighted(self) -> Option<usize> {
        match self {
            PriorityClass::Urgent => None,
            PriorityClass::High => Some(0),
            PriorityClass::Medium => Some(1),
            PriorityClass::Low => Some(2),
        }
    }
}

/// The arbitration mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arbitration {
    /// Every queue alike.
    RoundRobin,
    /// Urgent first, then high, medium and low by these weights (each >= 1).
    WeightedRoundRobin {
        /// Commands per round of the high, medium and low classes.
        weights: [u32; 3],
    },
}

/// Which queue launches the next command.
#[derive(Debug, Clone)]
pub struct Arbiter {
    mechanism: Arbitration,
    classes: Vec<PriorityClass>,
    /// Commands a queue launches in one turn at most (the Arbitration Burst, >= 1).
    burst: u32,
    /// The queue whose turn it is, and the commands its turn may still launch.
    turn: Option<(usize, u32)>,
    /// The queue after which the next turn starts: slot 0 for round robin and the urgent
    /// class, 1-3 for the high, medium and low classes.
    cursor: [usize; 4],
    /// Credits left of the high, medium and low classes in this round.
    credits: [u32; 3],
}

impl Arbiter {
    /// An arbiter over queues of these classes. Panics on an empty queue list, a zero burst
    /// or a zero weight: the run's settings are validated before (each key named there).
    pub fn new(mechanism: Arbitration, classes: Vec<PriorityClass>, burst: u32) -> Arbiter {
        assert!(!classes.is_empty(), "an arbiter needs a queue");
        assert!(burst >= 1, "the arbitration burst is at least one command");
        let credits = match mechanism {
            Arbitration::RoundRobin => [0; 3],
            Arbitration::WeightedRoundRobin { weights } => {
                assert!(weights.iter().all(|&w| w >= 1), "weights are at least 1");
                weights
            }
        };
        let last = classes.len() - 1;
        Arbiter { mechanism, classes, burst, turn: None, cursor: [last; 4], credits }
    }

    /// The queue to take the next command from, among those `ready` says have one; None when
    /// none has.
    pub fn next(&mut self, ready: impl Fn(usize) -> bool) -> Option<usize> {
        let q = match self.mechanism {
            Arbitration::RoundRobin => self.turn_of(&ready, Eligible::Any),
            Arbitration::WeightedRoundRobin { weights } => self.next_weighted(&ready, weights),
        }?;
        assert!(ready(q), "the arbiter chose queue {q}, which has no command ready");
        if let Some(c) = self.classes[q].weighted().filter(|_| self.mechanism != Arbitration::RoundRobin) {
            self.credits[c] -= 1;
            if self.credits[c] == 0 {
                // The class's share of this round is spent: so is the queue's turn.
                self.turn = None;
            }
        }
        Some(q)
    }

    fn next_weighted(&mut self, ready: &impl Fn(usize) -> bool, weights: [u32; 3]) -> Option<usize> {
        if self.any_ready(ready, Eligible::Urgent) {
            return self.turn_of(ready, Eligible::Urgent);
        }
        if !self.any_ready(ready, Eligible::WithCredit) {
            if !(0..3).any(|c| self.any_ready(ready, Eligible::Class(c))) {
                return None;
            }
            self.credits = weights;
        }
        if let Some(q) = self.continue_turn(ready, Eligible::WithCredit) {
            return Some(q);
        }
        let c = (0..3).find(|&c| self.credits[c] > 0 && self.any_ready(ready, Eligible::Class(c)))?;
        self.new_turn(ready, Eligible::Class(c))
    }

    fn eligible(&self, q: usize, e: Eligible) -> bool {
        let class = self.classes[q];
        match e {
            Eligible::Any => true,
            Eligible::Urgent => class == PriorityClass::Urgent,
            Eligible::Class(c) => class.weighted() == Some(c),
            Eligible::WithCredit => class.weighted().is_some_and(|c| self.credits[c] > 0),
        }
    }

    fn any_ready(&self, ready: &impl Fn(usize) -> bool, e: Eligible) -> bool {
        (0..self.classes.len()).any(|q| ready(q) && self.eligible(q, e))
    }

    /// The current turn if it goes on, else a new one.
    fn turn_of(&mut self, ready: &impl Fn(usize) -> bool, e: Eligible) -> Option<usize> {
        self.continue_turn(ready, e).or_else(|| self.new_turn(ready, e))
    }

    /// The queue whose turn it is, again, if its burst allows, it is ready and eligible.
    fn continue_turn(&mut self, ready: &impl Fn(usize) -> bool, e: Eligible) -> Option<usize> {
        let (q, left) = self.turn?;
        if left > 0 && ready(q) && self.eligible(q, e) {
            self.turn = Some((q, left - 1));
            return Some(q);
        }
        self.turn = None;
        None
    }

    /// A new turn for the next ready, eligible queue after the cursor of its kind.
    fn new_turn(&mut self, ready: &impl Fn(usize) -> bool, e: Eligible) -> Option<usize> {
        let slot = match e {
            Eligible::Any | Eligible::Urgent | Eligible::WithCredit => 0,
            Eligible::Class(c) => c + 1,
        };
        let n = self.classes.len();
        let from = self.cursor[slot];
        let q = (1..=n).map(|i| (from + i) % n).find(|&q| ready(q) && self.eligible(q, e))?;
        self.cursor[slot] = q;
        self.turn = Some((q, self.burst - 1));
        Some(q)
    }
}

/// Which queues a step of the arbiter may choose.
#[derive(Debug, Clone, Copy)]
enum Eligible {
    /// Every queue (round robin).
    Any,
    /// The urgent class's.
    Urgent,
    /// Weighted class `c`'s (high 0, medium 1, low 2).
    Class(usize),
    /// A weighted class's with credit left.
    WithCredit,
}

impl std::str::FromStr for PriorityClass {
    type Err = String;

    fn from_str(s: &str) -> Result<PriorityClass, String> {
        PriorityClass::ALL.iter().copied().find(|c| c.name() == s).ok_or_else(|| {
            format!("expected {}", PriorityClass::ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PriorityClass::*;

    fn picks(arb: &mut Arbiter, n: usize, ready: impl Fn(usize) -> bool) -> Vec<usize> {
        (0..n).map(|_| arb.next(&ready).expect("a queue is ready")).collect()
    }

    fn shares(p: &[usize], queues: usize) -> Vec<usize> {
        (0..queues).map(|q| p.iter().filter(|&&x| x == q).count()).collect()
    }

    #[test]
    fn round_robin_takes_turns_of_a_burst() {
        let mut a = Arbiter::new(Arbitration::RoundRobin, vec![High, Low, Urgent], 2);
        assert_eq!(picks(&mut a, 8, |_| true), [0, 0, 1, 1, 2, 2, 0, 0]);
        // A queue with nothing ready loses its turn at once.
        let mut a = Arbiter::new(Arbitration::RoundRobin, vec![High, Low, Urgent], 4);
        assert_eq!(picks(&mut a, 5, |q| q != 1), [0, 0, 0, 0, 2]);
        assert_eq!(a.next(|_| false), None);
    }

    #[test]
    fn weighted_classes_share_by_their_weights() {
        let weights = [4, 2, 1];
        let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights }, vec![High, Medium, Low, High], 1);
        let p = picks(&mut a, 7_000, |_| true);
        // The high class (queues 0 and 3) gets 4 of 7, split evenly; medium 2 of 7; low 1 of 7.
        assert_eq!(shares(&p, 4), [2_000, 2_000, 1_000, 2_000]);
    }

    #[test]
    fn an_idle_class_leaves_its_share_to_the_others() {
        let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [3, 1, 1] }, vec![High, Medium, Low], 1);
        let p = picks(&mut a, 4_000, |q| q != 0);
        assert_eq!(shares(&p, 3), [0, 2_000, 2_000]);
    }

    #[test]
    fn urgent_queues_come_first() {
        let mut a =
            Arbiter::new(Arbitration::WeightedRoundRobin { weights: [1, 1, 1] }, vec![High, Urgent, Low, Urgent], 1);
        assert_eq!(picks(&mut a, 6, |_| true), [1, 3, 1, 3, 1, 3]);
        assert_eq!(picks(&mut a, 4, |q| q == 0 || q == 2), [0, 2, 0, 2]);
    }

    proptest::proptest! {
        /// With every queue always ready, each weighted class gets its weight's share of every
        /// whole round, exactly, whatever the burst and however its queues are mixed. With a
        /// burst of one, a class's queues share alike (within one command). A longer burst
        /// cut short by the class's credits still counts as that queue's turn, so its queues
        /// can share unevenly (weight 4, burst 3, two queues: 3 and 1 a round).
        #[test]
        fn shares_follow_the_weights(
            weights in proptest::array::uniform3(1u32..8),
            kinds in proptest::collection::vec(0usize..3, 1..8),
            burst in 1u32..5,
        ) {
            let classes: Vec<PriorityClass> = kinds.iter().map(|&k| [High, Medium, Low][k]).collect();
            let present: Vec<usize> = (0..3).filter(|c| kinds.contains(c)).collect();
            let round: u32 = present.iter().map(|&c| weights[c]).sum();
            let rounds = 60 * 7 * 6 * 5; // a multiple of every queue count and burst
            let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights }, classes.clone(), burst);
            let p = picks(&mut a, (round * rounds) as usize, |_| true);
            let got = shares(&p, classes.len());
            for &c in &present {
                let members: Vec<usize> = (0..classes.len()).filter(|&q| kinds[q] == c).collect();
                let class_total: usize = members.iter().map(|&q| got[q]).sum();
                proptest::prop_assert_eq!(class_total, (weights[c] * rounds) as usize);
                let (lo, hi) = members.iter().fold((usize::MAX, 0), |(lo, hi), &q| (lo.min(got[q]), hi.max(got[q])));
                if burst == 1 {
                    proptest::prop_assert!(hi - lo <= 1, "queues of class {} got {:?}", c, got);
                }
            }
        }
    }

    #[test]
    fn a_burst_stays_with_its_queue_while_credits_last() {
        let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [2, 2, 2] }, vec![High, Medium], 4);
        // The high queue's burst of 4 stops at its class's 2 credits.
        assert_eq!(picks(&mut a, 8, |_| true), [0, 0, 1, 1, 0, 0, 1, 1]);
    }
}
