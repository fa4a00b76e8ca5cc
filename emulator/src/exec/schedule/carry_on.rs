//! The scheduler's part of carrying on where the grader asks
//! (`kernels::emulator_output::CARRY_ON_VARIABLE`; the policy is in
//! `exec::memory::carry_on`): threads of one block waiting at different
//! barriers go through as an H200 lets them (`divergent_barrier`). A block
//! with a shared-memory race running again in lockstep is `block`'s.

use crate::ir::{Kernel, Op, fixed};

/// Which of the threads `waiting` at barriers (each its barrier's pc, None
/// for one that exited) go through now, when they wait at different ones;
/// None where a GPU deadlocks. As an H200 runs them (2026-11-28, the
/// grader's class): threads of different warps at different barriers
/// count alike, so all go through (a barrier on a warp-uniform branch);
/// lanes of one warp at two barriers, one in each branch of an `if`,
/// deadlock; lanes at a barrier inside an `if` and lanes past its end, at
/// a barrier every path from the first reaches, go through: the lanes past
/// the end wait where the warp reconverges, not at their barrier, which
/// they reach again with the others. So in each warp the lanes at the
/// barrier that all the warp's other barriers post-dominate go through, the
/// others wait on; a warp with no such barrier deadlocks.
/// `post_dominance` keeps what was found, by (later pc, earlier pc).
pub fn divergent_barrier(
    kernel: &Kernel,
    waiting: &[Option<u32>],
    post_dominance: &mut std::collections::HashMap<(u32, u32), bool>,
) -> Option<Vec<bool>> {
    let mut passes: Vec<bool> = waiting.iter().map(Option::is_some).collect();
    for (w, warp) in waiting.chunks(32).enumerate() {
        let mut pcs: Vec<u32> = warp.iter().flatten().copied().collect();
        pcs.sort_unstable();
        pcs.dedup();
        if pcs.len() < 2 {
            continue;
        }
        let mut dominates = |later: u32, earlier: u32| {
            *post_dominance
                .entry((later, earlier))
                .or_insert_with(|| post_dominates(kernel, later, earlier))
        };
        let first = pcs
            .iter()
            .copied()
            .find(|&x| pcs.iter().all(|&y| y == x || dominates(y, x)))?;
        for (lane, pc) in warp.iter().enumerate() {
            if pc.is_some_and(|pc| pc != first) {
                passes[w * 32 + lane] = false;
            }
        }
    }
    Some(passes)
}

/// Whether every path from the instruction after `earlier` to the
/// kernel's end passes through `later` (a path that never ends does not
/// count).
fn post_dominates(kernel: &Kernel, later: u32, earlier: u32) -> bool {
    let code = &kernel.code;
    let mut seen = vec![false; code.len() + 1];
    let mut stack = vec![earlier as usize + 1];
    while let Some(at) = stack.pop() {
        if at == later as usize || seen.get(at).is_none_or(|&s| s) {
            continue;
        }
        seen[at] = true;
        let Some(inst) = code.get(at) else {
            // Past the last instruction: the end.
            return false;
        };
        let always = inst.guard == fixed::TRUE && !inst.negate;
        match inst.op {
            // Even a guarded one: some path ends here.
            Op::Exit | Op::Trap | Op::AssertFail { .. } => return false,
            Op::Branch { target } => {
                stack.push(target as usize);
                if !always {
                    stack.push(at + 1);
                }
            }
            _ => stack.push(at + 1),
        }
    }
    true
}
