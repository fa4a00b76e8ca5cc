//! What the emulator carries on past when the grader asks
//! (`kernels::emulator_output::CARRY_ON_VARIABLE`), and how: as a GPU
//! without a sanitizer would. The grader judges a run's answer as it would
//! a GPU's, and the findings cost the memory-safety point, as
//! compute-sanitizer's do; a kernel that reads one float past its array
//! then passes the runs a GPU passes, and loses what a GPU grading loses.
//!
//! - A global access past an allocation's end, inside the 256 bytes
//!   `cuMemAlloc` aligns it to, lies on a page the GPU has mapped: it does
//!   not fault. A load reads zeros (freshly allocated device memory, most
//!   often), a store goes nowhere; an access over the end (a `float4` over
//!   the last float) reads and writes its bytes inside for real. Further
//!   past, or in shared, local or parameter memory, it faults as before, as
//!   on a GPU.
//! - A race in shared memory: the block runs again from its start, its
//!   global stores undone, with the lanes of each warp taking one
//!   instruction each in turn, a warp at a time to its next barrier
//!   (`BlockMemory::lockstep`, `exec::schedule::block`): a GPU's lanes move together, its warps
//!   drift apart. Code that leans on a warp's lanes moving in step (a tail
//!   without `__syncwarp()`) gets a GPU's answer, and code that leans on
//!   warps moving together (a tree without barriers, over more than a
//!   warp) a wrong one, as it most often does on a GPU. A block that made a
//!   global atomic (which other blocks' may have followed) carries on as it
//!   is.
//! - Two threads writing one global word: the word ends with one value.
//!   Threads of one block run one after another here, so they carry on
//!   only where they write the same value (which stays whatever the
//!   order); two values fault, as before. Blocks run on several host
//!   threads, so for two blocks what the word holds when the second store
//!   is checked depends on their timing: they carry on whatever the values
//!   (a GPU's answer too depends on its timing). A conflict with a read
//!   faults as before: what the read sees depends on timing a CPU cannot
//!   copy.
//! - A read of global memory nothing wrote reads what is there.
//! - A value from unwritten shared memory (the poison) stored to global
//!   memory is stored (`exec::schedule::block`).
//! - Threads of one block waiting at different barriers (undefined
//!   behaviour) go through as an H200 lets them
//!   (`exec::schedule::carry_on`).
//!
//! Misaligned accesses, deadlocks, traps, failed asserts and unsupported
//! instructions stop the launch whatever the mode, as on a GPU.

use super::state::{BlockMemory, Place, ThreadMemory, read, write};
use crate::exec::error::{AccessError, BlockError, ThreadError};
use crate::ir::Space;

/// Findings a block keeps: what it carried on past first. The launch
/// keeps fewer still (`exec::launch::KEPT_FINDINGS`).
pub const BLOCK_FINDINGS: usize = 4;

/// Global stores a block keeps to undo: past them, it cannot run again.
const UNDO_STORES: usize = 1 << 16;

/// The bytes `cuMemAlloc` aligns an allocation to: an access that ends
/// before the next multiple past the allocation's end cannot fault.
const ALIGN: u64 = 256;

impl BlockMemory {
    /// Keeps `finding` if the block has kept fewer than [`BLOCK_FINDINGS`].
    pub fn record(&mut self, finding: BlockError) {
        if self.findings.len() < BLOCK_FINDINGS {
            self.findings.push(finding);
        }
    }

    /// Puts back what the block's global stores overwrote, last first, so
    /// it can run again from its start.
    pub fn undo_stores(&mut self) {
        for &(ptr, old, size) in self.undo.iter().rev() {
            // SAFETY: each pointer was checked for `size` bytes of a live
            // allocation when the store was made; the launch holds it.
            unsafe { write(ptr, size, old) };
        }
        self.undo.clear();
    }
}

impl ThreadMemory<'_> {
    /// Keeps what `count` elements of `size` bytes at `ptr` (a global
    /// store's bytes in an allocation) hold, for `undo_stores`, while the
    /// block could run again in lockstep. The store calls it only where the
    /// launch carries on.
    pub(super) fn keep_for_undo(&mut self, ptr: *mut u8, size: u8, count: usize) {
        let block = &mut *self.block;
        if block.lockstep || !block.can_restart {
            return;
        }
        if block.undo.len() + count > UNDO_STORES {
            block.can_restart = false;
            return;
        }
        for i in 0..count {
            let at = ptr.wrapping_add(i * usize::from(size));
            // SAFETY: the store's place holds `count` elements.
            block.undo.push((at, unsafe { read(at, size) }, size));
        }
    }

    /// `error`, from instruction `at`, recorded and carried on past where
    /// the launch carries on and a GPU would; otherwise returned.
    pub(super) fn carry_on(&mut self, at: u32, error: AccessError) -> Result<(), AccessError> {
        self.carry_on_store(at, error, false)
    }

    /// `carry_on` for a store, which writes what the word holds (`same`)
    /// or not.
    pub(super) fn carry_on_store(
        &mut self,
        at: u32,
        error: AccessError,
        same: bool,
    ) -> Result<(), AccessError> {
        if !self.launch.carry_on {
            return Err(error);
        }
        let carries = match &error {
            // The block runs again in lockstep (`exec::schedule::block`)
            // where it can.
            AccessError::Race {
                space: Space::Shared,
                ..
            } => self.block.lockstep || !self.block.can_restart,
            // Two stores (see the module's words).
            AccessError::Race { write, earlier, .. } => {
                let per_block = self.launch.threads_per_block;
                let same_block = earlier.thread / per_block == self.global_thread / per_block;
                *write && earlier.wrote && (same || !same_block)
            }
            AccessError::Uninitialised { .. } => true,
            _ => false,
        };
        if !carries {
            return Err(error);
        }
        let thread = self.thread;
        self.block
            .record(BlockError::Thread(thread, at, ThreadError::Access(error)));
        Ok(())
    }

    /// An access `resolve` refused, as the place it goes to where a GPU
    /// would not fault (an allocation's padding); otherwise the error.
    pub(super) fn padding_place(
        &mut self,
        at: u32,
        error: AccessError,
    ) -> Result<Place, AccessError> {
        let (address, base, end) = match &error {
            AccessError::OutOfBounds {
                space: Space::Global | Space::Const | Space::Generic,
                address,
                len,
                near: Some((base, size, _)),
            } if address + len <= (base + size).next_multiple_of(ALIGN) => {
                (*address, *base, base + size)
            }
            _ => return Err(error),
        };
        if !self.launch.carry_on {
            return Err(error);
        }
        let thread = self.thread;
        self.block
            .record(BlockError::Thread(thread, at, ThreadError::Access(error)));
        self.block.padding = [0; 4];
        let scratch: *mut u8 = self.block.padding.as_mut_ptr().cast();
        // An access that starts inside the allocation (a float4 over its
        // last float) reads and writes those bytes for real.
        let inside = end.saturating_sub(address) as usize;
        let real = (inside > 0)
            .then(|| {
                let allocation = self.launch.allocations.iter().find(|a| a.base == base)?;
                allocation.ptr(address, inside as u64)
            })
            .flatten();
        let inside = match real {
            Some(real) => {
                // SAFETY: `ptr` checked `inside` bytes of the allocation; the
                // padding holds 32, more than any access.
                unsafe { std::ptr::copy_nonoverlapping(real, scratch, inside) };
                (real, inside)
            }
            None => (std::ptr::null_mut(), 0),
        };
        Ok(Place::Padding(scratch, inside))
    }
}

impl Place {
    /// After a store or atomic into an allocation's padding: the bytes of
    /// it that lie inside the allocation, written there.
    pub(super) fn copy_inside(&self) {
        if let Place::Padding(scratch, (real, inside)) = *self
            && inside > 0
        {
            // SAFETY: `padding_place` checked `inside` bytes at `real`, and
            // the scratch holds at least as many.
            unsafe { std::ptr::copy_nonoverlapping(scratch.cast_const(), real, inside) };
        }
    }
}
