//! Conflict tracking, as the CUDA memory model orders accesses: for each
//! 4-byte word, the last writer and a reader, with the bytes each touched,
//! so that two threads touching the same bytes, at least one writing, with
//! nothing ordering them, are caught. Shared memory is tracked per block;
//! global memory per launch, across blocks running on different host
//! threads.
//!
//! What orders two accesses of different threads:
//! - a block barrier between them (`__syncthreads()`, `bar.red`): each
//!   block counts its barriers (its epoch);
//! - within a warp, a warp-level synchronisation both lanes took part in
//!   after the first access: `__syncwarp(mask)` (`bar.warp.sync`) and the
//!   shuffles, votes and matches with a mask. Each lane counts the ones it
//!   passed since the block's last barrier, and knows, for each lane of its
//!   warp, the count that lane had at their latest synchronisation, direct
//!   or through others (a vector clock of 32);
//! - both being atomic; and an atomic write with a plain read (the read of
//!   a compare-and-swap loop sees some value, and the swap checks it).
//!
//! Limits, each of which can only hide a conflict, never report a correct
//! kernel: one writer and one reader are kept per word; a global record
//! keeps the block's epoch modulo 2^10 and a lane's count below 127, a
//! shared one modulo 2^16 and below 65535 (past them, same-epoch and
//! same-warp accesses are taken as ordered); in a
//! kernel with a device-wide fence (`__threadfence()`), which with an atomic
//! can order blocks, accesses of different blocks are taken as ordered; a
//! launch of 2^28 threads or more is not tracked in global memory.

use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::exec::error::Earlier;

/// One access, as the checker remembers it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    /// Launch-wide thread index (block-major).
    pub thread: u64,
    pub atomic: bool,
    /// The bytes of the 4-byte word it touched, one bit each.
    pub bytes: u8,
    /// The block's barrier count when it happened: all of it (shared
    /// memory's records) or its low `EPOCH_BITS` (global memory's).
    pub epoch: u32,
    pub epoch_bits: u32,
    /// The lane's warp-synchronisation count since the block's last
    /// barrier, or None where a record could not keep it.
    pub warp: Option<u32>,
    /// The instruction, or None where a record could not keep it.
    pub at: Option<u32>,
}

/// What the thread making the later access knows.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    /// Its block's barrier count.
    pub epoch: u32,
    /// For each lane of its warp, that lane's count at their latest
    /// synchronisation.
    pub lanes: &'a [u32; 32],
    pub threads_per_block: u64,
    /// The launch-wide index of its block's first thread.
    pub block_base: u64,
    /// The kernel has a device-wide fence: blocks may order each other.
    pub blocks_may_order: bool,
}

impl Access {
    /// Whether `self` (earlier; `earlier_wrote`) and `later` (by the thread
    /// whose knowledge is `view`; `later_writes`) need no ordering or have
    /// it.
    pub fn ordered_before(
        &self,
        earlier_wrote: bool,
        later: &Access,
        later_writes: bool,
        view: &View<'_>,
    ) -> bool {
        if self.bytes & later.bytes == 0 {
            return true;
        }
        // Atomics with atomics; an atomic write with a plain read.
        if (self.atomic || !earlier_wrote) && (later.atomic || !later_writes) {
            return true;
        }
        self.happens_before(later, view)
    }

    /// Whether something orders `self` before `later`: the same thread, a
    /// barrier, a warp synchronisation of both lanes. (`later` is by a
    /// thread of the block `view` describes.) No divisions: this runs for
    /// every access.
    #[inline]
    pub fn happens_before(&self, later: &Access, view: &View<'_>) -> bool {
        if self.thread == later.thread {
            return true;
        }
        // Its index in the later thread's block, if it is in that block.
        let theirs = self.thread.wrapping_sub(view.block_base);
        if theirs >= view.threads_per_block {
            return view.blocks_may_order;
        }
        // A barrier between them. A record's epoch is exact when it keeps
        // all of it; otherwise a match could be an older epoch: ordered.
        let span_mask = if self.epoch_bits >= 32 {
            u64::from(u32::MAX)
        } else {
            (1u64 << self.epoch_bits) - 1
        };
        let now = u64::from(view.epoch);
        if now & span_mask != u64::from(self.epoch) || now > span_mask {
            return true;
        }
        let mine = later.thread - view.block_base;
        if mine >> 5 != theirs >> 5 {
            return false;
        }
        match self.warp {
            Some(count) => view.lanes[(theirs & 31) as usize] > count,
            None => true,
        }
    }
}

/// A record format: an access packed into one `u64`, 0 for none.
trait Format {
    fn pack(access: &Access, view: &View<'_>) -> u64;
    fn unpack(word: u64, view: &View<'_>) -> Option<Access>;
}

/// Where records are kept: a writer and a reader per 4-byte word.
trait Slots {
    fn words(&self) -> usize;
    fn get(&self, word: usize, which: usize) -> u64;
    /// Stores `value` and returns the one before.
    fn swap(&mut self, word: usize, which: usize, value: u64) -> u64;
    fn set(&mut self, word: usize, which: usize, value: u64);
}

const WRITER: usize = 0;
const READER: usize = 1;

/// Records `access` to the words covering `offset..offset + len`, or the
/// conflict it has with an earlier access. Returns whether any of the words
/// had no writer yet (in this block, for shared memory).
#[inline]
fn record<F: Format>(
    slots: &mut impl Slots,
    offset: usize,
    len: usize,
    write: bool,
    access: Access,
    view: &View<'_>,
) -> Result<bool, Earlier> {
    let end = offset + len;
    let mut unwritten = false;
    for word in offset / 4..end.div_ceil(4).min(slots.words()) {
        let first = (word * 4).max(offset) - word * 4;
        let last = (word * 4 + 4).min(end) - word * 4;
        let bytes = ((1u8 << last) - 1) & !((1u8 << first) - 1);
        let access = Access { bytes, ..access };
        let packed = F::pack(&access, view);
        let writer = if write {
            slots.swap(word, WRITER, packed)
        } else {
            slots.get(word, WRITER)
        };
        unwritten |= writer == 0;
        if let Some(earlier) = F::unpack(writer, view)
            && !earlier.ordered_before(true, &access, write, view)
        {
            return Err(Earlier {
                thread: earlier.thread,
                at: earlier.at,
                wrote: true,
            });
        }
        let reader = slots.get(word, READER);
        if reader == packed {
            continue;
        }
        match F::unpack(reader, view) {
            Some(earlier) if write && !earlier.ordered_before(false, &access, true, view) => {
                return Err(Earlier {
                    thread: earlier.thread,
                    at: earlier.at,
                    wrote: false,
                });
            }
            // Kept: the first reader not ordered before this one (a later
            // write must be ordered after it too); replaced once it is, as
            // anything ordered after this read is after that one.
            Some(earlier) if !write && earlier.happens_before(&access, view) => {
                slots.set(word, READER, packed);
            }
            None if !write => slots.set(word, READER, packed),
            _ => {}
        }
    }
    Ok(unwritten)
}

fn most(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

/// Global records, written by many host threads at once: thread + 1 (28
/// bits) | atomic | bytes (4) | instruction (14) | epoch (10) | warp count
/// (7). The largest instruction and count mean "too large to keep".
struct Global;

const THREAD_BITS: u32 = 28;
const AT_BITS: u32 = 14;
const EPOCH_BITS: u32 = 10;
const WARP_BITS: u32 = 7;

/// Threads a launch may have for its global memory to be tracked.
pub const TRACKED_THREADS: u64 = (1 << THREAD_BITS) - 1;

impl Format for Global {
    fn pack(access: &Access, _: &View<'_>) -> u64 {
        let at = access
            .at
            .map_or(most(AT_BITS), |at| u64::from(at).min(most(AT_BITS)));
        let warp = access
            .warp
            .map_or(most(WARP_BITS), |w| u64::from(w).min(most(WARP_BITS)));
        (access.thread + 1) << (64 - THREAD_BITS)
            | u64::from(access.atomic) << 35
            | u64::from(access.bytes & 0xf) << 31
            | at << 17
            | (u64::from(access.epoch) & most(EPOCH_BITS)) << WARP_BITS
            | warp
    }

    fn unpack(word: u64, _: &View<'_>) -> Option<Access> {
        if word == 0 {
            return None;
        }
        let at = (word >> 17) & most(AT_BITS);
        let warp = word & most(WARP_BITS);
        Some(Access {
            thread: (word >> (64 - THREAD_BITS)) - 1,
            atomic: (word >> 35) & 1 != 0,
            bytes: ((word >> 31) & 0xf) as u8,
            epoch: ((word >> WARP_BITS) & most(EPOCH_BITS)) as u32,
            epoch_bits: EPOCH_BITS,
            warp: (warp != most(WARP_BITS)).then_some(warp as u32),
            at: (at != most(AT_BITS)).then_some(at as u32),
        })
    }
}

/// Shared records, one block's: thread in the block + 1 (11 bits) | atomic
/// | bytes (4) | instruction (16) | epoch (16) | warp count (16).
struct Shared;

impl Format for Shared {
    fn pack(access: &Access, view: &View<'_>) -> u64 {
        let at = access.at.map_or(most(16), |at| u64::from(at).min(most(16)));
        let warp = access.warp.map_or(most(16), |w| u64::from(w).min(most(16)));
        (access.thread - view.block_base + 1) << 53
            | u64::from(access.atomic) << 52
            | u64::from(access.bytes & 0xf) << 48
            | at << 32
            | (u64::from(access.epoch) & most(16)) << 16
            | warp
    }

    fn unpack(word: u64, view: &View<'_>) -> Option<Access> {
        if word == 0 {
            return None;
        }
        let at = (word >> 32) & most(16);
        let warp = word & most(16);
        Some(Access {
            thread: view.block_base + (word >> 53) - 1,
            atomic: (word >> 52) & 1 != 0,
            bytes: ((word >> 48) & 0xf) as u8,
            epoch: ((word >> 16) & most(16)) as u32,
            epoch_bits: 16,
            warp: (warp != most(16)).then_some(warp as u32),
            at: (at != most(16)).then_some(at as u32),
        })
    }
}

/// Writer and first reader of each word of one allocation.
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

    pub fn record(
        &self,
        offset: usize,
        len: usize,
        write: bool,
        access: Access,
        view: &View<'_>,
    ) -> Result<(), Earlier> {
        record::<Global>(&mut &*self, offset, len, write, access, view).map(|_| ())
    }
}

/// Shared by host threads: atomic, relaxed (a conflict found is reported
/// whichever order the host threads' records land in).
impl Slots for &Shadow {
    fn words(&self) -> usize {
        self.cells.len()
    }
    fn get(&self, word: usize, which: usize) -> u64 {
        self.cells[word][which].load(Ordering::Relaxed)
    }
    fn swap(&mut self, word: usize, which: usize, value: u64) -> u64 {
        self.cells[word][which].swap(value, Ordering::Relaxed)
    }
    fn set(&mut self, word: usize, which: usize, value: u64) {
        self.cells[word][which].store(value, Ordering::Relaxed);
    }
}

/// Shared memory's records: one block's, on one host thread.
pub struct SharedShadow {
    cells: Vec<[u64; 2]>,
}

impl SharedShadow {
    pub fn new(bytes: usize) -> SharedShadow {
        SharedShadow {
            cells: vec![[0, 0]; bytes.div_ceil(4)],
        }
    }

    /// Forgets every access: a new block starts on this shared memory.
    pub fn clear(&mut self) {
        self.cells.fill([0, 0]);
    }

    /// Whether any access wrote the word at `offset` since the block began.
    pub fn written(&self, offset: usize) -> bool {
        self.cells.get(offset / 4).is_some_and(|cell| cell[0] != 0)
    }

    /// Records an access; returns whether a word it touches had no writer.
    pub fn record(
        &mut self,
        offset: usize,
        len: usize,
        write: bool,
        access: Access,
        view: &View<'_>,
    ) -> Result<bool, Earlier> {
        record::<Shared>(self, offset, len, write, access, view)
    }
}

impl Slots for SharedShadow {
    fn words(&self) -> usize {
        self.cells.len()
    }
    fn get(&self, word: usize, which: usize) -> u64 {
        self.cells[word][which]
    }
    fn swap(&mut self, word: usize, which: usize, value: u64) -> u64 {
        std::mem::replace(&mut self.cells[word][which], value)
    }
    fn set(&mut self, word: usize, which: usize, value: u64) {
        self.cells[word][which] = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_SYNC: [u32; 32] = [0; 32];

    /// What thread `later` of a block of 256 knows.
    fn view(later: u64, epoch: u32, lanes: &[u32; 32]) -> View<'_> {
        View {
            epoch,
            lanes,
            threads_per_block: 256,
            block_base: later / 256 * 256,
            blocks_may_order: false,
        }
    }

    fn access(thread: u64, epoch: u32, atomic: bool) -> Access {
        Access {
            thread,
            atomic,
            bytes: 0xf,
            epoch,
            epoch_bits: 32,
            warp: Some(0),
            at: Some(7),
        }
    }

    #[test]
    fn packing_round_trips_and_saturates() {
        let v = view(0, 42, &NO_SYNC);
        let a = Access {
            epoch: 42,
            epoch_bits: EPOCH_BITS,
            ..access(123_456, 42, true)
        };
        assert_eq!(Global::unpack(Global::pack(&a, &v), &v), Some(a));
        assert_eq!(Global::unpack(0, &v), None);
        let big = Access {
            warp: Some(500),
            at: Some(1 << 20),
            ..a
        };
        let back = Global::unpack(Global::pack(&big, &v), &v).unwrap();
        assert_eq!((back.warp, back.at), (None, None), "too large to keep");
        let shared = Access {
            epoch_bits: 16,
            ..access(255, 42, false)
        };
        assert_eq!(Shared::unpack(Shared::pack(&shared, &v), &v), Some(shared));
    }

    #[test]
    fn write_then_read_by_another_thread_conflicts() {
        let shadow = Shadow::new(16);
        let v = view(0, 0, &NO_SYNC);
        shadow.record(0, 4, true, access(1, 0, false), &v).unwrap();
        let conflict = shadow
            .record(0, 4, false, access(2, 0, false), &v)
            .unwrap_err();
        assert_eq!(conflict.thread, 1);
        assert!(conflict.wrote);
    }

    #[test]
    fn read_then_write_by_another_thread_conflicts() {
        let shadow = Shadow::new(16);
        let v = view(0, 0, &NO_SYNC);
        shadow.record(4, 4, false, access(1, 0, false), &v).unwrap();
        let conflict = shadow
            .record(4, 4, true, access(2, 0, false), &v)
            .unwrap_err();
        assert!(!conflict.wrote);
    }

    #[test]
    fn barriers_atomics_and_the_same_thread_are_fine() {
        let shadow = Shadow::new(16);
        let v0 = view(0, 0, &NO_SYNC);
        let v1 = view(0, 1, &NO_SYNC);
        shadow.record(0, 4, true, access(1, 0, false), &v0).unwrap();
        shadow
            .record(0, 4, false, access(1, 0, false), &v0)
            .unwrap();
        shadow
            .record(0, 4, false, access(2, 1, false), &v1)
            .unwrap();
        shadow.record(8, 4, true, access(1, 0, true), &v0).unwrap();
        shadow
            .record(8, 4, true, access(300, 0, true), &v0)
            .unwrap();
        // An atomic write, then a plain read (a CAS loop's first read).
        shadow
            .record(8, 4, false, access(301, 0, false), &v0)
            .unwrap();
        // Many readers, then a write after a barrier.
        shadow
            .record(12, 4, false, access(3, 0, false), &v0)
            .unwrap();
        shadow
            .record(12, 4, false, access(4, 0, false), &v0)
            .unwrap();
        shadow
            .record(12, 4, true, access(5, 1, false), &v1)
            .unwrap();
    }

    #[test]
    fn a_plain_write_still_conflicts_with_atomics() {
        let shadow = Shadow::new(4);
        let v = view(0, 0, &NO_SYNC);
        shadow.record(0, 4, true, access(1, 0, true), &v).unwrap();
        assert!(shadow.record(0, 4, true, access(2, 0, false), &v).is_err());
    }

    #[test]
    fn different_bytes_of_a_word_do_not_conflict() {
        let shadow = Shadow::new(4);
        let v = view(0, 0, &NO_SYNC);
        shadow.record(0, 2, true, access(1, 0, false), &v).unwrap();
        shadow.record(2, 2, true, access(2, 0, false), &v).unwrap();
        shadow.record(3, 1, false, access(2, 0, false), &v).unwrap();
        assert!(shadow.record(2, 1, false, access(3, 0, false), &v).is_err());
    }

    #[test]
    fn a_barrier_does_not_order_threads_of_different_blocks() {
        let shadow = Shadow::new(4);
        shadow
            .record(0, 4, true, access(0, 0, false), &view(0, 0, &NO_SYNC))
            .unwrap();
        assert!(
            shadow
                .record(0, 4, true, access(256, 1, false), &view(256, 1, &NO_SYNC))
                .is_err()
        );
        // Unless the kernel fences: then an atomic may order them.
        let fenced = View {
            blocks_may_order: true,
            ..view(512, 1, &NO_SYNC)
        };
        shadow
            .record(0, 4, true, access(512, 1, false), &fenced)
            .unwrap();
    }

    #[test]
    fn a_warp_synchronisation_orders_the_lanes_that_took_part() {
        let shadow = Shadow::new(8);
        // Lane 16 writes at its count 0; lane 0 has not met it since.
        shadow
            .record(0, 4, true, access(16, 0, false), &view(16, 0, &NO_SYNC))
            .unwrap();
        assert!(
            shadow
                .record(0, 4, false, access(0, 0, false), &view(0, 0, &NO_SYNC))
                .is_err(),
            "no __syncwarp: a race"
        );
        let mut met = NO_SYNC;
        met[16] = 1;
        shadow
            .record(4, 4, true, access(16, 0, false), &view(16, 0, &NO_SYNC))
            .unwrap();
        shadow
            .record(4, 4, false, access(0, 0, false), &view(0, 0, &met))
            .unwrap();
        // A lane of another warp is not ordered by it.
        assert!(
            shadow
                .record(4, 4, true, access(40, 0, false), &view(40, 0, &met))
                .is_err()
        );
    }

    #[test]
    fn shared_records_keep_their_block_and_epoch() {
        let mut shared = SharedShadow::new(8);
        let v = view(0, 5000, &NO_SYNC);
        shared
            .record(0, 4, true, access(1, 5000, false), &v)
            .unwrap();
        assert!(shared.written(0) && !shared.written(4));
        assert!(
            shared
                .record(0, 4, false, access(2, 5000, false), &v)
                .is_err()
        );
        shared.clear();
        assert!(!shared.written(0));
        shared
            .record(0, 4, false, access(2, 0, false), &view(2, 0, &NO_SYNC))
            .unwrap();
    }
}
