//! `grader build`: everything a GPU node needs to grade a class, made on a
//! build node. Discovers the submissions, lays each student's files over
//! the course's crates, builds them all, inspects each kernel's PTX, and
//! writes `BUNDLE/bin/<package>` and `BUNDLE/bundle.json`: the seed, and per
//! student and exercise its binary or build errors, refusals and missing
//! PTX features. A GPU node then needs no cargo, no course and no network.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::catalogue::{self, EXERCISES};
use crate::compile;
use crate::discovery::discover;
use crate::overlay;
use crate::results::write_atomically;
use crate::workspace::{self, Entry};

pub const BUNDLE_SCHEMA: u32 = 1;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Bundle {
    pub schema_version: u32,
    pub seed: u64,
    pub items: Vec<Item>,
}

/// One student's one exercise.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Item {
    pub student: String,
    pub exercise: String,
    /// Problems with the student's submission as a whole.
    pub problems: Vec<String>,
    /// Why nothing was built, when nothing was: not found, or ambiguous.
    pub absent: Option<String>,
    pub refused: Vec<String>,
    pub build_errors: Option<String>,
    /// The binary, relative to the bundle.
    pub binary: Option<PathBuf>,
    pub ptx_missing: Vec<String>,
}

/// What to build.
pub struct Request<'a> {
    /// The course checkout (its root Cargo.toml's folder).
    pub course: &'a Path,
    pub submissions: &'a Path,
    pub bundle: &'a Path,
    /// Exercises to grade; all when empty.
    pub exercises: &'a [String],
    /// Student ids to build; all when empty (see `regrade`).
    pub students: &'a [String],
    pub seed: u64,
    pub jobs: Option<usize>,
    /// Where cargo builds [default: BUNDLE/.build/target]; keep it between
    /// batches so dependencies compile once.
    pub target: Option<&'a Path>,
}

/// Builds the bundle; returns it as written to BUNDLE/bundle.json.
pub fn build(request: &Request) -> Result<Bundle, String> {
    let io = |what: &str| {
        let what = what.to_owned();
        move |err: std::io::Error| format!("{what}: {err}")
    };
    let chosen: Vec<&str> = EXERCISES
        .iter()
        .map(|e| e.name)
        .filter(|name| request.exercises.is_empty() || request.exercises.iter().any(|e| e == name))
        .collect();
    let submissions =
        discover(request.submissions).map_err(io(&request.submissions.display().to_string()))?;
    let submissions = crate::regrade::only(submissions, request.students)?;

    let mut items = Vec::new();
    let mut taken = Vec::new();
    for submission in &submissions {
        let problems: Vec<String> = submission.problems.iter().map(|p| p.to_string()).collect();
        for &exercise in &chosen {
            let ambiguous = problems
                .iter()
                .any(|p| p.starts_with(&format!("{exercise} was found in")));
            let (files, refused, absent) = match submission.exercises.get(exercise) {
                Some(folder) => {
                    let (files, refused) = overlay::select(folder);
                    let refused: Vec<String> = refused.iter().map(|r| r.to_string()).collect();
                    (files, refused, None)
                }
                None if ambiguous => (
                    vec![],
                    vec![],
                    Some("two copies were found; see the problems".to_owned()),
                ),
                None => (
                    vec![],
                    vec![],
                    Some(format!("no {exercise} folder with a src/ was found")),
                ),
            };
            taken.push(files);
            items.push(Item {
                student: submission.student.clone(),
                exercise: exercise.to_owned(),
                problems: problems.clone(),
                absent,
                refused,
                build_errors: None,
                binary: None,
                ptx_missing: vec![],
            });
        }
    }

    let build_dir = request.bundle.join(".build");
    let scratch = build_dir.join("workspace");
    // The workspace is updated in place and the target folder kept, so a
    // rebuild recompiles only the crates whose sources changed.
    let present: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].absent.is_none())
        .collect();
    let entries: Vec<Entry> = present
        .iter()
        .map(|&i| Entry {
            student: &items[i].student,
            exercise: &items[i].exercise,
            taken: &taken[i],
        })
        .collect();
    if !entries.is_empty() {
        let members = workspace::create(request.course, &scratch, &entries)
            .map_err(io("writing the workspace"))?;
        let target = request
            .target
            .map_or_else(|| build_dir.join("target"), Path::to_owned);
        let built = compile::build(&scratch, &target, &members, request.jobs)
            .map_err(io("running cargo"))?;
        let bin = request.bundle.join("bin");
        fs::create_dir_all(&bin).map_err(io("creating the bundle"))?;
        for (&i, result) in present.iter().zip(&built) {
            let item = &mut items[i];
            item.build_errors = result.errors.clone();
            if let Some(binary) = &result.binary {
                let relative = Path::new("bin").join(&result.package);
                fs::copy(binary, request.bundle.join(&relative)).map_err(io("copying a binary"))?;
                item.binary = Some(relative);
            }
            let exercise = catalogue::find(&item.exercise).expect("chosen from the catalogue");
            item.ptx_missing = match result.ptx.as_ref().and_then(|p| fs::read_to_string(p).ok()) {
                Some(ptx) => catalogue::missing_in_ptx(exercise, &ptx),
                None if result.binary.is_some() => vec!["no PTX was found for the kernel".into()],
                None => vec![],
            };
        }
    }
    let bundle = Bundle {
        schema_version: BUNDLE_SCHEMA,
        seed: request.seed,
        items,
    };
    let text = serde_json::to_string_pretty(&bundle).map_err(|err| err.to_string())?;
    write_atomically(&request.bundle.join("bundle.json"), text.as_bytes())
        .map_err(io("writing bundle.json"))?;
    Ok(bundle)
}

/// Reads BUNDLE/bundle.json.
pub fn load(bundle: &Path) -> Result<Bundle, String> {
    let path = bundle.join("bundle.json");
    let text = fs::read_to_string(&path).map_err(|err| format!("{}: {err}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    if value["schema_version"].as_u64() != Some(u64::from(BUNDLE_SCHEMA)) {
        return Err(format!(
            "{} is not a bundle this grader reads",
            path.display()
        ));
    }
    serde_json::from_value(value).map_err(|err| format!("{}: {err}", path.display()))
}
