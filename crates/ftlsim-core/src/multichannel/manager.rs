//! Channel management (seed 004 Sec. 3.2-3.3, Table I): when a unit starts and stops early
//! garbage collection, as pure decisions on a unit's view of the channel system, so that
//! every condition is testable on scripted states.
//!
//! Garbage collection is *mandatory* when the unit's FTL has run out of free space, *early*
//! when a manager starts it before that.
//! - GCA (Sec. 3.2, Table I): a unit starts early GC when all hold: (1) the write buffer is
//!   full, (2) its dirty pages are depleted, (3) another unit is undergoing mandatory GC,
//!   (4) it has at most N_s spare blocks. It stops when both hold: (1) its dirty pages have
//!   arrived, (2) it is at a preemption point (after each step with preemption points, after
//!   the victim's erase without).
//! - CF (Sec. 3.3, Table I): when a unit initiates mandatory GC, every other unit with at
//!   most N_s spare blocks starts early GC as a follower; followers stop when the initiator
//!   finishes. Followers do the initiator's operation types step for step (Sec. 3.3.2): a
//!   follower halts while the initiator erases and its own victim still holds valid data.

use crate::ftl::GcNext;

/// What a unit sees when it decides whether to start early GC under GCA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcaView {
    /// The write buffer is full: the host waits for room.
    pub buffer_full: bool,
    /// Dirty pages of this unit in the buffer.
    pub dirty_pages: u32,
    /// Another unit is undergoing mandatory GC.
    pub other_in_mandatory_gc: bool,
    /// This unit's spare (free) blocks.
    pub spare_blocks: u64,
    /// N_s.
    pub spare_threshold: u32,
    /// The unit has something to collect.
    pub has_garbage: bool,
}

/// Table I, GCA start: all four conditions (and something to collect).
pub fn gca_starts(v: &GcaView) -> bool {
    v.buffer_full
        && v.dirty_pages == 0
        && v.other_in_mandatory_gc
        && v.spare_blocks <= u64::from(v.spare_threshold)
        && v.has_garbage
}

/// Table I, GCA stop, for a unit in early GC that has just finished a step: its dirty pages
/// have arrived and it is at a preemption point (`preemption`: after every step; without,
/// only once its victim is erased, `job_active` false). It also ends when nothing is left
/// to collect or it has climbed above N_s (the start condition (4) no longer holds).
pub fn gca_stops(
    preemption: bool,
    dirty_pages: u32,
    job_active: bool,
    spare_blocks: u64,
    spare_threshold: u32,
    has_garbage: bool,
) -> bool {
    let at_point = preemption || !job_active;
    if !at_point {
        return false;
    }
    dirty_pages > 0 || !has_garbage || spare_blocks > u64::from(spare_threshold)
}

/// Table I, CF start: a unit follows when another unit initiates mandatory GC and it has at
/// most N_s spare blocks (and something to collect).
pub fn cf_follows(spare_blocks: u64, spare_threshold: u32, has_garbage: bool) -> bool {
    has_garbage && spare_blocks <= u64::from(spare_threshold)
}

/// What a follower does for the initiator's step of kind `initiator`, its own next step
/// being `own` (Sec. 3.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowerMove {
    /// Perform its own next step (same operation type as the initiator's).
    Step,
    /// Move on to its next-best victim: its victim is drained and waits to be erased
    /// alongside the initiator's erase ("proceeds to its second-best victim").
    NextVictim,
    /// Halt for this step: the initiator erases while its victim still holds valid data.
    Halt,
    /// Nothing left to collect: leave the round.
    Leave,
}

/// The follower's move (Sec. 3.3.2: same operation types as the initiator; a drained victim
/// waits for the initiator's erase while the follower copies from its next-best victim; a
/// follower whose victim is not ready halts while the initiator erases).
pub fn follower_move(initiator: GcNext, own: GcNext) -> FollowerMove {
    match (initiator, own) {
        (_, GcNext::Nothing) => FollowerMove::Leave,
        (GcNext::Erase, GcNext::Erase) | (GcNext::Copy, GcNext::Copy) => FollowerMove::Step,
        (GcNext::Erase, GcNext::Copy) => FollowerMove::Halt,
        (GcNext::Copy, GcNext::Erase) => FollowerMove::NextVictim,
        (GcNext::Nothing, _) => FollowerMove::Halt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> GcaView {
        GcaView {
            buffer_full: true,
            dirty_pages: 0,
            other_in_mandatory_gc: true,
            spare_blocks: 150,
            spare_threshold: 200,
            has_garbage: true,
        }
    }

    #[test]
    fn gca_starts_only_when_every_table_i_condition_holds() {
        assert!(gca_starts(&view()));
        assert!(!gca_starts(&GcaView { buffer_full: false, ..view() }), "(1) buffer not full");
        assert!(!gca_starts(&GcaView { dirty_pages: 1, ..view() }), "(2) dirty pages left");
        assert!(!gca_starts(&GcaView { other_in_mandatory_gc: false, ..view() }), "(3) no mandatory GC elsewhere");
        assert!(!gca_starts(&GcaView { spare_blocks: 201, ..view() }), "(4) above N_s");
        assert!(gca_starts(&GcaView { spare_blocks: 200, ..view() }), "(4) at N_s is allowed");
        assert!(!gca_starts(&GcaView { has_garbage: false, ..view() }), "nothing to collect");
    }

    #[test]
    fn gca_stops_only_at_a_preemption_point_once_dirty_pages_arrive() {
        // Both stop conditions hold.
        assert!(gca_stops(true, 3, true, 10, 200, true));
        // (1) fails: no dirty page yet, keep collecting.
        assert!(!gca_stops(true, 0, true, 10, 200, true));
        // (2) fails without preemption points: mid-victim, no stop.
        assert!(!gca_stops(false, 3, true, 10, 200, true));
        // Without preemption points the victim's erase is the point.
        assert!(gca_stops(false, 3, false, 10, 200, true));
        // Nothing left to collect, or above N_s: the early GC ends at the point.
        assert!(gca_stops(true, 0, true, 10, 200, false));
        assert!(gca_stops(true, 0, true, 201, 200, true));
    }

    #[test]
    fn cf_followers_match_the_initiator_step_for_step() {
        assert!(cf_follows(200, 200, true));
        assert!(!cf_follows(201, 200, true));
        assert!(!cf_follows(0, 200, false));
        use GcNext::*;
        assert_eq!(follower_move(Copy, Copy), FollowerMove::Step);
        assert_eq!(follower_move(Erase, Erase), FollowerMove::Step);
        assert_eq!(follower_move(Erase, Copy), FollowerMove::Halt);
        assert_eq!(follower_move(Copy, Erase), FollowerMove::NextVictim);
        assert_eq!(follower_move(Copy, Nothing), FollowerMove::Leave);
    }
}
