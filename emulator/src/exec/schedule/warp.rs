//! Warp-wide operations, run once every participating lane has arrived:
//! `shfl.sync` (up, down, butterfly, index), `vote.sync` (all, any, uni,
//! ballot), `match.sync` (any, all) and `activemask`, as PTX defines them.

use crate::ir::{ShuffleMode, WarpOp};

/// One lane's inputs to a warp operation.
#[derive(Clone, Copy, Debug)]
pub struct LaneInput {
    pub lane: u32,
    pub a: u64,
    pub b: u64,
    pub c: u64,
}

/// One lane's outputs: the value and the predicate (shfl's "source lane was
/// in range").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaneOutput {
    pub d: u64,
    pub pred: bool,
    /// A shuffle's source lane, when it read another lane's value.
    pub source: Option<u32>,
}

/// Runs `op` over the lanes that arrived. `values[lane]` is each present
/// lane's `a`, for shuffles reading another lane.
pub fn collective(op: WarpOp, lanes: &[LaneInput], values: &[Option<u64>; 32]) -> Vec<LaneOutput> {
    let votes = || lanes.iter().map(|l| l.a != 0);
    let ballot: u64 = lanes
        .iter()
        .filter(|l| l.a != 0)
        .map(|l| 1u64 << l.lane)
        .sum();
    let present: u64 = lanes.iter().map(|l| 1u64 << l.lane).sum();
    let all_equal = lanes.windows(2).all(|w| w[0].a == w[1].a);
    lanes
        .iter()
        .map(|lane| match op {
            WarpOp::Shuffle(mode) => shuffle(mode, lane, values),
            WarpOp::VoteAll => LaneOutput {
                d: u64::from(votes().all(|v| v)),
                pred: true,
                source: None,
            },
            WarpOp::VoteAny => LaneOutput {
                d: u64::from(votes().any(|v| v)),
                pred: true,
                source: None,
            },
            WarpOp::VoteUni => {
                let first = lanes.first().is_some_and(|l| l.a != 0);
                LaneOutput {
                    d: u64::from(votes().all(|v| v == first)),
                    pred: true,
                    source: None,
                }
            }
            WarpOp::VoteBallot => LaneOutput {
                d: ballot,
                pred: true,
                source: None,
            },
            WarpOp::Sync => LaneOutput {
                d: 0,
                pred: true,
                source: None,
            },
            WarpOp::ActiveMask => LaneOutput {
                d: present,
                pred: true,
                source: None,
            },
            WarpOp::MatchAny => LaneOutput {
                d: lanes
                    .iter()
                    .filter(|other| other.a == lane.a)
                    .map(|other| 1u64 << other.lane)
                    .sum(),
                pred: true,
                source: None,
            },
            WarpOp::MatchAll => LaneOutput {
                d: if all_equal { present } else { 0 },
                pred: all_equal,
                source: None,
            },
        })
        .collect()
}

fn shuffle(mode: ShuffleMode, lane: &LaneInput, values: &[Option<u64>; 32]) -> LaneOutput {
    let me = lane.lane;
    let b = (lane.b & 0x1f) as u32;
    let clamp = (lane.c & 0x1f) as u32;
    let segmask = ((lane.c >> 8) & 0x1f) as u32;
    let max_lane = (me & segmask) | (clamp & !segmask);
    let min_lane = me & segmask;
    let (source, valid) = match mode {
        ShuffleMode::Up => {
            let j = me as i32 - b as i32;
            (j, j >= max_lane as i32)
        }
        ShuffleMode::Down => {
            let j = (me + b) as i32;
            (j, j <= max_lane as i32)
        }
        ShuffleMode::Butterfly => {
            let j = (me ^ b) as i32;
            (j, j <= max_lane as i32)
        }
        ShuffleMode::Index => {
            let j = (min_lane | (b & !segmask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    let from = if valid { source as usize } else { me as usize };
    // A source lane that did not take part reads as this lane's own value.
    let read = values.get(from).copied().flatten();
    LaneOutput {
        d: read.unwrap_or(lane.a),
        pred: valid,
        source: read.map(|_| from as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: WarpOp, b: u64, c: u64) -> Vec<LaneOutput> {
        let lanes: Vec<LaneInput> = (0..32)
            .map(|l| LaneInput {
                lane: l,
                a: u64::from(l) * 10,
                b,
                c,
            })
            .collect();
        let mut values = [None; 32];
        for l in &lanes {
            values[l.lane as usize] = Some(l.a);
        }
        collective(op, &lanes, &values)
    }

    #[test]
    fn shuffle_down_reads_higher_lanes_and_keeps_its_own_past_the_end() {
        let out = run(WarpOp::Shuffle(ShuffleMode::Down), 16, 0x1f);
        assert_eq!((out[0].d, out[0].pred), (160, true));
        assert_eq!(out[15].d, 310);
        assert_eq!((out[16].d, out[16].pred), (160, false));
    }

    #[test]
    fn shuffle_up_butterfly_and_index() {
        let up = run(WarpOp::Shuffle(ShuffleMode::Up), 1, 0);
        assert_eq!((up[0].d, up[0].pred), (0, false));
        assert_eq!(up[5].d, 40);
        let xor = run(WarpOp::Shuffle(ShuffleMode::Butterfly), 1, 0x1f);
        assert_eq!(xor[4].d, 50);
        assert_eq!(xor[5].d, 40);
        let idx = run(WarpOp::Shuffle(ShuffleMode::Index), 3, 0x1f);
        assert!(idx.iter().all(|o| o.d == 30));
        // Width 8: c = ((32 - 8) << 8) | 0x1f; lane 9 reads lane 8 + 3.
        let seg = run(WarpOp::Shuffle(ShuffleMode::Index), 3, (24 << 8) | 0x1f);
        assert_eq!(seg[9].d, 110);
    }

    #[test]
    fn votes() {
        let lanes: Vec<LaneInput> = (0..4)
            .map(|l| LaneInput {
                lane: l,
                a: u64::from(l % 2),
                b: 0,
                c: 0,
            })
            .collect();
        let values = [None; 32];
        assert_eq!(collective(WarpOp::VoteAny, &lanes, &values)[0].d, 1);
        assert_eq!(collective(WarpOp::VoteAll, &lanes, &values)[0].d, 0);
        assert_eq!(collective(WarpOp::VoteUni, &lanes, &values)[0].d, 0);
        assert_eq!(collective(WarpOp::VoteBallot, &lanes, &values)[0].d, 0b1010);
        assert_eq!(collective(WarpOp::MatchAny, &lanes, &values)[1].d, 0b1010);
        assert_eq!(collective(WarpOp::MatchAny, &lanes, &values)[2].d, 0b0101);
        let all = collective(WarpOp::MatchAll, &lanes, &values)[0];
        assert_eq!((all.d, all.pred), (0, false));
        let one = collective(WarpOp::MatchAll, &lanes[..1], &values)[0];
        assert_eq!((one.d, one.pred), (1, true));
        assert_eq!(
            collective(WarpOp::ActiveMask, &lanes[1..3], &values)[0].d,
            0b0110
        );
    }
}
