//! `grader slurm`: the job scripts that grade a bundle on a Slurm cluster,
//! as plain files an instructor reads and edits before submitting: a job
//! array with one task per shard (`grader run --shard`), a merge job
//! (`grader merge`) that waits for every task to succeed, and the script
//! that submits the two. The cluster's filesystem must show the bundle and
//! OUT at the same paths on every node.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// What the scripts run, and where.
pub struct Job<'a> {
    /// The grader binary on the cluster's nodes.
    pub grader: &'a Path,
    pub bundle: &'a Path,
    /// The merged results go here; the shards in OUT/shards/K, the
    /// scripts and their logs in OUT/slurm.
    pub out: &'a Path,
    pub shards: u32,
    pub partition: Option<&'a str>,
    /// Generic resources per shard, e.g. `gpu:1`.
    pub gres: Option<&'a str>,
    /// Each shard on a node of its own (`--exclusive`): graders in separate
    /// processes on one node do not see each other's runs, so a run alone
    /// in one (streams' timed pipeline) is not alone on the node.
    pub exclusive: bool,
    /// Extra flags for every `grader run`, e.g. `--timeout 30`.
    pub run_args: &'a [String],
}

/// `grader slurm`: writes the job scripts for the bundle at `job.bundle`
/// into OUT/slurm, and with `submit` submits them (the job ids on stdout).
pub fn command(job: &Job, submit: bool) -> Result<()> {
    crate::build::bundle::load(job.bundle)?;
    let scripts = job.scripts();
    let folder = folder(job.out);
    std::fs::create_dir_all(folder.join("logs")).map_err(Error::io(&folder))?;
    for (name, text) in [
        (GRADE, &scripts.grade),
        (MERGE, &scripts.merge),
        (SUBMIT, &scripts.submit),
    ] {
        let path = folder.join(name);
        crate::atomic_file::write(&path, text.as_bytes()).map_err(Error::io(&path))?;
    }
    eprintln!(
        "grader: wrote {GRADE}, {MERGE} and {SUBMIT} in {}",
        folder.display()
    );
    let script = folder.join(SUBMIT);
    if !submit {
        println!("submit with: bash {}", script.display());
        return Ok(());
    }
    let output = std::process::Command::new("bash")
        .arg(&script)
        .output()
        .map_err(Error::io(&script))?;
    if !output.status.success() {
        return Err(Error::Tool(format!(
            "{} failed ({}): {}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    print!("{}", String::from_utf8_lossy(&output.stdout));
    Ok(())
}

/// The three scripts, by file name in OUT/slurm.
pub struct Scripts {
    pub grade: String,
    pub merge: String,
    pub submit: String,
}

pub const GRADE: &str = "grade.sbatch";
pub const MERGE: &str = "merge.sbatch";
pub const SUBMIT: &str = "submit.sh";

/// Where the scripts go: OUT/slurm.
pub fn folder(out: &Path) -> PathBuf {
    out.join("slurm")
}

/// Where shard K is graded: OUT/shards/K.
pub fn shard_dir(out: &Path, index: &str) -> PathBuf {
    out.join("shards").join(index)
}

impl Job<'_> {
    pub fn scripts(&self) -> Scripts {
        Scripts {
            grade: self.grade(),
            merge: self.merge(),
            submit: SUBMIT_SCRIPT.to_owned(),
        }
    }

    fn grade(&self) -> String {
        let n = self.shards;
        let logs = folder(self.out).join("logs");
        let mut text = format!(
            "#!/bin/bash\n\
             # Grades one shard of the bundle {bundle}:\n\
             # a job array of {n} tasks, task i grading shard i+1 of {n} into\n\
             # {shards}/<i+1>. Written by `grader slurm`; edit as you need\n\
             # (a time limit, an account, a QOS).\n\
             #SBATCH --job-name=grader\n\
             #SBATCH --array=0-{last}\n",
            bundle = self.bundle.display(),
            shards = self.out.join("shards").display(),
            last = n - 1,
        );
        self.resources(&mut text);
        let _ = writeln!(
            text,
            "#SBATCH --output={}",
            logs.join("grade-%a.out").display()
        );
        let mut run = format!(
            "{} run {} --shard \"$shard/{n}\" --out {}",
            quote(self.grader),
            quote(self.bundle),
            quote(&shard_dir(self.out, "")),
        );
        // The shard folder is OUT/shards/$shard: quoted path, then the number.
        run.push_str("\"$shard\"");
        for arg in self.run_args {
            run.push(' ');
            run.push_str(&quote(Path::new(arg)));
        }
        let _ = write!(
            text,
            "set -euo pipefail\n\
             shard=$((SLURM_ARRAY_TASK_ID + 1))\n\
             # A task Slurm requeued (preempted, a node lost) goes on where it stopped.\n\
             resume=\n\
             if [ \"${{SLURM_RESTART_COUNT:-0}}\" -gt 0 ]; then resume=--resume; fi\n\
             exec {run} $resume\n"
        );
        text
    }

    fn merge(&self) -> String {
        let logs = folder(self.out).join("logs");
        let mut text = format!(
            "#!/bin/bash\n\
             # Joins the {n} shards into {out} and writes the reports there.\n\
             # submit.sh submits it with --dependency=afterok on the shards' job\n\
             # array: it starts once every shard succeeded.\n\
             #SBATCH --job-name=grader-merge\n",
            n = self.shards,
            out = self.out.display(),
        );
        if let Some(partition) = self.partition {
            let _ = writeln!(text, "#SBATCH --partition={partition}");
        }
        let _ = writeln!(
            text,
            "#SBATCH --output={}",
            logs.join("merge.out").display()
        );
        let _ = write!(
            text,
            "set -euo pipefail\n\
             exec {} merge --bundle {} {} {}{{1..{}}}\n",
            quote(self.grader),
            quote(self.bundle),
            quote(self.out),
            quote(&shard_dir(self.out, "")),
            self.shards
        );
        text
    }

    fn resources(&self, text: &mut String) {
        if let Some(partition) = self.partition {
            let _ = writeln!(text, "#SBATCH --partition={partition}");
        }
        if let Some(gres) = self.gres {
            let _ = writeln!(text, "#SBATCH --gres={gres}");
        }
        if self.exclusive {
            let _ = writeln!(text, "#SBATCH --exclusive");
        }
    }
}

/// Submits the array, then the merge on its success; prints both job ids.
const SUBMIT_SCRIPT: &str = r#"#!/bin/bash
# Submits the grading: the shards' job array (grade.sbatch), then the merge
# (merge.sbatch), which starts once every shard succeeded and is cancelled
# if one fails. Written by `grader slurm`; run it again to grade again.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p logs
array=$(sbatch --parsable grade.sbatch)
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes merge.sbatch)
merge=${merge%%;*}
echo "shards: job $array; merge: job $merge"
"#;

/// `path` as one shell word: as is when it has only safe characters, else
/// in single quotes.
fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job<'a>(run_args: &'a [String], out: &'a Path) -> Job<'a> {
        Job {
            grader: Path::new("/opt/grader/bin/grader"),
            bundle: Path::new("/shared/course/bundle"),
            out,
            shards: 3,
            partition: Some("gpu"),
            gres: Some("gpu:1"),
            exclusive: false,
            run_args,
        }
    }

    #[test]
    fn the_array_grades_one_shard_per_task() {
        let args = ["--timeout".to_owned(), "30".to_owned()];
        insta::assert_snapshot!(job(&args, Path::new("/shared/course/grading")).grade());
    }

    #[test]
    fn the_merge_joins_every_shard() {
        insta::assert_snapshot!(job(&[], Path::new("/shared/course/grading")).merge());
    }

    #[test]
    fn the_submit_script_chains_the_merge_to_the_array() {
        insta::assert_snapshot!(job(&[], Path::new("/g")).scripts().submit);
    }

    #[test]
    fn odd_paths_stay_one_word_and_unset_options_are_left_out() {
        let out = Path::new("/home/ann's course/grading");
        let job = Job {
            partition: None,
            gres: None,
            ..job(&[], out)
        };
        let grade = job.grade();
        assert!(!grade.contains("--partition") && !grade.contains("--gres"));
        assert!(!grade.contains("--exclusive"));
        let alone = Job {
            exclusive: true,
            ..job
        };
        assert!(alone.grade().contains("\n#SBATCH --exclusive\n"));
        assert!(!alone.merge().contains("--exclusive"));
        assert!(
            grade.contains(r#"--out '/home/ann'\''s course/grading/shards/'"$shard""#),
            "{grade}"
        );
        assert!(job.merge().contains(
            r" '/home/ann'\''s course/grading' '/home/ann'\''s course/grading/shards/'{1..3}"
        ));
    }
}
