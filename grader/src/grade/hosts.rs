//! What an item's runs run, each file checked against the digest it was
//! built with, or why it cannot be run: the course's binary with the
//! student's PTX (the kernel's runs), the tracer (every run of the
//! student's binary), and the student's canary build with its PTX and the
//! course's binary that runs that PTX for the result to expect. A bundle
//! file changed since it was built (by a run, or by hand) is never run.

use std::path::{Path, PathBuf};

use crate::build::bundle::{Bundle, Item};
use crate::build::ptx_check;
use crate::build::reference::{Kept, Reference};
use crate::record::outcome::NotStarted;

/// The files an item's runs need, each as it was built, or why it cannot
/// be run.
pub struct Hosts {
    /// The course's binary and the student's PTX, for the kernel's runs.
    pub kernel: Result<(PathBuf, Kept), NotStarted>,
    /// The tracer library, preloaded into every run of the student's
    /// binary.
    pub tracer: Result<PathBuf, NotStarted>,
    /// The student's canary build, its PTX, and the course's binary that
    /// runs that PTX.
    pub canary: Result<(PathBuf, Kept, PathBuf), NotStarted>,
}

/// [`Hosts`] of `item`, in `bundle` (at `bundle_dir`).
pub fn hosts(bundle: &Bundle, bundle_dir: &Path, item: &Item) -> Hosts {
    Hosts {
        kernel: kernel_host(bundle, bundle_dir, item),
        tracer: match &bundle.tracer {
            None => Err(NotStarted::NoTracer),
            Some(kept) => kept
                .check(bundle_dir)
                .map_err(|changed| NotStarted::TracerChanged { changed }),
        },
        canary: canary_host(bundle, bundle_dir, item),
    }
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

/// The student's canary build and its PTX, each as built, and the course's
/// binary that runs the PTX for the result to expect; else why the
/// student's host code cannot be run.
fn canary_host(
    bundle: &Bundle,
    bundle_dir: &Path,
    item: &Item,
) -> Result<(PathBuf, Kept, PathBuf), NotStarted> {
    let canary = item.canary.as_ref().ok_or(NotStarted::NoCanary)?;
    let changed = |changed| NotStarted::CanaryChanged { changed };
    let binary = canary.binary.check(bundle_dir).map_err(changed)?;
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
