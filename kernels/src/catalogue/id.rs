//! Every exercise by a name the compiler checks ([`ExerciseId`]), and the
//! family of exercises that share a driver, a plan's shape and a recheck
//! ([`Family`]). Code that treats exercises differently matches on these,
//! never on a name's text.

/// One exercise of the course.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "protocol",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "&'static str", try_from = "String")
)]
pub enum ExerciseId {
    VecaddAnyN,
    DotGm,
    DotSm,
    DotAtomic,
    MatmulNaive,
    MatmulTiled,
    MemspaceTiming,
    StreamsOverlap,
}

/// Every exercise, in course order.
pub const ALL_IDS: [ExerciseId; 8] = [
    ExerciseId::VecaddAnyN,
    ExerciseId::DotGm,
    ExerciseId::DotSm,
    ExerciseId::DotAtomic,
    ExerciseId::MatmulNaive,
    ExerciseId::MatmulTiled,
    ExerciseId::MemspaceTiming,
    ExerciseId::StreamsOverlap,
];

/// Exercises that share a driver (`kernels::<family>`), the shape of their
/// test plans and the grader's recheck of their reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    Vecadd,
    Dot,
    Matmul,
    Memspace,
    Streams,
}

impl ExerciseId {
    /// The exercise's name: its folder under exercises/, its package and
    /// binary, and the `exercise` of its reports.
    pub const fn name(self) -> &'static str {
        match self {
            ExerciseId::VecaddAnyN => "vecadd-anyN",
            ExerciseId::DotGm => "dot-gm",
            ExerciseId::DotSm => "dot-sm",
            ExerciseId::DotAtomic => "dot-atomic",
            ExerciseId::MatmulNaive => "matmul-naive",
            ExerciseId::MatmulTiled => "matmul-tiled",
            ExerciseId::MemspaceTiming => "memspace-timing",
            ExerciseId::StreamsOverlap => "streams-overlap",
        }
    }

    /// The exercise of this name.
    pub fn from_name(name: &str) -> Option<ExerciseId> {
        ALL_IDS.into_iter().find(|id| id.name() == name)
    }

    pub const fn family(self) -> Family {
        match self {
            ExerciseId::VecaddAnyN => Family::Vecadd,
            ExerciseId::DotGm | ExerciseId::DotSm | ExerciseId::DotAtomic => Family::Dot,
            ExerciseId::MatmulNaive | ExerciseId::MatmulTiled => Family::Matmul,
            ExerciseId::MemspaceTiming => Family::Memspace,
            ExerciseId::StreamsOverlap => Family::Streams,
        }
    }

    /// The exercise's catalogue entry.
    pub fn exercise(self) -> &'static super::Exercise {
        &super::EXERCISES[self as usize]
    }
}

impl std::fmt::Display for ExerciseId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<ExerciseId> for &'static str {
    fn from(id: ExerciseId) -> &'static str {
        id.name()
    }
}

impl TryFrom<String> for ExerciseId {
    type Error = String;

    /// A name of the catalogue; else what the names are.
    fn try_from(name: String) -> Result<ExerciseId, String> {
        ExerciseId::from_name(&name)
            .ok_or_else(|| format!("{name} is not an exercise; one of {}", super::names()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_the_catalogue_s_entries_in_course_order() {
        for (index, id) in ALL_IDS.into_iter().enumerate() {
            let exercise = &crate::catalogue::EXERCISES[index];
            assert_eq!(exercise.id, id);
            assert_eq!(id.exercise().name, id.name());
            assert_eq!(ExerciseId::from_name(id.name()), Some(id));
        }
        assert_eq!(ExerciseId::from_name("dot"), None);
    }
}
