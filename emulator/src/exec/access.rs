//! Loads, stores and atomics in every state space, each checked: the bytes
//! must lie inside one allocation (or the block's shared memory, or the
//! thread's local memory), be aligned to the element size, and not conflict
//! with another thread's access (see `race`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::race::{Access, Conflict, Shadow};
use crate::ir::{AtomicOp, Space};
use crate::memory::{Allocation, find_in};

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
}

/// What every block of a launch shares: the allocations as they were at the
/// launch, their conflict shadows, and the parameter buffer.
pub struct LaunchMemory {
    pub allocations: Vec<Arc<Allocation>>,
    shadows: Vec<Shadow>,
    pub params: Vec<u8>,
    pub threads_per_block: u64,
}

impl LaunchMemory {
    pub fn new(allocations: Vec<Arc<Allocation>>, params: Vec<u8>, threads_per_block: u64) -> Self {
        let shadows = allocations
            .iter()
            .map(|a| Shadow::new(a.bytes.len()))
            .collect();
        LaunchMemory {
            allocations,
            shadows,
            params,
            threads_per_block,
        }
    }
}

/// One block's own memory, reused from block to block by a worker.
pub struct BlockMemory {
    shared: Vec<u64>,
    shared_len: usize,
    shared_shadow: Shadow,
    local: Vec<u64>,
    local_per_thread: usize,
    /// The allocation the last global access hit: most hit it again.
    cached: usize,
    pub epoch: u32,
}

impl BlockMemory {
    pub fn new(shared_len: usize, local_per_thread: usize, threads: usize) -> Self {
        BlockMemory {
            shared: vec![0; shared_len.div_ceil(8)],
            shared_len,
            shared_shadow: Shadow::new(shared_len),
            local: vec![0; (local_per_thread * threads).div_ceil(8)],
            local_per_thread,
            cached: 0,
            epoch: 0,
        }
    }

    /// Fresh for the next block: shared memory keeps its bytes (a GPU does
    /// not clear it either) but forgets who touched them.
    pub fn reset(&mut self) {
        self.shared_shadow.clear();
        self.epoch = 0;
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
enum Place {
    Global(usize, *mut u8),
    Shared(usize, *mut u8),
    Local(*mut u8),
    Param(*const u8),
}

impl ThreadMemory<'_> {
    fn access(&self, at: u32, atomic: bool) -> Access {
        Access {
            thread: self.global_thread,
            atomic,
            epoch: self.block.epoch,
            at,
        }
    }

    fn resolve(&mut self, space: Space, address: u64, len: u64) -> Result<Place, AccessError> {
        let space = match space {
            Space::Generic if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_BYTES).contains(&address) => {
                return self.resolve(Space::Shared, address - SHARED_WINDOW, len);
            }
            Space::Generic if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_BYTES).contains(&address) => {
                return self.resolve(Space::Local, address - LOCAL_WINDOW, len);
            }
            Space::Generic => Space::Global,
            other => other,
        };
        if address % len != 0 {
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
                if let Some(ptr) = allocations
                    .get(self.block.cached)
                    .and_then(|a| a.ptr(address, len))
                {
                    return Ok(Place::Global(self.block.cached, ptr));
                }
                if let Some(found) = find_in(allocations, address)
                    && let Some(ptr) = found.ptr(address, len)
                {
                    let index = allocations
                        .iter()
                        .position(|a| Arc::ptr_eq(a, found))
                        .unwrap_or(0);
                    self.block.cached = index;
                    return Ok(Place::Global(index, ptr));
                }
                let below = allocations.partition_point(|a| a.base <= address);
                let near = below
                    .checked_sub(1)
                    .and_then(|i| allocations.get(i))
                    .map(|a| (a.base, a.bytes.len() as u64, a.label.clone()));
                Err(out_of_bounds(near))
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

    fn track(
        &mut self,
        place: &Place,
        space: Space,
        address: u64,
        len: u64,
        write: bool,
        access: Access,
    ) -> Result<(), AccessError> {
        let per_block = self.launch.threads_per_block;
        let result = match *place {
            Place::Global(index, ptr) => {
                let offset =
                    ptr as usize - self.launch.allocations[index].bytes.base_ptr() as usize;
                self.launch.shadows[index].record(
                    offset,
                    len as usize,
                    write,
                    access,
                    Some(per_block),
                )
            }
            Place::Shared(offset, _) => {
                self.block
                    .shared_shadow
                    .record(offset, len as usize, write, access, None)
            }
            Place::Local(_) | Place::Param(_) => Ok(()),
        };
        result.map_err(|conflict| AccessError::Race {
            space,
            address,
            write,
            conflict,
        })
    }

    /// Loads `count` elements of `size` bytes from `address`, checked.
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
    ) -> Result<(), AccessError> {
        let len = u64::from(size) * u64::from(count);
        let place = self.resolve(space, address, len)?;
        if !read_only {
            self.track(&place, space, address, len, false, self.access(at, false))?;
        }
        let ptr = match place {
            Place::Global(_, p) | Place::Shared(_, p) | Place::Local(p) => p.cast_const(),
            Place::Param(p) => p,
        };
        for (i, slot) in out.iter_mut().take(count as usize).enumerate() {
            // SAFETY: `resolve` checked that all `len` bytes lie in one
            // buffer; element i is inside them.
            *slot = unsafe { read(ptr.add(i * size as usize), size) };
        }
        Ok(())
    }

    /// Stores `count` elements of `size` bytes to `address`, checked.
    pub fn store(
        &mut self,
        space: Space,
        address: u64,
        size: u8,
        values: &[u64],
        at: u32,
    ) -> Result<(), AccessError> {
        let len = u64::from(size) * values.len() as u64;
        let place = self.resolve(space, address, len)?;
        self.track(&place, space, address, len, true, self.access(at, false))?;
        let ptr = match place {
            Place::Global(_, p) | Place::Shared(_, p) | Place::Local(p) => p,
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
        Ok(())
    }

    /// An atomic read-modify-write; returns the old value.
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
    ) -> Result<u64, AccessError> {
        let place = self.resolve(space, address, u64::from(size))?;
        self.track(
            &place,
            space,
            address,
            u64::from(size),
            true,
            self.access(at, true),
        )?;
        let ptr = match place {
            Place::Global(_, p) | Place::Shared(_, p) | Place::Local(p) => p,
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
        Ok(unsafe {
            if size == 8 {
                let cell = AtomicU64::from_ptr(ptr.cast());
                rmw64(cell, op, b, c)
            } else {
                let cell = AtomicU32::from_ptr(ptr.cast());
                u64::from(rmw32(cell, op, b as u32, c as u32))
            }
        })
    }
}

/// # Safety
/// `ptr` points to `size` readable bytes.
unsafe fn read(ptr: *const u8, size: u8) -> u64 {
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

/// # Safety
/// `ptr` points to `size` writable bytes.
unsafe fn write(ptr: *mut u8, size: u8, value: u64) {
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

/// `$name`: one atomic read-modify-write on `$atomic` cells of `$uint`
/// (`$int` signed); `$float_add` is the float add of that width, the other
/// width's float add leaves the cell as it is (decoding never pairs them).
macro_rules! read_modify_write {
    ($name:ident, $atomic:ty, $uint:ty, $int:ty, $float_add:expr, $float_op:expr) => {
        fn $name(cell: &$atomic, op: AtomicOp, b: $uint, c: $uint) -> $uint {
            let update = |old: $uint| -> $uint {
                match op {
                    AtomicOp::Add => old.wrapping_add(b),
                    AtomicOp::AddF32 | AtomicOp::AddF64 if op == $float_op => $float_add(old, b),
                    AtomicOp::AddF32 | AtomicOp::AddF64 => old,
                    AtomicOp::MinU => old.min(b),
                    AtomicOp::MaxU => old.max(b),
                    AtomicOp::MinS => (old as $int).min(b as $int) as $uint,
                    AtomicOp::MaxS => (old as $int).max(b as $int) as $uint,
                    AtomicOp::Inc => {
                        if old >= b {
                            0
                        } else {
                            old + 1
                        }
                    }
                    AtomicOp::Dec => {
                        if old == 0 || old > b {
                            b
                        } else {
                            old - 1
                        }
                    }
                    AtomicOp::And => old & b,
                    AtomicOp::Or => old | b,
                    AtomicOp::Xor => old ^ b,
                    AtomicOp::Exch => b,
                    AtomicOp::Cas => {
                        if old == b {
                            c
                        } else {
                            old
                        }
                    }
                }
            };
            match cell.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| Some(update(old))) {
                Ok(old) | Err(old) => old,
            }
        }
    };
}

read_modify_write!(
    rmw32,
    AtomicU32,
    u32,
    i32,
    |old: u32, b: u32| (f32::from_bits(old) + f32::from_bits(b)).to_bits(),
    AtomicOp::AddF32
);
read_modify_write!(
    rmw64,
    AtomicU64,
    u64,
    i64,
    |old: u64, b: u64| (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
    AtomicOp::AddF64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_operations_return_the_old_value() {
        let cell = AtomicU32::new(5);
        assert_eq!(rmw32(&cell, AtomicOp::Add, 3, 0), 5);
        assert_eq!(cell.load(Ordering::Relaxed), 8);
        assert_eq!(rmw32(&cell, AtomicOp::Cas, 8, 1), 8);
        assert_eq!(cell.load(Ordering::Relaxed), 1);
        assert_eq!(rmw32(&cell, AtomicOp::Inc, 1, 0), 1);
        assert_eq!(cell.load(Ordering::Relaxed), 0, "inc wraps at b");
        let f = AtomicU32::new(1.5f32.to_bits());
        rmw32(&f, AtomicOp::AddF32, 2.25f32.to_bits(), 0);
        assert_eq!(f32::from_bits(f.load(Ordering::Relaxed)), 3.75);
        let s = AtomicU32::new((-3i32) as u32);
        rmw32(&s, AtomicOp::MaxS, 2, 0);
        assert_eq!(s.load(Ordering::Relaxed), 2);
    }
}
