//! A timeline as an SVG picture: one row per stream, a bar per copy or
//! kernel from its CUDA-event timestamps, and a time axis, so overlap (or
//! its absence) shows at a glance.

use std::fmt::Write;

use crate::svg::escape;

/// What a span of a stream's time was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    CopyIn,
    Compute,
    CopyOut,
}

impl Stage {
    const ALL: [Stage; 3] = [Stage::CopyIn, Stage::Compute, Stage::CopyOut];

    fn label(self) -> &'static str {
        match self {
            Stage::CopyIn => "copy in (host to device)",
            Stage::Compute => "kernel",
            Stage::CopyOut => "copy out (device to host)",
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Stage::CopyIn => "#4e79a7",
            Stage::Compute => "#f28e2b",
            Stage::CopyOut => "#59a14f",
        }
    }
}

/// One stage of one chunk in one stream (lane), in ms from the run's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub lane: usize,
    pub stage: Stage,
    pub start_ms: f64,
    pub end_ms: f64,
}

const WIDTH: f64 = 960.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const LANE: f64 = 28.0;
const BAR: f64 = 20.0;

/// The timeline of `lanes` streams as an SVG document.
pub fn svg(title: &str, lanes: usize, spans: &[Span]) -> String {
    let end = spans.iter().map(|s| s.end_ms).fold(0.0, f64::max).max(1e-3);
    let scale = (WIDTH - LEFT - RIGHT) / end;
    let axis_y = TOP + LANE * lanes as f64 + 8.0;
    let height = axis_y + 60.0;
    let mut out = String::new();
    crate::svg::open(&mut out, WIDTH, height);
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="22" font-size="14">{}</text>"#,
        escape(title)
    );
    for lane in 0..lanes {
        let y = TOP + LANE * lane as f64;
        let _ = writeln!(
            out,
            r#"<text x="8" y="{:.1}">stream {lane}</text>"#,
            y + BAR * 0.7
        );
    }
    for span in spans {
        let x = LEFT + span.start_ms * scale;
        let w = ((span.end_ms - span.start_ms) * scale).max(0.5);
        let y = TOP + LANE * span.lane as f64;
        let _ = writeln!(
            out,
            r#"<rect class="span" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{BAR}" fill="{}"><title>{}: {:.3} to {:.3} ms</title></rect>"#,
            span.stage.colour(),
            span.stage.label(),
            span.start_ms,
            span.end_ms
        );
    }
    axis(&mut out, end, scale, axis_y);
    legend(&mut out, axis_y + 40.0);
    out.push_str("</svg>\n");
    out
}

/// A line with ticks at a round step (1, 2 or 5 times a power of ten).
fn axis(out: &mut String, end: f64, scale: f64, y: f64) {
    let _ = writeln!(
        out,
        r#"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="black"/>"#,
        LEFT + end * scale
    );
    let step = tick_step(end);
    let mut t = 0.0;
    while t <= end * (1.0 + 1e-9) {
        let x = LEFT + t * scale;
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{y:.1}" x2="{x:.1}" y2="{:.1}" stroke="black"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            y + 5.0,
            y + 18.0,
            round_label(t)
        );
        t += step;
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="end">ms</text>"#,
        WIDTH - RIGHT,
        y + 18.0
    );
}

fn legend(out: &mut String, y: f64) {
    let mut x = LEFT;
    for stage in Stage::ALL {
        let _ = writeln!(
            out,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{y:.1}">{}</text>"#,
            y - 10.0,
            stage.colour(),
            x + 16.0,
            stage.label()
        );
        x += 220.0;
    }
}

/// About eight ticks: 1, 2 or 5 times a power of ten.
fn tick_step(end: f64) -> f64 {
    let rough = end / 8.0;
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= rough)
        .unwrap_or(10.0 * power)
}

fn round_label(t: f64) -> String {
    let text = format!("{t:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two streams, two chunks each, overlapping as a good pipeline does.
    fn pipeline() -> Vec<Span> {
        let mut spans = Vec::new();
        for chunk in 0..4 {
            let lane = chunk % 2;
            let t = chunk as f64 * 1.5;
            for (k, stage) in Stage::ALL.into_iter().enumerate() {
                spans.push(Span {
                    lane,
                    stage,
                    start_ms: t + k as f64 * 1.5,
                    end_ms: t + k as f64 * 1.5 + 1.4,
                });
            }
        }
        spans
    }

    #[test]
    fn the_timeline_looks_as_it_did() {
        insta::assert_snapshot!(svg("overlapped: 2 streams, 4 chunks <&>", 2, &pipeline()));
    }

    #[test]
    fn the_timeline_is_well_formed_svg_with_a_bar_per_span() {
        let text = svg("t", 2, &pipeline());
        let doc = roxmltree::Document::parse(&text).expect("the SVG must parse as XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let bars = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("span"))
            .count();
        assert_eq!(bars, 12);
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(8.0), 1.0);
        assert_eq!(tick_step(13.0), 2.0);
        assert_eq!(tick_step(0.3), 0.05);
        assert_eq!(round_label(2.5), "2.5");
        assert_eq!(round_label(3.0), "3");
    }
}
