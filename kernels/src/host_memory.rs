//! Host-side input and output vectors, allocated so that a size the machine
//! cannot hold is an error to report, never an abort.

use std::fmt;

/// Host memory for `what` could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostAllocError {
    pub what: String,
    pub bytes: u64,
}

impl fmt::Display for HostAllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs {} of host memory, which this machine could not allocate",
            self.what,
            crate::units::bytes(self.bytes)
        )
    }
}

impl std::error::Error for HostAllocError {}

/// Elements from which a fill is shared among the cores: above 2^31
/// elements one core takes seconds per vector.
const PARALLEL_FROM: usize = 1 << 22;

/// A vector of `n` elements, element `i` being `value(i)`.
pub fn try_filled<T: Send>(
    what: &str,
    n: u64,
    value: impl Fn(u64) -> T + Sync,
) -> Result<Vec<T>, HostAllocError> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>() as u64);
    let too_big = || HostAllocError {
        what: what.to_owned(),
        bytes,
    };
    let len = usize::try_from(n).map_err(|_| too_big())?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_big())?;
    in_parts_mut(&mut v.spare_capacity_mut()[..len], |first, part| {
        for (j, slot) in part.iter_mut().enumerate() {
            slot.write(value((first + j) as u64));
        }
    });
    // SAFETY: the parts above wrote every one of the first `len` slots
    // (they cover them all) and `in_parts_mut` returned only after every
    // part did; a part that panicked took this function with it.
    unsafe { v.set_len(len) };
    Ok(v)
}

/// `into` (of the same length, or any length: it is resized) holding a copy
/// of `items`, copied on every core above `PARALLEL_FROM` elements. Given
/// memory already written (`try_filled`), the copy faults in no page.
pub fn copied<T: Copy + Send + Sync + Default>(items: &[T], mut into: Vec<T>) -> Vec<T> {
    into.resize(items.len(), T::default());
    in_parts_mut(&mut into, |first, to| {
        to.copy_from_slice(&items[first..first + to.len()]);
    });
    into
}

/// Sets every element of `items` to `value`, shared among the cores above
/// `PARALLEL_FROM` elements: streams-overlap fills its gigabyte of output
/// before each of its twelve timed pipelines, with the GPU held alone; on
/// one core that window took 2.2 s on an H200, shared 0.7 s
/// (`bench/runs/2026-11-29-h200-back-to-back`, 2026-11-29).
pub fn fill<T: Copy + Send + Sync>(items: &mut [T], value: T) {
    in_parts_mut(items, |_, part| part.fill(value));
}

/// Elements each core takes when `len` of them are shared among the cores.
fn share(len: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    len.div_ceil(cores)
}

/// `part(first, slice)` over consecutive parts of `items`, one per core
/// above `PARALLEL_FROM` elements (one part below), the results in the
/// parts' order: a check of every element above 2^31 takes seconds on one
/// core.
pub fn in_parts<T: Sync, R: Send>(items: &[T], part: impl Fn(usize, &[T]) -> R + Sync) -> Vec<R> {
    if items.len() < PARALLEL_FROM {
        return vec![part(0, items)];
    }
    let share = share(items.len());
    let part = &part;
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(share)
            .enumerate()
            .map(|(k, chunk)| scope.spawn(move || part(k * share, chunk)))
            .collect();
        parts
            .into_iter()
            .map(|p| {
                p.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// `part(first, slice)` over the parts [`in_parts`] would make of
/// `items`, each part free to write its own elements; returns once every
/// part has.
fn in_parts_mut<T: Send>(items: &mut [T], part: impl Fn(usize, &mut [T]) + Sync) {
    if items.len() < PARALLEL_FROM {
        part(0, items);
        return;
    }
    let share = share(items.len());
    let part = &part;
    std::thread::scope(|scope| {
        for (k, chunk) in items.chunks_mut(share).enumerate() {
            scope.spawn(move || part(k * share, chunk));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fill_sets_every_element_at_any_length() {
        for n in [
            0,
            1,
            10,
            PARALLEL_FROM - 1,
            PARALLEL_FROM,
            PARALLEL_FROM + 12_345,
        ] {
            let mut items: Vec<u32> = (0..n as u32).collect();
            fill(&mut items, 0xdead_beef);
            assert_eq!(items.len(), n);
            assert!(items.iter().all(|&x| x == 0xdead_beef), "{n}");
        }
    }

    #[test]
    fn parts_cover_every_element_once_in_order() {
        let n = PARALLEL_FROM + 12_345;
        let items: Vec<u64> = (0..n as u64).collect();
        let parts = in_parts(&items, |first, part| {
            (first, part.len(), part.iter().sum::<u64>())
        });
        let mut next = 0;
        for (first, len, _) in &parts {
            assert_eq!(*first, next);
            next += len;
        }
        assert_eq!(next, n);
        let sum: u64 = parts.iter().map(|p| p.2).sum();
        assert_eq!(sum, (n as u64) * (n as u64 - 1) / 2);
        assert_eq!(
            in_parts(&items[..10], |first, part| (first, part.len())),
            [(0, 10)]
        );
    }

    #[test]
    fn a_copy_on_every_core_is_the_items_in_order() {
        let n = PARALLEL_FROM + 12_345;
        let items: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        // Into memory of the same length, a shorter one and a longer one.
        for len in [n, 3, n + 7] {
            assert_eq!(copied(&items, vec![1; len]), items);
        }
        assert_eq!(copied(&items[..5], vec![0; n]), items[..5]);
    }

    #[test]
    fn fills_by_index() {
        assert_eq!(try_filled("x", 4, |i| i * 10).unwrap(), vec![0, 10, 20, 30]);
    }

    #[test]
    fn a_large_fill_shared_among_cores_is_the_same_as_one_by_one() {
        let n = PARALLEL_FROM as u64 + 12_345;
        let filled = try_filled("x", n, |i| i.wrapping_mul(0x9e37_79b9) as u32).unwrap();
        assert_eq!(filled.len() as u64, n);
        assert!(
            filled
                .iter()
                .enumerate()
                .all(|(i, &x)| x == (i as u64).wrapping_mul(0x9e37_79b9) as u32)
        );
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        let err = try_filled("a", u64::MAX / 8, |_| 0u64).unwrap_err();
        assert_eq!(err.what, "a");
        assert!(err.to_string().contains("host memory"), "{err}");
    }
}
