//! A student's upload as the platform hands it over (Gradescope's
//! `/autograder/submission`, PrairieLearn's `/grade/student`), made into
//! the class of one that `grader build` takes: a zip of their workspace
//! unpacked, loose `kernel.cu` and `*.rs` files put in the one exercise's
//! `src/`, and what cannot be graded said in one sentence (an empty
//! upload, no exercise, another exercise than the assignment's).
//!
//! Threat model: every byte and name of the upload is the student's. Only
//! source-like files are copied (`*.rs`, `*.cu`, `*.cuh`, `*.h`,
//! `Cargo.toml`), each at most the overlay's 256 KiB, at most
//! [`MAX_ENTRIES`] entries and [`MAX_BYTES`] in all, links never followed
//! nor copied, zip entries only under names that stay inside their folder
//! (`enclosed_name`), and zips inside zips left packed. What is taken is
//! then read by the grader's own discovery, with its own limits.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Component, Path};

use kernels::catalogue::ExerciseId;

use crate::discover::discovery::discover;
use crate::discover::overlay::MAX_FILE_BYTES;

/// The student's folder name in the class of one.
pub const STUDENT: &str = "submission";
/// Files and folders looked at, in the upload and its zips together.
pub const MAX_ENTRIES: usize = 20_000;
/// Bytes copied in all.
pub const MAX_BYTES: u64 = 16 << 20;
/// Folders never searched (build output, version control, macOS's zip
/// leftovers).
const SKIPPED: [&str; 4] = ["target", ".git", "node_modules", "__MACOSX"];

/// What the upload held, for the class of one.
#[derive(Debug, PartialEq)]
pub struct Taken {
    /// The wanted exercises found, in course order.
    pub exercises: Vec<ExerciseId>,
    /// What the student should know about how their upload was read.
    pub notes: Vec<String>,
}

/// Why an upload cannot be graded, each said to the student.
#[derive(Debug, PartialEq)]
pub enum Unfit {
    /// No file at all.
    Empty { notes: Vec<String> },
    /// Files, but no exercise folder and no kernel.cu or main.rs.
    NoExercise {
        seen: Vec<String>,
        notes: Vec<String>,
    },
    /// Exercises, but none of those the assignment grades.
    WrongExercise {
        found: Vec<String>,
        wanted: Vec<ExerciseId>,
    },
    /// Loose files where the assignment grades several exercises, or
    /// loose files in several folders.
    Loose { why: String },
}

impl Unfit {
    /// The one message the student reads.
    pub fn message(&self) -> String {
        match self {
            Unfit::Empty { .. } => "Your upload holds no file. Upload your exercise's \
                src/kernel.cu and src/main.rs, or a zip of your copy of the course."
                .into(),
            Unfit::NoExercise { seen, .. } => format!(
                "Your upload holds no exercise: no folder named after one (e.g. dot-sm/ with \
                 src/ inside) and no kernel.cu or main.rs. It holds: {}.",
                seen.join(", ")
            ),
            Unfit::WrongExercise { found, wanted } => format!(
                "This assignment grades {}, and your upload holds {}: upload {}.",
                names(wanted),
                found.join(", "),
                if wanted.len() == 1 {
                    "that exercise"
                } else {
                    "those exercises"
                }
            ),
            Unfit::Loose { why } => why.clone(),
        }
    }

    /// Notes on how the upload was read, for the instructor's log.
    pub fn notes(&self) -> &[String] {
        match self {
            Unfit::Empty { notes } | Unfit::NoExercise { notes, .. } => notes,
            _ => &[],
        }
    }
}

fn names(ids: &[ExerciseId]) -> String {
    ids.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
}

/// Copies what can be graded of `upload` into `class/submission/` and
/// says which of `wanted` it holds.
pub fn take(
    upload: &Path,
    class: &Path,
    wanted: &[ExerciseId],
) -> std::io::Result<Result<Taken, Unfit>> {
    let into = class.join(STUDENT);
    fs::create_dir_all(&into)?;
    let mut copy = Copy::default();
    if upload.is_dir() {
        copy.folder(upload, &into, Path::new(""))?;
    }
    let mut notes = copy.notes;
    if copy.seen.is_empty() {
        return Ok(Err(Unfit::Empty { notes }));
    }
    let found = found_exercises(class)?;
    let graded: Vec<ExerciseId> = wanted
        .iter()
        .copied()
        .filter(|e| found.contains(e.name()))
        .collect();
    if !graded.is_empty() {
        for other in found
            .iter()
            .filter(|f| !graded.iter().any(|g| g.name() == *f))
        {
            notes.push(format!(
                "{other} is in your upload too; this assignment does not grade it"
            ));
        }
        return Ok(Ok(Taken {
            exercises: graded,
            notes,
        }));
    }
    if !found.is_empty() {
        return Ok(Err(Unfit::WrongExercise {
            found: found.into_iter().collect(),
            wanted: wanted.to_vec(),
        }));
    }
    match loose(&into, wanted)? {
        Some(Ok((exercise, said))) => {
            notes.push(said);
            Ok(Ok(Taken {
                exercises: vec![exercise],
                notes,
            }))
        }
        Some(Err(why)) => Ok(Err(Unfit::Loose { why })),
        None => {
            let mut seen: Vec<String> = copy.seen.into_iter().take(12).collect();
            if seen.len() == 12 {
                seen.push("...".into());
            }
            Ok(Err(Unfit::NoExercise { seen, notes }))
        }
    }
}

/// The exercise folders the grader's discovery finds in the class.
fn found_exercises(class: &Path) -> std::io::Result<BTreeSet<String>> {
    Ok(discover(class)?
        .into_iter()
        .flat_map(|s| s.exercises.into_keys())
        .collect())
}

/// Loose sources (kernel.cu, *.rs) in one folder, moved to the one wanted
/// exercise's src/: the exercise and a note, or why not; None when there
/// are none.
fn loose(
    into: &Path,
    wanted: &[ExerciseId],
) -> std::io::Result<Option<Result<(ExerciseId, String), String>>> {
    let mut folders = BTreeSet::new();
    let mut sources = Vec::new();
    for entry in walkdir::WalkDir::new(into).follow_links(false) {
        let entry = entry.map_err(std::io::Error::other)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_file() && (name == "kernel.cu" || name.ends_with(".rs")) {
            folders.insert(entry.path().parent().unwrap_or(into).to_owned());
            sources.push(entry.into_path());
        }
    }
    if !sources
        .iter()
        .any(|s| s.ends_with("kernel.cu") || s.ends_with("main.rs"))
    {
        return Ok(None);
    }
    let [exercise] = wanted else {
        return Ok(Some(Err(format!(
            "Your upload holds loose files, and this assignment grades {}: put each exercise's \
             files in a folder named after it (e.g. {}/src/kernel.cu).",
            names(wanted),
            wanted[0].name()
        ))));
    };
    if folders.len() > 1 {
        return Ok(Some(Err(
            "Your upload holds kernel.cu and .rs files in several folders: upload one \
             exercise's src/kernel.cu and src/main.rs, or its folder."
                .into(),
        )));
    }
    let src = into.join(exercise.name()).join("src");
    fs::create_dir_all(&src)?;
    let mut moved = Vec::new();
    for source in &sources {
        let name = source.file_name().unwrap_or_default();
        fs::rename(source, src.join(name))?;
        moved.push(name.to_string_lossy().into_owned());
    }
    moved.sort();
    Ok(Some(Ok((
        *exercise,
        format!(
            "your files were taken as {}'s src/: {}",
            exercise.name(),
            moved.join(", ")
        ),
    ))))
}

/// Copying within bounds, and what was seen and left.
#[derive(Default)]
struct Copy {
    entries: usize,
    bytes: u64,
    /// Every file's path in the upload (and in its zips), as the student
    /// named it.
    seen: Vec<String>,
    notes: Vec<String>,
}

impl Copy {
    /// Counts an entry; false once there were too many.
    fn count(&mut self) -> bool {
        self.entries += 1;
        if self.entries == MAX_ENTRIES + 1 {
            self.notes.push(format!(
                "only the first {MAX_ENTRIES} files and folders of your upload were looked at"
            ));
        }
        self.entries <= MAX_ENTRIES
    }

    fn folder(&mut self, from: &Path, to: &Path, shown: &Path) -> std::io::Result<()> {
        let mut entries: Vec<fs::DirEntry> = fs::read_dir(from)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(fs::DirEntry::file_name);
        for entry in entries {
            if !self.count() {
                return Ok(());
            }
            let name = entry.file_name();
            let shown = shown.join(&name);
            let kind = entry.file_type()?;
            if kind.is_symlink() {
                self.seen.push(shown.display().to_string());
                self.notes
                    .push(format!("not taken: {} is a link", shown.display()));
            } else if kind.is_dir() {
                if !SKIPPED.contains(&&*name.to_string_lossy()) {
                    self.folder(&entry.path(), &to.join(&name), &shown)?;
                }
            } else if kind.is_file() {
                self.seen.push(shown.display().to_string());
                let size = entry.metadata()?.len();
                if name.to_string_lossy().to_lowercase().ends_with(".zip") {
                    let folder = to.join(Path::new(&name).with_extension(""));
                    self.zip(&entry.path(), &folder, &shown)?;
                } else {
                    let file = fs::File::open(entry.path())?;
                    self.file(file, size, &to.join(&name), &shown)?;
                }
            }
        }
        Ok(())
    }

    /// Copies one file if it is a source the grader may take.
    fn file(&mut self, from: impl Read, size: u64, to: &Path, shown: &Path) -> std::io::Result<()> {
        if !source_like(shown) {
            return Ok(());
        }
        if size > MAX_FILE_BYTES {
            self.notes.push(format!(
                "not taken: {} is over {} KiB",
                shown.display(),
                MAX_FILE_BYTES >> 10
            ));
            return Ok(());
        }
        if self.bytes + size > MAX_BYTES {
            self.notes.push(format!(
                "not taken: {}, past the {} MiB taken from an upload",
                shown.display(),
                MAX_BYTES >> 20
            ));
            return Ok(());
        }
        let mut bytes = Vec::new();
        // A zip entry may hold more than it says: never more than allowed.
        from.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            self.notes.push(format!(
                "not taken: {} is over {} KiB",
                shown.display(),
                MAX_FILE_BYTES >> 10
            ));
            return Ok(());
        }
        self.bytes += bytes.len() as u64;
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(to, bytes)
    }

    /// Unpacks the sources of a zip into `to`; a zip that cannot be read
    /// is a note, not a failure.
    fn zip(&mut self, path: &Path, to: &Path, shown: &Path) -> std::io::Result<()> {
        let archive = fs::File::open(path).map(zip::ZipArchive::new)?;
        let mut archive = match archive {
            Ok(archive) => archive,
            Err(err) => {
                self.notes.push(format!(
                    "{} could not be read as a zip: {err}",
                    shown.display()
                ));
                return Ok(());
            }
        };
        for index in 0..archive.len() {
            if !self.count() {
                return Ok(());
            }
            let entry = match archive.by_index(index) {
                Ok(entry) => entry,
                Err(err) => {
                    self.notes.push(format!(
                        "{}: an entry could not be read: {err}",
                        shown.display()
                    ));
                    continue;
                }
            };
            let named = shown.join(entry.name());
            let Some(relative) = entry.enclosed_name().filter(|p| inside(p)) else {
                self.notes.push(format!(
                    "not taken: {} names a place outside the zip",
                    named.display()
                ));
                continue;
            };
            if entry.is_dir()
                || relative
                    .components()
                    .any(|c| SKIPPED.contains(&&*c.as_os_str().to_string_lossy()))
            {
                continue;
            }
            self.seen.push(named.display().to_string());
            if entry.is_symlink() {
                self.notes
                    .push(format!("not taken: {} is a link", named.display()));
            } else if relative
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
            {
                self.notes.push(format!(
                    "not unpacked: {}, a zip inside a zip",
                    named.display()
                ));
            } else {
                let size = entry.size();
                self.file(entry, size, &to.join(&relative), &named)?;
            }
        }
        Ok(())
    }
}

/// A path of plain names only.
fn inside(path: &Path) -> bool {
    path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// A file the grader could take, or that shows the layout (Cargo.toml).
fn source_like(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name == "Cargo.toml"
        || [".rs", ".cu", ".cuh", ".h"]
            .iter()
            .any(|e| name.ends_with(e))
}

/// Where a copied file lands, for the tests.
#[cfg(test)]
fn landed(class: &Path, relative: &str) -> std::path::PathBuf {
    class.join(STUDENT).join(relative)
}

#[cfg(test)]
#[path = "upload_tests.rs"]
mod tests;
