//! Uninitialised shared memory followed to where it matters. A block's
//! shared memory starts poisoned; the first read of a word no thread of the
//! block wrote switches the block to tracking taint: a bit per register, per
//! shared word and per local word, passed from sources to results by every
//! instruction. A tainted value stored to global memory is the finding (a
//! correct kernel may read such words, in the padding of a partial tile, and
//! discard what it read).

use super::state::{BlockMemory, Place, Taint, ThreadMemory};

pub(super) fn bit(bits: &[u64], index: usize) -> bool {
    bits.get(index / 64)
        .is_some_and(|w| w & (1 << (index % 64)) != 0)
}

pub(super) fn set_bit(bits: &mut [u64], index: usize, value: bool) {
    if let Some(w) = bits.get_mut(index / 64) {
        if value {
            *w |= 1 << (index % 64);
        } else {
            *w &= !(1 << (index % 64));
        }
    }
}

impl BlockMemory {
    /// Starts tracking values from unwritten shared memory: `threads`
    /// threads of `registers` registers each, none tainted yet.
    pub fn start_taint(&mut self, threads: usize, registers: usize, origin: (usize, u32, u64)) {
        self.taint = Some(Box::new(Taint {
            registers: vec![vec![0; registers.div_ceil(64)]; threads],
            shared: vec![0; self.shared_len.div_ceil(4).div_ceil(64)],
            local: vec![0; self.local.len() * 2 / 64 + 1],
            origin,
        }));
    }
}

impl ThreadMemory<'_> {
    /// The words of element `i` of `size` bytes from `offset`.
    pub(super) fn element_words(offset: usize, size: u8, i: usize) -> std::ops::Range<usize> {
        let start = offset + i * size as usize;
        start / 4..(start + size as usize).div_ceil(4)
    }

    /// Which of `count` elements of a shared or local load are tainted:
    /// read from shared words no thread wrote, or from words written with
    /// tainted values. Outside taint tracking, only the first (which starts
    /// it) is looked for.
    pub(super) fn loaded_taint(&mut self, place: &Place, size: u8, count: u8, at: u32) -> u8 {
        let mut mask = 0u8;
        match *place {
            Place::Shared(offset, _) => {
                for i in 0..count as usize {
                    let words = Self::element_words(offset, size, i);
                    let unwritten = words
                        .clone()
                        .any(|w| !self.block.shared_shadow.written(w * 4));
                    let tainted = unwritten
                        || self
                            .block
                            .taint
                            .as_ref()
                            .is_some_and(|t| words.clone().any(|w| bit(&t.shared, w)));
                    if unwritten && self.block.first_unwritten_read.is_none() {
                        let first = offset + i * size as usize;
                        self.block.first_unwritten_read = Some((self.thread, at, first as u64));
                    }
                    mask |= u8::from(tainted) << i;
                }
            }
            Place::Local(ptr) => {
                if let Some(taint) = &self.block.taint {
                    let offset = ptr as usize - self.block.local.as_ptr() as usize;
                    for i in 0..count as usize {
                        let tainted =
                            Self::element_words(offset, size, i).any(|w| bit(&taint.local, w));
                        mask |= u8::from(tainted) << i;
                    }
                }
            }
            _ => {}
        }
        mask
    }

    /// Records where tainted values (`mask`, a bit per element) go: into
    /// shared or local memory, kept; into global memory, a finding for the
    /// block's end.
    pub(super) fn store_taint(
        &mut self,
        place: &Place,
        address: u64,
        size: u8,
        count: usize,
        mask: u8,
        at: u32,
    ) {
        let thread = self.thread;
        let local_base = self.block.local.as_ptr() as usize;
        let Some(taint) = self.block.taint.as_mut() else {
            return;
        };
        let (bits, offset) = match *place {
            Place::Shared(offset, _) => (&mut taint.shared, offset),
            Place::Local(ptr) => (&mut taint.local, ptr as usize - local_base),
            Place::Global(..) if mask != 0 => {
                self.block.poisoned.get_or_insert((thread, at, address));
                return;
            }
            _ => return,
        };
        for i in 0..count {
            for word in Self::element_words(offset, size, i) {
                set_bit(bits, word, mask & (1 << i) != 0);
            }
        }
    }
}
