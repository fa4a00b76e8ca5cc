//! Counting what the hardware would count, per instruction, while a block
//! runs (only where the launch asks: the interpreter's `COUNT` variant).
//! The definitions are `kernels::emulator_counters`'s; here is how they
//! are reached when threads run one at a time. Each thread counts its
//! executions of each instruction; the k-th execution of an instruction by
//! the lanes of one warp is one warp instruction, counted when the first
//! lane reaches its k-th. Memory accesses are logged with their (warp,
//! instruction, k) and grouped when every thread of the block has run to
//! its next stop: one group, one request.

use super::accesses::Recorder;
use crate::exec::memory::state::generic;
use crate::ir::Space;

/// What one instruction did, summed over a block or a launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcCount {
    /// Warp instructions.
    pub warp: u64,
    /// Lanes that executed them, predicated off or not.
    pub lanes: u64,
    /// Its accesses that landed in global memory.
    pub global: Traffic,
    /// Its accesses that landed in shared memory.
    pub shared: Traffic,
}

/// Requests, transactions (sectors or wavefronts) and the ideal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub requests: u64,
    pub transactions: u64,
    pub ideal: u64,
}

impl PcCount {
    fn add(&mut self, other: &PcCount) {
        self.warp += other.warp;
        self.lanes += other.lanes;
        for (mine, theirs) in [
            (&mut self.global, other.global),
            (&mut self.shared, other.shared),
        ] {
            mine.requests += theirs.requests;
            mine.transactions += theirs.transactions;
            mine.ideal += theirs.ideal;
        }
    }
}

/// Adds `other` into `into`, instruction by instruction.
pub fn merge(into: &mut [PcCount], other: &[PcCount]) {
    for (mine, theirs) in into.iter_mut().zip(other) {
        mine.add(theirs);
    }
}

/// One lane's access, until its warp instruction is grouped.
#[derive(Clone, Copy, Debug)]
struct Access {
    warp: u32,
    pc: u32,
    k: u32,
    lane: u8,
    shared: bool,
    bytes: u8,
    address: u64,
}

/// A block's counting state, reused from block to block by a worker.
pub struct Counting {
    code_len: usize,
    /// `executions[t * code_len + pc]`: times thread t executed pc.
    executions: Vec<u32>,
    /// `warp_max[w * code_len + pc]`: the most times any lane of warp w did.
    warp_max: Vec<u32>,
    log: Vec<Access>,
    /// This block's counts, by instruction.
    pub block: Vec<PcCount>,
    /// Every finished block's, by instruction.
    pub total: Vec<PcCount>,
    /// What this worker records for a profiler's pictures, where the
    /// launch asks (`accesses`).
    pub recorder: Option<Recorder>,
    /// Scratch for grouping.
    sectors: Vec<u64>,
    spans: Vec<(u64, u64)>,
    words: Vec<(u32, u64)>,
}

impl Counting {
    pub fn new(threads: usize, code_len: usize) -> Counting {
        Counting {
            code_len,
            executions: vec![0; threads * code_len],
            warp_max: vec![0; threads.div_ceil(32) * code_len],
            log: Vec::new(),
            block: vec![PcCount::default(); code_len],
            total: vec![PcCount::default(); code_len],
            recorder: None,
            sectors: Vec::new(),
            spans: Vec::new(),
            words: Vec::new(),
        }
    }

    /// A block starts (or starts again): nothing of it counted yet.
    pub fn start_block(&mut self) {
        self.executions.fill(0);
        self.warp_max.fill(0);
        self.log.clear();
        self.block.fill(PcCount::default());
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.start_block();
        }
    }

    /// The block ended: its counts join the total.
    pub fn end_block(&mut self) {
        self.group();
        merge(&mut self.total, &self.block);
        self.block.fill(PcCount::default());
    }

    /// Thread `t` executes instruction `pc` (guard true or not).
    #[inline(always)]
    pub fn executed(&mut self, t: usize, pc: u32) {
        let pc = pc as usize;
        let n = &mut self.executions[t * self.code_len + pc];
        *n += 1;
        let top = &mut self.warp_max[t / 32 * self.code_len + pc];
        if *n > *top {
            *top = *n;
            self.block[pc].warp += 1;
        }
        self.block[pc].lanes += 1;
    }

    /// Thread `t`, executing `pc`, accesses `bytes` bytes at `address` in
    /// `space`; only global and shared accesses are counted.
    #[inline(always)]
    pub fn access(&mut self, t: usize, pc: u32, space: Space, address: u64, bytes: u32) {
        let (space, address) = match space {
            Space::Generic => generic(address),
            other => (other, address),
        };
        let shared = match space {
            Space::Global => false,
            Space::Shared => true,
            _ => return,
        };
        let k = self.executions[t * self.code_len + pc as usize];
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.access(t, pc, k, shared, address, bytes);
        }
        self.log.push(Access {
            warp: (t / 32) as u32,
            pc,
            k,
            lane: (t % 32) as u8,
            shared,
            bytes: bytes.min(255) as u8,
            address,
        });
    }

    /// Groups the logged accesses into warp instructions and counts their
    /// transactions: every thread of the block has run to its next stop.
    pub fn group(&mut self) {
        if self.log.is_empty() {
            return;
        }
        let mut log = std::mem::take(&mut self.log);
        log.sort_unstable_by_key(|a| (a.warp, a.pc, a.k, a.shared, a.lane));
        for group in
            log.chunk_by(|a, b| (a.warp, a.pc, a.k, a.shared) == (b.warp, b.pc, b.k, b.shared))
        {
            let first = group[0];
            let (transactions, ideal) = if first.shared {
                self.wavefronts(group)
            } else {
                self.sectors(group)
            };
            let count = &mut self.block[first.pc as usize];
            let traffic = if first.shared {
                &mut count.shared
            } else {
                &mut count.global
            };
            traffic.requests += 1;
            traffic.transactions += transactions;
            traffic.ideal += ideal;
        }
        log.clear();
        self.log = log;
    }

    /// The 32-byte sectors a global request touches, and the fewest its
    /// distinct bytes fit in.
    fn sectors(&mut self, group: &[Access]) -> (u64, u64) {
        self.sectors.clear();
        self.spans.clear();
        for a in group {
            let end = a.address + u64::from(a.bytes.max(1));
            self.sectors.extend(a.address / 32..=(end - 1) / 32);
            self.spans.push((a.address, end));
        }
        self.sectors.sort_unstable();
        self.sectors.dedup();
        self.spans.sort_unstable();
        let mut distinct = 0;
        let mut reached = 0;
        for &(start, end) in &self.spans {
            let start = start.max(reached);
            if end > start {
                distinct += end - start;
                reached = end;
            }
        }
        (self.sectors.len() as u64, distinct.div_ceil(32))
    }

    /// The wavefronts a shared request takes, and the fewest it could: the
    /// lanes served in phases (all 32 for accesses of up to 4 bytes, 16 for
    /// 8 bytes, 8 for 16), each phase taking as many wavefronts as the
    /// most distinct 4-byte words one of the 32 banks holds among its
    /// lanes' accesses.
    fn wavefronts(&mut self, group: &[Access]) -> (u64, u64) {
        let bytes = group.iter().map(|a| u32::from(a.bytes)).max().unwrap_or(4);
        let per_phase: u8 = match bytes {
            0..=4 => 32,
            5..=8 => 16,
            _ => 8,
        };
        let mut wavefronts = 0;
        let mut phases = 0;
        // The group is sorted by lane: each phase's lanes are a run.
        for phase in group.chunk_by(|a, b| a.lane / per_phase == b.lane / per_phase) {
            self.words.clear();
            for a in phase {
                let first = a.address / 4;
                let last = (a.address + u64::from(a.bytes.max(1)) - 1) / 4;
                self.words
                    .extend((first..=last).map(|word| ((word % 32) as u32, word)));
            }
            self.words.sort_unstable();
            self.words.dedup();
            let ways = self
                .words
                .chunk_by(|a, b| a.0 == b.0)
                .map(<[_]>::len)
                .max()
                .unwrap_or(1);
            wavefronts += ways as u64;
            phases += 1;
        }
        (wavefronts, phases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts of instruction 0 after one warp instruction whose lane
    /// `l` accesses `at(l)` (bytes each) in `space`, for `lanes`.
    fn request(space: Space, bytes: u32, lanes: &[usize], at: impl Fn(usize) -> u64) -> PcCount {
        let mut counting = Counting::new(32, 1);
        counting.start_block();
        for &lane in lanes {
            counting.executed(lane, 0);
            counting.access(lane, 0, space, at(lane), bytes);
        }
        counting.end_block();
        counting.total[0]
    }

    fn traffic(requests: u64, transactions: u64, ideal: u64) -> Traffic {
        Traffic {
            requests,
            transactions,
            ideal,
        }
    }

    const ALL: [usize; 32] = {
        let mut lanes = [0; 32];
        let mut i = 0;
        while i < 32 {
            lanes[i] = i;
            i += 1;
        }
        lanes
    };

    #[test]
    fn consecutive_words_take_four_sectors_and_strided_ones_one_each() {
        // 32 lanes x 4 bytes = 128 bytes = 4 sectors of 32.
        let coalesced = request(Space::Global, 4, &ALL, |l| 0x1000 + 4 * l as u64);
        assert_eq!(coalesced.global, traffic(1, 4, 4));
        assert_eq!((coalesced.warp, coalesced.lanes), (1, 32));
        // A stride of 32 words: each lane its own sector.
        let strided = request(Space::Global, 4, &ALL, |l| 0x1000 + 128 * l as u64);
        assert_eq!(strided.global, traffic(1, 32, 4));
        // One word for every lane: one sector, the ideal.
        let same = request(Space::Global, 4, &ALL, |_| 0x1000);
        assert_eq!(same.global, traffic(1, 1, 1));
        // 16 bytes a lane: 512 bytes, 16 sectors.
        let wide = request(Space::Global, 16, &ALL, |l| 0x1000 + 16 * l as u64);
        assert_eq!(wide.global, traffic(1, 16, 16));
        // Shifted by one word: 128 bytes over 5 sectors.
        let shifted = request(Space::Global, 4, &ALL, |l| 0x1004 + 4 * l as u64);
        assert_eq!(shifted.global, traffic(1, 5, 4));
    }

    #[test]
    fn bank_conflicts_are_distinct_words_in_one_bank() {
        let row = request(Space::Shared, 4, &ALL, |l| 4 * l as u64);
        assert_eq!(row.shared, traffic(1, 1, 1));
        // A column of a 32x32 float tile: every lane in bank 0.
        let column = request(Space::Shared, 4, &ALL, |l| 128 * l as u64);
        assert_eq!(column.shared, traffic(1, 32, 1));
        // A stride of two words: two lanes to a bank.
        let two = request(Space::Shared, 4, &ALL, |l| 8 * l as u64);
        assert_eq!(two.shared, traffic(1, 2, 1));
        // Every lane the same word: a broadcast.
        let broadcast = request(Space::Shared, 4, &ALL, |_| 64);
        assert_eq!(broadcast.shared, traffic(1, 1, 1));
        // 8 bytes a lane, consecutive: two half-warps, one wavefront each.
        let doubles = request(Space::Shared, 8, &ALL, |l| 8 * l as u64);
        assert_eq!(doubles.shared, traffic(1, 2, 2));
        // 16 bytes a lane, consecutive: four quarter-warps.
        let quads = request(Space::Shared, 16, &ALL, |l| 16 * l as u64);
        assert_eq!(quads.shared, traffic(1, 4, 4));
        // Generic addresses in the shared window count as shared.
        let generic = request(Space::Generic, 4, &ALL, |l| {
            crate::ir::SHARED_WINDOW + 128 * l as u64
        });
        assert_eq!(generic.shared, traffic(1, 32, 1));
        assert_eq!(generic.global, Traffic::default());
    }

    #[test]
    fn the_kth_execution_of_each_lane_is_one_warp_instruction() {
        let mut counting = Counting::new(64, 2);
        counting.start_block();
        // Warp 0: lanes 0-31 run instruction 0 three times, lane 0 five.
        for lane in 0..32 {
            let times = if lane == 0 { 5 } else { 3 };
            for _ in 0..times {
                counting.executed(lane, 0);
            }
        }
        // Warp 1: only its odd lanes run instruction 1, once.
        for lane in (33..64).step_by(2) {
            counting.executed(lane, 1);
        }
        counting.end_block();
        assert_eq!((counting.total[0].warp, counting.total[0].lanes), (5, 98));
        assert_eq!((counting.total[1].warp, counting.total[1].lanes), (1, 16));
    }

    #[test]
    fn a_second_block_adds_to_the_first() {
        let mut counting = Counting::new(32, 1);
        for _ in 0..2 {
            counting.start_block();
            for lane in 0..32 {
                counting.executed(lane, 0);
                counting.access(lane, 0, Space::Global, 4 * lane as u64, 4);
            }
            counting.end_block();
        }
        assert_eq!(counting.total[0].global, traffic(2, 8, 8));
        assert_eq!(counting.total[0].warp, 2);
    }
}
