//! The device memory the client holds: its allocations and its modules'
//! globals, the only ranges a copy or memset may touch, and the cap on
//! what it may allocate (GPU memory as the cell's resource, so a hog
//! cannot starve a neighbour and is answered `CUDA_ERROR_OUT_OF_MEMORY`).

use std::collections::BTreeMap;

use kernels::broker_wire::MAX_ALLOCATIONS;

use crate::driver::OUT_OF_MEMORY;
use crate::session::{Failure, refuse};

#[derive(Default)]
pub struct DeviceMemory {
    /// Base -> bytes.
    allocations: BTreeMap<u64, u64>,
    /// Base -> (bytes, module token).
    globals: BTreeMap<u64, (u64, u64)>,
    /// Bytes allocated and not freed.
    used: u64,
    /// Most bytes allocated at once; None for the device's own.
    cap: Option<u64>,
}

/// Whether `[address, address + bytes)` lies inside the range at `base`
/// of `size` bytes.
fn inside(base: u64, size: u64, address: u64, bytes: u64) -> bool {
    let (Some(end), Some(limit)) = (address.checked_add(bytes), base.checked_add(size)) else {
        return false;
    };
    address >= base && end <= limit
}

impl DeviceMemory {
    pub fn new(cap: Option<u64>) -> DeviceMemory {
        DeviceMemory {
            cap,
            ..DeviceMemory::default()
        }
    }

    /// Whether `bytes` more may be allocated.
    pub fn admit(&self, bytes: u64) -> Result<(), Failure> {
        if self.allocations.len() + self.globals.len() >= MAX_ALLOCATIONS {
            return Err(refuse(
                OUT_OF_MEMORY,
                format!("a program may hold at most {MAX_ALLOCATIONS} device allocations at once"),
            ));
        }
        match self.cap {
            Some(cap) if self.used.saturating_add(bytes) > cap => Err(refuse(
                OUT_OF_MEMORY,
                format!(
                    "this run may allocate {cap} bytes of GPU memory; {} are allocated and {bytes} more were asked for",
                    self.used
                ),
            )),
            _ => Ok(()),
        }
    }

    pub fn add(&mut self, base: u64, bytes: u64) {
        if let Some(old) = self.allocations.insert(base, bytes) {
            self.used -= old;
        }
        self.used += bytes;
    }

    /// Forgets the allocation at `base` (exactly), returning its size.
    pub fn remove(&mut self, base: u64) -> Option<u64> {
        let bytes = self.allocations.remove(&base)?;
        self.used -= bytes;
        Some(bytes)
    }

    /// A global of module `module`: copies may touch it.
    pub fn add_global(&mut self, base: u64, bytes: u64, module: u64) {
        if self.globals.len() < MAX_ALLOCATIONS {
            self.globals.insert(base, (bytes, module));
        }
    }

    pub fn forget_module(&mut self, module: u64) {
        self.globals.retain(|_, (_, m)| *m != module);
    }

    /// Whether an allocation starts at `address`.
    pub fn is_base(&self, address: u64) -> bool {
        self.allocations.contains_key(&address)
    }

    /// Whether `bytes` at `address` lie inside one allocation or global.
    pub fn holds(&self, address: u64, bytes: u64) -> bool {
        let allocation = self.allocations.range(..=address).next_back();
        let global = self.globals.range(..=address).next_back();
        allocation.is_some_and(|(&base, &size)| inside(base, size, address, bytes))
            || global.is_some_and(|(&base, &(size, _))| inside(base, size, address, bytes))
    }

    /// Free and total memory as the program may see them: the device's,
    /// within the cap.
    pub fn info(&self, free: u64, total: u64) -> (u64, u64) {
        match self.cap {
            None => (free, total),
            Some(cap) => (free.min(cap.saturating_sub(self.used)), total.min(cap)),
        }
    }

    /// Every allocation's base, for the end of the session.
    pub fn bases(&self) -> Vec<u64> {
        self.allocations.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ranges_inside_one_allocation_or_global_are_held() {
        let mut memory = DeviceMemory::new(None);
        memory.add(0x1000, 0x100);
        memory.add(0x1100, 0x100);
        memory.add_global(0x9000, 4, 0x130);
        assert!(memory.holds(0x1000, 0x100) && memory.holds(0x10f0, 0x10));
        // Across two neighbouring allocations, past the end, before the
        // first, a wrapping length.
        assert!(!memory.holds(0x10f0, 0x20));
        assert!(!memory.holds(0x1180, 0x81));
        assert!(!memory.holds(0xfff, 1));
        assert!(!memory.holds(0x1000, u64::MAX));
        assert!(memory.holds(0x9000, 4) && !memory.holds(0x9000, 5));
        memory.forget_module(0x130);
        assert!(!memory.holds(0x9000, 4));
        assert_eq!(memory.remove(0x1000), Some(0x100));
        assert!(!memory.holds(0x1000, 1) && memory.remove(0x1000).is_none());
    }

    #[test]
    fn the_cap_refuses_past_it_and_shows_in_the_memory_info() {
        let mut memory = DeviceMemory::new(Some(1000));
        memory.admit(1000).unwrap();
        memory.add(0x1000, 600);
        let refused = memory.admit(401).unwrap_err();
        assert_eq!(refused.code, OUT_OF_MEMORY);
        assert!(refused.reason.contains("1000 bytes"), "{}", refused.reason);
        memory.admit(400).unwrap();
        assert_eq!(memory.info(80_000, 90_000), (400, 1000));
        assert_eq!(memory.info(100, 90_000), (100, 1000));
        memory.remove(0x1000);
        memory.admit(1000).unwrap();
        assert_eq!(DeviceMemory::new(None).info(5, 9), (5, 9));
    }
}
