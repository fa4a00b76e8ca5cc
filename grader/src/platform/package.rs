//! The packages an instructor uploads: Gradescope's autograder zip
//! (`setup.sh` and `run_autograder` at its root, as its specification
//! asks, with the course and `autograder.json`) and PrairieLearn's external
//! grader (a Dockerfile building an image with the same setup, and the
//! entrypoint a question's `info.json` names). The scripts are
//! `scripts/autograder/`'s, built into the grader.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;

use crate::error::{Error, Result};
use crate::platform::settings::{self, Settings};

/// setup.sh: installs what grading needs, then `grader autograder prepare`.
pub const SETUP: &str = include_str!("../../../scripts/autograder/setup.sh");
/// Gradescope's run_autograder.
pub const RUN_AUTOGRADER: &str = include_str!("../../../scripts/autograder/run_autograder");
/// PrairieLearn's entrypoint.
pub const ENTRYPOINT: &str = include_str!("../../../scripts/autograder/prairielearn-entrypoint");
/// PrairieLearn's image.
pub const DOCKERFILE: &str = include_str!("../../../scripts/autograder/Dockerfile");

/// Top-level folders of the course left out of a package: the book, CI,
/// build output, version control.
const LEFT_OUT: [&str; 5] = ["docs", ".ci", "target", ".git", "bench"];

/// One file of a package: where it goes, its bytes, its mode.
struct Entry {
    path: PathBuf,
    bytes: Vec<u8>,
    mode: u32,
}

/// Every file of the package: the scripts, the settings, the course.
fn entries(course: &Path, settings: &Settings, scripts: &[(&str, &str)]) -> Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = scripts
        .iter()
        .map(|(name, text)| Entry {
            path: PathBuf::from(name),
            bytes: text.as_bytes().to_vec(),
            mode: 0o755,
        })
        .collect();
    entries.push(Entry {
        path: PathBuf::from(settings::FILE),
        bytes: settings.to_json().into_bytes(),
        mode: 0o644,
    });
    let walk = walkdir::WalkDir::new(course)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            !(e.depth() == 1 && LEFT_OUT.contains(&&*name)) && name != "target" && name != ".git"
        });
    for entry in walk {
        let entry = entry.map_err(|err| Error::Io {
            path: err.path().unwrap_or(course).to_owned(),
            source: err.into(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry.path().strip_prefix(course).unwrap_or(entry.path());
        let metadata = entry.metadata().map_err(|err| Error::Io {
            path: entry.path().to_owned(),
            source: err.into(),
        })?;
        entries.push(Entry {
            path: Path::new("course").join(relative),
            bytes: fs::read(entry.path()).map_err(Error::io(entry.path()))?,
            mode: metadata.permissions().mode() & 0o777,
        });
    }
    if !entries
        .iter()
        .any(|e| e.path == Path::new("course/Cargo.toml"))
    {
        return Err(Error::Usage(format!(
            "{} holds no Cargo.toml: name the course's checkout with --course",
            course.display()
        )));
    }
    Ok(entries)
}

/// Writes Gradescope's autograder zip to `out`.
pub fn gradescope(course: &Path, settings: &Settings, out: &Path) -> Result<usize> {
    let scripts = [("setup.sh", SETUP), ("run_autograder", RUN_AUTOGRADER)];
    let entries = entries(course, settings, &scripts)?;
    let file = fs::File::create(out).map_err(Error::io(out))?;
    let mut zip = zip::ZipWriter::new(file);
    let failed =
        |err: zip::result::ZipError| Error::Tool(format!("writing {}: {err}", out.display()));
    for entry in &entries {
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(entry.mode);
        zip.start_file(entry.path.to_string_lossy(), options)
            .map_err(failed)?;
        zip.write_all(&entry.bytes).map_err(Error::io(out))?;
    }
    zip.finish().map_err(failed)?;
    Ok(entries.len())
}

/// Writes PrairieLearn's external grader into the folder `out`: the
/// Dockerfile's build context.
pub fn prairielearn(course: &Path, settings: &Settings, out: &Path) -> Result<usize> {
    if out.exists() && fs::read_dir(out).map_err(Error::io(out))?.next().is_some() {
        return Err(Error::Usage(format!(
            "{} exists and is not empty: name a new folder",
            out.display()
        )));
    }
    let scripts = [
        ("setup.sh", SETUP),
        ("entrypoint", ENTRYPOINT),
        ("Dockerfile", DOCKERFILE),
    ];
    let entries = entries(course, settings, &scripts)?;
    for entry in &entries {
        let path = out.join(&entry.path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(Error::io(parent))?;
        }
        fs::write(&path, &entry.bytes).map_err(Error::io(&path))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(entry.mode))
            .map_err(Error::io(&path))?;
    }
    let dockerfile = out.join("Dockerfile");
    fs::set_permissions(&dockerfile, fs::Permissions::from_mode(0o644))
        .map_err(Error::io(&dockerfile))?;
    Ok(entries.len())
}
