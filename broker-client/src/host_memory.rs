//! The memory the client shares with the broker: the staging area of
//! pageable copies and the page-locked regions `cuMemAllocHost_v2` hands
//! out, each a memfd the broker sent, mapped here at an address of the
//! client's own.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::os::fd::{AsRawFd, OwnedFd};

/// A shared mapping of a memfd the broker sent.
pub struct Mapping {
    pub base: *mut u8,
    pub bytes: usize,
}

// SAFETY: the mapping is plain shared memory, used under the connection's
// lock.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `bytes` of `fd` read-write and shared; the descriptor is closed
    /// after (the mapping keeps the pages).
    pub fn map(fd: OwnedFd, bytes: u64) -> Option<Mapping> {
        let bytes = usize::try_from(bytes).ok().filter(|&b| b > 0)?;
        let protection = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a fresh mapping of a descriptor we own; mmap checks the
        // length against the file.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                protection,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        (base != libc::MAP_FAILED).then_some(Mapping {
            base: base.cast(),
            bytes,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping `map` made, unmapped once.
        unsafe { libc::munmap(self.base.cast(), self.bytes) };
    }
}

/// The staging area of pageable copies: its two halves by turns (the
/// broker answers a chunk in one half once the other is free).
pub struct Staging {
    mapping: Mapping,
    next: u8,
}

impl Staging {
    pub fn new(mapping: Mapping) -> Staging {
        Staging { mapping, next: 0 }
    }

    /// The most bytes of one chunk: half the area.
    pub fn chunk_bytes(&self) -> usize {
        self.mapping.bytes / 2
    }

    /// The half to fill next and where it starts.
    pub fn next_half(&mut self) -> (u8, *mut u8) {
        let half = self.next;
        self.next ^= 1;
        // SAFETY: half 0 or 1 of the mapping starts inside it.
        let start = unsafe {
            self.mapping
                .base
                .add(usize::from(half) * self.chunk_bytes())
        };
        (half, start)
    }
}

/// A page-locked region: the broker's token and the client's mapping.
pub struct Region {
    pub token: u64,
    pub mapping: Mapping,
}

/// The page-locked regions, by their address here.
#[derive(Default)]
pub struct Regions {
    by_address: BTreeMap<usize, Region>,
}

impl Regions {
    pub fn add(&mut self, region: Region) -> *mut c_void {
        let base = region.mapping.base;
        self.by_address.insert(base as usize, region);
        base.cast()
    }

    /// The region `bytes` at `address` lie wholly inside, and the offset
    /// there: such a copy is page-locked.
    pub fn find(&self, address: usize, bytes: usize) -> Option<(u64, u64)> {
        let (&start, region) = self.by_address.range(..=address).next_back()?;
        let end = address.checked_add(bytes)?;
        (end <= start + region.mapping.bytes).then(|| (region.token, (address - start) as u64))
    }

    /// The region that starts at `address` (what `cuMemFreeHost` takes).
    pub fn token_at(&self, address: usize) -> Option<u64> {
        self.by_address.get(&address).map(|r| r.token)
    }

    /// Forgets and unmaps the region at `address`.
    pub fn remove(&mut self, address: usize) {
        self.by_address.remove(&address);
    }
}
