//! A corpus case as its source declares it, in `//@` lines just above the
//! kernel: its launch, each parameter (buffers with their inputs, values) in
//! order, and how each output is compared.
//!
//! ```text
//! //@ case shfl_down_i32            a name; several cases may share a kernel
//! //@ launch 2 64 dyn 256           grid, block (N or X,Y,Z), dynamic shared
//! //@ maxdyn optin                  cuFuncSetAttribute(MAX_DYNAMIC_SHARED) first
//! //@ in u32 128 iota 3 1           a buffer filled by a generator
//! //@ out f32 128 tol ulp 2         a zeroed buffer read back and compared
//! //@ inout i32 4 const 7           both
//! //@ val i32 -5                    a value parameter
//! //@ raw 0100000002000000          a value parameter given as bytes (a struct)
//! //@ global table u32 16 iota      a module variable set before the launch
//! //@ readglobal counter i32 1      a module variable read back after it
//! ```
//!
//! Sizes of shared memory are bytes, `optin` (the device's opt-in maximum
//! less the kernel's static shared memory) or `48k` (49152 less it), each
//! with an optional `+N` or `-N`, so a case means the same on any device.
//! Generators: `const V`, `iota [STEP [START]]`, `mod M [STEP [START]]`,
//! `rand LO HI`, `bits HEX...` (raw patterns, cycled) and `specials` (a
//! type's edge values). Tolerances: `exact` (the default: the same bits),
//! `ulp N`, `abs X`.

use std::fmt;

/// An element type of a buffer or value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    U8,
    I8,
    U16,
    I16,
    F16,
    Bf16,
    U32,
    I32,
    F32,
    U64,
    I64,
    F64,
}

impl Type {
    fn parse(text: &str) -> Result<Type, String> {
        Ok(match text {
            "u8" => Type::U8,
            "i8" => Type::I8,
            "u16" => Type::U16,
            "i16" => Type::I16,
            "f16" => Type::F16,
            "bf16" => Type::Bf16,
            "u32" => Type::U32,
            "i32" => Type::I32,
            "f32" => Type::F32,
            "u64" => Type::U64,
            "i64" => Type::I64,
            "f64" => Type::F64,
            other => return Err(format!("unknown type {other}")),
        })
    }

    pub fn size(self) -> usize {
        match self {
            Type::U8 | Type::I8 => 1,
            Type::U16 | Type::I16 | Type::F16 | Type::Bf16 => 2,
            Type::U32 | Type::I32 | Type::F32 => 4,
            Type::U64 | Type::I64 | Type::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::Bf16 | Type::F32 | Type::F64)
    }

    pub fn name(self) -> &'static str {
        match self {
            Type::U8 => "u8",
            Type::I8 => "i8",
            Type::U16 => "u16",
            Type::I16 => "i16",
            Type::F16 => "f16",
            Type::Bf16 => "bf16",
            Type::U32 => "u32",
            Type::I32 => "i32",
            Type::F32 => "f32",
            Type::U64 => "u64",
            Type::I64 => "i64",
            Type::F64 => "f64",
        }
    }

    /// The bits of `value` as this type, in the low bytes.
    fn encode(self, value: f64) -> u64 {
        match self {
            Type::F32 => u64::from((value as f32).to_bits()),
            Type::F64 => value.to_bits(),
            Type::F16 | Type::Bf16 => panic!("give f16 and bf16 inputs as bits"),
            _ => (value as i128) as u64 & mask(self.size()),
        }
    }

    /// Edge values of a float type, as bits.
    fn specials(self) -> Vec<u64> {
        match self {
            Type::F32 => specials!(f32, 1e-40, -1e-42, 88.5, -87.0, 16777217.0)
                .iter()
                .map(|v| u64::from(v.to_bits()))
                .collect(),
            Type::F64 => specials!(f64, 1e-310, -4e-320, 700.5, -708.0, 9007199254740993.0)
                .iter()
                .map(|v| v.to_bits())
                .collect(),
            other => panic!("no specials for {}", other.name()),
        }
    }
}

/// The edge values of float type `$t`: its own subnormals, values near
/// where `exp` overflows and underflows, and the first integer it cannot
/// hold, with values common to both.
macro_rules! specials {
    ($t:ident, $subnormal:expr, $smaller:expr, $near_overflow:expr, $near_underflow:expr, $inexact:expr) => {
        [
            0.0 as $t,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            3.0,
            0.1,
            1e-3,
            7.25,
            100.0,
            1e6,
            -1e6,
            1e20,
            12345.678,
            $t::MAX,
            $t::MIN_POSITIVE,
            $subnormal,
            $smaller,
            $t::INFINITY,
            $t::NEG_INFINITY,
            $t::NAN,
            std::$t::consts::PI,
            -std::$t::consts::FRAC_PI_2,
            0.7,
            $near_overflow,
            $near_underflow,
            $inexact,
            2147483648.0,
            -3.75,
        ]
    };
}
use specials;

pub fn mask(bytes: usize) -> u64 {
    if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    }
}

/// How an input buffer is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum Generator {
    Const(Number),
    Iota { step: f64, start: f64 },
    Mod { modulus: u64, step: f64, start: f64 },
    Rand { low: f64, high: f64 },
    Bits(Vec<u64>),
    Specials,
}

/// A number as written: raw bits (`0x...` for a float type) or a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Value(f64),
    Bits(u64),
}

fn number(text: &str) -> Result<Number, String> {
    if let Some(hex) = text.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16)
            .map(Number::Bits)
            .map_err(|_| format!("bad hex {text}"));
    }
    text.parse::<f64>()
        .map(Number::Value)
        .map_err(|_| format!("bad number {text}"))
}

fn float(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .map_err(|_| format!("bad number {text}"))
}

/// splitmix64: a fixed, portable stream of pseudo-random numbers.
fn mix(index: u64) -> u64 {
    let mut z = index.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Generator {
    fn parse(words: &[&str]) -> Result<Generator, String> {
        let arg = |i: usize| words.get(i).copied();
        let opt = |i: usize, default: f64| arg(i).map_or(Ok(default), float);
        Ok(match words.first().copied() {
            None => Generator::Const(Number::Value(0.0)),
            Some("const") => Generator::Const(number(arg(1).ok_or("const needs a value")?)?),
            Some("iota") => Generator::Iota {
                step: opt(1, 1.0)?,
                start: opt(2, 0.0)?,
            },
            Some("mod") => Generator::Mod {
                modulus: arg(1)
                    .ok_or("mod needs a modulus")?
                    .parse()
                    .map_err(|_| "bad modulus")?,
                step: opt(2, 1.0)?,
                start: opt(3, 0.0)?,
            },
            Some("rand") => Generator::Rand {
                low: float(arg(1).ok_or("rand needs LO HI")?)?,
                high: float(arg(2).ok_or("rand needs LO HI")?)?,
            },
            Some("bits") => Generator::Bits(
                words[1..]
                    .iter()
                    .map(|w| {
                        u64::from_str_radix(w.trim_start_matches("0x"), 16)
                            .map_err(|_| format!("bad bits {w}"))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some("specials") => Generator::Specials,
            Some(other) => return Err(format!("unknown generator {other}")),
        })
    }

    /// `count` elements of `ty`, as little-endian bytes.
    pub fn fill(&self, ty: Type, count: usize) -> Vec<u8> {
        let specials = match self {
            Generator::Specials => ty.specials(),
            _ => Vec::new(),
        };
        let mut bytes = Vec::with_capacity(count * ty.size());
        for i in 0..count {
            let bits = match self {
                Generator::Const(Number::Bits(b)) => *b,
                Generator::Const(Number::Value(v)) => ty.encode(*v),
                Generator::Iota { step, start } => ty.encode(start + step * i as f64),
                Generator::Mod {
                    modulus,
                    step,
                    start,
                } => ty.encode(start + step * (i as u64 % modulus) as f64),
                Generator::Rand { low, high } => {
                    let h = mix(i as u64);
                    if ty.is_float() {
                        let unit = (h >> 11) as f64 / (1u64 << 53) as f64;
                        ty.encode(low + (high - low) * unit)
                    } else {
                        let (low, high) = (*low as i128, *high as i128);
                        let span = (high - low).max(1) as u128;
                        let v = low + (u128::from(h) % span) as i128;
                        v as u64 & mask(ty.size())
                    }
                }
                Generator::Bits(list) => list[i % list.len()],
                Generator::Specials => specials[i % specials.len()],
            };
            bytes.extend_from_slice(&bits.to_le_bytes()[..ty.size()]);
        }
        bytes
    }
}

/// How an output is compared with the GPU's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    Exact,
    Ulp(u64),
    Abs(f64),
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerance::Exact => f.write_str("exact"),
            Tolerance::Ulp(n) => write!(f, "{n} ulp"),
            Tolerance::Abs(x) => write!(f, "abs {x}"),
        }
    }
}

/// A shared-memory size as the case writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Bytes(i64),
    /// The device's opt-in maximum less the static size, plus this.
    OptIn(i64),
    /// 49152 less the static size, plus this.
    Default(i64),
}

impl Size {
    fn parse(text: &str) -> Result<Size, String> {
        let (base, rest) = if let Some(rest) = text.strip_prefix("optin") {
            ("optin", rest)
        } else if let Some(rest) = text.strip_prefix("48k") {
            ("48k", rest)
        } else {
            return text
                .parse()
                .map(Size::Bytes)
                .map_err(|_| format!("bad size {text}"));
        };
        let delta = if rest.is_empty() {
            0
        } else {
            rest.trim_start_matches('+')
                .parse::<i64>()
                .map_err(|_| format!("bad size {text}"))?
        };
        Ok(if base == "optin" {
            Size::OptIn(delta)
        } else {
            Size::Default(delta)
        })
    }

    /// Bytes, for a device with `optin` bytes and a kernel with `fixed`.
    pub fn resolve(self, optin: i64, fixed: i64) -> u32 {
        let bytes = match self {
            Size::Bytes(n) => n,
            Size::OptIn(d) => optin - fixed + d,
            Size::Default(d) => 49152 - fixed + d,
        };
        bytes.max(0) as u32
    }
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// A device buffer: filled from `init`, read back when `compare` is set.
    Buffer {
        ty: Type,
        count: usize,
        init: Generator,
        compare: Option<Tolerance>,
    },
    /// A value of `bytes.len()` bytes.
    Value(Vec<u8>),
}

/// A module variable set before the launch or read after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub ty: Type,
    pub count: usize,
    pub init: Option<Generator>,
    pub compare: Option<Tolerance>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub name: String,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic: Size,
    pub max_dynamic: Option<Size>,
    pub params: Vec<Param>,
    pub globals: Vec<Global>,
    /// The source line of `//@ case`, for messages.
    pub line: usize,
}

impl Case {
    /// The tolerance of each compared output, in record order.
    pub fn tolerances(&self) -> Vec<Tolerance> {
        let buffers = self.params.iter().filter_map(|p| match p {
            Param::Buffer { compare, .. } => *compare,
            Param::Value(_) => None,
        });
        let globals = self.globals.iter().filter_map(|g| g.compare);
        buffers.chain(globals).collect()
    }
}

fn dims(text: &str) -> Result<[u32; 3], String> {
    let mut out = [1u32; 3];
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() > 3 {
        return Err(format!("bad dimensions {text}"));
    }
    for (slot, part) in out.iter_mut().zip(parts) {
        *slot = part.parse().map_err(|_| format!("bad dimensions {text}"))?;
    }
    Ok(out)
}

/// Splits `words` at `tol`: (the words before, the tolerance).
fn split_tolerance<'a>(words: &[&'a str]) -> Result<(Vec<&'a str>, Tolerance), String> {
    let Some(at) = words.iter().position(|w| *w == "tol") else {
        return Ok((words.to_vec(), Tolerance::Exact));
    };
    let tol = match &words[at + 1..] {
        ["exact"] => Tolerance::Exact,
        ["ulp", n] => Tolerance::Ulp(n.parse().map_err(|_| "bad ulp count")?),
        ["abs", x] => Tolerance::Abs(float(x)?),
        other => return Err(format!("bad tolerance {other:?}")),
    };
    Ok((words[..at].to_vec(), tol))
}

fn value(ty: Type, text: &str) -> Result<Vec<u8>, String> {
    let bits = match number(text)? {
        Number::Bits(b) => b,
        Number::Value(v) => ty.encode(v),
    };
    Ok(bits.to_le_bytes()[..ty.size()].to_vec())
}

/// The kernel a case block belongs to: the next `__global__` function (CUDA
/// C) or `.entry` (PTX) after `from`.
fn next_kernel(lines: &[&str], from: usize) -> Option<String> {
    for line in &lines[from..] {
        let at = line
            .find("__global__")
            .or_else(|| line.find(".entry"))
            .filter(|_| !line.trim_start().starts_with("//"));
        if let Some(at) = at {
            // `__launch_bounds__(64)` comes before the name.
            let mut rest = &line[at..];
            if let Some(bounds) = rest.find("__launch_bounds__") {
                let close = rest[bounds..].find(')')? + bounds;
                rest = &rest[close + 1..];
            }
            let open = rest.find('(').unwrap_or(rest.len());
            let name = rest[..open].split_whitespace().last()?;
            return Some(name.to_string());
        }
    }
    None
}

/// Every case in `source`.
pub fn parse(source: &str) -> Result<Vec<Case>, String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut cases: Vec<Case> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(spec) = line.trim_start().strip_prefix("//@") else {
            continue;
        };
        let at = |message: String| format!("line {}: {message}", index + 1);
        let words: Vec<&str> = spec.split_whitespace().collect();
        let Some((&keyword, rest)) = words.split_first() else {
            continue;
        };
        if keyword == "case" {
            let name = rest.first().ok_or_else(|| at("case needs a name".into()))?;
            let kernel = match rest {
                [_, "kernel", kernel] => kernel.to_string(),
                [_] => next_kernel(&lines, index)
                    .ok_or_else(|| at("no kernel follows the case".into()))?,
                _ => return Err(at(format!("bad case line {rest:?}"))),
            };
            cases.push(Case {
                name: name.to_string(),
                kernel,
                grid: [1; 3],
                block: [1; 3],
                dynamic: Size::Bytes(0),
                max_dynamic: None,
                params: Vec::new(),
                globals: Vec::new(),
                line: index + 1,
            });
            continue;
        }
        let case = cases
            .last_mut()
            .ok_or_else(|| at(format!("`{keyword}` before any case")))?;
        let result: Result<(), String> = (|| {
            match keyword {
                "launch" => {
                    let [grid, block, extra @ ..] = rest else {
                        return Err("launch needs a grid and a block".into());
                    };
                    case.grid = dims(grid)?;
                    case.block = dims(block)?;
                    match extra {
                        [] => {}
                        ["dyn", size] => case.dynamic = Size::parse(size)?,
                        other => return Err(format!("bad launch options {other:?}")),
                    }
                }
                "maxdyn" => {
                    case.max_dynamic =
                        Some(Size::parse(rest.first().ok_or("maxdyn needs a size")?)?)
                }
                "in" | "out" | "inout" => {
                    let (words, tol) = split_tolerance(rest)?;
                    let [ty, count, generator @ ..] = &words[..] else {
                        return Err(format!("{keyword} needs a type and a count"));
                    };
                    let ty = Type::parse(ty)?;
                    let count: usize = count.parse().map_err(|_| "bad count")?;
                    let init = Generator::parse(generator)?;
                    if matches!(ty, Type::F16 | Type::Bf16)
                        && !matches!(init, Generator::Bits(_) | Generator::Const(Number::Bits(_)))
                        && !generator.is_empty()
                    {
                        return Err("f16 and bf16 inputs are given as bits".into());
                    }
                    case.params.push(Param::Buffer {
                        ty,
                        count,
                        init,
                        compare: (keyword != "in").then_some(tol),
                    });
                }
                "val" => {
                    let [ty, text] = rest else {
                        return Err("val needs a type and a value".into());
                    };
                    case.params
                        .push(Param::Value(value(Type::parse(ty)?, text)?));
                }
                "raw" => {
                    let [hex] = rest else {
                        return Err("raw needs hex bytes".into());
                    };
                    let bytes = (0..hex.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                        .collect::<Result<Vec<u8>, _>>()
                        .map_err(|_| "bad hex bytes")?;
                    case.params.push(Param::Value(bytes));
                }
                "global" | "readglobal" => {
                    let (words, tol) = split_tolerance(rest)?;
                    let [name, ty, count, generator @ ..] = &words[..] else {
                        return Err(format!("{keyword} needs a name, a type and a count"));
                    };
                    let reading = keyword == "readglobal";
                    case.globals.push(Global {
                        name: name.to_string(),
                        ty: Type::parse(ty)?,
                        count: count.parse().map_err(|_| "bad count")?,
                        init: (!reading)
                            .then(|| Generator::parse(generator))
                            .transpose()?,
                        compare: reading.then_some(tol),
                    });
                }
                other => return Err(format!("unknown keyword {other}")),
            }
            Ok(())
        })();
        result.map_err(at)?;
    }
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if let Some(pair) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("case {} is declared twice", pair[0]));
    }
    Ok(cases)
}
