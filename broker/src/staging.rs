//! The staging area of pageable copies: a memfd shared with the client,
//! page-locked here, in two halves used by turns. A copy to the device
//! from one half runs while the client fills the other; before the broker
//! answers a chunk, the other half's last copy is done, so the client may
//! write it. A copy to the host is done before its answer. This is how
//! the driver stages pageable memory itself: an asynchronous copy from
//! pageable memory returns once the program's buffer may be reused.

use std::ffi::c_void;
use std::io;
use std::os::fd::RawFd;

use crate::driver::{CuResult, Driver, Raw};
use crate::shared_memory::SharedMemory;

pub struct Staging {
    memory: SharedMemory,
    /// Page-locked with the driver (else its copies treat it as pageable
    /// and return when it may be reused, which is as safe and slower).
    registered: bool,
    /// Per half: an event after its last copy, and whether that copy may
    /// still be running. No event: every copy is waited for.
    events: [Option<Raw>; 2],
    pending: [bool; 2],
}

impl Staging {
    pub fn open(driver: &Driver, bytes: u64) -> io::Result<Staging> {
        let memory = SharedMemory::create(c"cuda-course-staging", bytes)?;
        // SAFETY: the memory stays mapped until `close` unregisters it.
        let registered = unsafe { driver.register(memory.base(), memory.bytes()) }.is_ok();
        Ok(Staging {
            memory,
            registered,
            events: [driver.create_event(2).ok(), driver.create_event(2).ok()],
            pending: [false; 2],
        })
    }

    /// The descriptor and size the client maps.
    pub fn raw_fd(&self) -> RawFd {
        self.memory.raw_fd()
    }

    pub fn bytes(&self) -> u64 {
        self.memory.bytes() as u64
    }

    /// `bytes` at the start of half `half`, where they fit in it.
    pub fn chunk(&self, half: u8, bytes: u64) -> Option<*mut c_void> {
        let size = self.bytes() / 2;
        (half < 2 && bytes <= size).then(|| self.memory.at(u64::from(half) * size, bytes))?
    }

    /// Waits for the last copy of half `half`, if it may still run.
    pub fn wait(&mut self, driver: &Driver, half: u8) -> Result<(), CuResult> {
        let h = usize::from(half & 1);
        if let (true, Some(event)) = (self.pending[h], self.events[h]) {
            driver.synchronize_event(event)?;
        }
        self.pending[h] = false;
        Ok(())
    }

    /// A copy of half `half` was issued on `stream`: marks its end there
    /// (or waits for it, without an event).
    pub fn issued(&mut self, driver: &Driver, half: u8, stream: Raw) -> Result<(), CuResult> {
        let h = usize::from(half & 1);
        match self.events[h] {
            Some(event) if driver.record_event(event, stream).is_ok() => {
                self.pending[h] = true;
                Ok(())
            }
            _ => driver.synchronize_stream(stream),
        }
    }

    /// At the session's end (after the context synchronised).
    pub fn close(&mut self, driver: &Driver) {
        if self.registered {
            // SAFETY: registered in `open`, still mapped.
            let _ = unsafe { driver.unregister(self.memory.base()) };
            self.registered = false;
        }
        for event in self.events.iter_mut().filter_map(Option::take) {
            let _ = driver.destroy_event(event);
        }
    }
}
