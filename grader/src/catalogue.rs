//! The course's exercises as data: one entry per exercise, in course order,
//! with what its PTX must show (docs/src/design.md, "grader"). Everything
//! the grader does per exercise starts from here, and a test checks it
//! against the exercises/ and solutions/ folders so the two cannot drift.

/// Something a student's PTX must contain for the exercise to count as
/// solved the intended way: any one of `any_of`, inside `kernel` if given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxNeed {
    pub kernel: Option<&'static str>,
    pub any_of: &'static [&'static str],
    /// What its absence means, for the feedback.
    pub why: &'static str,
}

/// One exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exercise {
    /// The folder under exercises/ and the stub's package and binary name;
    /// the solution's is `<name>-solution`.
    pub name: &'static str,
    pub ptx: &'static [PtxNeed],
}

impl Exercise {
    pub fn solution_package(&self) -> String {
        format!("{}-solution", self.name)
    }
}

/// Every exercise, in course order.
pub const EXERCISES: [Exercise; 8] = [
    Exercise {
        name: "vecadd-anyN",
        ptx: &[PtxNeed {
            kernel: Some("vecadd"),
            any_of: &["%nctaid.x"],
            why: "the kernel never reads gridDim.x, so it cannot step by the whole grid",
        }],
    },
    Exercise {
        name: "dot-gm",
        ptx: &[PtxNeed {
            kernel: Some("dot"),
            any_of: &["st.global"],
            why: "the kernel stores no products to global memory",
        }],
    },
    Exercise {
        name: "dot-sm",
        ptx: &[
            PtxNeed {
                kernel: Some("dot"),
                any_of: &["bar.sync"],
                why: "the kernel has no __syncthreads(), which the shared-memory tree needs",
            },
            PtxNeed {
                kernel: Some("dot"),
                any_of: &["st.shared"],
                why: "the kernel never stores to shared memory",
            },
            PtxNeed {
                kernel: Some("dot"),
                any_of: &["ld.shared"],
                why: "the kernel never loads from shared memory",
            },
        ],
    },
    Exercise {
        name: "dot-atomic",
        ptx: &[PtxNeed {
            kernel: Some("dot"),
            any_of: &["atom.global.add.f32", "red.global.add.f32"],
            why: "the kernel never adds atomically into global memory",
        }],
    },
    Exercise {
        name: "matmul-naive",
        ptx: &[PtxNeed {
            kernel: Some("matmul"),
            any_of: &["%ctaid.y"],
            why: "the kernel does not use a 2D grid (blockIdx.y)",
        }],
    },
    Exercise {
        name: "matmul-tiled",
        ptx: &[
            PtxNeed {
                kernel: Some("matmul_tiled_16"),
                any_of: &["bar.sync"],
                why: "the tiled kernel has no __syncthreads() between loading and using a tile",
            },
            PtxNeed {
                kernel: Some("matmul_tiled_16"),
                any_of: &["ld.shared"],
                why: "the tiled kernel never reads its tiles from shared memory",
            },
        ],
    },
    Exercise {
        name: "memspace-timing",
        ptx: &[
            PtxNeed {
                kernel: Some("sum_constant"),
                any_of: &["ld.const"],
                why: "the constant kernel never reads constant memory",
            },
            PtxNeed {
                kernel: Some("sum_shared"),
                any_of: &["ld.shared"],
                why: "the shared kernel never reads shared memory",
            },
        ],
    },
    Exercise {
        name: "streams-overlap",
        ptx: &[PtxNeed {
            kernel: Some("transform"),
            any_of: &["st.global"],
            why: "the kernel stores no results",
        }],
    },
];

/// The exercise of this name.
pub fn find(name: &str) -> Option<&'static Exercise> {
    EXERCISES.iter().find(|e| e.name == name)
}

/// The PTX of one kernel, from its `.entry` to the next `.entry`; the whole
/// text when `kernel` is None. None when the kernel is missing.
pub fn kernel_ptx<'a>(ptx: &'a str, kernel: Option<&str>) -> Option<&'a str> {
    let Some(name) = kernel else {
        return Some(ptx);
    };
    let start = ptx.find(&format!(".entry {name}("))?;
    let rest = &ptx[start + 1..];
    let end = rest.find(".entry").map_or(ptx.len(), |at| start + 1 + at);
    Some(&ptx[start..end])
}

/// The needs `ptx` does not meet, for the feedback.
pub fn missing_in_ptx(exercise: &Exercise, ptx: &str) -> Vec<String> {
    exercise
        .ptx
        .iter()
        .filter_map(|need| match kernel_ptx(ptx, need.kernel) {
            None => Some(format!(
                "no kernel named {} in the PTX: keep the name and extern \"C\"",
                need.kernel.unwrap_or("?")
            )),
            Some(text) if need.any_of.iter().any(|i| text.contains(i)) => None,
            Some(_) => Some(format!(
                "{} (no {} in its PTX)",
                need.why,
                need.any_of.join(" or ")
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn folders(parent: &str) -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join(parent);
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_catalogue_lists_exactly_the_exercise_folders() {
        let mut names: Vec<String> = EXERCISES.iter().map(|e| e.name.to_owned()).collect();
        names.sort();
        assert_eq!(names, folders("exercises"));
        assert_eq!(names, folders("solutions"));
    }

    const PTX: &str = ".visible .entry dot(\n ld.shared.f32 %f1, [%r1];\n bar.sync 0;\n}\n\
                       .visible .entry other(\n st.shared.f32 [%r1], %f1;\n}\n";

    #[test]
    fn needs_are_looked_for_inside_their_kernel() {
        let sm = find("dot-sm").unwrap();
        let missing = missing_in_ptx(sm, PTX);
        // st.shared is in the PTX, but in another kernel.
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(missing[0].contains("never stores to shared memory"));
    }

    #[test]
    fn a_renamed_kernel_is_reported_as_missing() {
        let missing = missing_in_ptx(find("vecadd-anyN").unwrap(), PTX);
        assert!(missing[0].contains("no kernel named vecadd"), "{missing:?}");
    }

    #[test]
    fn any_one_of_the_alternatives_is_enough() {
        let ptx = ".entry dot(\n red.global.add.f32 [%rd1], %f1;\n}\n";
        assert!(missing_in_ptx(find("dot-atomic").unwrap(), ptx).is_empty());
    }
}
