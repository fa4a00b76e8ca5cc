//! Loads, stores and atomics in every state space, each checked: the bytes
//! must lie inside one allocation (or the block's shared memory, or the
//! thread's local memory), be aligned to the element size, and not conflict
//! with another thread's access (see `race`).

use std::sync::atomic::{AtomicU32, AtomicU64};

use super::atomic::{rmw16, rmw32, rmw64};
use super::race::{Access, View};
use super::state::{NO_LANES, Place, ThreadMemory, generic, read, read_elements, write};
use crate::exec::error::AccessError;
use crate::ir::{AtomicOp, Space};

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
        result.map_err(|earlier| AccessError::Race {
            space,
            address,
            write,
            earlier,
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
    #[expect(
        clippy::too_many_arguments,
        reason = "a load instruction's fields, as the interpreter decodes them"
    )]
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
    #[expect(
        clippy::too_many_arguments,
        reason = "an atomic instruction's fields, as the interpreter decodes them"
    )]
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
