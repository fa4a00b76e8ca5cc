//! Device allocations (within the cap) and page-locked host memory: a
//! sealed memfd the broker maps and registers with the driver, whose
//! descriptor goes to the client with the reply, so the driver's copies
//! from it are real DMA from the client's own pages.

use kernels::broker_wire::Reply;
use kernels::trace_record::key;

use super::{Answer, Note, Session, refuse};
use crate::driver::{INVALID_VALUE, OUT_OF_MEMORY};
use crate::shared_memory::SharedMemory;

impl Session<'_> {
    pub(super) fn alloc(&mut self, bytes: u64, note: &mut Note) -> Answer {
        note.field(key::BYTES, bytes);
        self.memory.admit(bytes)?;
        let base = self.driver.alloc(bytes)?;
        self.memory.add(base, bytes);
        note.hex(key::DST, base);
        Ok(Reply::Value(base))
    }

    /// Frees an allocation of the program's (by its base, as the driver
    /// wants it); with `--keep-frees` (a batch of runs) the memory stays
    /// the program's until the session ends, out of its reach, so no
    /// later run is handed what an earlier one left there.
    pub(super) fn free(&mut self, address: u64, note: &mut Note) -> Answer {
        note.hex(key::DST, address);
        if address == 0 {
            return Ok(Reply::Done);
        }
        if !self.memory.is_base(address) {
            return Err(refuse(
                INVALID_VALUE,
                format!("{address:#x} is not the start of an allocation of this program"),
            ));
        }
        if !self.config.keep_frees {
            self.driver.free(address)?;
        }
        self.memory.remove(address);
        Ok(Reply::Done)
    }

    /// Free and total memory, within the cap.
    pub(super) fn memory_info(&mut self) -> Answer {
        let (free, total) = self.driver.memory_info()?;
        let (free, total) = self.memory.info(free, total);
        Ok(Reply::Pair(free, total))
    }

    pub(super) fn alloc_host(&mut self, bytes: u64, note: &mut Note) -> Answer {
        note.field(key::BYTES, bytes);
        if bytes == 0 {
            return Err(INVALID_VALUE.into());
        }
        let cap = self.config.host_memory_cap;
        if self.pinned_bytes.saturating_add(bytes) > cap {
            return Err(refuse(
                OUT_OF_MEMORY,
                format!(
                    "this run may page-lock {cap} bytes of host memory; {} are and {bytes} more were asked for",
                    self.pinned_bytes
                ),
            ));
        }
        self.regions.room()?;
        let region = SharedMemory::create(c"cuda-course-pinned", bytes)
            .map_err(|err| refuse(OUT_OF_MEMORY, format!("no host memory to share: {err}")))?;
        // SAFETY: the region stays mapped until it is unregistered
        // (free_host, or the session's end): the table has room for it.
        unsafe { self.driver.register(region.base(), region.bytes()) }?;
        let (fd, length) = (region.raw_fd(), region.bytes() as u64);
        let token = self.regions.insert(&mut self.tokens, region)?;
        self.pinned_bytes += length;
        note.hex(key::REGION, token);
        note.fd = Some(fd);
        Ok(Reply::Region {
            region: token,
            bytes: length,
        })
    }

    /// Unregisters and unmaps a page-locked region once no work can still
    /// be copying from it.
    pub(super) fn free_host(&mut self, region: u64, note: &mut Note) -> Answer {
        note.hex(key::REGION, region);
        let base = self.regions.get(region)?.base();
        let _ = self.driver.synchronize();
        // SAFETY: every region in the table was registered.
        unsafe { self.driver.unregister(base) }?;
        let freed = self.regions.remove(region)?;
        self.pinned_bytes -= freed.bytes() as u64;
        Ok(Reply::Done)
    }
}
