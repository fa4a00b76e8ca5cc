//! Device memory: allocations at addresses that are never reused, with
//! unmapped gaps between them, so every access can be checked against the
//! bounds of the allocation it falls in.

use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
use std::cell::UnsafeCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Where the first allocation starts: far from null and from the shared and
/// local windows of the generic address space.
const FIRST_ADDRESS: u64 = 0x7f00_0000_0000;
/// Unmapped bytes left after each allocation, so running off its end lands
/// in no allocation at all.
const GAP: u64 = 1 << 20;
/// cudaMalloc's alignment.
const ALIGN: u64 = 256;
/// The memory the emulated device claims to have.
pub const TOTAL_BYTES: u64 = 4 << 30;

/// Bytes of one allocation. Blocks running on different host threads read and
/// write it at once, as a GPU's threads do; the race checker reports kernels
/// where two threads touch the same word, so plain accesses go through raw
/// pointers and atomics through `Atomic*::from_ptr`.
pub struct Bytes {
    words: Box<[UnsafeCell<u64>]>,
    len: usize,
}

// SAFETY: all access goes through raw pointers whose bounds are checked by
// the callers (`Allocation::ptr`); concurrent access to one word is what the
// kernel itself does and the race checker reports.
unsafe impl Sync for Bytes {}
// SAFETY: as above; the buffer is plain memory with no thread affinity.
unsafe impl Send for Bytes {}

/// `count` zeroed `T`s from the allocator: the pages of a large buffer are
/// only touched where it is used.
///
/// # Safety
/// All-zero bits must be a valid `T`.
unsafe fn zeroed_slice<T>(count: usize) -> Box<[T]> {
    if count == 0 {
        return Box::new([]);
    }
    let layout =
        Layout::array::<T>(count).unwrap_or_else(|_| handle_alloc_error(Layout::new::<T>()));
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `ptr` holds `count` zeroed elements allocated with the global
    // allocator and this layout, which Box<[T]> frees with; zero is a
    // valid T per this function's contract.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, count)) }
}

impl Bytes {
    fn zeroed(len: usize) -> Bytes {
        // SAFETY: zero is a valid UnsafeCell<u64>.
        let words = unsafe { zeroed_slice::<UnsafeCell<u64>>(len.div_ceil(8)) };
        Bytes { words, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first byte; callers keep offsets below `len`.
    pub fn base_ptr(&self) -> *mut u8 {
        UnsafeCell::raw_get(self.words.as_ptr()).cast()
    }
}

/// Which 4-byte words of an allocation something has written: a host copy
/// or memset, a module's initialiser, a kernel's store. What compute-
/// sanitizer's initcheck calls initialised.
pub struct Written {
    bits: Box<[AtomicU64]>,
    /// Words in the allocation, and how many are marked: once all are (a
    /// host copy of the whole buffer, most often), reads need no bit.
    words: usize,
    marked: AtomicUsize,
}

impl Written {
    fn new(len: usize) -> Written {
        let words = len.div_ceil(4);
        // SAFETY: zero is a valid AtomicU64.
        let bits = unsafe { zeroed_slice::<AtomicU64>(words.div_ceil(64)) };
        Written {
            bits,
            words,
            marked: AtomicUsize::new(0),
        }
    }

    fn words(offset: usize, len: usize) -> std::ops::Range<usize> {
        offset / 4..(offset + len.max(1)).div_ceil(4)
    }

    /// Marks the words covering `offset..offset + len` written, 64 of them
    /// at a time.
    pub fn mark(&self, offset: usize, len: usize) {
        let words = Self::words(offset, len);
        let mut word = words.start;
        while word < words.end {
            let Some(cell) = self.bits.get(word / 64) else {
                return;
            };
            let first = word % 64;
            let last = (words.end - (word - first)).min(64);
            let bits = if last - first == 64 {
                u64::MAX
            } else {
                ((1u64 << (last - first)) - 1) << first
            };
            // Most stores land on words already written: read first.
            if cell.load(Ordering::Relaxed) & bits != bits {
                let before = cell.fetch_or(bits, Ordering::Relaxed);
                let newly = (bits & !before).count_ones() as usize;
                self.marked.fetch_add(newly, Ordering::Relaxed);
            }
            word += last - first;
        }
    }

    /// Whether every word was written.
    #[inline]
    pub fn all(&self) -> bool {
        self.marked.load(Ordering::Relaxed) >= self.words
    }

    /// Whether any word covering `offset..offset + len` was written.
    #[inline]
    pub fn any(&self, offset: usize, len: usize) -> bool {
        if self.all() {
            return true;
        }
        let words = Self::words(offset, len);
        // Accesses of up to 16 bytes, aligned (every load), lie in one
        // 64-word cell.
        if words.start / 64 == (words.end - 1) / 64 {
            let Some(cell) = self.bits.get(words.start / 64) else {
                return true;
            };
            let span = words.end - words.start;
            let bits = (u64::MAX >> (64 - span)) << (words.start % 64);
            return cell.load(Ordering::Relaxed) & bits != 0;
        }
        words.into_iter().any(|word| {
            self.bits
                .get(word / 64)
                .is_none_or(|cell| cell.load(Ordering::Relaxed) & (1 << (word % 64)) != 0)
        })
    }
}

/// One allocation: device memory, a module's `.const` or `.global` variable.
pub struct Allocation {
    pub base: u64,
    pub bytes: Bytes,
    /// What the allocation is, for messages ("cuMemAlloc", a variable name).
    pub label: String,
    pub written: Written,
}

impl Allocation {
    pub fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    /// A pointer to `len` bytes at `address`, or None when any of them lies
    /// outside this allocation.
    pub fn ptr(&self, address: u64, len: u64) -> Option<*mut u8> {
        let offset = address.checked_sub(self.base)?;
        if offset.checked_add(len)? > self.bytes.len() as u64 {
            return None;
        }
        // SAFETY: offset + len is within the buffer, checked just above.
        Some(unsafe { self.bytes.base_ptr().add(offset as usize) })
    }
}

/// Every live allocation, in address order (addresses only grow).
#[derive(Default)]
pub struct Heap {
    live: Vec<Arc<Allocation>>,
    next: u64,
    in_use: u64,
}

impl Heap {
    /// A fresh zeroed allocation of `len` bytes (at least one), or None when
    /// the emulated device has no room left.
    pub fn allocate(&mut self, len: u64, label: &str) -> Option<u64> {
        if self.in_use.checked_add(len)? > TOTAL_BYTES {
            return None;
        }
        let base = if self.next == 0 {
            FIRST_ADDRESS
        } else {
            self.next
        };
        let bytes = Bytes::zeroed(usize::try_from(len.max(1)).ok()?);
        self.next = (base + len.max(1) + GAP).next_multiple_of(ALIGN);
        self.in_use += len;
        self.live.push(Arc::new(Allocation {
            base,
            written: Written::new(bytes.len()),
            bytes,
            label: label.to_string(),
        }));
        Some(base)
    }

    /// Frees the allocation starting at `base`; false when none does.
    pub fn free(&mut self, base: u64) -> bool {
        match self.live.binary_search_by_key(&base, |a| a.base) {
            Ok(index) => {
                let gone = self.live.remove(index);
                self.in_use -= gone.bytes.len() as u64;
                true
            }
            Err(_) => false,
        }
    }

    pub fn free_bytes(&self) -> u64 {
        TOTAL_BYTES - self.in_use
    }

    /// The allocation holding `address`, if any.
    pub fn find(&self, address: u64) -> Option<&Arc<Allocation>> {
        find_in(&self.live, address)
    }

    /// A pointer to `len` bytes at `address` when they all lie in one
    /// allocation: what host copies read.
    pub fn range(&self, address: u64, len: u64) -> Option<*mut u8> {
        self.find(address)?.ptr(address, len)
    }

    /// As `range`, for bytes about to be written by the host (a copy, a
    /// memset, an initialiser): they count as initialised from now on.
    pub fn range_to_write(&self, address: u64, len: u64) -> Option<*mut u8> {
        let allocation = self.find(address)?;
        let ptr = allocation.ptr(address, len)?;
        allocation
            .written
            .mark((address - allocation.base) as usize, len as usize);
        Some(ptr)
    }

    /// The allocations as they are now, for a launch to run against.
    pub fn snapshot(&self) -> Vec<Arc<Allocation>> {
        self.live.clone()
    }
}

/// The allocation in `live` (address order) holding `address`.
pub fn find_in(live: &[Arc<Allocation>], address: u64) -> Option<&Arc<Allocation>> {
    let index = live.partition_point(|a| a.base <= address);
    let candidate = live.get(index.checked_sub(1)?)?;
    (address < candidate.end()).then_some(candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_words_are_marked_exactly() {
        let written = Written::new(4 * 200);
        written.mark(4 * 10, 4 * 100);
        assert!(!written.any(4 * 9, 4));
        assert!(written.any(4 * 10, 4) && written.any(4 * 109, 4));
        assert!(!written.any(4 * 110, 4));
        assert!(written.any(4 * 105, 4 * 20), "any word of the range");
        written.mark(4 * 150 + 2, 1);
        assert!(written.any(4 * 150, 4) && !written.any(4 * 151, 4));
        written.mark(0, 4 * 200);
        assert_eq!(
            written.marked.load(Ordering::Relaxed),
            200,
            "each word once"
        );
        assert!(written.any(4 * 151, 4));
    }

    #[test]
    fn allocations_are_apart_and_never_reused() {
        let mut heap = Heap::default();
        let a = heap.allocate(100, "a").unwrap();
        let b = heap.allocate(100, "b").unwrap();
        assert!(b >= a + 100 + GAP);
        assert!(heap.range(a, 100).is_some());
        assert!(heap.range(a, 101).is_none(), "one past the end");
        assert!(heap.find(a + 100).is_none(), "the gap is unmapped");
        assert!(heap.free(a));
        assert!(heap.find(a).is_none());
        let c = heap.allocate(100, "c").unwrap();
        assert!(c > b, "a freed address is not handed out again");
        assert_eq!(heap.free_bytes(), TOTAL_BYTES - 200);
    }
}
