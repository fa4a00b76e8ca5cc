//! One student's one exercise's budget: how much of the class's GPU its
//! runs may take beyond their own making. Every path that makes a run again
//! with the GPU alone (`Lane::run_confirmed`: a run of the course's binary
//! or the student's, a compute-sanitizer tool's process a run) asks this
//! budget first, whatever the run ended with: a run that ended as a
//! neighbour could have made it end is made again alone while the
//! exercise's remakes have held the GPU alone for less than
//! [`REMAKES_ALONE`], each for at most [`AFTER_HOLDING`] (a run above 2^31
//! elements for its whole timeout, which it needs alone); past that, the
//! verdict it got beside others stands. And once a run of the exercise has
//! held the GPU without passing ([`Budget::held`]: it ran out of time with
//! nothing beside it, or ended any way but a pass after [`AFTER_HOLDING`]
//! or more), its later runs, batches and remakes stop after
//! [`AFTER_HOLDING`], and none that runs out of time is made again.
//!
//! Threat model: the student's host code and kernel choose how a run ends
//! and when: a host that sleeps just under the timeout and exits 3 (a CUDA
//! error, which a neighbour holding memory could cause) was made again
//! alone every run, a whole timeout of the GPU (the node, under `--gpus`)
//! alone each time; one that fails fast beside others and sleeps alone
//! would be too. With the budget such a student costs the class at most
//! [`REMAKES_ALONE`] and one [`AFTER_HOLDING`] of the GPU alone an
//! exercise (and a timeout per run above 2^31 elements), its first run
//! that held a share and then [`AFTER_HOLDING`] a run. An honest run made
//! again alone takes about a second (two, beside 16 others on an H100), so
//! the budget leaves room for a dozen or more remakes an exercise, and no
//! honest run is held: it passes, and under [`AFTER_HOLDING`].

use std::sync::Mutex;
use std::time::Duration;

/// The GPU alone that one exercise's remakes may hold in all: past it, a
/// run ended as a neighbour could have made it end stands as it is.
pub const REMAKES_ALONE: Duration = Duration::from_secs(30);

/// The longest a remake alone may take (but a run above 2^31 elements),
/// and the timeout of an exercise's later runs once one of its runs has
/// held the GPU without passing ([`Budget::held`]). Five times what one of
/// the plans' runs takes beside 16 others on an H100 or H200 (about 2 s),
/// and over five times the longest run of the grader's class on the CPU
/// emulator that did not pass (1.7 s; its longest run, 16 s, passed).
pub const AFTER_HOLDING: Duration = Duration::from_secs(10);

/// How a run ended, as far as the runs beside it go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// As the run itself made it end (a wrong answer, a tool's finding:
    /// contexts share no memory): it stands.
    Own,
    /// As a neighbour could have made it end (a CUDA error such as memory
    /// another process holds, a signal, a failed start): made again alone.
    Neighbours,
    /// Out of time: a neighbour could have slowed it, so it is made again
    /// alone, within the exercise's budget ([`Budget`]).
    OutOfTime,
}

/// How a made run ended, as the budget counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    pub ending: Ending,
    /// How long it ran, where it did not pass (an exit code other than 0,
    /// or no exit at all); None for one that passed, and for a tool's
    /// process, which its own limit bounds (`run::sanitizer`).
    pub failed_after: Option<Duration>,
}

/// What one exercise's runs have spent so far.
#[derive(Debug, Default)]
pub struct Budget(Mutex<Spent>);

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Spent {
    /// The GPU alone its remakes held, and how many there were.
    alone: Duration,
    remakes: u32,
    /// A run held the GPU without passing.
    held: bool,
}

impl Budget {
    fn spent(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a run of the exercise has held the GPU without passing: it
    /// ran out of time with nothing beside it, or it did not pass after
    /// [`AFTER_HOLDING`] or more. Its later runs stop after
    /// [`AFTER_HOLDING`] (`Budget::timeout`).
    pub fn held(&self) -> bool {
        self.spent().held
    }

    /// The timeout of a run of the exercise whose own is `timeout` (`large`:
    /// above 2^31 elements, tens of seconds of host memory, which keeps
    /// it): [`AFTER_HOLDING`] at most once the exercise has held the GPU.
    pub fn timeout(&self, timeout: Duration, large: bool) -> Duration {
        if self.held() && !large {
            timeout.min(AFTER_HOLDING)
        } else {
            timeout
        }
    }

    /// Counts a made run that ended as `ended` says; `alone`: nothing could
    /// have been beside it (the GPU alone, or no neighbour at all).
    pub fn count(&self, ended: Ended, alone: bool) {
        let out_of_time_alone = alone && ended.ending == Ending::OutOfTime;
        let failed_long = ended.failed_after.is_some_and(|took| took >= AFTER_HOLDING);
        if out_of_time_alone || failed_long {
            self.spent().held = true;
        }
    }

    /// Whether a run that ended as `ending` beside others is made again
    /// with the GPU alone, and within what timeout (its own is `timeout`;
    /// `large` as for [`Budget::timeout`]): None where its verdict stands,
    /// as the run's own (a wrong answer, a finding), or as the budget has
    /// it: spent, or out of time where the exercise has held the GPU.
    pub fn remake(&self, ending: Ending, timeout: Duration, large: bool) -> Option<Duration> {
        let spent = *self.spent();
        match ending {
            Ending::Own => return None,
            Ending::OutOfTime if spent.held => return None,
            Ending::OutOfTime | Ending::Neighbours => {}
        }
        let left = REMAKES_ALONE.saturating_sub(spent.alone);
        if left.is_zero() {
            return None;
        }
        // The exercise's first remake gets its whole timeout: an honest run
        // that a neighbour slowed past it (the CPU emulator on a loaded
        // node takes 16 s for some) must be able to finish alone, or a
        // correct kernel loses the run. That is the "once per exercise" a
        // hostile student costs; its later remakes share what is left.
        Some(if large || spent.remakes == 0 {
            timeout
        } else {
            timeout.min(AFTER_HOLDING).min(left)
        })
    }

    /// Counts a remake that held the GPU alone for `took`.
    pub fn spend_alone(&self, took: Duration) {
        let mut spent = self.spent();
        spent.alone += took;
        spent.remakes += 1;
    }

    /// The remakes made alone so far, and the GPU alone they held.
    pub fn remakes(&self) -> (u32, Duration) {
        let spent = self.spent();
        (spent.remakes, spent.alone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn failed(ending: Ending, seconds: u64) -> Ended {
        Ended {
            ending,
            failed_after: Some(Duration::from_secs(seconds)),
        }
    }

    #[test]
    fn every_ending_a_neighbour_could_cause_is_remade_alone_until_the_budget_is_spent() {
        let budget = Budget::default();
        // A wrong answer is the run's own: never made again.
        assert_eq!(budget.remake(Ending::Own, MINUTE, false), None);
        // A CUDA error, or out of time, beside others: made again alone,
        // the first time within the whole timeout (an honest run a
        // neighbour slowed must be able to finish alone), later ones for
        // at most AFTER_HOLDING.
        for ending in [Ending::Neighbours, Ending::OutOfTime] {
            assert_eq!(budget.remake(ending, MINUTE, false), Some(MINUTE));
        }
        budget.spend_alone(Duration::from_secs(1));
        for ending in [Ending::Neighbours, Ending::OutOfTime] {
            assert_eq!(budget.remake(ending, MINUTE, false), Some(AFTER_HOLDING));
        }
        // A timeout shorter than that is kept.
        let short = Duration::from_secs(3);
        assert_eq!(budget.remake(Ending::Neighbours, short, false), Some(short));
        // Remakes of a second each: as many as the budget holds.
        let mut made = 1;
        while let Some(timeout) = budget.remake(Ending::Neighbours, MINUTE, false) {
            budget.spend_alone(timeout.min(Duration::from_secs(1)));
            made += 1;
        }
        assert_eq!(made, REMAKES_ALONE.as_secs());
        assert_eq!(budget.remakes(), (made as u32, REMAKES_ALONE));
        // Spent: whatever a run ends with, its verdict stands.
        assert_eq!(budget.remake(Ending::OutOfTime, MINUTE, true), None);
    }

    #[test]
    fn the_last_remake_gets_what_is_left_and_a_large_run_its_whole_timeout() {
        let budget = Budget::default();
        // A sleeper's first remake, its whole timeout, spends the budget.
        budget.spend_alone(MINUTE);
        assert_eq!(budget.remake(Ending::Neighbours, MINUTE, false), None);
        let budget = Budget::default();
        budget.spend_alone(REMAKES_ALONE - Duration::from_secs(4));
        assert_eq!(
            budget.remake(Ending::Neighbours, MINUTE, false),
            Some(Duration::from_secs(4))
        );
        // A run above 2^31 elements needs its time alone.
        assert_eq!(
            budget.remake(Ending::Neighbours, MINUTE, true),
            Some(MINUTE)
        );
    }

    #[test]
    fn a_run_that_held_the_gpu_without_passing_shortens_the_exercise_s_later_runs() {
        let budget = Budget::default();
        assert_eq!(budget.timeout(MINUTE, false), MINUTE);
        // A pass, however long, and a quick failure hold nothing.
        let passed = Ended {
            ending: Ending::Own,
            failed_after: None,
        };
        budget.count(passed, false);
        budget.count(failed(Ending::Neighbours, 9), false);
        assert!(!budget.held());
        // A minute beside others without passing held a share that long
        // (whether it is made again alone was decided before: the run may
        // have been a neighbour's doing).
        budget.count(failed(Ending::OutOfTime, 60), false);
        assert!(budget.held());
        let budget = Budget::default();
        budget.count(failed(Ending::OutOfTime, 5), true);
        assert!(budget.held(), "out of time alone");
        let budget = Budget::default();
        budget.count(failed(Ending::Neighbours, 9), false);
        budget.count(failed(Ending::Own, 1), true);
        assert!(!budget.held());
        // A host that sleeps just under the timeout and exits 3.
        budget.count(failed(Ending::Neighbours, 59), false);
        assert!(budget.held());
        assert_eq!(budget.timeout(MINUTE, false), AFTER_HOLDING);
        // A run above 2^31 elements keeps its timeout.
        assert_eq!(budget.timeout(MINUTE, true), MINUTE);
        // Out of time, never made again; a CUDA error still is (the
        // exercise's first remake within the whole timeout, later ones
        // within AFTER_HOLDING).
        assert_eq!(budget.remake(Ending::OutOfTime, MINUTE, false), None);
        assert_eq!(
            budget.remake(Ending::Neighbours, MINUTE, false),
            Some(MINUTE)
        );
        budget.spend_alone(Duration::from_secs(1));
        assert_eq!(
            budget.remake(Ending::Neighbours, MINUTE, false),
            Some(AFTER_HOLDING)
        );
    }
}
