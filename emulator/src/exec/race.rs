//! Conflict tracking: which thread last wrote and first read each 4-byte
//! word, so two threads touching one word with no barrier between them, at
//! least one writing and not both atomically, are caught. Shared memory is
//! tracked per block between barriers; global memory per launch, across
//! blocks running on different host threads.

use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
use std::sync::atomic::{AtomicU64, Ordering};

/// One recorded access, packed: thread (launch-wide index + 1), whether it
/// was atomic, the block's barrier epoch, and the instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    /// Launch-wide thread index (block-major).
    pub thread: u64,
    pub atomic: bool,
    pub epoch: u32,
    pub at: u32,
}

const EPOCH_BITS: u32 = 15;
const AT_BITS: u32 = 16;

impl Access {
    pub fn pack(self) -> u64 {
        ((self.thread + 1) << 32)
            | (u64::from(self.atomic) << 31)
            | (u64::from(self.epoch & ((1 << EPOCH_BITS) - 1)) << AT_BITS)
            | u64::from(self.at & ((1 << AT_BITS) - 1))
    }

    pub fn unpack(word: u64) -> Option<Access> {
        if word == 0 {
            return None;
        }
        Some(Access {
            thread: (word >> 32) - 1,
            atomic: word & (1 << 31) != 0,
            epoch: ((word >> AT_BITS) & ((1 << EPOCH_BITS) - 1)) as u32,
            at: (word & ((1 << AT_BITS) - 1)) as u32,
        })
    }

    /// Whether `self` and a later access `other` need no ordering between
    /// them: same thread, both atomic, or the same block with a barrier
    /// between (the epochs differ). `threads_per_block` None: both are of one
    /// block (shared memory).
    pub fn ordered_before(&self, other: &Access, threads_per_block: Option<u64>) -> bool {
        let same_block = |per: u64| self.thread / per == other.thread / per;
        self.thread == other.thread
            || (self.atomic && other.atomic)
            || (self.epoch != (other.epoch & ((1 << EPOCH_BITS) - 1))
                && threads_per_block.is_none_or(same_block))
    }
}

/// A conflict found: the earlier access, and whether it was a write.
#[derive(Debug, PartialEq)]
pub struct Conflict {
    pub earlier: Access,
    pub earlier_wrote: bool,
}

/// Writer and first reader of each word of one region.
pub struct Shadow {
    cells: Box<[[AtomicU64; 2]]>,
}

impl Shadow {
    /// Zeroed through the allocator, so the pages of a large allocation's
    /// shadow are only touched where the kernel touches the allocation.
    pub fn new(bytes: usize) -> Shadow {
        let words = bytes.div_ceil(4);
        if words == 0 {
            return Shadow {
                cells: Box::new([]),
            };
        }
        let layout = Layout::array::<[AtomicU64; 2]>(words).unwrap_or_else(|_| Layout::new::<u8>());
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) }.cast::<[AtomicU64; 2]>();
        if ptr.is_null() {
            handle_alloc_error(layout);
        }
        // SAFETY: `ptr` holds `words` zeroed elements allocated with the
        // global allocator and this layout, which is what Box<[T]> frees
        // with; all-zero bits are a valid AtomicU64.
        let cells = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, words)) };
        Shadow { cells }
    }

    /// Forgets every access: a new block starts on this shared memory.
    pub fn clear(&mut self) {
        for cell in self.cells.iter_mut() {
            *cell = [AtomicU64::new(0), AtomicU64::new(0)];
        }
    }

    /// Records `access` to the words covering `offset..offset + len`.
    pub fn record(
        &self,
        offset: usize,
        len: usize,
        write: bool,
        access: Access,
        threads_per_block: Option<u64>,
    ) -> Result<(), Conflict> {
        let packed = access.pack();
        for word in offset / 4..(offset + len).div_ceil(4) {
            let Some([writer, reader]) = self.cells.get(word) else {
                continue;
            };
            let previous = if write {
                writer.swap(packed, Ordering::Relaxed)
            } else {
                writer.load(Ordering::Relaxed)
            };
            if let Some(earlier) = Access::unpack(previous)
                && !earlier.ordered_before(&access, threads_per_block)
            {
                return Err(Conflict {
                    earlier,
                    earlier_wrote: true,
                });
            }
            let first_reader = reader.load(Ordering::Relaxed);
            if write {
                if let Some(earlier) = Access::unpack(first_reader)
                    && !earlier.ordered_before(&access, threads_per_block)
                {
                    return Err(Conflict {
                        earlier,
                        earlier_wrote: false,
                    });
                }
            } else if first_reader != packed
                && (first_reader == 0
                    || Access::unpack(first_reader).is_some_and(|r| {
                        r.epoch != access.epoch
                            && threads_per_block
                                .is_none_or(|per| r.thread / per == access.thread / per)
                    }))
            {
                // The first reader, or the first since this block's last
                // barrier (readers before it are ordered with later writes).
                reader.store(packed, Ordering::Relaxed);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(thread: u64, epoch: u32, atomic: bool) -> Access {
        Access {
            thread,
            atomic,
            epoch,
            at: 7,
        }
    }

    #[test]
    fn packing_round_trips() {
        let a = access(123_456, 42, true);
        assert_eq!(Access::unpack(a.pack()), Some(a));
        assert_eq!(Access::unpack(0), None);
    }

    #[test]
    fn write_then_read_by_another_thread_conflicts() {
        let shadow = Shadow::new(16);
        shadow
            .record(0, 4, true, access(1, 0, false), Some(256))
            .unwrap();
        let conflict = shadow
            .record(0, 4, false, access(2, 0, false), Some(256))
            .unwrap_err();
        assert_eq!(conflict.earlier.thread, 1);
        assert!(conflict.earlier_wrote);
    }

    #[test]
    fn read_then_write_by_another_thread_conflicts() {
        let shadow = Shadow::new(16);
        shadow
            .record(4, 4, false, access(1, 0, false), Some(256))
            .unwrap();
        let conflict = shadow
            .record(4, 4, true, access(2, 0, false), Some(256))
            .unwrap_err();
        assert!(!conflict.earlier_wrote);
    }

    #[test]
    fn barriers_atomics_and_the_same_thread_are_fine() {
        let shadow = Shadow::new(16);
        shadow
            .record(0, 4, true, access(1, 0, false), Some(256))
            .unwrap();
        shadow
            .record(0, 4, false, access(1, 0, false), Some(256))
            .unwrap();
        shadow
            .record(0, 4, false, access(2, 1, false), Some(256))
            .unwrap();
        shadow
            .record(8, 4, true, access(1, 0, true), Some(256))
            .unwrap();
        shadow
            .record(8, 4, true, access(300, 0, true), Some(256))
            .unwrap();
        // Many readers, then a write after a barrier.
        shadow
            .record(12, 4, false, access(3, 0, false), Some(256))
            .unwrap();
        shadow
            .record(12, 4, false, access(4, 0, false), Some(256))
            .unwrap();
        shadow
            .record(12, 4, true, access(5, 1, false), Some(256))
            .unwrap();
    }

    #[test]
    fn a_barrier_does_not_order_threads_of_different_blocks() {
        let shadow = Shadow::new(4);
        shadow
            .record(0, 4, true, access(0, 0, false), Some(256))
            .unwrap();
        assert!(
            shadow
                .record(0, 4, true, access(256, 1, false), Some(256))
                .is_err()
        );
    }
}
