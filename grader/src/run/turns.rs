//! Whose turn it is on one GPU: any number of shared holds, or one alone.
//! Shared holds go first: a hold waiting to be alone does not hold off new
//! shared ones, it waits until none is in flight. (A lock that lets a
//! waiting writer hold off new readers, as std's RwLock does, lets one
//! shared run that hangs for its whole timeout stop every worker: a
//! deadlocking kernel's runs, one after another, stopped the grader's class
//! on an H100 for 520 s.) No hold waits for ever: every worker either makes
//! shared runs, which end within their timeout, or waits to be alone, and
//! once every worker waits, none is shared; the holds waiting to be alone
//! then go one after another, paying the wait for the GPU to empty once for
//! all of them. A shared hold can become alone (it lets go of its share
//! first, so two that ask at once cannot wait on each other) and an alone
//! hold shared again without letting go (no other hold can be alone in
//! between): the timing gate's moves (`run::gate`).

use std::sync::{Condvar, Mutex, MutexGuard};

/// The holds on one GPU.
#[derive(Default)]
pub struct Turns {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    shared: usize,
    alone: bool,
    /// Holds waiting to be alone.
    waiting: usize,
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

    /// A share, once no hold is alone (holds waiting to be alone do not
    /// hold it off).
    pub fn shared(&self) -> Shared<'_> {
        let mut state = self.state();
        while state.alone {
            state = self.wait(state);
        }
        state.shared += 1;
        Shared { turns: self }
    }

    /// The GPU alone, once no hold is in flight.
    pub fn alone(&self) -> Alone<'_> {
        let mut state = self.state();
        state.waiting += 1;
        while state.alone || state.shared > 0 {
            state = self.wait(state);
        }
        state.waiting -= 1;
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
    fn alone_waits_for_every_share_and_holds_off_none() {
        let turns = Turns::default();
        let first = turns.shared();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _alone = turns.alone();
                order.lock().unwrap().push("alone");
            });
            // The alone hold is waiting now: a new share does not wait
            // behind it, and the alone hold waits for that share too.
            while turns.holds().2 == 0 {
                std::thread::yield_now();
            }
            let later = turns.shared();
            order.lock().unwrap().push("later share");
            drop(first);
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(*order.lock().unwrap(), ["later share"]);
            drop(later);
        });
        assert_eq!(*order.lock().unwrap(), ["later share", "alone"]);
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
