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

/// A vector of `n` elements, element `i` being `value(i)`.
pub fn try_filled<T>(
    what: &str,
    n: u64,
    value: impl Fn(u64) -> T,
) -> Result<Vec<T>, HostAllocError> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>() as u64);
    let too_big = || HostAllocError {
        what: what.to_owned(),
        bytes,
    };
    let len = usize::try_from(n).map_err(|_| too_big())?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_big())?;
    v.extend((0..n).map(value));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_by_index() {
        assert_eq!(try_filled("x", 4, |i| i * 10).unwrap(), vec![0, 10, 20, 30]);
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        let err = try_filled("a", u64::MAX / 8, |_| 0u64).unwrap_err();
        assert_eq!(err.what, "a");
        assert!(err.to_string().contains("host memory"), "{err}");
    }
}
