//! The tokens the client holds in place of the driver's handles, and the
//! bounded tables that map them back. A token is a number the broker made
//! (never 0, 1 or 2, which are the driver's own streams), looked up in the
//! table of its kind: a wrong or stale one, or one of another kind, is
//! `CUDA_ERROR_INVALID_HANDLE` and reaches no driver call.

use std::collections::HashMap;

use kernels::broker_wire::MAX_HANDLES;

use crate::driver::{INVALID_HANDLE, OUT_OF_MEMORY};
use crate::session::{Failure, refuse};

/// Hands out tokens, one sequence for every kind, so no two live handles
/// of any kinds share one.
pub struct Tokens {
    next: u64,
}

impl Default for Tokens {
    fn default() -> Tokens {
        Tokens { next: 0x100 }
    }
}

impl Tokens {
    pub fn fresh(&mut self) -> u64 {
        self.next += 0x10;
        self.next
    }
}

/// The live handles of one kind, at most [`MAX_HANDLES`].
pub struct Table<T> {
    entries: HashMap<u64, T>,
    /// What the table holds, for a refusal's reason ("streams").
    what: &'static str,
}

impl<T> Table<T> {
    pub fn new(what: &'static str) -> Table<T> {
        Table {
            entries: HashMap::new(),
            what,
        }
    }

    /// Whether one more fits.
    pub fn room(&self) -> Result<(), Failure> {
        if self.entries.len() < MAX_HANDLES {
            return Ok(());
        }
        Err(refuse(
            OUT_OF_MEMORY,
            format!(
                "a program may hold at most {MAX_HANDLES} {} at once through the broker",
                self.what
            ),
        ))
    }

    /// Adds `value` under a new token (dropping it where there is no room:
    /// ask [`Table::room`] first where dropping it is not enough).
    pub fn insert(&mut self, tokens: &mut Tokens, value: T) -> Result<u64, Failure> {
        self.room()?;
        let token = tokens.fresh();
        self.entries.insert(token, value);
        Ok(token)
    }

    pub fn get(&self, token: u64) -> Result<&T, Failure> {
        self.entries
            .get(&token)
            .ok_or(Failure::from(INVALID_HANDLE))
    }

    pub fn get_mut(&mut self, token: u64) -> Result<&mut T, Failure> {
        self.entries
            .get_mut(&token)
            .ok_or(Failure::from(INVALID_HANDLE))
    }

    pub fn remove(&mut self, token: u64) -> Result<T, Failure> {
        self.entries
            .remove(&token)
            .ok_or(Failure::from(INVALID_HANDLE))
    }

    /// Removes every entry `drop_it` picks.
    pub fn remove_where(&mut self, mut drop_it: impl FnMut(&T) -> bool) {
        self.entries.retain(|_, value| !drop_it(value));
    }

    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.entries.drain().map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_never_the_driver_s_streams_and_kinds_never_share_one() {
        let mut tokens = Tokens::default();
        let mut streams = Table::new("streams");
        let mut events = Table::new("events");
        let stream = streams.insert(&mut tokens, 'S').unwrap();
        let event = events.insert(&mut tokens, 'E').unwrap();
        assert!(stream > 2 && event > 2 && stream != event);
        assert_eq!(streams.get(event).unwrap_err().code, INVALID_HANDLE);
        assert_eq!(streams.remove(stream).unwrap(), 'S');
        assert_eq!(streams.get(stream).unwrap_err().code, INVALID_HANDLE);
    }

    #[test]
    fn a_table_holds_at_most_its_bound() {
        let mut tokens = Tokens::default();
        let mut table = Table::new("events");
        for _ in 0..MAX_HANDLES {
            table.insert(&mut tokens, ()).unwrap();
        }
        let refused = table.insert(&mut tokens, ()).unwrap_err();
        assert_eq!(refused.code, OUT_OF_MEMORY);
        assert!(
            refused.reason.contains("at most 4096 events"),
            "{}",
            refused.reason
        );
    }
}
