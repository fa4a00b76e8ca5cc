//! One block: each thread runs until a barrier, a warp-wide operation or its
//! end, then the next; warp operations run once their lanes have all
//! arrived, barriers once every live thread has. A barrier some live threads
//! wait at while others wait at another is reported.

use super::access::{BlockMemory, LaunchMemory, ThreadMemory};
use super::thread::{self, Stop, ThreadError};
use super::warp::{self, LaneInput};
use crate::ir::{Kernel, Op, fixed};

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

/// How a block failed.
#[derive(Debug)]
pub enum BlockError {
    /// A thread's error, with the thread's index in the block.
    Thread(usize, u32, ThreadError),
    /// Live threads wait at different barriers: (thread, pc) of two of them.
    BarrierDivergence((usize, u32), (usize, u32)),
    /// Threads wait for lanes that will never arrive: (thread, pc).
    Deadlock(usize, u32),
}

/// A worker's reusable state for running blocks one after another.
pub struct BlockRunner {
    threads: Vec<ThreadState>,
    memory: BlockMemory,
    pub executed: u64,
}

impl BlockRunner {
    pub fn new(kernel: &Kernel, block: [u32; 3], shared_bytes: usize) -> Self {
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
            memory: BlockMemory::new(shared_bytes, kernel.local_bytes as usize, count),
            executed: 0,
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
        self.memory.reset();
        let per_block = self.threads.len() as u64;
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
        loop {
            for (t, state) in self.threads.iter_mut().enumerate() {
                if state.status != Status::Ready {
                    continue;
                }
                let mut memory = ThreadMemory {
                    launch,
                    block: &mut self.memory,
                    thread: t,
                    global_thread: linear * per_block + t as u64,
                };
                let stop = thread::run(
                    kernel,
                    &mut state.regs,
                    &mut state.pc,
                    &mut memory,
                    &mut self.executed,
                )
                .map_err(|(pc, e)| BlockError::Thread(t, pc, e))?;
                state.status = Status::Waiting(stop);
            }
            if self.resolve_warps(kernel)? {
                continue;
            }
            if !self.release_barrier()? {
                return Ok(());
            }
        }
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
                let members: Vec<usize> = (warp_start..warp_end)
                    .filter(|&t| mask & (1 << (t - warp_start)) != 0)
                    .filter(|&t| self.threads[t].status != Status::Waiting(Stop::Exit))
                    .collect();
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

    /// When every live thread waits at one barrier, lets them through and
    /// returns true; false when all have exited.
    fn release_barrier(&mut self) -> Result<bool, BlockError> {
        let mut at_barrier: Option<(usize, u32)> = None;
        for (t, state) in self.threads.iter().enumerate() {
            match state.status {
                Status::Waiting(Stop::Exit) => {}
                Status::Waiting(Stop::Barrier) => match at_barrier {
                    None => at_barrier = Some((t, state.pc)),
                    Some((other, pc)) if pc != state.pc => {
                        return Err(BlockError::BarrierDivergence((other, pc), (t, state.pc)));
                    }
                    Some(_) => {}
                },
                _ => return Err(BlockError::Deadlock(t, state.pc)),
            }
        }
        if at_barrier.is_none() {
            return Ok(false);
        }
        for state in &mut self.threads {
            if state.status == Status::Waiting(Stop::Barrier) {
                state.pc += 1;
                state.status = Status::Ready;
            }
        }
        self.memory.epoch += 1;
        Ok(true)
    }
}
