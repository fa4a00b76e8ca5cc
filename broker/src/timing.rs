//! The GPU times the broker measures itself: an event of its own recorded
//! on an operation's stream before and after it (from a bounded pool), and
//! each resolved lazily, at a synchronisation or at the end, as
//! milliseconds after one base event recorded when the session opened.
//! The program's own events are the program's; these never reach it.

use std::collections::VecDeque;

use kernels::trace_record::GpuTime;

use crate::driver::{Driver, NOT_READY, Raw};
use crate::record::{EntryId, Record};

/// The most events the broker keeps: an operation it cannot time when all
/// are in flight is recorded without times.
pub const MAX_TIMING_EVENTS: usize = 8192;

/// Two events around one operation, waiting for its work to finish.
struct Pending {
    entry: EntryId,
    start: Raw,
    end: Raw,
}

pub struct Timing {
    /// None where the base event could not be made: nothing is timed.
    base: Option<Raw>,
    free: Vec<Raw>,
    created: usize,
    pending: VecDeque<Pending>,
}

/// How much of the pending work to look at.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Every pending pair (after a synchronisation).
    All,
    /// In order, up to the first not finished (when the pool runs dry:
    /// cheap however long the queue).
    UntilBusy,
}

impl Timing {
    /// Records the base event on the null stream and waits for it.
    pub fn start(driver: &Driver) -> Timing {
        let base = driver.create_event(0).ok().filter(|&event| {
            driver.record_event(event, Raw::NULL).is_ok() && driver.synchronize_event(event).is_ok()
        });
        Timing {
            base,
            free: Vec::new(),
            created: 0,
            pending: VecDeque::new(),
        }
    }

    /// An event of the pool recorded on `stream` now; None when timing is
    /// off or every event is in flight.
    pub fn mark(&mut self, driver: &Driver, record: &mut Record, stream: Raw) -> Option<Raw> {
        self.base?;
        if self.free.is_empty() {
            if self.created < MAX_TIMING_EVENTS {
                let event = driver.create_event(0).ok()?;
                self.created += 1;
                self.free.push(event);
            } else {
                self.resolve(driver, record, Scan::UntilBusy);
            }
        }
        let event = self.free.pop()?;
        if driver.record_event(event, stream).is_err() {
            self.free.push(event);
            return None;
        }
        Some(event)
    }

    /// An event marked for an operation that then failed.
    pub fn release(&mut self, event: Option<Raw>) {
        self.free.extend(event);
    }

    /// Times line `entry` (None: the record is full) from `start` to `end`
    /// (the same event for an instant) once the work finishes.
    pub fn track(&mut self, entry: Option<EntryId>, start: Option<Raw>, end: Option<Raw>) {
        match (entry, start, end) {
            (Some(entry), Some(start), Some(end)) => {
                self.pending.push_back(Pending { entry, start, end })
            }
            _ => {
                self.release(start);
                if end != start {
                    self.release(end);
                }
            }
        }
    }

    /// Writes the times of finished work into the record.
    pub fn resolve(&mut self, driver: &Driver, record: &mut Record, scan: Scan) {
        let Some(base) = self.base else { return };
        let mut waiting = VecDeque::new();
        while let Some(pending) = self.pending.pop_front() {
            match driver.query_event(pending.end) {
                Err(NOT_READY) => {
                    waiting.push_back(pending);
                    if scan == Scan::UntilBusy {
                        break;
                    }
                    continue;
                }
                Ok(()) => {
                    let at = |event| {
                        driver
                            .elapsed(base, event)
                            .map(|ms| GpuTime::from_ms(ms.into()))
                    };
                    if let (Ok(start), Ok(end)) = (at(pending.start), at(pending.end)) {
                        record.add_times(pending.entry, start, end);
                    }
                }
                // A fault ended the context's work: no time to be had.
                Err(_) => {}
            }
            self.free.push(pending.start);
            if pending.end != pending.start {
                self.free.push(pending.end);
            }
        }
        waiting.append(&mut self.pending);
        self.pending = waiting;
    }

    /// At the session's end, after the context synchronised: every time
    /// that can be had, then the events destroyed.
    pub fn finish(&mut self, driver: &Driver, record: &mut Record) {
        self.resolve(driver, record, Scan::All);
        for pending in self.pending.drain(..) {
            self.free.push(pending.start);
            if pending.end != pending.start {
                self.free.push(pending.end);
            }
        }
        for event in self.free.drain(..).chain(self.base.take()) {
            let _ = driver.destroy_event(event);
        }
    }
}
