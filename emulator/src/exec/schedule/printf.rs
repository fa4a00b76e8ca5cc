//! `printf` from a kernel (`vprintf` in PTX): the format string read from
//! device memory, each argument from the buffer nvcc packs (each aligned to
//! its size; floats promoted to double, narrow integers to int), and each
//! conversion formatted by the C library's own `snprintf`, as the CUDA
//! driver formats on the host. The text is the block's, written out when
//! the host synchronises.

use std::ffi::{CString, c_char, c_int, c_uint, c_void};

use crate::exec::error::AccessError;
use crate::exec::memory::state::ThreadMemory;

/// Bytes read of one string (the format, or a `%s` argument), at most.
const MAX_STRING: usize = 4096;
/// Arguments one printf takes, at most (CUDA's limit).
const MAX_ARGUMENTS: u64 = 32;

/// One conversion of a format: its C spelling and how to read its
/// argument.
struct Conversion {
    spec: String,
    kind: u8,
    long: bool,
}

/// Formats `format` with the arguments at `args` (generic addresses),
/// appending the text to `out`. Returns the count of arguments, as CUDA's
/// printf does.
pub fn format(
    memory: &mut ThreadMemory<'_>,
    format: u64,
    args: u64,
    out: &mut Vec<u8>,
) -> Result<u64, AccessError> {
    let text = read_string(memory, format)?;
    let mut arguments = Arguments {
        at: args,
        offset: 0,
        count: 0,
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        if bytes.get(i) == Some(&b'%') {
            out.push(b'%');
            i += 1;
            continue;
        }
        // Flags, width, precision, length, conversion.
        while i < bytes.len() && b"-+ #0".contains(&bytes[i]) {
            i += 1;
        }
        let mut stars = Vec::new();
        let mut spec_tail = String::new();
        for part in 0..2 {
            if part == 1 {
                if bytes.get(i) != Some(&b'.') {
                    break;
                }
                i += 1;
            }
            if bytes.get(i) == Some(&b'*') {
                stars.push(arguments.next(memory, 4)? as u32 as c_int);
                i += 1;
            } else {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
        let mut long = false;
        while i < bytes.len() && b"hlLqjzt".contains(&bytes[i]) {
            long |= matches!(bytes[i], b'l' | b'L' | b'q' | b'j' | b'z' | b't');
            i += 1;
        }
        let Some(&kind) = bytes.get(i) else {
            out.extend_from_slice(&bytes[start..]);
            break;
        };
        i += 1;
        spec_tail.push_str(&text[start..i]);
        let conversion = Conversion {
            spec: spec_tail,
            kind,
            long,
        };
        if arguments.count >= MAX_ARGUMENTS {
            out.extend_from_slice(conversion.spec.as_bytes());
            continue;
        }
        let rendered = render(memory, &conversion, &stars, &mut arguments)?;
        out.extend_from_slice(&rendered);
    }
    Ok(arguments.count)
}

/// The argument buffer, read in order.
struct Arguments {
    at: u64,
    offset: u64,
    count: u64,
}

impl Arguments {
    /// The next argument of `size` bytes, aligned to its size.
    fn next(&mut self, memory: &mut ThreadMemory<'_>, size: u64) -> Result<u64, AccessError> {
        self.offset = self.offset.next_multiple_of(size);
        let value = memory.read_generic(self.at.wrapping_add(self.offset), size as u8)?;
        self.offset += size;
        self.count += 1;
        Ok(value)
    }
}

/// One conversion, its argument read and formatted by `snprintf`.
fn render(
    memory: &mut ThreadMemory<'_>,
    conversion: &Conversion,
    stars: &[c_int],
    arguments: &mut Arguments,
) -> Result<Vec<u8>, AccessError> {
    let mut next = |memory: &mut ThreadMemory<'_>, size| arguments.next(memory, size);
    // No long double here: `%Lf` reads a double, as CUDA's printf does.
    let spelled = if b"eEfFgGaA".contains(&conversion.kind) {
        conversion.spec.replace('L', "")
    } else {
        conversion.spec.clone()
    };
    let Ok(spec) = CString::new(spelled) else {
        return Ok(Vec::new());
    };
    let mut buffer = vec![0u8; 512];
    let written = |n: c_int| n.max(0) as usize;
    let call = |buffer: &mut Vec<u8>, f: &dyn Fn(*mut c_char, usize) -> c_int| {
        let n = written(f(buffer.as_mut_ptr().cast(), buffer.len()));
        if n >= buffer.len() {
            buffer.resize(n + 1, 0);
            f(buffer.as_mut_ptr().cast(), buffer.len());
        }
        buffer.truncate(n.min(buffer.len()));
    };
    let (w, p) = (stars.first().copied(), stars.get(1).copied());
    macro_rules! with_stars {
        ($buf:expr, $len:expr, $value:expr) => {
            // SAFETY: `$buf` holds `$len` bytes, `spec` is a NUL-terminated
            // format with one conversion (and the `*` values it names,
            // passed first), and the value has the C type it reads.
            unsafe {
                match (w, p) {
                    (Some(w), Some(p)) => libc::snprintf($buf, $len, spec.as_ptr(), w, p, $value),
                    (Some(w), None) => libc::snprintf($buf, $len, spec.as_ptr(), w, $value),
                    _ => libc::snprintf($buf, $len, spec.as_ptr(), $value),
                }
            }
        };
    }
    match conversion.kind {
        b'd' | b'i' => {
            if conversion.long {
                let v = next(memory, 8)? as i64;
                call(&mut buffer, &|b, l| with_stars!(b, l, v));
            } else {
                let v = next(memory, 4)? as u32 as c_int;
                call(&mut buffer, &|b, l| with_stars!(b, l, v));
            }
        }
        b'u' | b'o' | b'x' | b'X' => {
            if conversion.long {
                let v = next(memory, 8)?;
                call(&mut buffer, &|b, l| with_stars!(b, l, v));
            } else {
                let v = next(memory, 4)? as c_uint;
                call(&mut buffer, &|b, l| with_stars!(b, l, v));
            }
        }
        b'c' => {
            let v = next(memory, 4)? as u32 as c_int;
            call(&mut buffer, &|b, l| with_stars!(b, l, v));
        }
        b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' => {
            let v = f64::from_bits(next(memory, 8)?);
            call(&mut buffer, &|b, l| with_stars!(b, l, v));
        }
        b'p' => {
            let v = next(memory, 8)? as usize as *const c_void;
            call(&mut buffer, &|b, l| with_stars!(b, l, v));
        }
        b's' => {
            let address = next(memory, 8)?;
            let text = if address == 0 {
                CString::new("(null)").expect("no NUL")
            } else {
                CString::new(read_string(memory, address)?).unwrap_or_default()
            };
            let v = text.as_ptr();
            call(&mut buffer, &|b, l| with_stars!(b, l, v));
        }
        // `%n` writes nothing here; an unknown conversion is printed as is.
        b'n' => {
            next(memory, 8)?;
            buffer.clear();
        }
        _ => return Ok(conversion.spec.as_bytes().to_vec()),
    }
    Ok(buffer)
}

/// The NUL-terminated string at a generic address (at most
/// [`MAX_STRING`] bytes).
fn read_string(memory: &mut ThreadMemory<'_>, address: u64) -> Result<String, AccessError> {
    let mut bytes = Vec::new();
    while bytes.len() < MAX_STRING {
        let byte = memory.read_generic(address + bytes.len() as u64, 1)? as u8;
        if byte == 0 {
            break;
        }
        bytes.push(byte);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
