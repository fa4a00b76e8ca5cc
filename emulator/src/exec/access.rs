//! Loads, stores and atomics in every state space, each checked: the bytes
//! must lie inside one allocation (or the block's shared memory, or the
//! thread's local memory), be aligned to the element size, and not conflict
//! with another thread's access (see `race`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64};

use super::atomic::{rmw16, rmw32, rmw64};
use super::global_load::Recent;
use super::race::{Access, Conflict, Shadow, SharedShadow, TRACKED_THREADS, View};
use super::taint::{POISON, Taint};
use crate::ir::{AtomicOp, Space};
use crate::memory::Allocation;

/// Generic addresses of shared memory: this window plus the offset.
pub const SHARED_WINDOW: u64 = 0x0000_1000_0000_0000;
/// Generic addresses of the thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x0000_2000_0000_0000;
const WINDOW_BYTES: u64 = 1 << 32;

/// What went wrong with one access.
#[derive(Debug)]
pub enum AccessError {
    OutOfBounds {
        space: Space,
        address: u64,
        len: u64,
        /// (base, length, label) of the allocation just below the address.
        near: Option<(u64, u64, String)>,
    },
    Misaligned {
        space: Space,
        address: u64,
        align: u64,
    },
    Race {
        space: Space,
        address: u64,
        /// Whether this (the later) access wrote.
        write: bool,
        conflict: Conflict,
    },
    /// A value from shared memory no thread of the block wrote, stored to
    /// global memory.
    Poisoned {
        address: u64,
        /// The first read of unwritten shared memory: (thread in the block,
        /// instruction, shared offset).
        origin: (usize, u32, u64),
    },
    /// A read of global memory nothing ever wrote (no copy, memset or
    /// store): compute-sanitizer's initcheck finding.
    Uninitialised {
        address: u64,
        len: u64,
        /// (base, length, label) of the allocation.
        allocation: (u64, u64, String),
    },
}

/// What every block of a launch shares: the allocations as they were at the
/// launch, their conflict shadows, and the parameter buffer.
pub struct LaunchMemory {
    pub allocations: Vec<Arc<Allocation>>,
    shadows: Vec<Shadow>,
    pub params: Vec<u8>,
    pub threads_per_block: u64,
    /// The kernel has a device-wide fence: accesses of different blocks
    /// may be ordered by it and an atomic, which the checker does not
    /// follow, so it takes them as ordered.
    pub blocks_may_order: bool,
    /// Global memory is tracked (the launch has fewer than
    /// [`TRACKED_THREADS`] threads).
    tracked: bool,
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
struct WarpClocks {
    epochs: Vec<u32>,
    counts: Vec<u32>,
    lanes: Vec<[u32; 32]>,
}

const NO_LANES: [u32; 32] = [0; 32];

impl WarpClocks {
    fn new(threads: usize) -> WarpClocks {
        WarpClocks {
            epochs: vec![u32::MAX; threads],
            counts: vec![0; threads],
            lanes: vec![NO_LANES; threads],
        }
    }

    fn count(&self, t: usize, epoch: u32) -> u32 {
        if self.epochs[t] == epoch {
            self.counts[t]
        } else {
            0
        }
    }

    fn lanes(&self, t: usize, epoch: u32) -> &[u32; 32] {
        if self.epochs[t] == epoch {
            &self.lanes[t]
        } else {
            &NO_LANES
        }
    }
}

/// Where a generic address lies: the space, and the address in it.
#[inline(always)]
pub(super) fn generic(address: u64) -> (Space, u64) {
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
    cached: [usize; 2],
    /// Per global load instruction, its last access in this block.
    pub(super) recent: Vec<Recent>,
    /// Barriers the block has passed.
    pub epoch: u32,
    warp: WarpClocks,
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
    pub findings: Vec<super::block::BlockError>,
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

impl ThreadMemory<'_> {
    pub(super) fn access(&self, at: u32, atomic: bool) -> Access {
        Access {
            thread: self.global_thread,
            atomic,
            bytes: 0xf,
            epoch: self.block.epoch,
            epoch_bits: 32,
            warp: Some(if self.launch.warp_syncs {
                self.block.warp.count(self.thread, self.block.epoch)
            } else {
                0
            }),
            at: Some(at),
        }
    }

    /// Where `len` bytes at `address` in `space` lie, checked; a global
    /// address is looked for first in allocation `hint` (if there is one),
    /// then in the two allocations hit last, then by a search.
    #[inline(always)]
    fn resolve(
        &mut self,
        space: Space,
        address: u64,
        len: u64,
        hint: usize,
    ) -> Result<Place, AccessError> {
        let (space, address) = match space {
            Space::Generic => generic(address),
            other => (other, address),
        };
        // An access's length is a power of two (an element, or a vector of
        // 2 or 4): a mask, not a division, on every access.
        let misaligned = if len.is_power_of_two() {
            address & (len - 1) != 0
        } else {
            address % len != 0
        };
        if misaligned {
            return Err(AccessError::Misaligned {
                space,
                address,
                align: len,
            });
        }
        let out_of_bounds = |near| AccessError::OutOfBounds {
            space,
            address,
            len,
            near,
        };
        match space {
            Space::Global | Space::Const | Space::Generic => {
                let allocations = &self.launch.allocations;
                if let Some(ptr) = allocations.get(hint).and_then(|a| a.ptr(address, len)) {
                    return Ok(Place::Global(hint, ptr));
                }
                // The two allocations hit last (a kernel reads a and b in
                // turn), then a search by address.
                for slot in 0..2 {
                    let index = self.block.cached[slot];
                    if let Some(ptr) = allocations.get(index).and_then(|a| a.ptr(address, len)) {
                        if slot == 1 {
                            self.block.cached.swap(0, 1);
                        }
                        return Ok(Place::Global(index, ptr));
                    }
                }
                self.search(space, address, len)
            }
            Space::Shared => {
                if address + len > self.block.shared_len as u64 {
                    let near = Some((0, self.block.shared_len as u64, "shared memory".to_string()));
                    return Err(out_of_bounds(near));
                }
                // SAFETY: offset + len is within the shared buffer (checked).
                let ptr = unsafe {
                    self.block
                        .shared
                        .as_mut_ptr()
                        .cast::<u8>()
                        .add(address as usize)
                };
                Ok(Place::Shared(address as usize, ptr))
            }
            Space::Local => {
                let per = self.block.local_per_thread as u64;
                if address + len > per {
                    return Err(out_of_bounds(Some((0, per, "local memory".to_string()))));
                }
                let offset = self.thread * self.block.local_per_thread + address as usize;
                // SAFETY: the thread's slice of the local buffer holds
                // `per` bytes, and address + len <= per.
                let ptr = unsafe { self.block.local.as_mut_ptr().cast::<u8>().add(offset) };
                Ok(Place::Local(ptr))
            }
            Space::Param => {
                let params = &self.launch.params;
                if address + len > params.len() as u64 {
                    return Err(out_of_bounds(Some((
                        0,
                        params.len() as u64,
                        "parameters".to_string(),
                    ))));
                }
                Ok(Place::Param(params[address as usize..].as_ptr()))
            }
        }
    }

    /// A global address in neither of the allocations hit last: found by
    /// address, or out of bounds.
    #[inline(never)]
    fn search(&mut self, space: Space, address: u64, len: u64) -> Result<Place, AccessError> {
        let allocations = &self.launch.allocations;
        let below = allocations.partition_point(|a| a.base <= address);
        if let Some(index) = below.checked_sub(1)
            && let Some(ptr) = allocations[index].ptr(address, len)
        {
            self.block.cached = [index, self.block.cached[0]];
            return Ok(Place::Global(index, ptr));
        }
        let near = below
            .checked_sub(1)
            .and_then(|i| allocations.get(i))
            .map(|a| (a.base, a.bytes.len() as u64, a.label.clone()));
        Err(AccessError::OutOfBounds {
            space,
            address,
            len,
            near,
        })
    }

    pub(super) fn track(
        &mut self,
        place: &Place,
        space: Space,
        address: u64,
        len: u64,
        write: bool,
        access: Access,
    ) -> Result<(), AccessError> {
        let block = &mut *self.block;
        let lanes = if self.launch.warp_syncs {
            block.warp.lanes(self.thread, block.epoch)
        } else {
            &NO_LANES
        };
        let view = View {
            epoch: block.epoch,
            lanes,
            threads_per_block: self.launch.threads_per_block,
            block_base: self.global_thread - self.thread as u64,
            blocks_may_order: self.launch.blocks_may_order,
        };
        let result = match *place {
            Place::Global(index, ptr) if self.launch.tracked => {
                let offset =
                    ptr as usize - self.launch.allocations[index].bytes.base_ptr() as usize;
                self.launch.shadows[index].record(offset, len as usize, write, access, &view)
            }
            Place::Shared(offset, _) => block
                .shared_shadow
                .record(offset, len as usize, write, access, &view)
                .map(|unwritten| block.unwritten |= unwritten),
            Place::Global(..) | Place::Local(_) | Place::Param(_) | Place::Padding(..) => Ok(()),
        };
        // The space the bytes are in: a generic address names it only once
        // resolved.
        let space = match place {
            Place::Shared(..) => Space::Shared,
            Place::Global(..) => Space::Global,
            _ => space,
        };
        result.map_err(|conflict| AccessError::Race {
            space,
            address,
            write,
            conflict,
        })
    }

    /// Checks that a global read touches bytes something wrote (at least
    /// one of its words), or marks a write's words written.
    #[inline(always)]
    fn initialised(
        &self,
        place: &Place,
        address: u64,
        len: u64,
        write: bool,
    ) -> Result<(), AccessError> {
        let Place::Global(index, ptr) = *place else {
            return Ok(());
        };
        let allocation = &self.launch.allocations[index];
        let offset = ptr as usize - allocation.bytes.base_ptr() as usize;
        if write {
            allocation.written.mark(offset, len as usize);
            return Ok(());
        }
        if allocation.written.any(offset, len as usize) {
            return Ok(());
        }
        Err(AccessError::Uninitialised {
            address,
            len,
            allocation: (
                allocation.base,
                allocation.bytes.len() as u64,
                allocation.label.clone(),
            ),
        })
    }

    /// `size` bytes at a generic address, bounds-checked but not tracked:
    /// what printf and a failed assert read (strings, their arguments).
    pub fn read_generic(&mut self, address: u64, size: u8) -> Result<u64, AccessError> {
        let ptr = match self.resolve(Space::Generic, address, u64::from(size), usize::MAX)? {
            Place::Global(_, p) | Place::Shared(_, p) | Place::Local(p) | Place::Padding(p, _) => {
                p.cast_const()
            }
            Place::Param(p) => p,
        };
        // SAFETY: `resolve` checked that the bytes lie in one buffer.
        Ok(unsafe { read(ptr, size) })
    }

    /// Loads `count` elements of `size` bytes from `address`, checked.
    /// Returns which elements are tainted (see `Taint`).
    #[allow(clippy::too_many_arguments)]
    pub fn load(
        &mut self,
        space: Space,
        address: u64,
        size: u8,
        count: u8,
        read_only: bool,
        at: u32,
        out: &mut [u64; 4],
    ) -> Result<u8, AccessError> {
        let len = u64::from(size) * u64::from(count);
        let hint = self
            .block
            .recent
            .get(at as usize)
            .map_or(usize::MAX, |r| r.allocation);
        let place = match self.resolve(space, address, len, hint) {
            Ok(place) => place,
            Err(e) => self.padding_place(at, e)?,
        };
        if let Place::Global(index, ptr) = place {
            self.remember(at, index, address, ptr);
            if let Err(e) = self.initialised(&place, address, len, false) {
                self.carry_on(at, e)?;
            }
        }
        self.block.unwritten = false;
        if !read_only
            && let Err(e) = self.track(&place, space, address, len, false, self.access(at, false))
        {
            self.carry_on(at, e)?;
        }
        // Taint, where there can be any: a read of unwritten shared memory,
        // or once the block tracks it.
        let tracking = self.block.taint.is_some();
        let tainted = match place {
            Place::Shared(..) if tracking || self.block.unwritten => {
                self.loaded_taint(&place, size, count, at)
            }
            Place::Local(_) if tracking => self.loaded_taint(&place, size, count, at),
            _ => 0,
        };
        let ptr = match place {
            Place::Global(_, p) | Place::Shared(_, p) | Place::Local(p) | Place::Padding(p, _) => {
                p.cast_const()
            }
            Place::Param(p) => p,
        };
        let n = usize::from(count).min(out.len());
        // SAFETY: `resolve` checked that all `len` bytes lie in one buffer;
        // the first `count` elements are inside them.
        unsafe { read_elements(ptr, size, &mut out[..n]) };
        Ok(tainted)
    }

    /// Stores `count` elements of `size` bytes to `address`, checked;
    /// `tainted` marks the values that are (see `Taint`).
    pub fn store(
        &mut self,
        space: Space,
        address: u64,
        size: u8,
        values: &[u64],
        at: u32,
        tainted: u8,
    ) -> Result<(), AccessError> {
        let len = u64::from(size) * values.len() as u64;
        let place = match self.resolve(space, address, len, usize::MAX) {
            Ok(place) => place,
            Err(e) => self.padding_place(at, e)?,
        };
        // What a block that may run again overwrites, in an allocation.
        if self.launch.carry_on {
            match place {
                Place::Global(_, ptr) => self.keep_for_undo(ptr, size, values.len()),
                Place::Padding(_, (real, inside)) if inside > 0 => {
                    self.keep_for_undo(real, 1, inside)
                }
                _ => {}
            }
        }
        self.store_taint(&place, address, size, values.len(), tainted, at);
        if let Err(e) = self.track(&place, space, address, len, true, self.access(at, false)) {
            // Whatever the order, the word ends with the value: a GPU's too.
            let same = match place {
                // SAFETY: `resolve` checked that the elements lie in one
                // buffer.
                Place::Global(_, ptr) => values
                    .iter()
                    .enumerate()
                    .all(|(i, &v)| unsafe { read(ptr.add(i * usize::from(size)), size) == v }),
                _ => false,
            };
            self.carry_on_store(at, e, same)?;
        }
        self.initialised(&place, address, len, true)?;
        let ptr = match place {
            Place::Global(_, p) | Place::Shared(_, p) | Place::Local(p) | Place::Padding(p, _) => p,
            Place::Param(_) => {
                return Err(AccessError::OutOfBounds {
                    space,
                    address,
                    len,
                    near: None,
                });
            }
        };
        for (i, value) in values.iter().enumerate() {
            // SAFETY: as in `load`.
            unsafe { write(ptr.add(i * size as usize), size, *value) };
        }
        place.copy_inside();
        Ok(())
    }

    /// An atomic read-modify-write; returns the old value and whether it
    /// is tainted (`tainted`: whether the operands are).
    #[allow(clippy::too_many_arguments)]
    pub fn atomic(
        &mut self,
        space: Space,
        op: AtomicOp,
        address: u64,
        size: u8,
        b: u64,
        c: u64,
        at: u32,
        tainted: bool,
    ) -> Result<(u64, bool), AccessError> {
        let place = match self.resolve(space, address, u64::from(size), usize::MAX) {
            Ok(place) => place,
            Err(e) => self.padding_place(at, e)?,
        };
        if matches!(place, Place::Global(..) | Place::Padding(_, (_, 1..))) {
            self.block.can_restart = false;
        }
        if let Err(e) = self.initialised(&place, address, u64::from(size), false) {
            self.carry_on(at, e)?;
        }
        let old_tainted = self.loaded_taint(&place, size, 1, at) != 0;
        self.store_taint(
            &place,
            address,
            size,
            1,
            u8::from(tainted || old_tainted),
            at,
        );
        if let Err(e) = self.track(
            &place,
            space,
            address,
            u64::from(size),
            true,
            self.access(at, true),
        ) {
            self.carry_on(at, e)?;
        }
        let ptr = match place {
            Place::Global(_, p) | Place::Shared(_, p) | Place::Local(p) | Place::Padding(p, _) => p,
            Place::Param(_) => {
                return Err(AccessError::OutOfBounds {
                    space,
                    address,
                    len: u64::from(size),
                    near: None,
                });
            }
        };
        // SAFETY: `resolve` checked bounds and natural alignment; device
        // memory is only ever accessed through raw pointers and atomics.
        // A 2-byte atomic works on the aligned 4-byte word around it, which
        // lies in the same buffer: buffers are whole 8-byte words.
        let old = unsafe {
            match size {
                8 => rmw64(AtomicU64::from_ptr(ptr.cast()), op, b, c),
                2 => {
                    let shift = (ptr as usize & 2) * 8;
                    let word = ptr.map_addr(|a| a & !3).cast::<u32>();
                    u64::from(rmw16(
                        AtomicU32::from_ptr(word),
                        shift as u32,
                        op,
                        b as u16,
                        c as u16,
                    ))
                }
                _ => u64::from(rmw32(
                    AtomicU32::from_ptr(ptr.cast()),
                    op,
                    b as u32,
                    c as u32,
                )),
            }
        };
        place.copy_inside();
        Ok((old, old_tainted))
    }
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
