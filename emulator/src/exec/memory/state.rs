//! What a launch, a block and a thread see of memory: the allocations and
//! their conflict shadows shared by every block (`LaunchMemory`), a block's
//! own shared and local memory and what it keeps while it runs
//! (`BlockMemory`: barriers, warp clocks, taint, findings, undo), one
//! thread's view (`ThreadMemory`), where an access resolved to (`Place`),
//! and the raw reads and writes behind every checked access. The checks
//! themselves are `access`'s.

use std::sync::Arc;

use super::race::{Shadow, SharedShadow, TRACKED_THREADS};
use crate::exec::error::BlockError;
use crate::heap::Allocation;
use crate::ir::{LOCAL_WINDOW, SHARED_WINDOW, Space, WINDOW_BYTES};

/// What every word of shared memory holds when a block starts, so a value
/// no thread wrote is recognisable (a NaN as f32 and as f64).
pub const POISON: u32 = 0x7ff7_dead;

/// Values that came from shared memory no thread of the block wrote, and
/// where they went: a block switches to tracking them at the first such
/// read (`Stop::Taint`), and a tainted value stored to global memory is a
/// finding.
pub struct Taint {
    /// Per thread, a bit per register.
    pub registers: Vec<Vec<u64>>,
    /// A bit per shared word written with a tainted value.
    pub(super) shared: Vec<u64>,
    /// A bit per local word (all threads') written with a tainted value.
    pub(super) local: Vec<u64>,
    /// The first read of unwritten shared memory: (thread in the block,
    /// instruction, shared offset).
    pub origin: (usize, u32, u64),
}

/// What a global load instruction did last, by whichever thread of the
/// block: the allocation it hit, which it most likely hits again (a
/// kernel's loads each read one array), and the address, from which
/// `prefetch` guesses the next.
#[derive(Clone, Copy)]
pub(super) struct Recent {
    pub(super) allocation: usize,
    pub(super) address: u64,
}

impl Recent {
    pub(super) const NONE: Recent = Recent {
        allocation: usize::MAX,
        address: 0,
    };
}

/// What every block of a launch shares: the allocations as they were at the
/// launch, their conflict shadows, and the parameter buffer.
pub struct LaunchMemory {
    pub allocations: Vec<Arc<Allocation>>,
    pub(super) shadows: Vec<Shadow>,
    pub params: Vec<u8>,
    pub threads_per_block: u64,
    /// The kernel has a device-wide fence: accesses of different blocks
    /// may be ordered by it and an atomic, which the checker does not
    /// follow, so it takes them as ordered.
    pub blocks_may_order: bool,
    /// Global memory is tracked (the launch has fewer than
    /// [`TRACKED_THREADS`] threads).
    pub(super) tracked: bool,
    /// The kernel synchronises lanes of a warp (a shuffle, vote, match or
    /// `__syncwarp`): without, every warp clock stays zero, unread.
    pub warp_syncs: bool,
    /// Findings a GPU carries on past are recorded and the launch goes on
    /// (`kernels::emulator_output::CARRY_ON_VARIABLE`; see `carry_on`).
    pub carry_on: bool,
}

impl LaunchMemory {
    pub fn new(
        allocations: Vec<Arc<Allocation>>,
        params: Vec<u8>,
        threads_per_block: u64,
        threads: u64,
        blocks_may_order: bool,
        warp_syncs: bool,
    ) -> Self {
        let tracked = threads < TRACKED_THREADS;
        let shadows = allocations
            .iter()
            .map(|a| Shadow::new(if tracked { a.bytes.len() } else { 0 }))
            .collect();
        LaunchMemory {
            allocations,
            shadows,
            params,
            threads_per_block,
            blocks_may_order,
            tracked,
            warp_syncs,
            carry_on: false,
        }
    }
}

/// Each thread's warp-level synchronisations since its block's last
/// barrier (`counts`), and what it knows of its warp's lanes (`lanes`: each
/// lane's count at their latest synchronisation, direct or through others),
/// valid while `epochs` holds the block's epoch: a barrier makes them all
/// stale (zero) at once. Apart, so the small arrays every access reads stay
/// in the cache.
pub(super) struct WarpClocks {
    epochs: Vec<u32>,
    counts: Vec<u32>,
    lanes: Vec<[u32; 32]>,
}

pub(super) const NO_LANES: [u32; 32] = [0; 32];

impl WarpClocks {
    fn new(threads: usize) -> WarpClocks {
        WarpClocks {
            epochs: vec![u32::MAX; threads],
            counts: vec![0; threads],
            lanes: vec![NO_LANES; threads],
        }
    }

    pub(super) fn count(&self, t: usize, epoch: u32) -> u32 {
        if self.epochs[t] == epoch {
            self.counts[t]
        } else {
            0
        }
    }

    pub(super) fn lanes(&self, t: usize, epoch: u32) -> &[u32; 32] {
        if self.epochs[t] == epoch {
            &self.lanes[t]
        } else {
            &NO_LANES
        }
    }
}

/// Where a generic address lies: the space, and the address in it.
#[inline(always)]
pub fn generic(address: u64) -> (Space, u64) {
    if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_BYTES).contains(&address) {
        (Space::Shared, address - SHARED_WINDOW)
    } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_BYTES).contains(&address) {
        (Space::Local, address - LOCAL_WINDOW)
    } else {
        (Space::Global, address)
    }
}

/// One block's own memory, reused from block to block by a worker.
pub struct BlockMemory {
    pub(super) shared: Vec<u64>,
    pub(super) shared_len: usize,
    pub(super) shared_shadow: SharedShadow,
    pub(super) local: Vec<u64>,
    pub(super) local_per_thread: usize,
    /// The allocations the last global accesses hit: most hit them again.
    pub(super) cached: [usize; 2],
    /// Per global load instruction, its last access in this block.
    pub(super) recent: Vec<Recent>,
    /// Barriers the block has passed.
    pub epoch: u32,
    pub(super) warp: WarpClocks,
    /// What the block's threads printed, in the order they printed it.
    pub printf: Vec<u8>,
    /// Set by the first read of unwritten shared memory, before tracking
    /// starts: (thread, instruction, offset).
    pub first_unwritten_read: Option<(usize, u32, u64)>,
    /// Whether the last shared access touched a word no thread had written.
    pub(super) unwritten: bool,
    /// The first store of a tainted value to global memory: (thread,
    /// instruction, address). Reported when the block ends, unless another
    /// finding (a race, most often the cause) comes first.
    pub poisoned: Option<(usize, u32, u64)>,
    pub taint: Option<Box<Taint>>,
    /// What the block carried on past (see `carry_on`), first ones only.
    pub findings: Vec<BlockError>,
    /// The lanes of a warp take one instruction each in turn, a warp at a
    /// time, as a GPU's lanes move together (see `carry_on`).
    pub lockstep: bool,
    /// The block's global stores, to undo before it runs again from its
    /// start (`carry_on`): (where, the bytes there before, how many).
    pub(super) undo: Vec<(*mut u8, u64, u8)>,
    /// Whether the block can run again from its start: not once it made a
    /// global atomic (other blocks' may have followed it) or more stores
    /// than `undo` keeps.
    pub can_restart: bool,
    /// Where an access into an allocation's padding goes (see `carry_on`):
    /// zeros to a load, nowhere for a store.
    pub(super) padding: [u64; 4],
}

impl BlockMemory {
    /// For a kernel of `instructions` instructions.
    pub fn new(
        shared_len: usize,
        local_per_thread: usize,
        threads: usize,
        instructions: usize,
    ) -> Self {
        BlockMemory {
            shared: vec![0; shared_len.div_ceil(8)],
            shared_len,
            shared_shadow: SharedShadow::new(shared_len),
            local: vec![0; (local_per_thread * threads).div_ceil(8)],
            local_per_thread,
            cached: [0, 0],
            recent: vec![Recent::NONE; instructions],
            epoch: 0,
            warp: WarpClocks::new(threads),
            printf: Vec::new(),
            first_unwritten_read: None,
            unwritten: false,
            poisoned: None,
            taint: None,
            findings: Vec::new(),
            lockstep: false,
            undo: Vec::new(),
            can_restart: true,
            padding: [0; 4],
        }
    }

    /// Fresh for the next block: shared memory poisoned, its accesses and
    /// the warps' clocks forgotten.
    pub fn reset(&mut self) {
        self.shared_shadow.clear();
        let poison = u64::from(POISON) << 32 | u64::from(POISON);
        self.shared.fill(poison);
        self.epoch = 0;
        self.warp.epochs.fill(u32::MAX);
        self.first_unwritten_read = None;
        self.poisoned = None;
        self.taint = None;
        self.undo.clear();
        self.can_restart = true;
    }

    /// A barrier: every thread is ordered with every other, and counts
    /// warp synchronisations afresh.
    pub fn barrier(&mut self) {
        self.epoch += 1;
    }

    /// A warp-level synchronisation of `members` (threads of one warp, by
    /// index in the block): each counts it, and each learns what the others
    /// know.
    pub fn warp_sync(&mut self, members: &[usize]) {
        let mut joined = [0u32; 32];
        for &t in members {
            for (slot, &k) in joined.iter_mut().zip(self.warp.lanes(t, self.epoch)) {
                *slot = (*slot).max(k);
            }
        }
        for &t in members {
            joined[t % 32] = self.warp.count(t, self.epoch) + 1;
        }
        for &t in members {
            self.warp.epochs[t] = self.epoch;
            self.warp.counts[t] = joined[t % 32];
            self.warp.lanes[t] = joined;
        }
    }
}

/// One thread's view: what it touches memory with.
pub struct ThreadMemory<'a> {
    pub launch: &'a LaunchMemory,
    pub block: &'a mut BlockMemory,
    /// Index within the block.
    pub thread: usize,
    /// Launch-wide index.
    pub global_thread: u64,
}

/// Where an access resolved to.
pub(super) enum Place {
    Global(usize, *mut u8),
    Shared(usize, *mut u8),
    Local(*mut u8),
    Param(*const u8),
    /// Past an allocation's end, inside the 256 bytes it is aligned to:
    /// the block's `padding` (see `carry_on`), and the access's first bytes
    /// where they lie inside the allocation (`copy_inside`).
    Padding(*mut u8, (*mut u8, usize)),
}

/// # Safety
/// `ptr` points to `size` readable bytes.
pub(super) unsafe fn read(ptr: *const u8, size: u8) -> u64 {
    // SAFETY: per this function's contract.
    unsafe {
        match size {
            1 => u64::from(ptr.read()),
            2 => u64::from(ptr.cast::<u16>().read_unaligned()),
            4 => u64::from(ptr.cast::<u32>().read_unaligned()),
            _ => ptr.cast::<u64>().read_unaligned(),
        }
    }
}

/// Reads `out.len()` elements of `size` bytes from `ptr`: one match on
/// the size, not one per element.
///
/// # Safety
/// `ptr` points to `out.len() * size` readable bytes.
#[inline(always)]
pub(super) unsafe fn read_elements(ptr: *const u8, size: u8, out: &mut [u64]) {
    // SAFETY: per this function's contract.
    unsafe {
        match size {
            1 => {
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = u64::from(ptr.add(i).read());
                }
            }
            2 => {
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = u64::from(ptr.cast::<u16>().add(i).read_unaligned());
                }
            }
            4 => {
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = u64::from(ptr.cast::<u32>().add(i).read_unaligned());
                }
            }
            _ => {
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = ptr.cast::<u64>().add(i).read_unaligned();
                }
            }
        }
    }
}

/// # Safety
/// `ptr` points to `size` writable bytes.
pub(super) unsafe fn write(ptr: *mut u8, size: u8, value: u64) {
    // SAFETY: per this function's contract.
    unsafe {
        match size {
            1 => ptr.write(value as u8),
            2 => ptr.cast::<u16>().write_unaligned(value as u16),
            4 => ptr.cast::<u32>().write_unaligned(value as u32),
            _ => ptr.cast::<u64>().write_unaligned(value),
        }
    }
}
