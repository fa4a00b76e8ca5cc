//! What the trace remembers between calls: the page-locked host ranges the
//! driver handed out or registered, and the kernel name behind each
//! function handle. Both are fixed-size, so recording never allocates; when
//! one is full the oldest entry goes, which can only make a copy look
//! pageable or a launch nameless: evidence missing, never invented.

use std::sync::{Mutex, MutexGuard};

/// Page-locked ranges remembered at once.
const RANGES: usize = 1024;
/// Function handles remembered at once, and the bytes of each name kept.
const FUNCTIONS: usize = 256;
pub const NAME_BYTES: usize = 128;

/// Page-locked host memory: `[start, end)` byte ranges.
struct Pinned {
    ranges: [(usize, usize); RANGES],
    len: usize,
    /// Where the next range goes once the table is full.
    next: usize,
}

static PINNED: Mutex<Pinned> = Mutex::new(Pinned {
    ranges: [(0, 0); RANGES],
    len: 0,
    next: 0,
});

/// Kernel names by function handle.
struct Names {
    handles: [usize; FUNCTIONS],
    names: [[u8; NAME_BYTES]; FUNCTIONS],
    lens: [usize; FUNCTIONS],
    len: usize,
    next: usize,
}

static NAMES: Mutex<Names> = Mutex::new(Names {
    handles: [0; FUNCTIONS],
    names: [[0; NAME_BYTES]; FUNCTIONS],
    lens: [0; FUNCTIONS],
    len: 0,
    next: 0,
});

/// A poisoned lock only means another thread panicked while recording; the
/// tables stay usable.
fn lock<T>(mutex: &'static Mutex<T>) -> MutexGuard<'static, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The slot for a new entry in a table of `capacity`: the next free one, or
/// the oldest once full.
fn slot(len: &mut usize, next: &mut usize, capacity: usize) -> usize {
    if *len < capacity {
        *len += 1;
        *len - 1
    } else {
        let at = *next;
        *next = (*next + 1) % capacity;
        at
    }
}

/// Remembers `bytes` at `start` as page-locked.
pub fn pin(start: usize, bytes: usize) {
    if start == 0 || bytes == 0 {
        return;
    }
    let mut table = lock(&PINNED);
    let table = &mut *table;
    let at = slot(&mut table.len, &mut table.next, RANGES);
    table.ranges[at] = (start, start.saturating_add(bytes));
}

/// Forgets the page-locked range that starts at `start`.
pub fn unpin(start: usize) {
    let mut table = lock(&PINNED);
    let len = table.len;
    if let Some(at) = table.ranges[..len].iter().position(|r| r.0 == start) {
        table.ranges[at] = (0, 0);
    }
}

/// Whether all of `[start, start + bytes)` lies in one page-locked range.
pub fn is_pinned(start: usize, bytes: usize) -> bool {
    let end = start.saturating_add(bytes);
    let table = lock(&PINNED);
    table.ranges[..table.len]
        .iter()
        .any(|&(from, to)| from != to && from <= start && end <= to)
}

/// Remembers that `handle` is the kernel `name` (its first
/// [`NAME_BYTES`] bytes).
pub fn name(handle: usize, name: &[u8]) {
    let mut table = lock(&NAMES);
    let table = &mut *table;
    let len = table.len;
    let at = match table.handles[..len].iter().position(|&h| h == handle) {
        Some(at) => at,
        None => slot(&mut table.len, &mut table.next, FUNCTIONS),
    };
    let kept = name.len().min(NAME_BYTES);
    table.handles[at] = handle;
    table.names[at][..kept].copy_from_slice(&name[..kept]);
    table.lens[at] = kept;
}

/// The kernel name of `handle` copied into `out`, and its length; 0 when
/// the handle was not seen.
pub fn name_of(handle: usize, out: &mut [u8; NAME_BYTES]) -> usize {
    let table = lock(&NAMES);
    match table.handles[..table.len].iter().position(|&h| h == handle) {
        Some(at) => {
            let len = table.lens[at];
            out[..len].copy_from_slice(&table.names[at][..len]);
            len
        }
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_pinned_only_inside_one_locked_range() {
        pin(0x10_000, 0x1000);
        assert!(is_pinned(0x10_000, 0x1000));
        assert!(is_pinned(0x10_800, 0x100));
        assert!(!is_pinned(0x10_800, 0x1000), "runs past the end");
        assert!(!is_pinned(0xf_f00, 0x200), "starts before");
        unpin(0x10_000);
        assert!(!is_pinned(0x10_000, 0x10));
    }

    #[test]
    fn names_are_found_by_handle_and_replaced_when_a_handle_is_reused() {
        let mut out = [0; NAME_BYTES];
        name(0xabc, b"dot");
        let len = name_of(0xabc, &mut out);
        assert_eq!(&out[..len], b"dot");
        name(0xabc, b"vecadd");
        let len = name_of(0xabc, &mut out);
        assert_eq!(&out[..len], b"vecadd");
        assert_eq!(name_of(0xdef, &mut out), 0);
    }

    #[test]
    fn a_full_table_drops_its_oldest_entry() {
        let (mut len, mut next) = (0, 0);
        let slots: Vec<usize> = (0..5).map(|_| slot(&mut len, &mut next, 3)).collect();
        assert_eq!(slots, [0, 1, 2, 0, 1]);
    }
}
