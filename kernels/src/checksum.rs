//! A checksum of every value a run copied back from the GPU: what a report
//! carries so the grader can recheck the values themselves, not only how
//! many there were.
//!
//! The course's driver computes it from the host buffers after the copies
//! back; the grader computes the same checksum from the run's parameters
//! (the closed form of every output) and compares. It covers each value's
//! 32-bit pattern twice: a plain sum (the same in any order, so a mismatch
//! with an equal sum means values are in the wrong places) and an
//! order-sensitive FNV-1a hash over the words in order.
//!
//! What it proves: a report whose checksum matches carries, value for
//! value, the outputs the exercise must produce, in order. What it cannot
//! prove: that a GPU produced them. The closed forms are public, so a
//! program that computes every output on the CPU can produce the same
//! checksum; the driver-call trace and the grader's own host builds answer
//! that (issue 11).

use serde::{Deserialize, Serialize};

/// FNV-1a's 64-bit offset basis and prime.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// The values a run copied back, reduced to three exact integers. JSON
/// readers must take them as 64-bit integers, not doubles (serde_json does).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checksum {
    /// How many values it covers.
    pub count: u64,
    /// The sum of the values' 32-bit patterns, mod 2^64.
    pub sum: u64,
    /// FNV-1a over the 32-bit patterns in order, one word per step.
    pub hash: u64,
}

impl Default for Checksum {
    fn default() -> Checksum {
        Checksum {
            count: 0,
            sum: 0,
            hash: FNV_OFFSET,
        }
    }
}

impl Checksum {
    /// The checksum of `words`, in order.
    pub fn of(words: impl IntoIterator<Item = u32>) -> Checksum {
        let mut checksum = Checksum::default();
        checksum.extend(words);
        checksum
    }

    /// Adds `words` after the values already covered.
    pub fn extend(&mut self, words: impl IntoIterator<Item = u32>) {
        for word in words {
            self.count += 1;
            self.sum = self.sum.wrapping_add(u64::from(word));
            self.hash = (self.hash ^ u64::from(word)).wrapping_mul(FNV_PRIME);
        }
    }

    /// Why `self` (a report's) is not `want` (the grader's), for a student;
    /// None when they agree.
    pub fn mismatch(&self, want: &Checksum) -> Option<String> {
        if self == want {
            None
        } else if self.count != want.count {
            Some(format!(
                "the checksum covers {} values, not the {} the run produces",
                self.count, want.count
            ))
        } else if self.sum == want.sum {
            Some(
                "the values copied back are the right ones but not all in their places: \
                 some output landed at another index"
                    .into(),
            )
        } else {
            Some(
                "the values copied back are not the ones the exercise produces: the checksum \
                 of the outputs differs from the one the grader computes"
                    .into(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv_1a_over_words_and_the_sum_is_exact() {
        // Worked by hand from the FNV-1a definition, one 32-bit word per step.
        let one = (FNV_OFFSET ^ 7).wrapping_mul(FNV_PRIME);
        let two = (one ^ u64::from(u32::MAX)).wrapping_mul(FNV_PRIME);
        assert_eq!(
            Checksum::of([7, u32::MAX]),
            Checksum {
                count: 2,
                sum: 7 + u64::from(u32::MAX),
                hash: two
            }
        );
        assert_eq!(Checksum::of([]), Checksum::default());
    }

    #[test]
    fn extending_equals_one_pass() {
        let mut parts = Checksum::of([1, 2]);
        parts.extend([3]);
        assert_eq!(parts, Checksum::of([1, 2, 3]));
    }

    #[test]
    fn each_kind_of_difference_is_named() {
        let want = Checksum::of([1, 2, 3]);
        assert_eq!(Checksum::of([1, 2, 3]).mismatch(&want), None);
        let said = Checksum::of([1, 2]).mismatch(&want).unwrap();
        assert!(said.contains("covers 2 values, not the 3"), "{said}");
        let said = Checksum::of([3, 2, 1]).mismatch(&want).unwrap();
        assert!(said.contains("not all in their places"), "{said}");
        let said = Checksum::of([1, 2, 4]).mismatch(&want).unwrap();
        assert!(said.contains("not the ones"), "{said}");
    }

    #[test]
    fn it_travels_through_json_exactly() {
        let sent = Checksum::of([u32::MAX; 5]);
        let text = serde_json::to_string(&sent).unwrap();
        assert_eq!(serde_json::from_str::<Checksum>(&text).unwrap(), sent);
    }
}
