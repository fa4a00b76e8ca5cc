//! The grader's own answers to the runs of a plan, each computed once per
//! grading: every student's run of a plan has the same inputs (the plan is
//! drawn from the grading's seed), so a class of 200 sums a run's drawn
//! inputs once, not 200 times. The key is what the answer depends on (the
//! seed, the size, the shape); the answer never comes from a student's
//! process.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock};

/// Answers kept at most; past it the memo starts again (a grading plans
/// a few dozen runs).
const KEPT: usize = 1024;

/// A map from a run's key to the grader's answer, shared by the workers.
pub struct Memo<K, V> {
    map: OnceLock<Mutex<HashMap<K, V>>>,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    pub const fn new() -> Memo<K, V> {
        Memo {
            map: OnceLock::new(),
        }
    }

    /// The answer for `key`, computed by `compute` the first time. Two
    /// workers asking at once may both compute it; they get the same value.
    pub fn get(&self, key: K, compute: impl FnOnce() -> V) -> V {
        let map = self.map.get_or_init(Default::default);
        let lock = || map.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(value) = lock().get(&key) {
            return value.clone();
        }
        let value = compute();
        let mut kept = lock();
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(key, value.clone());
        value
    }
}

impl<K: Eq + Hash, V: Clone> Default for Memo<K, V> {
    fn default() -> Memo<K, V> {
        Memo::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_computed_once_per_key() {
        static MEMO: Memo<(u64, u64), f64> = Memo::new();
        let mut computed = 0;
        for _ in 0..3 {
            let value = MEMO.get((1, 2), || {
                computed += 1;
                0.5
            });
            assert_eq!(value, 0.5);
        }
        assert_eq!(computed, 1);
        assert_eq!(MEMO.get((1, 3), || 2.0), 2.0);
    }
}
