//! The broker's end of the client's socket: replies written as frames,
//! a descriptor passed with one (`SCM_RIGHTS`) where it carries memory.
//! Writes never raise SIGPIPE: a client gone is an error returned.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

use kernels::broker_wire::{Reply, frame};

/// Writes `reply` as one frame, `fd` attached to its first byte.
pub fn send(socket: &UnixStream, reply: &Reply, fd: Option<RawFd>) -> io::Result<()> {
    let bytes = frame(&reply.encode());
    let mut sent = 0;
    let mut fd = fd;
    while sent < bytes.len() {
        match send_once(socket.as_raw_fd(), &bytes[sent..], fd) {
            Ok(n) => {
                sent += n;
                fd = None;
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

fn send_once(socket: RawFd, bytes: &[u8], fd: Option<RawFd>) -> io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr().cast_mut().cast(),
        iov_len: bytes.len(),
    };
    // Room for one descriptor's control message, aligned for cmsghdr.
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; zeroed is a valid empty header.
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    message.msg_iov = &mut iov;
    message.msg_iovlen = 1;
    if let Some(fd) = fd {
        // SAFETY: CMSG_SPACE and CMSG_LEN are arithmetic on a size.
        let (space, length) = unsafe {
            (
                libc::CMSG_SPACE(size_of::<RawFd>() as u32),
                libc::CMSG_LEN(size_of::<RawFd>() as u32),
            )
        };
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = space as usize;
        // SAFETY: the control buffer (64 bytes) has room for one header
        // and one descriptor; CMSG_FIRSTHDR points into it.
        unsafe {
            let header = libc::CMSG_FIRSTHDR(&message);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = length as usize;
            libc::CMSG_DATA(header).cast::<RawFd>().write_unaligned(fd);
        }
    }
    // SAFETY: the header points at live buffers of the lengths it gives.
    let sent = unsafe { libc::sendmsg(socket, &message, libc::MSG_NOSIGNAL) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sent as usize)
}
