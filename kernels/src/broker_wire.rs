//! The broker's wire protocol, one definition for both ends of the socket:
//! the client `libcuda.so.1` (`broker-client/`, loaded by a student's
//! binary in place of the driver) asks, the broker (`broker/`, a process
//! the grader owns, outside the student's sandbox) answers. Standard
//! library only.
//!
//! # Shape
//!
//! The grader makes a `SOCK_STREAM` socket pair, keeps one end for the
//! broker and passes the other into the sandbox, naming its descriptor in
//! [`FD_VARIABLE`]. Every message is a frame: a little-endian `u32` length,
//! then that many bytes (at most [`MAX_FRAME_BYTES`]). The client sends a
//! [`Request`]; the broker answers each with one [`Reply`], in order, so
//! the client holds one lock over ask-and-answer and threads work. The
//! first request is [`Request::Hello`]. Bulk data never crosses the socket:
//! page-locked host memory is a memfd mapped on both sides (its descriptor
//! comes with [`Reply::Region`] as `SCM_RIGHTS`), and pageable copies go
//! through a staging memfd (with [`Reply::Hello`]) of [`STAGING_BYTES`], a
//! chunk of at most half of it at a time, in its two halves by turns: when
//! the broker answers a chunk in one half, the other is free (no copy of
//! its is still reading or writing it), so the client fills one half while
//! the broker's copy from the other runs, as the driver's own staging of
//! pageable memory does. Integers are little-endian; byte strings are a
//! `u32` length and the bytes; an optional value is a `u8` 0 or 1 and the
//! value.
//!
//! Handles the client holds (context, module, function, stream, event,
//! page-locked region) are the broker's tokens, never the driver's
//! pointers; streams 0, 1 and 2 are the driver's null, legacy and
//! per-thread streams. Device addresses are the driver's, checked by the
//! broker against its own allocations before any copy or memset.
//!
//! # Threat model
//!
//! The student's process is hostile and holds the client's end of the
//! socket, the staging memfd and its page-locked memfds. It can:
//!
//! - compute anything on the CPU and lie in its report: its report is its
//!   word, and the grader's evidence is the broker's record, which the
//!   process never touches (the broker writes it to a file of the
//!   grader's), and the canary's mark, which the broker's substitution
//!   keeps out of the process (it never holds the canary's PTX, only
//!   handles to it);
//! - call the broker in any order, with any handle or address: handles
//!   are looked up in the broker's tables and device ranges checked
//!   against its allocations, so a wrong one is refused with a CUDA error
//!   and reaches no driver call; it never names a pointer of the broker's;
//! - send garbage: a frame longer than [`MAX_FRAME_BYTES`], or one that
//!   ends early, ends the session; a frame that does not decode, or names
//!   an unknown tag, is answered with an error, and too many of those end
//!   the session; decoding never panics and never allocates more than the
//!   frame's bytes, which are bounded;
//! - flood it: the broker serves one client, one request at a time, with
//!   bounded tables ([`MAX_HANDLES`], [`MAX_ALLOCATIONS`]) and a bounded
//!   record, so a flood costs its own run's time limit and nothing of a
//!   neighbour's (each run has its own broker, GPU memory capped);
//! - write into its memfds at any time, or try to shrink them: the broker
//!   seals them against shrinking and growing, so its own mappings stay
//!   whole, and what a copy reads from them is the process's own data;
//! - `dlopen` another `libcuda.so.1` or make raw ioctls: the sandbox has no
//!   `/dev/nvidia*`, so the only way to a GPU is this socket.

use std::ffi::CStr;
use std::fmt;
use std::io::{self, Read};

mod decode;
mod reply;
mod request;

pub use reply::{ParamLayout, Reply};
pub use request::{CopyEnds, HostPlace, Request};

/// The environment variable naming the client's socket descriptor.
pub const FD_VARIABLE: &str = "CUDA_COURSE_BROKER_FD";
/// [`FD_VARIABLE`], NUL-terminated, for `getenv`.
pub const FD_VARIABLE_C: &CStr = c"CUDA_COURSE_BROKER_FD";

/// The protocol's version, in [`Request::Hello`]: the broker refuses
/// another.
pub const VERSION: u32 = 1;

/// The most PTX one module load may carry.
pub const MAX_IMAGE_BYTES: usize = 16 << 20;
/// The most PTX loaded and not unloaded at once: what the broker keeps of
/// a module is bounded by its text.
pub const MAX_LOADED_BYTES: usize = 256 << 20;
/// The longest kernel or global name.
pub const MAX_NAME_BYTES: usize = 1024;
/// The longest text in a reply (a device name, an error's description, a
/// refusal's reason).
pub const MAX_TEXT_BYTES: usize = 1024;
/// The longest batch nonce.
pub const MAX_NONCE_BYTES: usize = 64;
/// The most parameter bytes of one launch (CUDA 12.1's limit is 32764).
pub const MAX_PARAM_BYTES: usize = 32 << 10;
/// The most parameters of one kernel.
pub const MAX_PARAMS: usize = 4096;
/// The largest frame: a module load's PTX and its few other fields.
pub const MAX_FRAME_BYTES: usize = MAX_IMAGE_BYTES + 4096;
/// The staging area of pageable copies, and so their largest chunk.
pub const STAGING_BYTES: usize = 16 << 20;
/// The most live handles of one kind (modules, functions, streams, events,
/// page-locked regions) one client may hold.
pub const MAX_HANDLES: usize = 4096;
/// The most live device allocations (and module globals) of one client.
pub const MAX_ALLOCATIONS: usize = 1 << 16;
/// Requests that did not decode before the broker ends the session.
pub const MAX_MALFORMED: u32 = 16;

/// The CUresult codes the broker and the client answer with themselves,
/// by cuda.h's names (the driver's own pass through as numbers).
pub mod code {
    /// `CUresult`.
    pub type CuResult = u32;

    pub const SUCCESS: CuResult = 0;
    pub const INVALID_VALUE: CuResult = 1;
    pub const OUT_OF_MEMORY: CuResult = 2;
    pub const NOT_INITIALIZED: CuResult = 3;
    pub const NO_DEVICE: CuResult = 100;
    pub const INVALID_DEVICE: CuResult = 101;
    pub const INVALID_IMAGE: CuResult = 200;
    pub const INVALID_CONTEXT: CuResult = 201;
    pub const INVALID_PTX: CuResult = 218;
    pub const INVALID_HANDLE: CuResult = 400;
    pub const NOT_FOUND: CuResult = 500;
    pub const NOT_READY: CuResult = 600;
    pub const NOT_SUPPORTED: CuResult = 801;
}

/// Why bytes are not a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The message ends before `what`.
    Truncated {
        what: &'static str,
    },
    /// `what` is `length` bytes; at most `max` are allowed.
    TooLong {
        what: &'static str,
        length: usize,
        max: usize,
    },
    UnknownTag {
        tag: u8,
    },
    /// `what` holds a value the protocol does not allow.
    BadValue {
        what: &'static str,
        value: u64,
    },
    NotText {
        what: &'static str,
    },
    /// Bytes are left after the message.
    Trailing {
        bytes: usize,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { what } => write!(f, "the message ends before its {what}"),
            WireError::TooLong { what, length, max } => {
                write!(f, "the {what} is {length} bytes; at most {max} are allowed")
            }
            WireError::UnknownTag { tag } => write!(f, "tag {tag} names no message"),
            WireError::BadValue { what, value } => write!(f, "{what} {value} is not allowed"),
            WireError::NotText { what } => write!(f, "the {what} is not UTF-8 text"),
            WireError::Trailing { bytes } => write!(f, "{bytes} bytes follow the message"),
        }
    }
}

impl std::error::Error for WireError {}

/// `body` as a frame: its length, then its bytes.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// The length a frame's header announces, refused past [`MAX_FRAME_BYTES`].
pub fn frame_length(header: [u8; 4]) -> Result<usize, WireError> {
    let length = u32::from_le_bytes(header) as usize;
    if length > MAX_FRAME_BYTES {
        return Err(WireError::TooLong {
            what: "frame",
            length,
            max: MAX_FRAME_BYTES,
        });
    }
    Ok(length)
}

/// The next frame's body from `from`; None at a clean end between frames.
/// A frame too long or cut short is an error of kind `InvalidData` or
/// `UnexpectedEof`, and the stream is lost after it.
pub fn read_frame(from: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut header = [0; 4];
    let mut got = 0;
    while got < 4 {
        match from.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    let length =
        frame_length(header).map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))?;
    let mut body = vec![0; length];
    from.read_exact(&mut body)?;
    Ok(Some(body))
}

/// A message being written.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
        self
    }
    fn option(&mut self, v: Option<u64>) -> &mut Self {
        match v {
            None => self.u8(0),
            Some(v) => self.u8(1).u64(v),
        }
    }
}

/// A message being read: every read checks that the bytes are there.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        if self.0.len() < n {
            return Err(WireError::Truncated { what });
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], WireError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.array::<1>(what)?[0])
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        self.array(what).map(u32::from_le_bytes)
    }
    fn i32(&mut self, what: &'static str) -> Result<i32, WireError> {
        self.array(what).map(i32::from_le_bytes)
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, WireError> {
        self.array(what).map(u64::from_le_bytes)
    }
    fn flag(&mut self, what: &'static str) -> Result<bool, WireError> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(WireError::BadValue {
                what,
                value: other.into(),
            }),
        }
    }
    fn option(&mut self, what: &'static str) -> Result<Option<u64>, WireError> {
        Ok(if self.flag(what)? {
            Some(self.u64(what)?)
        } else {
            None
        })
    }
    /// A byte string of at most `max` bytes.
    fn bytes(&mut self, max: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        let length = self.u32(what)? as usize;
        if length > max {
            return Err(WireError::TooLong { what, length, max });
        }
        self.take(length, what)
    }
    fn text(&mut self, max: usize, what: &'static str) -> Result<String, WireError> {
        let bytes = self.bytes(max, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| WireError::NotText { what })
    }
    fn finish(self) -> Result<(), WireError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(WireError::Trailing {
                bytes: self.0.len(),
            })
        }
    }
}

/// Random bytes for the decoders' fuzz tests, from a fixed seed.
#[cfg(test)]
fn noise(seed: u64, length: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..length)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_s_two_spellings_agree() {
        assert_eq!(FD_VARIABLE_C.to_str(), Ok(FD_VARIABLE));
    }

    #[test]
    fn frames_come_back_whole_and_a_clean_end_is_none() {
        let mut stream = frame(b"abc");
        stream.extend(frame(b""));
        let mut from = &stream[..];
        assert_eq!(read_frame(&mut from).unwrap(), Some(b"abc".to_vec()));
        assert_eq!(read_frame(&mut from).unwrap(), Some(vec![]));
        assert_eq!(read_frame(&mut from).unwrap(), None);
    }

    #[test]
    fn a_frame_too_long_or_cut_short_is_an_error() {
        let huge = ((MAX_FRAME_BYTES + 1) as u32).to_le_bytes();
        let err = read_frame(&mut &huge[..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("at most"), "{err}");
        let cut = &frame(b"abcdef")[..7];
        let err = read_frame(&mut &cut[..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        let err = read_frame(&mut &[1u8, 0][..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn a_byte_string_longer_than_its_limit_is_refused_before_it_is_read() {
        let mut writer = Writer::default();
        writer.u32(u32::MAX);
        let mut reader = Reader(&writer.0);
        assert_eq!(
            reader.bytes(10, "name"),
            Err(WireError::TooLong {
                what: "name",
                length: u32::MAX as usize,
                max: 10
            })
        );
    }
}
