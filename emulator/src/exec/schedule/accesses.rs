//! Recording what a profiler's pictures show, while a launch is counted
//! (`counters`, whose access hook feeds this): each global and shared
//! access of warp 0 of block 0, lane by lane, the first time each lane
//! runs the instruction (one warp instruction, as `counters` forms them);
//! and, for an output buffer the host names, the block that wrote each of
//! its elements. Only where the launch asks: otherwise none of this exists.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::ir::{Kernel, Op};

/// The buffer whose writers are recorded: `bytes` from `base`, in
/// elements of `element_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    pub base: u64,
    pub bytes: u64,
    pub element_bytes: u32,
}

impl Output {
    pub fn elements(&self) -> u64 {
        self.bytes / u64::from(self.element_bytes.max(1))
    }
}

/// What a launch is asked to record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ask {
    /// The buffer whose writers are recorded, if one is named.
    pub output: Option<Output>,
}

/// What a launch recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Warp 0 of block 0's accesses, in the order its lanes made them.
    pub warp: Vec<LaneAccess>,
    /// The output named, and each element's writer (None: no thread).
    pub output: Option<(Output, Vec<Option<u32>>)>,
}

/// One lane's access in warp 0 of block 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneAccess {
    pub pc: u32,
    pub lane: u8,
    pub shared: bool,
    pub bytes: u8,
    /// Global: the address; shared: the offset in the block's shared memory.
    pub address: u64,
}

/// What a launch records, shared by its workers.
pub struct Recording {
    pub output: Option<Output>,
    /// For each element of the output: 0 where no thread wrote it, else 1 +
    /// the linear index of the last block (in the grid's order) that did.
    /// Atomic, so workers running blocks at once mark it without a lock.
    pub writers: Arc<[AtomicU32]>,
    /// Whether each instruction writes memory (a store or an atomic).
    writes: Arc<[bool]>,
}

impl Recording {
    pub fn new(kernel: &Kernel, output: Option<Output>) -> Recording {
        let elements = output.map_or(0, |o| o.elements()) as usize;
        Recording {
            output,
            writers: (0..elements).map(|_| AtomicU32::new(0)).collect(),
            writes: kernel
                .code
                .iter()
                .map(|i| matches!(i.op, Op::Store { .. } | Op::Atomic { .. }))
                .collect(),
        }
    }

    /// A worker's recorder, feeding this recording.
    pub fn recorder(&self) -> Recorder {
        Recorder {
            output: self.output,
            writers: Arc::clone(&self.writers),
            writes: Arc::clone(&self.writes),
            block: 0,
            warp: Vec::new(),
        }
    }

    /// What the launch recorded, given its workers' warp accesses.
    pub fn finish(&self, warp: Vec<LaneAccess>) -> Recorded {
        Recorded {
            warp,
            output: self.output.map(|o| (o, self.writer_of_each())),
        }
    }

    /// Each element's writer: None where no thread wrote it.
    pub fn writer_of_each(&self) -> Vec<Option<u32>> {
        self.writers
            .iter()
            .map(|w| w.load(Ordering::Relaxed).checked_sub(1))
            .collect()
    }
}

/// One worker's part of a recording.
pub struct Recorder {
    output: Option<Output>,
    writers: Arc<[AtomicU32]>,
    writes: Arc<[bool]>,
    /// The linear index of the block running.
    block: u64,
    /// Warp 0 of block 0's accesses, where this worker ran block 0.
    pub warp: Vec<LaneAccess>,
}

impl Recorder {
    /// Block `linear` is the next to run.
    pub fn enter(&mut self, linear: u64) {
        self.block = linear;
    }

    /// The block entered starts, or starts again in lockstep: what its
    /// first run recorded of warp 0 goes.
    pub fn start_block(&mut self) {
        if self.block == 0 {
            self.warp.clear();
        }
    }

    /// Thread `t` makes its `k`-th execution of `pc` an access of `bytes`
    /// at `address`, in shared memory or global.
    #[inline]
    pub fn access(&mut self, t: usize, pc: u32, k: u32, shared: bool, address: u64, bytes: u32) {
        if self.block == 0 && t < 32 && k == 1 {
            self.warp.push(LaneAccess {
                pc,
                lane: t as u8,
                shared,
                bytes: bytes.min(255) as u8,
                address,
            });
        }
        let Some(output) = self.output else {
            return;
        };
        if shared || !self.writes.get(pc as usize).copied().unwrap_or(false) {
            return;
        }
        let end = address.saturating_add(u64::from(bytes.max(1)));
        let (from, to) = (
            address.max(output.base),
            end.min(output.base + output.bytes),
        );
        if from >= to {
            return;
        }
        let size = u64::from(output.element_bytes.max(1));
        let first = (from - output.base) / size;
        let last = (to - 1 - output.base) / size;
        // Blocks past u32's range are drawn as the last one it holds.
        let writer = u32::try_from(self.block + 1).unwrap_or(u32::MAX);
        for element in first..=last {
            if let Some(slot) = self.writers.get(element as usize) {
                slot.fetch_max(writer, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording(output: Output) -> Recording {
        Recording {
            output: Some(output),
            writers: (0..output.elements()).map(|_| AtomicU32::new(0)).collect(),
            writes: Arc::from([false, true]),
        }
    }

    #[test]
    fn a_store_marks_the_elements_it_covers_with_the_last_block() {
        let output = Output {
            base: 0x1000,
            bytes: 64,
            element_bytes: 4,
        };
        let recording = recording(output);
        let mut recorder = recording.recorder();
        recorder.enter(3);
        recorder.start_block();
        // A 16-byte store at element 2: elements 2 to 5.
        recorder.access(0, 1, 1, false, 0x1008, 16);
        recorder.enter(1);
        recorder.start_block();
        recorder.access(0, 1, 1, false, 0x1000, 4);
        recorder.access(0, 1, 1, false, 0x1014, 4);
        // A load (instruction 0), a shared store and a store outside the
        // buffer mark nothing.
        recorder.access(0, 0, 1, false, 0x1020, 4);
        recorder.access(0, 1, 1, true, 0x1024, 4);
        recorder.access(0, 1, 1, false, 0x1040, 4);
        let writers = recording.writer_of_each();
        assert_eq!(
            &writers[..10],
            &[
                Some(1),
                None,
                Some(3),
                Some(3),
                Some(3),
                Some(3),
                None,
                None,
                None,
                None
            ]
        );
        assert!(recorder.warp.is_empty(), "block 0 never ran");
    }

    #[test]
    fn only_warp_0_of_block_0_and_its_first_execution_are_kept() {
        let recording = Recording {
            output: None,
            writers: Arc::from([]),
            writes: Arc::from([false]),
        };
        let mut recorder = recording.recorder();
        recorder.enter(0);
        recorder.start_block();
        recorder.access(5, 0, 1, false, 0x20, 4);
        recorder.access(5, 0, 2, false, 0x40, 4);
        recorder.access(32, 0, 1, false, 0x60, 4);
        recorder.enter(1);
        recorder.start_block();
        recorder.access(6, 0, 1, false, 0x80, 4);
        assert_eq!(
            recorder.warp,
            vec![LaneAccess {
                pc: 0,
                lane: 5,
                shared: false,
                bytes: 4,
                address: 0x20
            }]
        );
    }
}
