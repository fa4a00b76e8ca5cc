//! Whose turn it is on one GPU, or on the node its GPUs share
//! (`run::lane::Node`): any number of shared holds, or one alone.
//! A shared hold is short (a run of the course's or the student's binary:
//! about a second) or long (a compute-sanitizer tool, a run above 2^31
//! elements: up to tens of seconds). While a hold waits to be alone, no new
//! long hold starts; short ones go on starting until no long hold is in
//! flight, and only then wait, so the GPU drains in the time of a short
//! run, and every hold then waiting to be alone goes, one after another,
//! before any new share starts. Draining behind every share in flight at
//! once (a grace of a second, then all new shares held off) kept every
//! worker waiting on the longest run in flight, at each request: on an
//! H100 the class graded 20 students in 330 s; never holding shares off
//! let the holds waiting to be alone wait until nothing happened to be
//! shared, 15 s each, and 10 students in 280 s (`bench/runs/2026-11-27-h100-run-cost`).
//! A hung short hold still holds the others during a drain, for its
//! timeout, which `budget::AFTER_HOLDING` bounds once an exercise has held
//! the GPU without passing.
//! A shared hold can become alone (it lets go of its share first, so two
//! that ask at once cannot wait on each other) and an alone hold shared
//! again without letting go (no other hold can be alone in between): the
//! timing gate's moves (`run::gate`). Shares may be capped: a lane runs
//! more workers than shares, so that while one waits to be alone another
//! takes its share for short runs, rather than the GPU waiting on the
//! longest run in flight with every worker idle.
//!
//! A timed run in flight (`Turns::timing`, from its start to its end) holds
//! off new long shares as a waiting hold does: it will ask to be alone
//! within a second or so, and a tool started just before it asks keeps it
//! waiting for the tool's whole run (11 s on an H200, with 17 timed runs
//! queued behind it, `bench/runs/2026-11-29-h200-back-to-back`, 2026-11-29). And a hold
//! that lets go of the GPU alone may take its share again only in turn
//! (`Alone::into_shared_in_turn`), after every hold then waiting to be
//! alone: the course's binary, which waits for that share before it uses
//! the GPU again, then never keeps the next timed run waiting for the rest
//! of its process (a quarter of a second, at each of 48 runs alone).

use std::sync::{Condvar, Mutex, MutexGuard};

/// The holds on one GPU.
#[derive(Default)]
pub struct Turns {
    state: Mutex<State>,
    changed: Condvar,
    /// Shares at most at once (0: no cap): with more workers than shares,
    /// a worker whose run waits to be alone leaves its share to another.
    cap: usize,
}

#[derive(Default)]
struct State {
    /// Short shared holds, and long ones.
    short: usize,
    long: usize,
    alone: bool,
    /// Holds waiting to be alone.
    waiting: usize,
    /// Timed runs in flight, which will ask to be alone.
    timing: usize,
    /// No long hold was in flight while a hold waited to be alone: new
    /// short holds wait until no hold waits to be alone.
    draining: bool,
}

/// A share of the GPU, until dropped.
#[must_use]
pub struct Shared<'a> {
    turns: &'a Turns,
    long: bool,
}

/// The GPU alone, until dropped.
#[must_use]
pub struct Alone<'a> {
    turns: &'a Turns,
}

/// A timed run in flight, until dropped: no new long share starts.
#[must_use]
pub struct Timing<'a> {
    turns: &'a Turns,
}

impl Turns {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(state).unwrap_or_else(|p| p.into_inner())
    }

    /// Turns of at most `cap` shares at once.
    pub fn with_cap(cap: usize) -> Turns {
        Turns {
            cap,
            ..Turns::default()
        }
    }

    /// Shares held (short and long), whether one is alone, and holds
    /// waiting to be.
    #[cfg(test)]
    pub(crate) fn holds(&self) -> (usize, bool, usize) {
        let state = self.state();
        (state.short + state.long, state.alone, state.waiting)
    }

    /// A short share, once no hold is alone, the GPU is not draining and
    /// the cap leaves room.
    pub fn shared(&self) -> Shared<'_> {
        self.share(false)
    }

    /// A long share, once no hold is alone or waiting to be, no timed run
    /// is in flight, and the cap leaves room.
    pub fn shared_long(&self) -> Shared<'_> {
        self.share(true)
    }

    /// Marks a timed run in flight until the mark is dropped: it holds
    /// nothing of the GPU, but no new long share starts meanwhile.
    pub fn timing(&self) -> Timing<'_> {
        self.state().timing += 1;
        Timing { turns: self }
    }

    /// Whether a share, long or short, must wait in `state`.
    fn holds_off(&self, state: &State, long: bool) -> bool {
        state.alone
            || (if long {
                state.waiting > 0 || state.timing > 0
            } else {
                state.draining
            })
            || (self.cap > 0 && state.short + state.long >= self.cap)
    }

    /// A long or a short share, as [`Turns::shared_long`] or
    /// [`Turns::shared`] gives it.
    pub fn share(&self, long: bool) -> Shared<'_> {
        let mut state = self.state();
        while self.holds_off(&state, long) {
            state = self.wait(state);
        }
        Self::took(&mut state, long);
        Shared { turns: self, long }
    }

    fn took(state: &mut State, long: bool) {
        if long {
            state.long += 1;
        } else {
            state.short += 1;
        }
    }

    /// A share, long or short, if one may start now.
    pub fn try_share(&self, long: bool) -> Option<Shared<'_>> {
        let mut state = self.state();
        if self.holds_off(&state, long) {
            return None;
        }
        Self::took(&mut state, long);
        Some(Shared { turns: self, long })
    }

    /// Waits until a share, long or short, may start, taking none.
    pub fn until_share(&self, long: bool) {
        let mut state = self.state();
        while self.holds_off(&state, long) {
            state = self.wait(state);
        }
    }

    /// The GPU alone, once no hold is in flight: no new long share starts
    /// meanwhile, and no new short one once no long one is in flight.
    pub fn alone(&self) -> Alone<'_> {
        let mut state = self.state();
        state.waiting += 1;
        while state.alone || state.short > 0 || state.long > 0 {
            if state.long == 0 {
                state.draining = true;
            }
            state = self.wait(state);
        }
        state.waiting -= 1;
        if state.waiting == 0 {
            // The last of the drain's holds: shares start once it is done.
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
    /// Shares the GPU again (a short share), with no moment between where
    /// another hold could be alone.
    pub fn into_shared(self) -> Shared<'a> {
        let turns = self.turns;
        {
            let mut state = turns.state();
            state.alone = false;
            state.short += 1;
            turns.changed.notify_all();
        }
        std::mem::forget(self);
        Shared { turns, long: false }
    }

    /// Lets go of the GPU, then takes a short share in turn: after every
    /// hold then waiting to be alone, which go first.
    pub fn into_shared_in_turn(self) -> Shared<'a> {
        let turns = self.turns;
        drop(self);
        turns.shared()
    }
}

impl Drop for Timing<'_> {
    fn drop(&mut self) {
        let mut state = self.turns.state();
        state.timing -= 1;
        self.turns.changed.notify_all();
    }
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        let mut state = self.turns.state();
        if self.long {
            state.long -= 1;
        } else {
            state.short -= 1;
        }
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
    fn a_waiting_hold_stops_long_shares_at_once_and_short_ones_once_no_long_one_runs() {
        let turns = Turns::default();
        let long = turns.shared_long();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _alone = turns.alone();
                order.lock().unwrap().push("alone");
            });
            while turns.holds().2 == 0 {
                std::thread::yield_now();
            }
            // A new long share waits for the hold's turn.
            scope.spawn(|| {
                let _late = turns.shared_long();
                order.lock().unwrap().push("long share");
            });
            // Short shares start while the long one is in flight.
            let short = turns.shared();
            order
                .lock()
                .unwrap()
                .push("short share beside the long one");
            std::thread::sleep(Duration::from_millis(50));
            drop(long);
            std::thread::sleep(Duration::from_millis(50));
            // Now the GPU drains: a new short share waits too.
            scope.spawn(|| {
                let _late = turns.shared();
                order.lock().unwrap().push("short share after");
            });
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(*order.lock().unwrap(), ["short share beside the long one"]);
            drop(short);
        });
        let order = order.into_inner().unwrap();
        assert_eq!(order[..2], ["short share beside the long one", "alone"]);
        assert_eq!(order.len(), 4, "{order:?}");
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn holds_waiting_in_one_drain_go_before_any_new_share() {
        let turns = Turns::default();
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
                order.lock().unwrap().push("short share");
            });
            scope.spawn(|| {
                let _share = turns.shared_long();
                order.lock().unwrap().push("long share");
            });
            std::thread::sleep(Duration::from_millis(50));
            drop(first);
        });
        let order = order.into_inner().unwrap();
        assert_eq!(order[..3], ["alone", "alone", "alone"], "{order:?}");
        assert_eq!(order.len(), 5);
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn a_timed_run_in_flight_holds_off_long_shares_but_not_short_ones() {
        let turns = Turns::default();
        let timing = turns.timing();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _long = turns.shared_long();
                order.lock().unwrap().push("long");
            });
            let short = turns.shared();
            order.lock().unwrap().push("short");
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(*order.lock().unwrap(), ["short"]);
            drop(short);
            std::thread::sleep(Duration::from_millis(20));
            // Nothing shared, nothing alone: only the mark holds it off.
            assert_eq!(*order.lock().unwrap(), ["short"]);
            assert_eq!(turns.holds(), (0, false, 0));
            drop(timing);
        });
        assert_eq!(order.into_inner().unwrap(), ["short", "long"]);
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn a_hold_shared_again_in_turn_goes_after_every_hold_then_waiting_to_be_alone() {
        let turns = Turns::default();
        let order = Mutex::new(Vec::new());
        let first = turns.shared().into_alone();
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    let alone = turns.alone();
                    order.lock().unwrap().push("alone");
                    std::thread::sleep(Duration::from_millis(10));
                    drop(alone);
                });
            }
            // The three wait to be alone behind the first.
            while turns.holds().2 < 3 {
                std::thread::yield_now();
            }
            let again = first.into_shared_in_turn();
            order.lock().unwrap().push("shared again");
            drop(again);
        });
        let order = order.into_inner().unwrap();
        assert_eq!(order, ["alone", "alone", "alone", "shared again"]);
        assert_eq!(turns.holds(), (0, false, 0));
    }

    #[test]
    fn the_cap_bounds_shares_and_a_hold_waiting_to_be_alone_leaves_its_share_to_another() {
        let turns = Turns::with_cap(2);
        let long = turns.shared_long();
        let order = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            let first = turns.shared();
            // The cap is reached: a third share waits.
            scope.spawn(|| {
                let _third = turns.shared();
                order.lock().unwrap().push("share");
                std::thread::sleep(Duration::from_millis(30));
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(order.lock().unwrap().is_empty());
            assert_eq!(turns.holds(), (2, false, 0));
            // The first asks to be alone: its share goes to the third
            // while the long one is in flight.
            scope.spawn(|| {
                let _alone = first.into_alone();
                order.lock().unwrap().push("alone");
            });
            while order.lock().unwrap().is_empty() {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_millis(10));
            drop(long);
        });
        assert_eq!(order.into_inner().unwrap(), ["share", "alone"]);
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
