//! The launch-shape classes a planned run exercises (the catalogue's
//! [`Shape`]), read from the run's own arguments: what the run asks of the
//! binary, not what its plan meant. A test checks at many seeds that every
//! exercise's plan covers every class its catalogue entry lists.

use kernels::catalogue::{ExerciseId, Family, Shape};

use crate::plan::runs::Run;
use crate::plan::streams::GRID_CAP_ELEMENTS;

/// The classes `run` of `exercise` exercises.
pub fn of(exercise: ExerciseId, run: &Run) -> Vec<Shape> {
    let mut shapes = Vec::new();
    let mut add = |yes: bool, shape| {
        if yes {
            shapes.push(shape);
        }
    };
    let n = run.arg("n");
    match exercise.family() {
        Family::Matmul => {
            let flag = if exercise == ExerciseId::MatmulTiled {
                "tile"
            } else {
                "block"
            };
            let variant = kernels::matmul::Variant::of(exercise).expect("a matmul exercise");
            let edges: Vec<u64> = crate::plan::matmul::edges(variant)
                .iter()
                .map(|&e| u64::from(e))
                .collect();
            let edge = run.arg(flag);
            let width = run.arg("width").unwrap_or(0);
            add(edge.is_none(), Shape::DefaultBlock);
            add(edge == Some(32), Shape::LargestBlock);
            add(edge == Some(edges[0]), Shape::SmallestEdge);
            // Without an edge, every edge the exercise takes.
            let against: Vec<u64> = edge.map_or(edges.clone(), |e| vec![e]);
            add(against.iter().all(|&e| width < e), Shape::WidthBelowEdge);
            add(
                against.iter().all(|&e| width > e && width % e == 1),
                Shape::WidthOnePastEdge,
            );
            add(
                against.iter().all(|&e| width >= e && width % e == 0),
                Shape::WidthOfWholeEdges,
            );
            // Which edge meets a partial width is a class, not the seed's
            // choice: a kernel may be right with one tile and not the other.
            let partial = |e: u64| edge == Some(e) && width > e && width % e != 0;
            add(partial(edges[0]), Shape::PartialBlocksOfTheSmallestEdge);
            add(partial(32), Shape::PartialBlocksOfTheLargestEdge);
        }
        Family::Streams => {
            let (n, chunks) = (n.unwrap_or(0), run.arg("chunks").unwrap_or(1));
            // An odd n leaves at least one chunk of odd length.
            add(n % 2 == 1, Shape::ChunksOffTheBlock);
            add(n / chunks > GRID_CAP_ELEMENTS, Shape::ChunksPastTheGrid);
        }
        Family::Vecadd | Family::Dot | Family::Memspace => {
            let (threads, blocks) = (run.arg("threads"), run.arg("blocks"));
            add(threads.is_none(), Shape::DefaultBlock);
            add(threads == Some(1), Shape::BlockOfOne);
            add(threads == Some(32), Shape::OneWarp);
            add(threads == Some(64), Shape::TwoWarps);
            add(threads == Some(1024), Shape::LargestBlock);
            add(
                threads.is_some_and(|t| !t.is_power_of_two()),
                Shape::NoPowerOfTwoBlock,
            );
            add(blocks == Some(1), Shape::OneBlock);
            add(n == Some(1), Shape::OneElement);
            add(n.is_some_and(|n| n > 1 << 31), Shape::PastInt);
            let one_off =
                |n: u64, unit: u64| unit > 2 && matches!(n % unit, r if r == 1 || r == unit - 1);
            if let (Some(n), Some(t)) = (n, threads) {
                add(one_off(n, t), Shape::NearBlockMultiple);
                if let Some(b) = blocks {
                    add(one_off(n, t * b), Shape::NearGridMultiple);
                    add(t * b < n, Shape::FewerThreadsThanElements);
                }
            }
        }
    }
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::exercise::plan;
    use kernels::catalogue::ALL_IDS;
    use std::collections::BTreeSet;

    #[test]
    fn every_plan_covers_every_class_of_its_exercise_at_every_seed() {
        for seed in 0..500 {
            for exercise in ALL_IDS {
                let covered: BTreeSet<Shape> = plan(exercise, seed)
                    .iter()
                    .flat_map(|run| of(exercise, run))
                    .collect();
                for shape in exercise.exercise().shapes {
                    assert!(
                        covered.contains(shape),
                        "{exercise} at seed {seed} has no run with {}: {covered:?}",
                        shape.words()
                    );
                }
            }
        }
    }

    #[test]
    fn a_run_s_classes_are_read_from_its_arguments() {
        let vecadd = plan(ExerciseId::VecaddAnyN, 7);
        let one_block = vecadd.iter().find(|r| r.arg("blocks") == Some(1)).unwrap();
        let shapes = of(ExerciseId::VecaddAnyN, one_block);
        assert!(shapes.contains(&Shape::OneBlock), "{shapes:?}");
        assert!(shapes.contains(&Shape::LargestBlock), "{shapes:?}");
        assert!(shapes.contains(&Shape::NearBlockMultiple), "{shapes:?}");
        assert!(!shapes.contains(&Shape::BlockOfOne), "{shapes:?}");
        // matmul: 33 against edge 32 is one past; 1024 with the default is
        // whole for every edge.
        let tiled = plan(ExerciseId::MatmulTiled, 7);
        let whole = tiled.iter().find(|r| r.arg("width") == Some(1024)).unwrap();
        let shapes = of(ExerciseId::MatmulTiled, whole);
        assert_eq!(shapes, vec![Shape::DefaultBlock, Shape::WidthOfWholeEdges]);
    }
}
