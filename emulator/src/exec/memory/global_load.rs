//! The global load most kernels make most, inlined into the interpreter
//! (`load_global`), and what every global load instruction keeps of its
//! last access to make the next one fast: the allocation it hit, and the
//! address, to prefetch the line it will load next.

use super::state::{Place, Recent, ThreadMemory, generic, read_elements};
use crate::exec::error::AccessError;
use crate::ir::Space;

/// Asks the CPU to fetch the cache line at `ptr`. A thread runs on by
/// itself to its next barrier, so a grid-stride loop reads one element per
/// cache line a block-wide stride apart (32 KiB in dot-sm): lines the
/// CPU's own prefetcher does not foresee (every load of the kernel is one
/// host instruction) and that the caches keep too few of (they share a
/// set), so each such load waited on the L3 cache. A prefetch is only a
/// hint: it reads nothing the kernel sees and cannot fault, whatever the
/// address.
#[inline]
pub(super) fn prefetch(ptr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86_64; a prefetch dereferences nothing.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

impl ThreadMemory<'_> {
    /// Keeps what global load instruction `at` did (`address`, in
    /// `allocation`, at `ptr` on the host) for its next, and prefetches the
    /// line a strided loop's load two iterations on reads: one iteration is
    /// too short a wait for a line from a busy L3 cache.
    #[inline(always)]
    pub(super) fn remember(&mut self, at: u32, allocation: usize, address: u64, ptr: *mut u8) {
        if let Some(recent) = self.block.recent.get_mut(at as usize) {
            let stride = address.wrapping_sub(recent.address) as usize;
            prefetch(ptr.wrapping_add(stride.wrapping_mul(2)));
            *recent = Recent {
                allocation,
                address,
            };
        }
    }

    /// The load most kernels make most: `load`'s own steps for a global
    /// address in the allocation this instruction hit last, aligned, all of
    /// whose words something wrote (so the initcheck has nothing to find),
    /// inlined into the interpreter. Returns false, having changed nothing,
    /// for any other load, which `load` makes. (The values are untainted:
    /// taint comes only from shared and local memory.)
    #[expect(
        clippy::too_many_arguments,
        reason = "a load instruction's fields, as `load` takes them"
    )]
    #[inline(always)]
    pub fn load_global(
        &mut self,
        space: Space,
        address: u64,
        size: u8,
        count: u8,
        read_only: bool,
        at: u32,
        out: &mut [u64; 4],
    ) -> Result<bool, AccessError> {
        let len = u64::from(size) * u64::from(count);
        let global = space == Space::Global
            || space == Space::Const
            || (space == Space::Generic && generic(address).0 == Space::Global);
        if !global || !len.is_power_of_two() || address & (len - 1) != 0 {
            return Ok(false);
        }
        let Some(&recent) = self.block.recent.get(at as usize) else {
            return Ok(false);
        };
        let Some(allocation) = self.launch.allocations.get(recent.allocation) else {
            return Ok(false);
        };
        let Some(ptr) = allocation.ptr(address, len) else {
            return Ok(false);
        };
        if !allocation.written.all() {
            return Ok(false);
        }
        // What `load` does for such a load, in its order.
        let place = Place::Global(recent.allocation, ptr);
        self.remember(at, recent.allocation, address, ptr);
        self.block.unwritten = false;
        if !read_only
            && let Err(e) = self.track(&place, space, address, len, false, self.access(at, false))
        {
            self.carry_on(at, e)?;
        }
        let n = usize::from(count).min(out.len());
        // SAFETY: `ptr` holds all `len` bytes (`Allocation::ptr`); the
        // first `count` elements are inside them.
        unsafe { read_elements(ptr, size, &mut out[..n]) };
        Ok(true)
    }
}
