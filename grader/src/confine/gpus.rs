//! `grader run --gpus 0,1,...`: which GPUs, and for each the one device
//! node its runs' sandbox binds and the `CUDA_VISIBLE_DEVICES` they see.
//!
//! GPUs are numbered as `nvidia-smi` numbers them, in PCI bus order: the
//! driver's `/proc/driver/nvidia/gpus/<bus id>/information` gives each its
//! device minor (`/dev/nvidia<minor>`) and UUID, and the UUID is what a run
//! is told, so CUDA's own device order cannot send it to another GPU.
//! Without the driver (a machine with no GPU) GPU i is `/dev/nvidia<i>`,
//! absent, and runs find no GPU, as they would anyway.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where the NVIDIA driver lists the GPUs, one folder per PCI bus id.
const DRIVER_GPUS: &str = "/proc/driver/nvidia/gpus";

/// One GPU a worker runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The index given to `--gpus`.
    pub index: u32,
    /// Its device node, the only `/dev/nvidia<N>` its runs' sandbox binds.
    pub node: PathBuf,
    /// `CUDA_VISIBLE_DEVICES` inside: the GPU's UUID, or its index when
    /// the driver gives none.
    pub visible: String,
}

/// The indices given to `--gpus`, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indices(pub Vec<u32>);

/// Parses `0,1,3`: distinct indices, at least one. A String error: this
/// is clap's value parser, and clap shows the string as it is.
pub fn parse(text: &str) -> std::result::Result<Indices, String> {
    let usage = || format!("'{text}' is not a list of distinct GPU indices, e.g. 0,1");
    let mut indices = Vec::new();
    for part in text.split(',') {
        let index: u32 = part
            .parse()
            .ok()
            .filter(|_| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
            .filter(|&i| i < 1024)
            .ok_or_else(usage)?;
        if indices.contains(&index) {
            return Err(usage());
        }
        indices.push(index);
    }
    Ok(Indices(indices))
}

/// The GPUs `indices` name on this machine; an index the driver does not
/// have is an error that lists those it has.
pub fn find(indices: &[u32]) -> Result<Vec<Pin>> {
    match driver_gpus(Path::new(DRIVER_GPUS)) {
        Some(found) => pick(indices, &found),
        None => {
            eprintln!(
                "grader: warning: --gpus: no NVIDIA driver here ({DRIVER_GPUS}); GPU i is taken \
                 as /dev/nvidia<i>"
            );
            Ok(indices.iter().map(|&i| fallback(i)).collect())
        }
    }
}

/// GPU `index` when the driver says nothing of it.
pub fn fallback(index: u32) -> Pin {
    Pin {
        index,
        node: PathBuf::from(format!("/dev/nvidia{index}")),
        visible: index.to_string(),
    }
}

/// The driver's GPUs in PCI bus order, each as (device minor, UUID), or
/// `None` where there is no driver.
fn driver_gpus(root: &Path) -> Option<Vec<(u32, Option<String>)>> {
    let mut buses: Vec<PathBuf> = fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    buses.sort();
    Some(
        buses
            .iter()
            .filter_map(|bus| information(&fs::read_to_string(bus.join("information")).ok()?))
            .collect(),
    )
}

/// (device minor, UUID) from a GPU's `information` file.
fn information(text: &str) -> Option<(u32, Option<String>)> {
    let field = |name: &str| {
        text.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim() == name)
            .map(|(_, value)| value.trim().to_owned())
    };
    let minor = field("Device Minor")?.parse().ok()?;
    let uuid = field("GPU UUID").filter(|u| u.starts_with("GPU-"));
    Some((minor, uuid))
}

fn pick(indices: &[u32], found: &[(u32, Option<String>)]) -> Result<Vec<Pin>> {
    indices
        .iter()
        .map(|&index| {
            let (minor, uuid) = found.get(index as usize).ok_or_else(|| {
                Error::NoDevice(format!(
                    "--gpus {index}: this machine has {} GPU(s), numbered 0 to {} as nvidia-smi \
                     numbers them",
                    found.len(),
                    found.len().saturating_sub(1)
                ))
            })?;
            Ok(Pin {
                index,
                node: PathBuf::from(format!("/dev/nvidia{minor}")),
                visible: uuid.clone().unwrap_or_else(|| index.to_string()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_lists_are_distinct_indices() {
        assert_eq!(parse("0"), Ok(Indices(vec![0])));
        assert_eq!(parse("0,1,3"), Ok(Indices(vec![0, 1, 3])));
        for bad in ["", "0,", ",1", "0,0", "a", "-1", "0 1", "1,+2", "5000"] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains("distinct GPU indices"), "{bad}: {err}");
        }
    }

    #[test]
    fn gpus_are_numbered_in_bus_order_and_named_by_minor_and_uuid() {
        let dir = tempfile::tempdir().unwrap();
        // Minors deliberately out of bus order, as the driver may give them.
        for (bus, minor, uuid) in [
            ("0000:c1:00.0", 0, "GPU-cccc"),
            ("0000:41:00.0", 2, "GPU-aaaa"),
            ("0000:81:00.0", 1, "GPU-bbbb"),
        ] {
            let folder = dir.path().join(bus);
            fs::create_dir(&folder).unwrap();
            fs::write(
                folder.join("information"),
                format!(
                    "Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nGPU UUID: \t {uuid}\n\
                     Bus Location: \t {bus}\nDevice Minor: \t {minor}\n"
                ),
            )
            .unwrap();
        }
        let found = driver_gpus(dir.path()).unwrap();
        let pins = pick(&[2, 0], &found).unwrap();
        assert_eq!(
            pins,
            vec![
                Pin {
                    index: 2,
                    node: "/dev/nvidia0".into(),
                    visible: "GPU-cccc".into()
                },
                Pin {
                    index: 0,
                    node: "/dev/nvidia2".into(),
                    visible: "GPU-aaaa".into()
                },
            ]
        );
        let err = pick(&[3], &found).unwrap_err().to_string();
        assert!(
            err.starts_with("--gpus 3: this machine has 3 GPU(s)"),
            "{err}"
        );
        assert_eq!(driver_gpus(&dir.path().join("none")), None);
    }
}
