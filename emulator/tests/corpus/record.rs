//! What one run of a case did, as text: each driver call's result, each
//! output's bits in hex, and the lines `printf` wrote. The GPU's records are
//! the expectation; the emulator's are compared with them.
//!
//! ```text
//! == shfl_down_i32
//! load CUDA_SUCCESS
//! launch CUDA_SUCCESS
//! sync CUDA_SUCCESS
//! out 1 u32 0000000a 0000001f ...
//! printf 1
//! |hello from block 0
//! ```

use std::collections::BTreeMap;

use crate::spec::{Tolerance, Type};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    pub name: String,
    /// (driver step, result name): load, function, setattr, launch, sync.
    pub steps: Vec<(String, String)>,
    pub outputs: Vec<Output>,
    pub printf: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The parameter's index, or a module variable's name.
    pub label: String,
    pub ty: Type,
    pub bits: Vec<u64>,
}

impl Record {
    pub fn render(&self) -> String {
        let mut out = format!("== {}\n", self.name);
        for (step, result) in &self.steps {
            out += &format!("{step} {result}\n");
        }
        for output in &self.outputs {
            out += &format!("out {} {}", output.label, output.ty.name());
            let width = output.ty.size() * 2;
            for bits in &output.bits {
                out += &format!(" {bits:0width$x}");
            }
            out.push('\n');
        }
        if !self.printf.is_empty() {
            out += &format!("printf {}\n", self.printf.len());
            for line in &self.printf {
                out += &format!("|{line}\n");
            }
        }
        out
    }

    /// A short summary for tables: "ok", or the first step that failed.
    pub fn summary(&self) -> String {
        match self.steps.iter().find(|(_, r)| r != "CUDA_SUCCESS") {
            Some((step, result)) => format!("{step}: {result}"),
            None => {
                let values: usize = self.outputs.iter().map(|o| o.bits.len()).sum();
                let mut text = format!("ok, {values} values");
                if !self.printf.is_empty() {
                    text += &format!(", {} printf lines", self.printf.len());
                }
                text
            }
        }
    }
}

/// Every record in a file written by `render`, by case name.
pub fn parse_all(text: &str) -> Result<BTreeMap<String, Record>, String> {
    let mut records = BTreeMap::new();
    let mut current: Option<Record> = None;
    for (index, line) in text.lines().enumerate() {
        let at = |m: &str| format!("line {}: {m}", index + 1);
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("== ") {
            if let Some(done) = current.take() {
                records.insert(done.name.clone(), done);
            }
            current = Some(Record {
                name: name.to_string(),
                ..Record::default()
            });
            continue;
        }
        let record = current
            .as_mut()
            .ok_or_else(|| at("a line before any case"))?;
        if let Some(text) = line.strip_prefix('|') {
            record.printf.push(text.to_string());
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match &words[..] {
            ["out", label, ty, values @ ..] => {
                let ty = parse_type(ty).ok_or_else(|| at("unknown type"))?;
                let bits = values
                    .iter()
                    .map(|v| u64::from_str_radix(v, 16))
                    .collect::<Result<_, _>>()
                    .map_err(|_| at("bad hex"))?;
                record.outputs.push(Output {
                    label: label.to_string(),
                    ty,
                    bits,
                });
            }
            ["printf", _] => {}
            [step, result] => record.steps.push((step.to_string(), result.to_string())),
            _ => return Err(at("unreadable line")),
        }
    }
    if let Some(done) = current.take() {
        records.insert(done.name.clone(), done);
    }
    Ok(records)
}

fn parse_type(name: &str) -> Option<Type> {
    [
        Type::U8,
        Type::I8,
        Type::U16,
        Type::I16,
        Type::F16,
        Type::Bf16,
        Type::U32,
        Type::I32,
        Type::F32,
        Type::U64,
        Type::I64,
        Type::F64,
    ]
    .into_iter()
    .find(|t| t.name() == name)
}

/// A float's bits as a number that grows with the value (so adjacent floats
/// differ by one), and whether it is a NaN.
fn ordered(ty: Type, bits: u64) -> (i64, bool) {
    let (sign, magnitude, nan) = match ty {
        Type::F16 => (
            bits & 0x8000 != 0,
            bits & 0x7fff,
            bits & 0x7c00 == 0x7c00 && bits & 0x3ff != 0,
        ),
        Type::Bf16 => (
            bits & 0x8000 != 0,
            bits & 0x7fff,
            bits & 0x7f80 == 0x7f80 && bits & 0x7f != 0,
        ),
        Type::F32 => (
            bits & 0x8000_0000 != 0,
            bits & 0x7fff_ffff,
            f32::from_bits(bits as u32).is_nan(),
        ),
        _ => (
            bits >> 63 != 0,
            bits & (u64::MAX >> 1),
            f64::from_bits(bits).is_nan(),
        ),
    };
    let m = magnitude as i64;
    (if sign { -m } else { m }, nan)
}

fn as_f64(ty: Type, bits: u64) -> f64 {
    match ty {
        Type::F32 => f64::from(f32::from_bits(bits as u32)),
        Type::F64 => f64::from_bits(bits),
        Type::F16 => {
            let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
            let exponent = ((bits >> 10) & 0x1f) as i32;
            let fraction = (bits & 0x3ff) as f64;
            sign * match exponent {
                0 => fraction * 2f64.powi(-24),
                31 if fraction == 0.0 => f64::INFINITY,
                31 => f64::NAN,
                e => (1.0 + fraction / 1024.0) * 2f64.powi(e - 15),
            }
        }
        Type::Bf16 => f64::from(f32::from_bits((bits as u32) << 16)),
        _ => bits as f64,
    }
}

/// Whether `got` is within `tolerance` of `want` for `ty`.
pub fn close(ty: Type, want: u64, got: u64, tolerance: Tolerance) -> bool {
    if want == got {
        return true;
    }
    if !ty.is_float() {
        return false;
    }
    let (w, w_nan) = ordered(ty, want);
    let (g, g_nan) = ordered(ty, got);
    match tolerance {
        Tolerance::Exact => false,
        _ if w_nan || g_nan => w_nan && g_nan,
        Tolerance::Ulp(n) => w.abs_diff(g) <= n,
        Tolerance::Abs(x) => {
            let (a, b) = (as_f64(ty, want), as_f64(ty, got));
            a == b || (a - b).abs() <= x
        }
    }
}

/// What differs between the GPU's record and the emulator's, one line each;
/// empty when they agree within `tolerances` (one per output).
pub fn differences(want: &Record, got: &Record, tolerances: &[Tolerance]) -> Vec<String> {
    let mut out = Vec::new();
    if want.steps != got.steps {
        out.push(format!(
            "driver results differ: GPU {:?}, emulator {:?}",
            want.steps, got.steps
        ));
    }
    if want.outputs.len() != got.outputs.len() {
        out.push(format!(
            "{} outputs on the GPU, {} on the emulator",
            want.outputs.len(),
            got.outputs.len()
        ));
    }
    for (index, (w, g)) in want.outputs.iter().zip(&got.outputs).enumerate() {
        let tolerance = tolerances.get(index).copied().unwrap_or(Tolerance::Exact);
        if w.bits.len() != g.bits.len() || w.ty != g.ty {
            out.push(format!("output {} has another shape", w.label));
            continue;
        }
        let wrong: Vec<usize> = (0..w.bits.len())
            .filter(|&i| !close(w.ty, w.bits[i], g.bits[i], tolerance))
            .collect();
        if let Some(&first) = wrong.first() {
            let width = w.ty.size() * 2;
            out.push(format!(
                "output {} ({}, {tolerance}): {} of {} differ; first at [{first}]: GPU {:0width$x} ({}), emulator {:0width$x} ({})",
                w.label,
                w.ty.name(),
                wrong.len(),
                w.bits.len(),
                w.bits[first],
                as_f64(w.ty, w.bits[first]),
                g.bits[first],
                as_f64(g.ty, g.bits[first]),
            ));
        }
    }
    // printf lines from different warps and blocks come in no fixed order
    // on a GPU: compared as a multiset.
    let mut w = want.printf.clone();
    let mut g = got.printf.clone();
    w.sort();
    g.sort();
    if w != g {
        let missing: Vec<&String> = w.iter().filter(|l| !g.contains(l)).take(3).collect();
        let extra: Vec<&String> = g.iter().filter(|l| !w.contains(l)).take(3).collect();
        out.push(format!(
            "printf: {} lines on the GPU, {} on the emulator; GPU only {missing:?}, emulator only {extra:?}",
            w.len(),
            g.len()
        ));
    }
    out
}
