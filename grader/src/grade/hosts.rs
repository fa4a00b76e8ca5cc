//! What an item's runs run, each file checked against the digest it was
//! built with, or why it cannot be run: the course's binary with the
//! student's PTX (the kernel's runs), the broker and its client (every run
//! of the student's binary, with the grader's canary in place of their
//! kernels), and the student's binary with the canary's PTX and the
//! course's binary that runs that PTX for the result to expect. A bundle
//! file changed since it was built (by a run, or by hand) is never run.

use std::path::{Path, PathBuf};

use crate::build::bundle::{Bundle, Item};
use crate::build::ptx_check;
use crate::build::reference::{Kept, Reference};
use crate::record::outcome::NotStarted;
use crate::run::brokered::{Broker, Canary};

/// The files an item's runs need, each as it was built, or why it cannot
/// be run.
pub struct Hosts {
    /// The course's binary and the student's PTX, for the kernel's runs.
    pub kernel: Result<(PathBuf, Kept), NotStarted>,
    /// The broker every run of the student's binary reaches the GPU
    /// through, the canary in place of their kernels.
    pub broker: Result<Broker, NotStarted>,
    /// The student's binary, the canary's PTX, and the course's binary
    /// that runs that PTX.
    pub canary: Result<(PathBuf, Kept, PathBuf), NotStarted>,
    /// Why the broker cannot serve this exercise on this node, where the
    /// course's binary runs without it (`grade::preflight`): its host runs
    /// are then made without the broker.
    pub unbrokered: Option<String>,
}

/// [`Hosts`] of `item`, in `bundle` (at `bundle_dir`).
pub fn hosts(bundle: &Bundle, bundle_dir: &Path, item: &Item) -> Hosts {
    let canary = canary_host(bundle, bundle_dir, item);
    Hosts {
        kernel: kernel_host(bundle, bundle_dir, item),
        broker: broker(bundle, bundle_dir, item, &canary),
        canary,
        unbrokered: None,
    }
}

/// The bundle's broker and client, each as built, with the item's canary.
fn broker(
    bundle: &Bundle,
    bundle_dir: &Path,
    item: &Item,
    canary: &Result<(PathBuf, Kept, PathBuf), NotStarted>,
) -> Result<Broker, NotStarted> {
    let files = bundle.broker.as_ref().ok_or(NotStarted::NoBroker)?;
    let changed = |changed| NotStarted::BrokerChanged { changed };
    let (_, ptx, _) = canary.as_ref().map_err(Clone::clone)?;
    Ok(Broker {
        binary: files.broker.check(bundle_dir).map_err(changed)?,
        client: files.client.check(bundle_dir).map_err(changed)?,
        canary: Some(Canary {
            ptx: ptx.path.clone(),
            entries: item
                .exercise
                .exercise()
                .launches
                .iter()
                .flat_map(|names| names.iter().map(|&n| n.to_owned()))
                .collect(),
        }),
    })
}

/// The course's reference build for an item's exercise, as the bundle
/// lists it.
fn reference<'a>(bundle: &'a Bundle, item: &Item) -> Result<&'a Reference, NotStarted> {
    bundle
        .reference
        .get(item.exercise.name())
        .ok_or_else(|| NotStarted::NoReference {
            exercise: item.exercise.name().to_owned(),
        })
}

/// The reference binary and the student's PTX for an item's kernel runs,
/// each as it was built; else why the kernel cannot be run.
fn kernel_host(
    bundle: &Bundle,
    bundle_dir: &Path,
    item: &Item,
) -> Result<(PathBuf, Kept), NotStarted> {
    let reference = reference(bundle, item)?;
    let ptx = item.ptx.as_ref().ok_or(NotStarted::NoPtx)?;
    let refused = |changed| NotStarted::Refused { changed };
    let binary = reference.binary.check(bundle_dir).map_err(refused)?;
    let path = ptx.check(bundle_dir).map_err(refused)?;
    let course = reference.ptx.check(bundle_dir).map_err(refused)?;
    let read = |p: &Path| {
        ptx_check::read(p).map_err(|error| NotStarted::Unreadable {
            error: error.to_string(),
        })
    };
    if let Some(mismatch) = ptx_check::signature_mismatch(&read(&path)?, &read(&course)?) {
        return Err(NotStarted::Signature { mismatch });
    }
    Ok((
        binary,
        Kept {
            path,
            digest: ptx.digest.clone(),
        },
    ))
}

/// The student's binary and the canary's PTX, each as built, and the
/// course's binary that runs the PTX for the result to expect; else why
/// the student's host code cannot be run.
fn canary_host(
    bundle: &Bundle,
    bundle_dir: &Path,
    item: &Item,
) -> Result<(PathBuf, Kept, PathBuf), NotStarted> {
    let canary = item.canary.as_ref().ok_or(NotStarted::NoCanary)?;
    let changed = |changed| NotStarted::CanaryChanged { changed };
    let binary = Kept {
        path: item.binary.clone().ok_or(NotStarted::NoCanary)?,
        digest: item.digest.clone().unwrap_or_default(),
    };
    let binary = binary.check(bundle_dir).map_err(changed)?;
    let ptx = canary.ptx.check(bundle_dir).map_err(changed)?;
    let course = reference(bundle, item)?
        .binary
        .check(bundle_dir)
        .map_err(|changed| NotStarted::Refused { changed })?;
    Ok((
        binary,
        Kept {
            path: ptx,
            digest: canary.ptx.digest.clone(),
        },
        course,
    ))
}
