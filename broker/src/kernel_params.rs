//! Kernel parameters as the PTX declares them, read with the `ptx` crate
//! when a module loads: the client is told each parameter's size and
//! alignment, sends exactly those bytes, and the broker lays them out for
//! the launch. Also the canary: the grader's PTX, loaded in place of any
//! module that defines one of the exercise's kernel entries.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;

use kernels::broker_wire::{MAX_IMAGE_BYTES, MAX_PARAM_BYTES, MAX_PARAMS, ParamLayout};

/// One kernel's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub layout: Vec<ParamLayout>,
    /// Where each parameter starts in the launch's buffer.
    pub offsets: Vec<usize>,
    /// The buffer's size, alignment included.
    pub bytes: usize,
    /// The parameters' bytes packed, as the client sends them.
    pub packed: usize,
}

/// Each kernel entry of a module: its parameters, or why they cannot be
/// passed through the broker.
pub type Entries = HashMap<String, Result<Params, String>>;

/// The entries of the PTX `text`, or the parser's reason it is not PTX.
pub fn entries(text: &str) -> Result<Entries, String> {
    let module = ptx::parser::parse(text).map_err(|err| err.to_string())?;
    Ok(module
        .kernels
        .iter()
        .map(|kernel| (kernel.name.clone(), layout(&kernel.params)))
        .collect())
}

fn layout(params: &[ptx::ast::Param]) -> Result<Params, String> {
    if params.len() > MAX_PARAMS {
        return Err(format!(
            "the kernel has {} parameters; at most {MAX_PARAMS} pass through the broker",
            params.len()
        ));
    }
    let too_many = || format!("the kernel's parameters exceed {MAX_PARAM_BYTES} bytes");
    let mut result = Params {
        layout: Vec::with_capacity(params.len()),
        offsets: Vec::with_capacity(params.len()),
        bytes: 0,
        packed: 0,
    };
    let mut end = 0u64;
    for param in params {
        let align = param.align.clamp(1, 4096);
        let start = end.checked_next_multiple_of(align).ok_or_else(too_many)?;
        end = start.checked_add(param.size).ok_or_else(too_many)?;
        if end > MAX_PARAM_BYTES as u64 {
            return Err(too_many());
        }
        result.layout.push(ParamLayout {
            size: param.size as u32,
            align: align as u32,
        });
        result.offsets.push(start as usize);
        result.packed += param.size as usize;
    }
    result.bytes = end as usize;
    Ok(result)
}

/// The grader's canary and the entries it stands in for.
pub struct Canary {
    /// The PTX, NUL-terminated, as the driver loads it.
    pub text: CString,
    pub entries: Entries,
    /// The exercise's kernel entry names.
    pub names: Vec<String>,
}

impl Canary {
    /// Reads and parses the canary's PTX, which must define at least one
    /// of `names`.
    pub fn load(path: &Path, names: Vec<String>) -> Result<Canary, String> {
        let bytes = std::fs::read(path)
            .map_err(|err| format!("cannot read the canary {}: {err}", path.display()))?;
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(format!(
                "the canary {} is larger than {MAX_IMAGE_BYTES} bytes",
                path.display()
            ));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("the canary {} is not text", path.display()))?;
        let entries = entries(&text)
            .map_err(|err| format!("the canary {} is not PTX: {err}", path.display()))?;
        if !names.iter().any(|name| entries.contains_key(name)) {
            return Err(format!(
                "the canary {} defines none of the entries {}",
                path.display(),
                names.join(", ")
            ));
        }
        let text = CString::new(text)
            .map_err(|_| format!("the canary {} holds a NUL byte", path.display()))?;
        Ok(Canary {
            text,
            entries,
            names,
        })
    }

    /// Whether a module with these entries is the exercise's: it defines
    /// one of the names the canary stands in for.
    pub fn replaces(&self, entries: &Entries) -> bool {
        self.names.iter().any(|name| entries.contains_key(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 7.0
.target sm_75
.address_size 64

.visible .entry vecadd(
    .param .u64 a,
    .param .u32 n,
    .param .align 16 .b8 pair[12],
    .param .u8 flag,
    .param .f64 scale
)
{
    ret;
}

.visible .entry empty()
{
    ret;
}
"#;

    #[test]
    fn parameters_are_laid_out_as_the_ptx_declares_them() {
        let entries = entries(PTX).unwrap();
        let vecadd = entries["vecadd"].as_ref().unwrap();
        let sizes: Vec<u32> = vecadd.layout.iter().map(|p| p.size).collect();
        assert_eq!(sizes, [8, 4, 12, 1, 8]);
        assert_eq!(vecadd.offsets, [0, 8, 16, 28, 32]);
        assert_eq!((vecadd.bytes, vecadd.packed), (40, 33));
        let empty = entries["empty"].as_ref().unwrap();
        assert_eq!((empty.bytes, empty.layout.len()), (0, 0));
        assert!(super::entries("not ptx at all {").is_err());
    }

    #[test]
    fn parameters_past_the_bound_are_refused_with_a_reason() {
        let huge = PTX.replace(".b8 pair[12]", ".b8 pair[40000]");
        let entries = entries(&huge).unwrap();
        let err = entries["vecadd"].as_ref().unwrap_err();
        assert!(err.contains("exceed 32768 bytes"), "{err}");
    }

    #[test]
    fn the_canary_stands_in_for_modules_that_define_its_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("canary.ptx");
        std::fs::write(&path, PTX).unwrap();
        let canary = Canary::load(&path, vec!["vecadd".into()]).unwrap();
        assert!(canary.replaces(&entries(PTX).unwrap()));
        let other = PTX.replace("vecadd", "course_poison_shared");
        assert!(!canary.replaces(&entries(&other).unwrap()));
        let err = Canary::load(&path, vec!["dot".into()]).err().unwrap();
        assert!(err.contains("defines none of the entries dot"), "{err}");
    }
}
