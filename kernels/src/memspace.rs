//! memspace-timing, the pure part: the data, the closed form every thread's
//! sum must equal, the check, and the exercise's protocol types.
//!
//! Every thread sums the same SIZE values, data\[j] = j, read from one of four
//! places: global memory, `__constant__` memory, a register (a kernel
//! parameter added SIZE times), or shared memory. Each sum is
//! SIZE·(SIZE − 1)/2 = 8,386,560: every partial sum is an integer below 2^24,
//! so exact in f32 in any order. The register variant adds
//! (SIZE − 1)/2 = 2047.5 SIZE times, whose partial sums are halves below
//! 2^23: the same exact total.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::checksum::Checksum;
use crate::protocol::{Check, Failure, Real};

#[cfg(feature = "runtime")]
pub mod driver;

pub const NAME: &str = crate::catalogue::ExerciseId::MemspaceTiming.name();

/// Values every thread sums: 16 KiB, a quarter of constant memory.
pub const SIZE: usize = 4096;

/// Σ_{j<SIZE} j.
pub const EXPECTED_SUM: f32 = (SIZE * (SIZE - 1) / 2) as f32;

/// The register variant's parameter: added SIZE times, EXPECTED_SUM.
pub const REGISTER_VALUE: f32 = (SIZE - 1) as f32 / 2.0;

/// data\[j] = j.
pub fn data() -> Box<[f32; SIZE]> {
    let mut data = Box::new([0.0f32; SIZE]);
    for (j, x) in data.iter_mut().enumerate() {
        *x = j as f32;
    }
    data
}

/// Where a kernel reads its values from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Space {
    Global,
    Constant,
    Register,
    Shared,
}

impl Space {
    pub const ALL: [Space; 4] = [
        Space::Global,
        Space::Constant,
        Space::Register,
        Space::Shared,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Constant => "constant",
            Space::Register => "register",
            Space::Shared => "shared",
        }
    }
}

/// Which values a warp's 32 threads read at one step.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// All read data\[j]: one address per warp, which constant memory
    /// broadcasts to the whole warp at once.
    Uniform,
    /// Thread t reads data[(j + t) mod SIZE]: 32 addresses per warp, which
    /// constant memory serves one after another.
    PerThread,
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pattern::Uniform => "uniform",
            Pattern::PerThread => "per-thread",
        })
    }
}

impl FromStr for Pattern {
    type Err = String;
    fn from_str(text: &str) -> Result<Pattern, String> {
        match text {
            "uniform" => Ok(Pattern::Uniform),
            "per-thread" => Ok(Pattern::PerThread),
            other => Err(format!(
                "'{other}' is not a pattern: use uniform (every thread reads the same value) \
                 or per-thread (each thread its own)"
            )),
        }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    pub threads: u32,
    pub blocks: u32,
    pub runs: u32,
    pub pattern: Pattern,
}

impl Parameters {
    pub fn grid_threads(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.threads)
    }
}

/// One memory space's measurement.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Row {
    pub space: Space,
    /// Median kernel time.
    pub ms: f64,
    /// Values read per second, in billions: threads × SIZE / time.
    pub g_reads_per_s: f64,
    /// This space's time over the register variant's.
    pub relative_to_register: f64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Results {
    pub rows: Vec<Row>,
    /// Every thread's sum, space after space in [`Space::ALL`]'s order (see
    /// [`checksum`]). Optional in the schema; the grader requires it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
}

/// The checksum of the sums that came back: each space's in [`Space::ALL`]'s
/// order, every thread's sum in thread order; a missing space adds nothing.
pub fn checksum(outputs: &[(Space, Vec<f32>)]) -> Checksum {
    let mut checksum = Checksum::default();
    for space in Space::ALL {
        if let Some((_, out)) = outputs.iter().find(|(s, _)| *s == space) {
            checksum.extend(out.iter().map(|x| x.to_bits()));
        }
    }
    checksum
}

/// The checksum of a right run with `params`: every thread's sum is
/// [`EXPECTED_SUM`], in each of the four spaces.
pub fn expected_checksum(params: &Parameters) -> Checksum {
    let values = params.grid_threads() * Space::ALL.len() as u64;
    Checksum::of((0..values).map(|_| EXPECTED_SUM.to_bits()))
}

/// Listed failures per check.
const LISTED_FAILURES: usize = 5;

/// Every thread's sum, in every space, against [`EXPECTED_SUM`]. `outputs`
/// holds each space's per-thread sums.
pub fn check(outputs: &[(Space, Vec<f32>)], params: &Parameters) -> Check {
    let threads = params.grid_threads();
    let mut wrong = 0;
    let mut failures = Vec::new();
    let mut hints = Vec::new();
    for space in Space::ALL {
        let Some((_, out)) = outputs.iter().find(|(s, _)| *s == space) else {
            wrong += threads;
            hints.push(format!(
                "no result for the {} kernel came back",
                space.name()
            ));
            continue;
        };
        let mut wrong_here = 0;
        for (t, &got) in out.iter().enumerate() {
            if got != EXPECTED_SUM {
                wrong_here += 1;
                if failures.len() < LISTED_FAILURES {
                    failures.push(Failure {
                        at: format!("{}[{t}]", space.name()),
                        expected: Real(f64::from(EXPECTED_SUM)),
                        got: Real(f64::from(got)),
                    });
                }
            }
        }
        wrong_here += threads.saturating_sub(out.len() as u64);
        if wrong_here > 0 {
            hints.push(hint(space, out));
        }
        wrong += wrong_here;
    }
    Check {
        passed: wrong == 0,
        criterion: format!(
            "every thread's sum of data[j] = j over {SIZE} values equals {EXPECTED_SUM}, in every space"
        ),
        compared: threads * Space::ALL.len() as u64,
        wrong,
        failures,
        tolerance: None,
        hint: (!hints.is_empty()).then(|| hints.join("; ")),
    }
}

fn hint(space: Space, out: &[f32]) -> String {
    let name = space.name();
    if out.iter().all(|x| x.is_nan()) {
        return format!("the {name} kernel wrote no sums: write its loop and store the sum in out");
    }
    if space == Space::Constant && out.iter().all(|&x| x == 0.0) {
        return "the constant kernel summed zeros: copy the data into const_data through the \
                module's symbol before launching"
            .into();
    }
    if space == Space::Shared && out.iter().any(|x| x.is_nan() || *x != out[0]) {
        return "the shared kernel's sums differ between threads: every thread must wait at \
                __syncthreads() until the whole block has loaded the tile"
            .into();
    }
    format!("the {name} kernel's sums are wrong: each thread adds all {SIZE} values once")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Parameters {
        Parameters {
            threads: 4,
            blocks: 2,
            runs: 1,
            pattern: Pattern::Uniform,
        }
    }

    fn all_right() -> Vec<(Space, Vec<f32>)> {
        Space::ALL
            .iter()
            .map(|&s| (s, vec![EXPECTED_SUM; 8]))
            .collect()
    }

    #[test]
    fn the_sums_are_exact_in_f32_in_any_order() {
        let data = data();
        let forward: f32 = data.iter().sum();
        let backward: f32 = data.iter().rev().sum();
        assert_eq!((forward, backward), (EXPECTED_SUM, EXPECTED_SUM));
        let rotated: f32 = (0..SIZE).map(|j| data[(j + 17) % SIZE]).sum();
        assert_eq!(rotated, EXPECTED_SUM);
        let register: f32 = (0..SIZE).map(|_| REGISTER_VALUE).sum();
        assert_eq!(register, EXPECTED_SUM);
        assert_eq!(EXPECTED_SUM, 8_386_560.0);
    }

    #[test]
    fn right_sums_pass_and_each_wrong_one_is_found() {
        assert!(check(&all_right(), &params()).passed);
        let mut outputs = all_right();
        outputs[3].1[5] = EXPECTED_SUM - 4095.0;
        let check = check(&outputs, &params());
        assert_eq!(check.wrong, 1);
        assert_eq!(check.failures[0].at, "shared[5]");
        assert!(check.hint.unwrap().contains("__syncthreads"));
    }

    #[test]
    fn the_checksum_of_right_sums_is_the_expected_one_and_a_wrong_sum_changes_it() {
        let p = params();
        // Written out independently: 4 spaces x 8 threads of 8386560.0f32,
        // 0.99969482421875 x 2^23: exponent 22 + 127, mantissa 0x7ff000.
        let bits = 0x4aff_f000;
        assert_eq!(EXPECTED_SUM.to_bits(), bits);
        assert_eq!(expected_checksum(&p), Checksum::of([bits; 32]));
        assert_eq!(checksum(&all_right()), expected_checksum(&p));
        let mut outputs = all_right();
        outputs[2].1[7] = 8_386_561.0;
        assert_ne!(checksum(&outputs), expected_checksum(&p));
        // The order of the spaces in the driver's list does not matter.
        let mut reversed = all_right();
        reversed.reverse();
        assert_eq!(checksum(&reversed), expected_checksum(&p));
    }

    #[test]
    fn an_unfilled_constant_array_is_named() {
        let mut outputs = all_right();
        outputs[1].1 = vec![0.0; 8];
        assert!(
            check(&outputs, &params())
                .hint
                .unwrap()
                .contains("const_data")
        );
    }

    #[test]
    fn a_missing_space_fails() {
        let outputs: Vec<_> = all_right().into_iter().take(3).collect();
        let check = check(&outputs, &params());
        assert!(!check.passed);
        assert!(check.hint.unwrap().contains("shared"));
    }

    #[test]
    fn patterns_parse_and_say_what_is_allowed() {
        assert_eq!("per-thread".parse::<Pattern>().unwrap(), Pattern::PerThread);
        let err = "strided".parse::<Pattern>().unwrap_err();
        assert!(
            err.contains("uniform") && err.contains("per-thread"),
            "{err}"
        );
    }
}
