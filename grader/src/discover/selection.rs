//! Grading some students of a class (`--student ID`): only their
//! submissions are built and graded; an id that names nobody is an error
//! that lists the ids there are.

use crate::discover::discovery::Submission;
use crate::error::{Error, Result};

/// The submissions of the students asked for; all when none is. An id
/// that names no submission is an error that lists the ids there are.
pub fn only(submissions: Vec<Submission>, students: &[String]) -> Result<Vec<Submission>> {
    check_known(submissions.iter().map(|s| s.student.as_str()), students)?;
    Ok(submissions
        .into_iter()
        .filter(|s| students.is_empty() || students.contains(&s.student))
        .collect())
}

/// An error naming the first of `students` that is not among `known`.
pub fn check_known<'a>(
    known: impl Iterator<Item = &'a str> + Clone,
    students: &[String],
) -> Result<()> {
    let Some(unknown) = students
        .iter()
        .find(|s| !known.clone().any(|k| k == s.as_str()))
    else {
        return Ok(());
    };
    let mut ids: Vec<&str> = known.collect();
    ids.dedup();
    let shown = ids.len().min(20);
    Err(Error::Usage(format!(
        "--student {unknown}: no such student; the ids are {}{}",
        ids[..shown].join(", "),
        if ids.len() > shown { ", ..." } else { "" }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_id_is_refused_with_the_ids_there_are() {
        let known = ["ann", "bo"];
        assert!(check_known(known.iter().copied(), &["bo".into()]).is_ok());
        let err = check_known(known.iter().copied(), &["cy".into()]).unwrap_err();
        assert!(
            matches!(&err, Error::Usage(why) if why.contains("--student cy") && why.contains("ann, bo")),
            "{err}"
        );
    }
}
