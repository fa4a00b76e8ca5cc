//! Host memory shared with the client: a memfd, sealed so that neither
//! side can shrink or grow it, mapped here. The client maps the same
//! pages through the descriptor it is sent; what it writes there is its
//! own data, and the broker's mapping stays whole whatever it does.

use std::ffi::{CStr, c_void};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A sealed memfd and the broker's mapping of it.
pub struct SharedMemory {
    fd: OwnedFd,
    base: *mut c_void,
    bytes: usize,
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(1)
}

fn last_error<T>() -> io::Result<T> {
    Err(io::Error::last_os_error())
}

impl SharedMemory {
    /// `bytes` (rounded up to whole pages, at least one) of zeroed memory.
    pub fn create(name: &CStr, bytes: u64) -> io::Result<SharedMemory> {
        let page = page_size();
        let bytes = usize::try_from(bytes.max(1))
            .ok()
            .and_then(|b| b.checked_next_multiple_of(page))
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
        // SAFETY: a NUL-terminated name.
        let raw = unsafe { libc::memfd_create(name.as_ptr(), flags) };
        if raw < 0 {
            return last_error();
        }
        // SAFETY: a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: plain calls on our own descriptor.
        unsafe {
            if libc::ftruncate(raw, bytes as libc::off_t) != 0 {
                return last_error();
            }
            let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
            if libc::fcntl(raw, libc::F_ADD_SEALS, seals) != 0 {
                return last_error();
            }
        }
        let protection = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a fresh shared mapping of the whole descriptor.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                protection,
                libc::MAP_SHARED,
                raw,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return last_error();
        }
        Ok(SharedMemory { fd, base, bytes })
    }

    /// The descriptor to send to the client.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub fn base(&self) -> *mut c_void {
        self.base
    }

    /// Mapped bytes (whole pages).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The address `offset` bytes in, where `bytes` bytes from there lie
    /// inside the mapping.
    pub fn at(&self, offset: u64, bytes: u64) -> Option<*mut c_void> {
        let end = offset.checked_add(bytes)?;
        if end > self.bytes as u64 {
            return None;
        }
        // SAFETY: offset is inside the mapping (checked above).
        Some(unsafe { self.base.cast::<u8>().add(offset as usize) }.cast())
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `create`, unmapped once.
        unsafe { libc::munmap(self.base, self.bytes) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_is_whole_pages_and_cannot_be_shrunk() {
        let memory = SharedMemory::create(c"test", 10).unwrap();
        assert_eq!(memory.bytes(), page_size());
        assert!(memory.at(0, page_size() as u64).is_some());
        assert!(memory.at(1, page_size() as u64).is_none());
        assert!(memory.at(u64::MAX, 2).is_none());
        // What the client could try with its copy of the descriptor.
        // SAFETY: plain calls on a live descriptor.
        unsafe {
            assert_ne!(libc::ftruncate(memory.raw_fd(), 0), 0);
            assert_ne!(libc::ftruncate(memory.raw_fd(), 1 << 30), 0);
            assert_ne!(libc::fcntl(memory.raw_fd(), libc::F_ADD_SEALS, 0), 0);
        }
    }
}
