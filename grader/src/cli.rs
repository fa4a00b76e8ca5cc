//! The `grader` command line: clap's types and value parsers (validated as
//! they are parsed, with no I/O), and the options the library's commands
//! take, derived from them.

use std::path::PathBuf;
use std::time::Duration;

use std::path::Path;

use clap::{Parser, Subcommand};
use grader::build::command::Options;
use grader::confine::gpus::{self, Indices};
use grader::confine::sandbox::Isolation;
use grader::grade::command::{self, Run};
use grader::grade::shard::{self, Shard};
use grader::instructor::slurm::Job;
use grader::platform::settings::{Platform, Settings, Visibility};
use kernels::catalogue::{self, ExerciseId};

/// Grade a class's CUDA exercises: build, run on the GPU, judge, report.
#[derive(Parser, Debug)]
#[command(
    name = "grader",
    after_help = "Exit status: 0 done; 1 `check` found work short of full marks, or \
                  `mutants verify` a broken expectation; 2 bad arguments or an error that \
                  stopped the grader."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build, run and judge every submission, and write the reports.
    Grade(GradeArgs),
    /// Build every submission into a bundle for a GPU node (no GPU needed).
    Build(BuildArgs),
    /// Run and judge a bundle (no cargo needed), and write the reports.
    Run(RunArgs),
    /// Join the shards of a bundle (`run --shard`) into OUT and write the
    /// reports there.
    Merge {
        /// Where results.json, grades.csv and feedback/ go.
        #[arg(value_parser = absolute)]
        out: PathBuf,
        /// The shards' output folders, every shard once.
        #[arg(required = true, value_parser = absolute)]
        shards: Vec<PathBuf>,
        /// The bundle the shards graded: each shard must hold exactly its
        /// partition of the bundle's students.
        #[arg(long, value_parser = absolute)]
        bundle: PathBuf,
    },
    /// Write Slurm job scripts that grade a bundle in shards and merge
    /// them: OUT/slurm/grade.sbatch, merge.sbatch and submit.sh.
    Slurm(SlurmArgs),
    /// Write grades.csv and feedback/ again from results.json in DIR.
    Report {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
    /// Write a gradebook an LMS imports as is, from results.json in DIR.
    Export(ExportArgs),
    /// For the instructor only, never a grade: which submissions' kernel or
    /// host code is identical to another's or to the reference solution.
    Similarity(SimilarityArgs),
    /// Run the grader's tests on your own exercise, before submitting.
    Check(CheckArgs),
    /// For the course's maintainers: the grader's own test class.
    #[command(hide = true, subcommand)]
    Mutants(MutantsCommand),
    /// Package the course as a Gradescope autograder or a PrairieLearn
    /// external grader, which grade on the CPU emulator (or a GPU the
    /// container has).
    #[command(subcommand)]
    Autograder(AutograderCommand),
}

#[derive(Subcommand, Debug)]
pub enum AutograderCommand {
    /// Write Gradescope's autograder zip (setup.sh, run_autograder, the
    /// course) to OUT.
    Gradescope(PackageArgs),
    /// Write PrairieLearn's external grader (a Dockerfile, its entrypoint,
    /// the course) into the new folder OUT.
    Prairielearn(PackageArgs),
    /// setup.sh's step: install the autograder packaged in DIR.
    #[command(hide = true)]
    Prepare {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
    /// run_autograder's and the entrypoint's step: grade the upload.
    #[command(hide = true)]
    Grade {
        #[arg(value_enum)]
        platform: Platform,
        /// Only this exercise of the package's (a PrairieLearn question's
        /// entrypoint argument); repeat for several [default: all].
        #[arg(long = "exercise", value_name = "EXERCISE", value_parser = exercise_name)]
        exercises: Vec<ExerciseId>,
    },
}

/// What an autograder package grades, and how.
#[derive(clap::Args, Debug)]
pub struct PackageArgs {
    /// The zip to write (gradescope), or the new folder (prairielearn).
    #[arg(value_parser = absolute)]
    pub out: PathBuf,
    /// The exercise an upload is graded on; repeat for several (each takes
    /// its time: one fits the platforms' default limits).
    #[arg(long = "exercise", value_name = "EXERCISE", required = true, value_parser = exercise_name)]
    pub exercises: Vec<ExerciseId>,
    /// When students see the tests (Gradescope); the check of how their
    /// upload was read is always shown.
    #[arg(long, value_enum, default_value = "visible")]
    pub visibility: Visibility,
    /// When students see what the autograder printed (Gradescope).
    #[arg(long, value_enum, default_value = "hidden")]
    pub stdout_visibility: Visibility,
    /// A fixed test plan seed, never shown to students [default: a fresh
    /// one for every grading, shown in the commands that repeat each run].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seconds the platform gives a grading (Gradescope's default is 600,
    /// PrairieLearn's most is 600); the grader stops 30 s before.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(60..=2400))]
    pub time_limit: u64,
    /// Seconds one run of the student's code may take, 1 to 600.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub run_timeout: u64,
    /// Seconds the student's build may take, 1 to 1800.
    #[arg(long, default_value_t = 240, value_parser = clap::value_parser!(u64).range(1..=1800))]
    pub build_timeout: u64,
    /// The course checkout to package [default: the workspace the grader
    /// is run from].
    #[arg(long, value_parser = absolute)]
    pub course: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct GradeArgs {
    /// A folder with one folder per student (its name is the student's id).
    #[arg(value_parser = absolute)]
    pub submissions: PathBuf,
    #[command(flatten)]
    pub choose: Choose,
    #[command(flatten)]
    pub running: Running,
    #[command(flatten)]
    pub jobs: Jobs,
    #[command(flatten)]
    pub safety: Safety,
    /// Where results.json, grades.csv and feedback/ go.
    #[arg(long, value_parser = absolute, default_value = "grading")]
    pub out: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    #[arg(value_parser = absolute)]
    pub submissions: PathBuf,
    #[command(flatten)]
    pub choose: Choose,
    #[command(flatten)]
    pub jobs: Jobs,
    #[command(flatten)]
    pub safety: Safety,
    /// The bundle folder to write.
    #[arg(long, value_parser = absolute)]
    pub bundle: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[arg(value_parser = absolute)]
    pub bundle: PathBuf,
    #[command(flatten)]
    pub running: Running,
    #[command(flatten)]
    pub jobs: Jobs,
    #[command(flatten)]
    pub safety: Safety,
    #[arg(long, value_parser = absolute, default_value = "grading")]
    pub out: PathBuf,
    /// Only this student (their id); repeat for several. The others'
    /// records in results.json are kept as they are.
    #[arg(long = "student", value_name = "ID", conflicts_with = "shard")]
    pub students: Vec<String>,
    #[command(flatten)]
    pub scale: Scale,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The folder holding results.json.
    #[arg(default_value = "grading", value_parser = absolute)]
    pub dir: PathBuf,
    #[arg(long, value_enum)]
    pub lms: grader::record::export::Lms,
    /// A CSV mapping student folders to the LMS's ids, names, emails and
    /// sections (see README's "Grading a class").
    #[arg(long, value_parser = absolute)]
    pub roster: Option<PathBuf>,
    /// The file to write [default: DIR/canvas.csv or DIR/moodle.csv].
    #[arg(long, value_parser = absolute)]
    pub to: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct SimilarityArgs {
    #[arg(value_parser = absolute)]
    pub submissions: PathBuf,
    /// Where similarity.md goes.
    #[arg(long, value_parser = absolute, default_value = "grading")]
    pub out: PathBuf,
    /// The course checkout [default: the workspace the grader is run from].
    #[arg(long, value_parser = absolute)]
    pub course: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The exercise, e.g. dot-sm.
    #[arg(value_parser = exercise_name)]
    pub exercise: ExerciseId,
    /// Its folder [default: exercises/EXERCISE of this course].
    #[arg(long, value_parser = absolute)]
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub running: Running,
    #[command(flatten)]
    pub jobs: Jobs,
    #[command(flatten)]
    pub safety: Safety,
    /// Test plan seed [default: a fresh one].
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Subcommand, Debug)]
pub enum MutantsCommand {
    /// Write the class (solutions, stubs, a mutant per classic bug, correct
    /// variants) as submissions in DIR.
    Write {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
    /// Say which expectations the class graded into DIR broke; exit 1 if any.
    Verify {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
    /// Print the golden listing of the class graded into DIR: every
    /// exercise's points, every run's verdict kind and points, every check.
    Listing {
        #[arg(value_parser = absolute)]
        dir: PathBuf,
    },
}

/// What to grade.
#[derive(clap::Args, Debug)]
pub struct Choose {
    /// Only this exercise; repeat for several [default: all].
    #[arg(long = "exercise", value_name = "EXERCISE", value_parser = exercise_name)]
    pub exercises: Vec<ExerciseId>,
    /// Test plan seed, recorded in results.json [default: a fresh one].
    #[arg(long)]
    pub seed: Option<u64>,
    /// The course checkout whose crates are built [default: the workspace
    /// the grader is run from].
    #[arg(long, value_parser = absolute)]
    pub course: Option<PathBuf>,
    /// Where cargo builds [default: BUNDLE/.build]; keep it between
    /// batches so dependencies compile once.
    #[arg(long, value_parser = absolute)]
    pub target_dir: Option<PathBuf>,
    /// Seconds one student's build may take, 1 to 3600.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub build_timeout: u64,
    /// Only this student (their id); repeat for several. Everyone else's
    /// records are kept as they are.
    #[arg(long = "student", value_name = "ID")]
    pub students: Vec<String>,
}

/// Spreading `grader run` over GPUs and machines.
#[derive(clap::Args, Debug)]
pub struct Scale {
    /// Grade only the K-th of N slices of the class (students in sorted
    /// order, every N-th), for `grader merge`.
    #[arg(long, value_name = "K/N", value_parser = shard::parse)]
    pub shard: Option<Shard>,
    /// Grade over these GPUs (as nvidia-smi numbers them, e.g. 0,1): --jobs
    /// exercises at a time on each GPU, each run seeing only its GPU.
    #[arg(long, value_name = "LIST", value_parser = gpus::parse)]
    pub gpus: Option<Indices>,
}

#[derive(clap::Args, Debug)]
pub struct SlurmArgs {
    /// The bundle (`grader build`'s folder), on the cluster's shared filesystem.
    #[arg(value_parser = absolute)]
    pub bundle: PathBuf,
    /// Where the merged grading goes; shards in OUT/shards/K.
    #[arg(long, value_parser = absolute)]
    pub out: PathBuf,
    /// Tasks of the job array, one shard each, 1 to 10000.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=i64::from(shard::MAX_SHARDS)))]
    pub shards: u32,
    /// The Slurm partition [default: the cluster's].
    #[arg(long, value_parser = slurm_word)]
    pub partition: Option<String>,
    /// Generic resources per shard, e.g. gpu:1 [default: none].
    #[arg(long, value_parser = slurm_word)]
    pub gres: Option<String>,
    /// Each shard on a node of its own: shards placed on one node time
    /// streams' overlap beside each other's runs.
    #[arg(long)]
    pub exclusive: bool,
    /// The grader binary on the nodes [default: this one].
    #[arg(long, value_parser = absolute)]
    pub grader: Option<PathBuf>,
    /// Also submit them (OUT/slurm/submit.sh: sbatch --parsable).
    #[arg(long)]
    pub submit: bool,
    /// Flags for every `grader run`, after --, e.g. -- --timeout 30 --no-sandbox.
    #[arg(last = true, value_name = "RUN_FLAGS")]
    pub run_args: Vec<String>,
}

/// A partition or gres: it goes into an #SBATCH line as is. A String
/// error: this is clap's value parser, and clap shows the string as it is.
fn slurm_word(text: &str) -> Result<String, String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_-.:,=".contains(c);
    if !text.is_empty() && text.chars().all(allowed) {
        Ok(text.to_owned())
    } else {
        Err("letters, digits and _ - . : , = only".to_owned())
    }
}

/// How much runs at once.
#[derive(clap::Args, Debug)]
pub struct Jobs {
    /// Jobs at once, 1 to 256: cargo's build jobs, and exercises graded at
    /// once on each GPU (their runs share it; a timed run has it alone)
    /// [default: cargo's; the machine's cores, shared among the GPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
}

/// Whether student code is confined.
#[derive(clap::Args, Debug)]
pub struct Safety {
    /// Build and run student code without the bubblewrap sandbox, with
    /// your rights (every report says so).
    #[arg(long)]
    pub no_sandbox: bool,
}

/// How runs are made.
#[derive(clap::Args, Debug)]
pub struct Running {
    /// Seconds a run may take before it is stopped, 1 to 3600.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// Skip students results.json already holds, graded from the very
    /// inputs the bundle holds now (others are graded again).
    #[arg(long)]
    pub resume: bool,
    /// Skip compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on
    /// each exercise's sanitized runs, and on the CPU emulator leave its
    /// findings out of the grade: the memory-safety point is then not
    /// assessed.
    #[arg(long)]
    pub no_sanitize: bool,
    /// Run the kernels on the CPU emulator the bundle carries, at sizes a
    /// CPU runs in seconds [default: when no NVIDIA GPU is usable].
    #[arg(long, conflicts_with = "no_emulate")]
    pub emulate: bool,
    /// Never the emulator: with no usable NVIDIA GPU, stop before grading.
    #[arg(long)]
    pub no_emulate: bool,
}

/// An exercise of the catalogue. A String error: this is clap's value
/// parser, and clap shows the string as it is.
fn exercise_name(text: &str) -> Result<ExerciseId, String> {
    match ExerciseId::from_name(text) {
        Some(id) => Ok(id),
        None => Err(format!(
            "not an exercise; one of {}",
            catalogue::EXERCISES
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A path from the command line, made absolute against the caller's
/// working folder as it is parsed: cargo and the runs work in folders of
/// their own. A String error: this is clap's value parser, and clap shows
/// the string as it is.
fn absolute(text: &str) -> Result<PathBuf, String> {
    std::path::absolute(text).map_err(|err| err.to_string())
}

impl Running {
    pub fn options(&self, jobs: &Jobs) -> command::Running {
        command::Running {
            jobs: jobs.jobs.map(|j| j as usize),
            timeout: Duration::from_secs(self.timeout),
            resume: self.resume,
            no_sanitize: self.no_sanitize,
            emulate: self.emulate,
            no_emulate: self.no_emulate,
        }
    }
}

impl BuildArgs {
    /// `grader build`'s options.
    pub fn options<'a>(&'a self, course: &'a Path, isolation: &'a Isolation) -> Options<'a> {
        let (submissions, bundle) = (&self.submissions, &self.bundle);
        self.choose
            .options(course, submissions, bundle, isolation, &self.jobs)
    }
}

impl GradeArgs {
    /// The build half's options, the bundle going to `bundle`.
    pub fn options<'a>(
        &'a self,
        course: &'a Path,
        bundle: &'a Path,
        isolation: &'a Isolation,
    ) -> Options<'a> {
        self.choose
            .options(course, &self.submissions, bundle, isolation, &self.jobs)
    }
}

impl Choose {
    /// `grader build`'s options for these choices.
    fn options<'a>(
        &'a self,
        course: &'a Path,
        submissions: &'a Path,
        bundle: &'a Path,
        isolation: &'a Isolation,
        jobs: &Jobs,
    ) -> Options<'a> {
        Options {
            course,
            submissions,
            bundle,
            exercises: &self.exercises,
            students: &self.students,
            seed: self.seed,
            jobs: jobs.jobs.map(|j| j as usize),
            target: self.target_dir.as_deref(),
            isolation,
            build_timeout: Duration::from_secs(self.build_timeout),
        }
    }
}

/// What `grader run` grades, from its arguments.
pub fn grading<'a>(
    bundle: &'a Path,
    out: &'a Path,
    running: command::Running,
    isolation: Isolation,
    students: Vec<String>,
    scale: Option<&Scale>,
) -> grader::error::Result<Run<'a>> {
    Ok(Run {
        bundle,
        out,
        emulate: command::device(&running)?,
        running,
        isolation,
        students,
        shard: scale.and_then(|s| s.shard),
        gpus: scale.and_then(|s| s.gpus.clone()).map(|g| g.0),
    })
}

impl PackageArgs {
    /// The package's settings, for `platform`.
    pub fn settings(&self, platform: Platform) -> Settings {
        // In course order, each once, however they were named.
        let mut exercises = self.exercises.clone();
        exercises.sort();
        exercises.dedup();
        Settings {
            platform,
            exercises,
            visibility: self.visibility,
            stdout_visibility: self.stdout_visibility,
            seed: self.seed,
            time_limit: self.time_limit,
            run_timeout: self.run_timeout,
            build_timeout: self.build_timeout,
            student: grader::platform::settings::STUDENT_ID,
        }
    }
}

impl SlurmArgs {
    /// The job scripts' contents, with `grader` the binary on the nodes.
    pub fn job<'a>(&'a self, grader: &'a Path) -> Job<'a> {
        Job {
            grader,
            bundle: &self.bundle,
            out: &self.out,
            shards: self.shards,
            partition: self.partition.as_deref(),
            gres: self.gres.as_deref(),
            exclusive: self.exclusive,
            run_args: &self.run_args,
        }
    }
}
