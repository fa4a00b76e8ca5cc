//! One block: each thread runs until a barrier, a warp-wide operation or its
//! end, then the next; warp operations run once their lanes have all
//! arrived, barriers once every live thread has. A barrier some live threads
//! wait at while others wait at another is reported. Where the launch
//! carries on (`exec::memory::carry_on`), a block with a shared-memory race
//! runs again in lockstep: each lane of a warp one instruction in turn, a
//! warp at a time.

use super::carry_on;
use super::counters::Counting;
use super::thread::{self, Stop};
use super::warp::{self, LaneInput};
use crate::exec::error::{AccessError, BlockError, ThreadError};
use crate::exec::memory::state::{BlockMemory, LaunchMemory, ThreadMemory};
use crate::ir::{BarrierReduce, Kernel, Op, Reg, Space, WarpOp, fixed};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Status {
    Ready,
    Waiting(Stop),
}

struct ThreadState {
    regs: Vec<u64>,
    pc: u32,
    status: Status,
}

/// A worker's reusable state for running blocks one after another.
pub struct BlockRunner {
    threads: Vec<ThreadState>,
    memory: BlockMemory,
    pub executed: u64,
    /// Whether one barrier's pc post-dominates another's, as found
    /// (`carry_on::divergent_barrier`).
    post_dominance: std::collections::HashMap<(u32, u32), bool>,
    /// What the hardware would count (`counters`), where the launch asks.
    pub counting: Option<Box<Counting>>,
}

impl BlockRunner {
    /// A runner for blocks of shape `block`; with `count`, counting what
    /// the hardware would.
    pub fn new(kernel: &Kernel, block: [u32; 3], shared_bytes: usize, count: bool) -> Self {
        let count_threads = count;
        let count = (block[0] * block[1] * block[2]) as usize;
        let threads = (0..count)
            .map(|_| ThreadState {
                regs: kernel.template.clone(),
                pc: 0,
                status: Status::Ready,
            })
            .collect();
        BlockRunner {
            threads,
            memory: BlockMemory::new(
                shared_bytes,
                kernel.local_bytes as usize,
                count,
                kernel.code.len(),
            ),
            executed: 0,
            post_dominance: std::collections::HashMap::new(),
            counting: count_threads.then(|| Box::new(Counting::new(count, kernel.code.len()))),
        }
    }

    /// Runs block `ctaid` (linear index `linear`) to its end.
    pub fn run(
        &mut self,
        kernel: &Kernel,
        launch: &LaunchMemory,
        block: [u32; 3],
        ctaid: [u32; 3],
        linear: u64,
    ) -> Result<(), BlockError> {
        self.memory.findings.clear();
        self.memory.lockstep = false;
        if let Some(recorder) = self.counting.as_mut().and_then(|c| c.recorder.as_mut()) {
            recorder.enter(linear);
        }
        self.start(kernel, block, ctaid);
        let result = self.finish_and_count(kernel, launch, block, ctaid, linear);
        if let Some(counting) = self.counting.as_mut() {
            counting.end_block();
        }
        result
    }

    /// Runs the started block to its end, and again in lockstep where
    /// `carry_on` restarts it.
    fn finish_and_count(
        &mut self,
        kernel: &Kernel,
        launch: &LaunchMemory,
        block: [u32; 3],
        ctaid: [u32; 3],
        linear: u64,
    ) -> Result<(), BlockError> {
        match self.finish(kernel, launch, linear) {
            // `carry_on` leaves a shared-memory race unrecorded only in a
            // block that can run again: it runs again in lockstep.
            Err(
                race @ BlockError::Thread(
                    _,
                    _,
                    ThreadError::Access(AccessError::Race {
                        space: Space::Shared,
                        ..
                    }),
                ),
            ) if launch.carry_on && self.memory.can_restart => {
                self.memory.record(race);
                self.memory.undo_stores();
                self.memory.lockstep = true;
                self.memory.printf.clear();
                self.start(kernel, block, ctaid);
                self.finish(kernel, launch, linear)
            }
            other => other,
        }
    }

    /// What the block's last run carried on past (`carry_on`), taken.
    pub fn take_findings(&mut self) -> Vec<BlockError> {
        std::mem::take(&mut self.memory.findings)
    }

    /// The block `ctaid` of shape `block` at its start: its memory fresh,
    /// each thread's registers set and its pc at 0.
    fn start(&mut self, kernel: &Kernel, block: [u32; 3], ctaid: [u32; 3]) {
        self.memory.reset();
        if let Some(counting) = self.counting.as_mut() {
            counting.start_block();
        }
        for (t, state) in self.threads.iter_mut().enumerate() {
            state.regs.copy_from_slice(&kernel.template);
            let tid = [
                t as u32 % block[0],
                t as u32 / block[0] % block[1],
                t as u32 / (block[0] * block[1]),
            ];
            let lane = t as u32 % 32;
            for axis in 0..3 {
                state.regs[fixed::TID as usize + axis] = u64::from(tid[axis]);
                state.regs[fixed::CTAID as usize + axis] = u64::from(ctaid[axis]);
            }
            state.regs[fixed::LANEID as usize] = u64::from(lane);
            state.regs[fixed::WARPID as usize] = (t / 32) as u64;
            state.regs[fixed::LANEMASK_EQ as usize] = 1 << lane;
            state.regs[fixed::LANEMASK_LT as usize] = (1 << lane) - 1;
            state.regs[fixed::LANEMASK_LE as usize] = (2 << lane) - 1;
            state.regs[fixed::LANEMASK_GT as usize] = u64::from(u32::MAX) & !((2 << lane) - 1);
            state.regs[fixed::LANEMASK_GE as usize] = u64::from(u32::MAX) & !((1 << lane) - 1);
            state.pc = 0;
            state.status = Status::Ready;
        }
    }

    /// Runs the started block (linear index `linear`) to its end.
    fn finish(
        &mut self,
        kernel: &Kernel,
        launch: &LaunchMemory,
        linear: u64,
    ) -> Result<(), BlockError> {
        let per_block = self.threads.len() as u64;
        loop {
            if self.memory.lockstep {
                // A warp's lanes in step, the warps one after another: a
                // GPU's warps drift apart, and nothing orders them but a
                // barrier.
                for warp_start in (0..self.threads.len()).step_by(32) {
                    let warp_end = (warp_start + 32).min(self.threads.len());
                    let mut ran = true;
                    while ran {
                        ran = false;
                        for t in warp_start..warp_end {
                            if self.threads[t].status == Status::Ready {
                                let global = linear * per_block + t as u64;
                                self.step::<true>(kernel, launch, t, global)?;
                                ran = true;
                            }
                        }
                    }
                }
            } else {
                for t in 0..self.threads.len() {
                    // Once more after `Stop::Taint`, now tracking taint.
                    while self.threads[t].status == Status::Ready {
                        self.step::<false>(kernel, launch, t, linear * per_block + t as u64)?;
                    }
                }
            }
            // Every thread has run to its next stop: its warp's accesses
            // since the last are whole.
            if let Some(counting) = self.counting.as_mut() {
                counting.group();
            }
            if self.resolve_warps(kernel)? {
                continue;
            }
            if !self.release_barrier(kernel, launch.carry_on)? {
                // The block ended: a tainted store is reported now, no other
                // finding having come first.
                let poisoned = match (self.memory.poisoned, &self.memory.taint) {
                    (Some((t, pc, address)), Some(taint)) => BlockError::Thread(
                        t,
                        pc,
                        ThreadError::Access(AccessError::Poisoned {
                            address,
                            origin: taint.origin,
                        }),
                    ),
                    _ => return Ok(()),
                };
                // The poison was stored, as a GPU stores what its shared
                // memory held.
                if launch.carry_on {
                    self.memory.record(poisoned);
                    return Ok(());
                }
                return Err(poisoned);
            }
        }
    }

    /// Runs thread `t` (launch-wide `global_thread`) to its next stop, or
    /// with `STEP` one instruction.
    fn step<const STEP: bool>(
        &mut self,
        kernel: &Kernel,
        launch: &LaunchMemory,
        t: usize,
        global_thread: u64,
    ) -> Result<(), BlockError> {
        let state = &mut self.threads[t];
        let mut memory = ThreadMemory {
            launch,
            block: &mut self.memory,
            thread: t,
            global_thread,
        };
        // Taint tracking, once a block reads unwritten shared memory.
        let mut taint = memory
            .block
            .taint
            .as_mut()
            .map(|taint| std::mem::take(&mut taint.registers[t]));
        let counting = self.counting.as_deref_mut();
        let executed = &mut self.executed;
        let regs = &mut state.regs;
        let pc = &mut state.pc;
        let stop = match (taint.as_mut(), counting.is_some()) {
            (None, false) => thread::run::<false, STEP, false>(
                kernel,
                regs,
                &mut [],
                pc,
                &mut memory,
                executed,
                None,
            ),
            (Some(bits), false) => thread::run::<true, STEP, false>(
                kernel,
                regs,
                bits,
                pc,
                &mut memory,
                executed,
                None,
            ),
            (None, true) => thread::run::<false, STEP, true>(
                kernel,
                regs,
                &mut [],
                pc,
                &mut memory,
                executed,
                counting,
            ),
            (Some(bits), true) => thread::run::<true, STEP, true>(
                kernel,
                regs,
                bits,
                pc,
                &mut memory,
                executed,
                counting,
            ),
        };
        if let (Some(bits), Some(tracking)) = (taint, self.memory.taint.as_mut()) {
            tracking.registers[t] = bits;
        }
        let stop = stop.map_err(|(pc, e)| BlockError::Thread(t, pc, e))?;
        self.threads[t].status = match stop {
            Stop::Taint { registers, mask } => {
                self.start_taint(kernel, t, registers, mask);
                Status::Ready
            }
            Stop::Step => Status::Ready,
            stop => Status::Waiting(stop),
        };
        Ok(())
    }

    /// Starts taint tracking for the block: thread `t` just loaded shared
    /// memory no thread wrote into `registers` (those `mask` names).
    fn start_taint(&mut self, kernel: &Kernel, t: usize, registers: [Reg; 4], mask: u8) {
        if self.memory.taint.is_none() {
            let origin = self.memory.first_unwritten_read.unwrap_or((t, 0, 0));
            self.memory
                .start_taint(self.threads.len(), kernel.template.len(), origin);
        }
        if let Some(taint) = self.memory.taint.as_mut() {
            for (i, &reg) in registers.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    taint.registers[t][usize::from(reg) / 64] |= 1 << (reg % 64);
                }
            }
        }
    }

    /// Whether register `reg` of thread `t` is tainted.
    fn tainted(&self, t: usize, reg: Reg) -> bool {
        self.memory
            .taint
            .as_ref()
            .is_some_and(|taint| taint.registers[t][usize::from(reg) / 64] & (1 << (reg % 64)) != 0)
    }

    /// Sets the taint of register `reg` of thread `t` (when tracking).
    fn set_tainted(&mut self, t: usize, reg: Reg, value: bool) {
        if let Some(taint) = self.memory.taint.as_mut() {
            let (word, bit) = (usize::from(reg) / 64, 1u64 << (reg % 64));
            if value {
                taint.registers[t][word] |= bit;
            } else {
                taint.registers[t][word] &= !bit;
            }
        }
    }

    /// What the last block printed, taken.
    pub fn take_printed(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.memory.printf)
    }

    /// Runs every warp operation whose lanes have all arrived; true when any
    /// did.
    fn resolve_warps(&mut self, kernel: &Kernel) -> Result<bool, BlockError> {
        let mut progressed = false;
        for warp_start in (0..self.threads.len()).step_by(32) {
            let warp_end = (warp_start + 32).min(self.threads.len());
            while let Some(first) = (warp_start..warp_end)
                .find(|&t| self.threads[t].status == Status::Waiting(Stop::Warp))
            {
                let pc = self.threads[first].pc;
                let Op::Warp {
                    op,
                    d,
                    d_pred,
                    a,
                    b,
                    c,
                    mask,
                } = kernel.code[pc as usize].op
                else {
                    unreachable!("threads wait for warp operations only at one");
                };
                let mask = self.threads[first].regs[mask as usize] as u32;
                let members: Vec<usize> = if op == WarpOp::ActiveMask {
                    // The lanes that reached it together: every lane has run
                    // to a stop, and those elsewhere took another path.
                    (warp_start..warp_end)
                        .filter(|&t| {
                            self.threads[t].status == Status::Waiting(Stop::Warp)
                                && self.threads[t].pc == pc
                        })
                        .collect()
                } else {
                    (warp_start..warp_end)
                        .filter(|&t| mask & (1 << (t - warp_start)) != 0)
                        .filter(|&t| self.threads[t].status != Status::Waiting(Stop::Exit))
                        .collect()
                };
                let arrived = members.iter().all(|&t| {
                    self.threads[t].status == Status::Waiting(Stop::Warp)
                        && self.threads[t].pc == pc
                });
                if !arrived {
                    break;
                }
                let lanes: Vec<LaneInput> = members
                    .iter()
                    .map(|&t| {
                        let regs = &self.threads[t].regs;
                        LaneInput {
                            lane: (t - warp_start) as u32,
                            a: regs[a as usize],
                            b: regs[b as usize],
                            c: regs[c as usize],
                        }
                    })
                    .collect();
                let mut values = [None; 32];
                for lane in &lanes {
                    values[lane.lane as usize] = Some(lane.a);
                }
                let outputs = warp::collective(op, &lanes, &values);
                if op != WarpOp::ActiveMask {
                    self.memory.warp_sync(&members);
                }
                // A shuffle's value carries its source lane's taint; a vote or
                // a match, any voter's.
                let taints: Vec<bool> = members
                    .iter()
                    .zip(&outputs)
                    .map(|(&t, out)| match op {
                        WarpOp::Shuffle(_) => {
                            let source = out.source.map_or(t, |lane| warp_start + lane as usize);
                            self.tainted(source, a)
                        }
                        WarpOp::ActiveMask | WarpOp::Sync => false,
                        _ => members.iter().any(|&m| self.tainted(m, a)),
                    })
                    .collect();
                for (&t, &tainted) in members.iter().zip(&taints) {
                    self.set_tainted(t, d, tainted);
                    self.set_tainted(t, d_pred, false);
                }
                for (&t, out) in members.iter().zip(outputs) {
                    let state = &mut self.threads[t];
                    state.regs[d as usize] = out.d;
                    state.regs[d_pred as usize] = u64::from(out.pred);
                    state.pc += 1;
                    state.status = Status::Ready;
                }
                progressed = true;
            }
        }
        Ok(progressed)
    }

    /// When every live thread waits at one barrier, lets them through (with
    /// `bar.red`'s reduction of their values) and returns true; false when
    /// all have exited. Threads waiting at different barriers are an error;
    /// where the launch carries on (`carry_on`), they go through as on a
    /// GPU (`carry_on::divergent_barrier`), a finding, or stop there too.
    fn release_barrier(&mut self, kernel: &Kernel, carry_on: bool) -> Result<bool, BlockError> {
        let mut at_barrier: Option<(usize, u32)> = None;
        let mut divergence = None;
        for (t, state) in self.threads.iter().enumerate() {
            match state.status {
                Status::Waiting(Stop::Exit) => {}
                Status::Waiting(Stop::Barrier) => match at_barrier {
                    None => at_barrier = Some((t, state.pc)),
                    Some((other, pc)) if pc != state.pc && divergence.is_none() => {
                        divergence =
                            Some(BlockError::BarrierDivergence((other, pc), (t, state.pc)));
                    }
                    Some(_) => {}
                },
                _ => return Err(BlockError::Deadlock(t, state.pc)),
            }
        }
        if at_barrier.is_none() {
            return Ok(false);
        }
        // Which threads go through: all those at a barrier (None), or, at
        // different ones where the launch carries on, those the GPU's rule
        // lets through.
        let passes: Option<Vec<bool>> = match divergence {
            None => None,
            Some(divergence) if carry_on => {
                let waiting: Vec<Option<u32>> = self
                    .threads
                    .iter()
                    .map(|s| (s.status == Status::Waiting(Stop::Barrier)).then_some(s.pc))
                    .collect();
                let Some(passes) =
                    carry_on::divergent_barrier(kernel, &waiting, &mut self.post_dominance)
                else {
                    return Err(divergence);
                };
                if !self
                    .memory
                    .findings
                    .iter()
                    .any(|f| matches!(f, BlockError::BarrierDivergence(..)))
                {
                    self.memory.record(divergence);
                }
                Some(passes)
            }
            Some(divergence) => return Err(divergence),
        };
        let goes = |t: usize, state: &ThreadState| match &passes {
            None => state.status == Status::Waiting(Stop::Barrier),
            Some(passes) => passes[t],
        };
        let pc = (0..self.threads.len())
            .find(|&t| goes(t, &self.threads[t]))
            .map_or(0, |t| self.threads[t].pc);
        if let Op::BarrierReduce { reduce, d, a } = kernel.code[pc as usize].op {
            let released: Vec<usize> = (0..self.threads.len())
                .filter(|&t| goes(t, &self.threads[t]))
                .collect();
            let values = || {
                released
                    .iter()
                    .map(|&t| self.threads[t].regs[a as usize] != 0)
            };
            let value = match reduce {
                BarrierReduce::Popc => values().filter(|&v| v).count() as u64,
                BarrierReduce::And => u64::from(values().all(|v| v)),
                BarrierReduce::Or => u64::from(values().any(|v| v)),
            };
            let tainted = released.iter().any(|&t| self.tainted(t, a));
            for &t in &released {
                self.threads[t].regs[d as usize] = value;
                self.set_tainted(t, d, tainted);
            }
        }
        for t in 0..self.threads.len() {
            if goes(t, &self.threads[t]) {
                let state = &mut self.threads[t];
                state.pc += 1;
                state.status = Status::Ready;
            }
        }
        self.memory.barrier();
        Ok(true)
    }
}
