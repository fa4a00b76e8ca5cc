//! Whose turn it is on one GPU: any number of shared holds, or one alone.
//! A hold waiting to be alone holds off no new shared hold for a grace
//! ([`GRACE`]); after that, new shared holds wait while the GPU drains,
//! and every hold then waiting to be alone goes, one after another, before
//! they start. Without the drain, a waiting hold has the GPU only once
//! nothing is shared, which with a worker per core came rarely: on an
//! H100 the course's timed sections waited 280 s in all for 19 turns
//! alone, 15 s each (`scripts/perf/README.md`). Without the grace, every
//! request alone would stop every worker at once, and a shared run that
//! hangs for its whole timeout would stop them for as long (as std's
//! RwLock, which lets a waiting writer hold off readers at once, did to
//! the grader's class on an H100 for 520 s); with it, requests that come
//! close together share one drain. A shared hold can become alone (it lets
//! go of its share first, so two that ask at once cannot wait on each
//! other) and an alone hold shared again without letting go (no other hold
//! can be alone in between): the timing gate's moves (`run::gate`).

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a hold waiting to be alone lets new shared holds start.
pub const GRACE: Duration = Duration::from_secs(1);

/// The holds on one GPU.
pub struct Turns {
    state: Mutex<State>,
    changed: Condvar,
    grace: Duration,
}

impl Default for Turns {
    fn default() -> Turns {
        Turns::new(GRACE)
    }
}

#[derive(Default)]
struct State {
    shared: usize,
    alone: bool,
    /// Holds waiting to be alone.
    waiting: usize,
    /// A hold has waited to be alone past its grace: new shared holds wait
    /// until no hold waits to be alone.
    draining: bool,
}

/// A share of the GPU, until dropped.
#[must_use]
pub struct Shared<'a> {
    turns: &'a Turns,
}

/// The GPU alone, until dropped.
#[must_use]
pub struct Alone<'a> {
    turns: &'a Turns,
}

impl Turns {
    /// Turns whose holds waiting to be alone let new shared ones start for
    /// `grace`.
    pub fn new(grace: Duration) -> Turns {
        Turns {
            state: Mutex::default(),
            changed: Condvar::new(),
            grace,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(state).unwrap_or_else(|p| p.into_inner())
    }

    /// Shares held, whether one is alone, and holds waiting to be.
    #[cfg(test)]
    pub(crate) fn holds(&self) -> (usize, bool, usize) {
        let state = self.state();
        (state.shared, state.alone, state.waiting)
    }

    /// A share, once no hold is alone and the GPU is not draining for
    /// holds waiting to be alone.
    pub fn shared(&self) -> Shared<'_> {
        let mut state = self.state();
        while state.alone || state.draining {
            state = self.wait(state);
        }
        state.shared += 1;
        Shared { turns: self }
    }

    /// The GPU alone, once no hold is in flight; past the grace, new shared
    /// holds wait for it.
    pub fn alone(&self) -> Alone<'_> {
        let asked = Instant::now();
        let mut state = self.state();
        state.waiting += 1;
        while state.alone || state.shared > 0 {
            let left = self.grace.saturating_sub(asked.elapsed());
            if left.is_zero() {
                state.draining = true;
                state = self.wait(state);
            } else {
                state = (self.changed.wait_timeout(state, left))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        }
        state.waiting -= 1;
        if state.waiting == 0 {
            // The last of the drain's holds: shared holds start once it is
            // done.
            state.draining = false;
        }
        state.alone = true;
        Alone { turns: self }
    }
}

impl<'a> Shared<'a> {
    /// Lets go of this share and waits for the GPU alone.
    pub fn into_alone(self) -> Alone<'a> {
        let turns = self.turns;
        drop(self);
        turns.alone()
    }
}

impl<'a> Alone<'a> {
    /// Shares the GPU again, with no moment between where another hold
    /// could be alone.
    pub fn into_shared(self) -> Shared<'a> {
        let turns = self.turns;
        {
            let mut state = turns.state();
            state.alone = false;
            state.shared += 1;
            turns.changed.notify_all();
        }
        std::mem::forget(self);
        Shared { turns }
    }
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        let mut state = self.turns.state();
        state.shared -= 1;
        self.turns.changed.notify_all();
    }
}

impl Drop for Alone<'_> {
    fn drop(&mut self) {
        let mut state = self.turns.state();
        state.alone = false;
        self.turns.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn alone_holds_off_no_share_for_its_grace_then_drains_the_gpu() {
        let turns = Turns::new(Duration::from_millis(300));
        let first = turns.shared();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _alone = turns.alone();
                order.lock().unwrap().push("alone");
            });
            while turns.holds().2 == 0 {
                std::thread::yield_now();
            }
            // Within the grace a new share starts beside the waiting hold.
            let second = turns.shared();
            order.lock().unwrap().push("share within the grace");
            // Past it, a new share waits for the GPU to drain and for the
            // waiting hold's turn.
            std::thread::sleep(Duration::from_millis(400));
            scope.spawn(|| {
                let _late = turns.shared();
                order.lock().unwrap().push("share past the grace");
            });
            std::thread::sleep(Duration::from_millis(100));
            assert_eq!(*order.lock().unwrap(), ["share within the grace"]);
            drop(first);
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(*order.lock().unwrap(), ["share within the grace"]);
            drop(second);
        });
        assert_eq!(
            *order.lock().unwrap(),
            ["share within the grace", "alone", "share past the grace"]
        );
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn holds_waiting_in_one_drain_go_before_any_new_share() {
        let turns = Turns::new(Duration::ZERO);
        let first = turns.shared();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    let _alone = turns.alone();
                    order.lock().unwrap().push("alone");
                    std::thread::sleep(Duration::from_millis(10));
                });
            }
            while turns.holds().2 < 3 {
                std::thread::yield_now();
            }
            scope.spawn(|| {
                let _share = turns.shared();
                order.lock().unwrap().push("share");
            });
            std::thread::sleep(Duration::from_millis(50));
            drop(first);
        });
        assert_eq!(*order.lock().unwrap(), ["alone", "alone", "alone", "share"]);
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn a_share_turned_alone_and_back_never_lets_another_alone_between() {
        let turns = Turns::default();
        let in_flight = AtomicUsize::new(0);
        let overlapped = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for i in 0..16 {
                let (turns, in_flight, overlapped) = (&turns, &in_flight, &overlapped);
                scope.spawn(move || {
                    let share = turns.shared();
                    let share = if i % 2 == 0 {
                        let alone = share.into_alone();
                        // Alone: nobody else in flight, before or after.
                        let others = in_flight.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(5));
                        if others > 0 || in_flight.load(Ordering::SeqCst) > 1 {
                            overlapped.fetch_add(1, Ordering::SeqCst);
                        }
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                        alone.into_shared()
                    } else {
                        share
                    };
                    // Shared: never beside one alone.
                    in_flight.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    drop(share);
                });
            }
        });
        assert_eq!(overlapped.load(Ordering::SeqCst), 0);
        assert_eq!(turns.holds(), (0, false, 0));
    }
}
