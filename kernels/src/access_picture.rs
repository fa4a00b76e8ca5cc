//! `--accesses`' picture of what the emulator recorded of a launch
//! (`crate::emulator_accesses`), as SVG: a warp's costliest global load,
//! its 32 lanes against the 32-byte sectors and 128-byte lines they touch
//! (coalesced or not); its costliest shared access, lanes against the 32
//! banks (conflicts or not); and the output, element by element, coloured
//! by the block that wrote it, the elements no thread wrote marked. Each
//! part says in words what it shows, for the student reading it.

use std::fmt::Write;

use crate::emulator_accesses::{
    BANKS, Kind, LINE_BYTES, LaunchAccesses, Output, SECTOR_BYTES, Space, WarpAccess,
};
use crate::svg::{self, escape};
use crate::units::{count, counted};

const WIDTH: f64 = 960.0;
/// Room on the left for the rows' names.
const LEFT: f64 = 130.0;
const RIGHT: f64 = 20.0;
const PLOT: f64 = WIDTH - LEFT - RIGHT;
const LANE_W: f64 = PLOT / 32.0;
const BOX_H: f64 = 20.0;
/// The drop from the lanes to what they touch.
const FAN: f64 = 90.0;

/// A block's colour, the book's colour-blind-safe palette (Okabe and
/// Ito, as scripts/book/svg.py has it); they repeat after seven blocks.
const PALETTE: [&str; 7] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
];
const LANE_COLOUR: &str = "#0072B2";
const USED: &str = "#0072B2";
const CONFLICT: &str = "#D55E00";
const ONE_WORD: &str = "#009E73";
const IDLE: &str = "#eeeeee";
/// Outputs up to this many elements get a cell each; more share cells:
/// 56 rows of 128, which fit the picture's width at 6 px a cell.
const MAX_CELLS: u64 = 128 * 56;

/// The picture of `launch` as an SVG document.
pub fn svg(launch: &LaunchAccesses) -> String {
    let mut body = String::new();
    let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
    let blocks: u64 = launch.grid.iter().map(|&d| u64::from(d)).product();
    let mut y = 28.0;
    text(
        &mut body,
        16.0,
        y,
        15,
        true,
        &format!(
            "What the CPU emulator recorded of the first launch of kernel {} ({} of {})",
            launch.kernel,
            counted(blocks as usize, "block", "blocks"),
            counted(threads as usize, "thread", "threads")
        ),
    );
    y += 18.0;
    let mut drawn = 0;
    if let Some(access) = launch.costliest(Space::Global) {
        y = global_panel(&mut body, y + 16.0, access);
        drawn += 1;
    }
    if let Some(access) = launch.costliest(Space::Shared) {
        y = shared_panel(&mut body, y + 16.0, access);
        drawn += 1;
    }
    match &launch.output {
        Some(output) => {
            y = output_panel(&mut body, y + 16.0, output, blocks);
            drawn += 1;
        }
        None => {
            y += 24.0;
            text(
                &mut body,
                16.0,
                y,
                12,
                false,
                "The output is not drawn: this exercise names no output buffer to the emulator.",
            );
        }
    }
    if drawn == 0 {
        y += 20.0;
        text(
            &mut body,
            16.0,
            y,
            12,
            false,
            "Warp 0 of block 0 made no global or shared memory access.",
        );
    }
    let mut out = String::new();
    svg::open(&mut out, WIDTH, y + 20.0);
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

/// Where an access is: "kernel.cu:14", or "a line outside kernel.cu".
fn place(access: &WarpAccess) -> String {
    access
        .line
        .map_or("a line outside kernel.cu".to_owned(), |l| {
            format!("kernel.cu:{l}")
        })
}

/// What the lanes did, for a caption.
fn verb(access: &WarpAccess) -> &'static str {
    match access.kind {
        Kind::Load => "read",
        Kind::Store => "wrote",
        Kind::Atomic => "updated",
    }
}

/// The heading and caption of a warp's panel, and its lanes: returns the
/// y of the lanes' bottom edge.
fn lanes(out: &mut String, y: f64, access: &WarpAccess, heading: &str, caption: &str) -> f64 {
    text(out, 16.0, y, 13, true, heading);
    let below = wrapped(out, y + 18.0, caption);
    let top = below + 16.0;
    text_end(out, LEFT - 8.0, top + 14.0, "lanes of warp 0");
    for lane in 0..32u8 {
        let x = LEFT + f64::from(lane) * LANE_W;
        let active = access.lanes.iter().any(|l| l.lane == lane);
        let (fill, ink) = if active {
            (LANE_COLOUR, "white")
        } else {
            (IDLE, "#999999")
        };
        let _ = writeln!(
            out,
            r#"<rect class="lane" x="{x:.1}" y="{top:.1}" width="{:.1}" height="{BOX_H}" fill="{fill}"><title>lane {lane}{}</title></rect><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="{ink}">{lane}</text>"#,
            LANE_W - 2.0,
            if active { "" } else { ": no access" },
            x + LANE_W / 2.0 - 1.0,
            top + 14.0
        );
    }
    top + BOX_H
}

fn lane_x(lane: u8) -> f64 {
    LEFT + f64::from(lane) * LANE_W + LANE_W / 2.0 - 1.0
}

/// A warp's global access against the sectors and lines it touches.
fn global_panel(out: &mut String, y: f64, access: &WarpAccess) -> f64 {
    let sectors = access.sectors();
    let ideal = access.ideal_sectors();
    let mut lines: Vec<u64> = sectors
        .iter()
        .map(|s| s * SECTOR_BYTES / LINE_BYTES)
        .collect();
    lines.dedup();
    let mut addresses: Vec<u64> = access.lanes.iter().map(|l| l.address).collect();
    addresses.dedup();
    let caption = if addresses.len() == 1 && access.lanes.len() > 1 {
        format!(
            "{} {} the same {} B: one sector serves them all, a broadcast.",
            counted(access.lanes.len(), "lane", "lanes"),
            verb(access),
            access.bytes
        )
    } else {
        let verdict = if sectors.len() as u64 <= ideal {
            "the fewest they fit in: coalesced".to_owned()
        } else {
            format!("where {ideal} would hold the same bytes: uncoalesced")
        };
        format!(
            "{} {} {} B each: {} in {} of 128 B, {verdict}.",
            counted(access.lanes.len(), "lane", "lanes"),
            verb(access),
            access.bytes,
            counted(sectors.len(), "sector of 32 B", "sectors of 32 B"),
            counted(lines.len(), "line", "lines"),
        )
    };
    let heading = format!(
        "Global memory: the costliest {} {}, {}, in warp 0 of block 0 (its first execution)",
        access.space.name(),
        access.kind.name(),
        place(access)
    );
    let lanes_bottom = lanes(out, y, access, &heading, &caption);
    // The sectors, in address order, a gap between lines.
    let top = lanes_bottom + FAN;
    let gap = if lines.len() > 1 { 6.0 } else { 0.0 };
    let width = ((PLOT - gap * (lines.len() as f64 - 1.0)) / sectors.len().max(1) as f64).min(60.0);
    let total = width * sectors.len() as f64 + gap * (lines.len() as f64 - 1.0);
    let start = LEFT + (PLOT - total) / 2.0;
    let first_line = lines.first().copied().unwrap_or(0);
    let mut x_of = Vec::with_capacity(sectors.len());
    let mut x = start;
    for (i, &sector) in sectors.iter().enumerate() {
        if i > 0 && sector * SECTOR_BYTES / LINE_BYTES != sectors[i - 1] * SECTOR_BYTES / LINE_BYTES
        {
            x += gap;
        }
        x_of.push(x);
        x += width;
    }
    // Lanes to the bytes they touch, drawn first so the boxes cover them.
    for lane in &access.lanes {
        let sector = lane.address / SECTOR_BYTES;
        let Ok(at) = sectors.binary_search(&sector) else {
            continue;
        };
        let within = (lane.address % SECTOR_BYTES) as f64 + f64::from(access.bytes.max(1)) / 2.0;
        let to = x_of[at] + width * (within / SECTOR_BYTES as f64).min(1.0);
        let _ = writeln!(
            out,
            r##"<line class="touch" x1="{:.1}" y1="{lanes_bottom:.1}" x2="{to:.1}" y2="{top:.1}" stroke="#888888" stroke-width="1"/>"##,
            lane_x(lane.lane)
        );
    }
    text_end(out, LEFT - 8.0, top + 14.0, "32-byte sectors");
    for (i, &sector) in sectors.iter().enumerate() {
        let x = x_of[i];
        let used = used_bytes(access, sector);
        let offset = (sector - first_line * LINE_BYTES / SECTOR_BYTES) * SECTOR_BYTES;
        let _ = writeln!(
            out,
            r##"<rect class="sector" data-used="{}" x="{x:.1}" y="{top:.1}" width="{:.1}" height="{BOX_H}" fill="white" stroke="black"><title>bytes {offset} to {}: {} of 32 asked for</title></rect>"##,
            used.iter().filter(|&&u| u).count(),
            width - 1.0,
            offset + 31,
            used.iter().filter(|&&u| u).count()
        );
        // The bytes asked for, filled.
        let byte_w = (width - 1.0) / SECTOR_BYTES as f64;
        for run in used.chunk_by(|a, b| a == b).scan(0usize, |at, run| {
            let from = *at;
            *at += run.len();
            Some((from, run.len(), run[0]))
        }) {
            if run.2 {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{USED}"/>"#,
                    x + byte_w * run.0 as f64,
                    top + 1.0,
                    byte_w * run.1 as f64,
                    BOX_H - 2.0
                );
            }
        }
    }
    // Each line under its sectors, labelled by its offset.
    let bracket = top + BOX_H + 6.0;
    text_end(out, LEFT - 8.0, bracket + 14.0, "128-byte lines");
    let labelled: Vec<usize> = if lines.len() <= 8 {
        (0..lines.len()).collect()
    } else {
        vec![0, lines.len() - 1]
    };
    for (k, &line) in lines.iter().enumerate() {
        let members: Vec<f64> = sectors
            .iter()
            .zip(&x_of)
            .filter(|(s, _)| *s * SECTOR_BYTES / LINE_BYTES == line)
            .map(|(_, &x)| x)
            .collect();
        let (x1, x2) = (members[0], members[members.len() - 1] + width - 1.0);
        let _ = writeln!(
            out,
            r#"<path class="line" d="M{x1:.1},{bracket:.1} v4 H{x2:.1} v-4" fill="none" stroke="black"/>"#
        );
        if labelled.contains(&k) {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">+{} B</text>"#,
                (x1 + x2) / 2.0,
                bracket + 16.0,
                count((line - first_line) * LINE_BYTES)
            );
        }
    }
    let note = bracket + 36.0;
    text(
        out,
        16.0,
        note,
        11,
        false,
        "Filled: the bytes a lane asked for. A sector is fetched whole; the rest of it is traffic for nothing. Offsets are bytes from the first line touched.",
    );
    note + 6.0
}

/// Which of a sector's 32 bytes the warp's lanes asked for.
fn used_bytes(access: &WarpAccess, sector: u64) -> [bool; SECTOR_BYTES as usize] {
    let mut used = [false; SECTOR_BYTES as usize];
    let start = sector * SECTOR_BYTES;
    for lane in &access.lanes {
        let end = lane.address + u64::from(access.bytes.max(1));
        for byte in lane.address.max(start)..end.min(start + SECTOR_BYTES) {
            used[(byte - start) as usize] = true;
        }
    }
    used
}

/// A warp's shared access against the 32 banks.
fn shared_panel(out: &mut String, y: f64, access: &WarpAccess) -> f64 {
    let phases = access.words_by_phase_and_bank();
    let (taken, ideal) = access.wavefronts();
    // Each bank's most distinct words in one phase: its ways.
    let mut ways = [0u32; BANKS as usize];
    for phase in &phases {
        for (bank, &words) in phase.iter().enumerate() {
            ways[bank] = ways[bank].max(words);
        }
    }
    let worst = (0..BANKS as usize).max_by_key(|&b| (ways[b], std::cmp::Reverse(b)));
    let verdict = match worst {
        Some(bank) if taken > ideal => format!(
            "bank {bank} holds {} different words, served one after another: {taken} wavefronts where {ideal} would do, a {}-way bank conflict",
            ways[bank],
            taken / ideal.max(1)
        ),
        _ => format!(
            "no bank holds two different words (lanes reading one word share it): {}, no bank conflict",
            counted(taken as usize, "wavefront", "wavefronts")
        ),
    };
    let served = if phases.len() > 1 {
        format!(", served {} lanes at a time", access.lanes_per_phase())
    } else {
        String::new()
    };
    let caption = format!(
        "{} {} {} B each{served}; {verdict}.",
        counted(access.lanes.len(), "lane", "lanes"),
        verb(access),
        access.bytes,
    );
    let heading = format!(
        "Shared memory: the costliest {} {}, {}, in warp 0 of block 0 (its first execution)",
        access.space.name(),
        access.kind.name(),
        place(access)
    );
    let lanes_bottom = lanes(out, y, access, &heading, &caption);
    let top = lanes_bottom + FAN;
    for lane in &access.lanes {
        let first = lane.address / 4;
        let last = (lane.address + u64::from(access.bytes.max(1)) - 1) / 4;
        for word in first..=last {
            let bank = (word % BANKS) as usize;
            let colour = if ways[bank] > 1 { CONFLICT } else { "#888888" };
            let _ = writeln!(
                out,
                r#"<line class="touch" x1="{:.1}" y1="{lanes_bottom:.1}" x2="{:.1}" y2="{top:.1}" stroke="{colour}" stroke-width="1"/>"#,
                lane_x(lane.lane),
                lane_x(bank as u8)
            );
        }
    }
    text_end(out, LEFT - 8.0, top + 14.0, "banks");
    for (bank, &words) in ways.iter().enumerate() {
        let x = LEFT + bank as f64 * LANE_W;
        let fill = match words {
            0 => "white",
            1 => ONE_WORD,
            _ => CONFLICT,
        };
        let label = if words > 0 {
            words.to_string()
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            r#"<rect class="bank" data-words="{words}" x="{x:.1}" y="{top:.1}" width="{:.1}" height="{BOX_H}" fill="{fill}" stroke="black"><title>bank {bank}: {}</title></rect><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="white">{label}</text><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{bank}</text>"#,
            LANE_W - 2.0,
            counted(words as usize, "word", "different words"),
            x + LANE_W / 2.0 - 1.0,
            top + 14.0,
            x + LANE_W / 2.0 - 1.0,
            top + BOX_H + 13.0
        );
    }
    let legend = top + BOX_H + 34.0;
    swatch(out, LEFT, legend, ONE_WORD, "one word: one wavefront");
    swatch(
        out,
        LEFT + 200.0,
        legend,
        CONFLICT,
        "n different words: n wavefronts, one after another",
    );
    let note = legend + 22.0;
    text(
        out,
        16.0,
        note,
        11,
        false,
        "Bank b holds every 32nd 4-byte word from word b; the number in a bank is how many different words its lanes asked for.",
    );
    note + 6.0
}

/// The output's elements coloured by writer, unwritten ones marked.
fn output_panel(out: &mut String, y: f64, output: &Output, blocks: u64) -> f64 {
    let per_cell = output.elements.div_ceil(MAX_CELLS).max(1);
    let cells = output.elements.div_ceil(per_cell);
    // A square output is a matrix here: drawn as one, row by row.
    let side = (cells as f64).sqrt().round() as u64;
    let columns = if per_cell == 1 && side * side == cells && (8..=128).contains(&side) {
        side
    } else if cells <= 64 * 32 {
        cells.clamp(1, 64)
    } else {
        128
    };
    let rows = cells.div_ceil(columns);
    // Cells as large as fit, up to 14 px, the grid at most about 360 px tall.
    let cell = (PLOT / columns as f64)
        .min(14.0)
        .min(360.0 / rows as f64)
        .floor()
        .max(3.0);
    let unwritten = output.unwritten();
    let writers: std::collections::BTreeSet<u64> =
        output.runs.iter().filter_map(|r| r.block).collect();
    let first_gap = output
        .runs
        .iter()
        .find(|r| r.block.is_none())
        .map(|r| r.from);
    let written = output.elements - unwritten;
    let what = match first_gap {
        Some(from) => format!(
            "{} wrote {} of them; {} never written, the first at element {}",
            counted(writers.len(), "block", "blocks"),
            count(written),
            if unwritten == 1 {
                "1 was".to_owned()
            } else {
                format!("{} were", count(unwritten))
            },
            count(from)
        ),
        None => format!(
            "every one written, by {}",
            counted(writers.len(), "block", "blocks")
        ),
    };
    let launched = if writers.len() as u64 == blocks {
        String::new()
    } else {
        format!(" (of {} launched)", count(blocks))
    };
    let caption = format!(
        "{} elements of {} B: {what}{launched}.",
        count(output.elements),
        output.element_bytes
    );
    text(
        out,
        16.0,
        y,
        13,
        true,
        "The output: which block wrote each element (the last in the grid's order where several did)",
    );
    let below = wrapped(out, y + 18.0, &caption);
    let _ = writeln!(
        out,
        r##"<defs><pattern id="never" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="white"/><line x1="0" y1="0" x2="0" y2="6" stroke="#333333" stroke-width="2"/></pattern></defs>"##
    );
    let top = below + 30.0;
    // Column offsets above, the first element of each row on the left.
    let tick = if columns >= 96 {
        16
    } else if columns >= 32 {
        8
    } else {
        columns.clamp(1, 4)
    };
    for c in (0..columns).step_by(tick as usize) {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="9">+{}</text>"#,
            LEFT + c as f64 * cell,
            top - 4.0,
            count(c * per_cell)
        );
    }
    let every = rows.div_ceil(16).max(1);
    let index_name = if per_cell == 1 {
        "element"
    } else {
        "first element"
    };
    text_end(out, LEFT - 8.0, top - 6.0, index_name);
    // At 9 px, centred on their rows, so small cells keep them apart.
    for row in (0..rows).step_by(every as usize) {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="9" text-anchor="end">{}</text>"#,
            LEFT - 8.0,
            top + row as f64 * cell + cell / 2.0 + 3.0,
            count(row * columns * per_cell)
        );
    }
    // A cell's state: its writer, or None where any element is unwritten.
    let state = |c: u64| -> Option<u64> {
        let from = c * per_cell;
        let to = (from + per_cell).min(output.elements);
        let at = output.runs.partition_point(|r| r.from + r.count <= from);
        let mut first = None;
        for run in output.runs[at..].iter().take_while(|r| r.from < to) {
            run.block?;
            first = first.or(run.block);
        }
        first
    };
    for row in 0..rows {
        let mut c = row * columns;
        let end = ((row + 1) * columns).min(cells);
        while c < end {
            let s = state(c);
            let mut run_end = c + 1;
            while run_end < end && state(run_end) == s {
                run_end += 1;
            }
            let x = LEFT + (c - row * columns) as f64 * cell;
            let w = (run_end - c) as f64 * cell - 1.0;
            let y = top + row as f64 * cell;
            let (from, to) = (c * per_cell, (run_end * per_cell).min(output.elements) - 1);
            match s {
                Some(block) => {
                    let _ = writeln!(
                        out,
                        r#"<rect class="written" data-block="{block}" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}" fill="{}"><title>elements {from} to {to}: block {block}</title></rect>"#,
                        cell - 1.0,
                        PALETTE[(block % PALETTE.len() as u64) as usize]
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        r##"<rect class="unwritten" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}" fill="url(#never)" stroke="#333333" stroke-width="0.5"><title>elements {from} to {to}: {}</title></rect>"##,
                        cell - 1.0,
                        if per_cell == 1 {
                            "never written"
                        } else {
                            "some never written"
                        }
                    );
                }
            }
            c = run_end;
        }
    }
    let mut legend_y = top + rows as f64 * cell + 22.0;
    let mut x = LEFT;
    for &block in writers.iter().take(PALETTE.len()) {
        swatch(
            out,
            x,
            legend_y,
            PALETTE[(block % PALETTE.len() as u64) as usize],
            &format!("block {block}"),
        );
        x += 74.0;
    }
    swatch(out, x, legend_y, "url(#never)", "never written");
    if writers.len() > PALETTE.len() {
        legend_y += 20.0;
        text(
            out,
            LEFT,
            legend_y,
            11,
            false,
            &format!(
                "Colours repeat every {n} blocks: block {n} is coloured as block 0.",
                n = PALETTE.len()
            ),
        );
    }
    if per_cell > 1 {
        legend_y += 20.0;
        text(
            out,
            LEFT,
            legend_y,
            11,
            false,
            &format!(
                "Each cell is {} elements, marked where any of them was never written.",
                count(per_cell)
            ),
        );
    }
    legend_y + 6.0
}

/// A caption at 12 px from the left margin, broken between words into
/// lines that fit the picture's width; returns the last line's y.
fn wrapped(out: &mut String, y: f64, words: &str) -> f64 {
    // About 6.5 px a character at 12 px: 140 fit in the width.
    const FITS: usize = 140;
    let mut line = String::new();
    let mut y = y;
    for word in words.split(' ') {
        if !line.is_empty() && line.len() + 1 + word.len() > FITS {
            text(out, 16.0, y, 12, false, &line);
            line.clear();
            y += 16.0;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    text(out, 16.0, y, 12, false, &line);
    y
}

fn text(out: &mut String, x: f64, y: f64, size: u32, bold: bool, words: &str) {
    let weight = if bold { r#" font-weight="bold""# } else { "" };
    let _ = writeln!(
        out,
        r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}"{weight}>{}</text>"#,
        escape(words)
    );
}

/// A row's name, ending at `x`.
fn text_end(out: &mut String, x: f64, y: f64, words: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{x:.1}" y="{y:.1}" font-size="11" text-anchor="end">{}</text>"#,
        escape(words)
    );
}

fn swatch(out: &mut String, x: f64, y: f64, fill: &str, label: &str) {
    let _ = writeln!(
        out,
        r##"<rect class="swatch" x="{x:.1}" y="{:.1}" width="12" height="12" fill="{fill}" stroke="#333333" stroke-width="0.5"/><text x="{:.1}" y="{y:.1}" font-size="11">{}</text>"##,
        y - 10.0,
        x + 16.0,
        escape(label)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator_accesses::Lane;

    fn warp(space: Space, kind: Kind, at: impl Fn(u64) -> u64) -> WarpAccess {
        WarpAccess {
            line: Some(7),
            space,
            kind,
            bytes: 4,
            lanes: (0..32)
                .map(|l| Lane {
                    lane: l as u8,
                    address: at(l),
                })
                .collect(),
        }
    }

    fn launch(warp_accesses: Vec<WarpAccess>, writers: &[Option<u64>]) -> LaunchAccesses {
        LaunchAccesses {
            kernel: "k<&>".to_owned(),
            grid: [2, 1, 1],
            block: [128, 1, 1],
            warp: warp_accesses,
            output: Some(Output::from_writers(4, writers)),
        }
    }

    fn with_class<'a>(
        doc: &'a roxmltree::Document<'a>,
        class: &str,
    ) -> Vec<roxmltree::Node<'a, 'a>> {
        doc.descendants()
            .filter(|n| n.attribute("class") == Some(class))
            .collect()
    }

    fn words(doc: &roxmltree::Document) -> String {
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_coalesced_load_fans_into_four_full_sectors_of_one_line() {
        let picture = svg(&launch(
            vec![warp(Space::Global, Kind::Load, |l| 0x1000 + 4 * l)],
            &[Some(0)],
        ));
        let doc = roxmltree::Document::parse(&picture).expect("well-formed SVG");
        assert_eq!(with_class(&doc, "lane").len(), 32);
        let sectors = with_class(&doc, "sector");
        assert_eq!(sectors.len(), 4);
        assert!(
            sectors
                .iter()
                .all(|s| s.attribute("data-used") == Some("32"))
        );
        assert_eq!(with_class(&doc, "line").len(), 1);
        assert_eq!(with_class(&doc, "touch").len(), 32);
        let said = words(&doc);
        assert!(said.contains("of kernel k<&> ("), "{said}");
        assert!(said.contains("kernel.cu:7"), "{said}");
        assert!(
            said.contains("32 lanes read 4 B each: 4 sectors of 32 B in 1 line of 128 B"),
            "{said}"
        );
        assert!(said.contains("coalesced"), "{said}");
        assert!(with_class(&doc, "bank").is_empty());
    }

    #[test]
    fn a_strided_load_touches_a_sector_a_lane_and_says_so() {
        let picture = svg(&launch(
            vec![warp(Space::Global, Kind::Load, |l| 0x1000 + 128 * l)],
            &[Some(0)],
        ));
        let doc = roxmltree::Document::parse(&picture).unwrap();
        let sectors = with_class(&doc, "sector");
        assert_eq!(sectors.len(), 32);
        assert!(
            sectors
                .iter()
                .all(|s| s.attribute("data-used") == Some("4"))
        );
        assert_eq!(with_class(&doc, "line").len(), 32);
        let said = words(&doc);
        assert!(said.contains("32 sectors of 32 B in 32 lines"), "{said}");
        assert!(
            said.contains("where 4 would hold the same bytes: uncoalesced."),
            "{said}"
        );
        assert!(said.contains("+3,968 B"), "{said}");
    }

    #[test]
    fn one_word_for_every_lane_is_one_sector_a_broadcast() {
        let picture = svg(&launch(
            vec![warp(Space::Global, Kind::Load, |_| 0x1040)],
            &[Some(0)],
        ));
        let doc = roxmltree::Document::parse(&picture).unwrap();
        let sectors = with_class(&doc, "sector");
        assert_eq!(sectors.len(), 1);
        assert_eq!(sectors[0].attribute("data-used"), Some("4"));
        let said = words(&doc);
        assert!(
            said.contains("32 lanes read the same 4 B: one sector serves them all, a broadcast."),
            "{said}"
        );
    }

    #[test]
    fn a_column_of_a_tile_piles_every_lane_into_bank_0() {
        let picture = svg(&launch(
            vec![
                warp(Space::Shared, Kind::Store, |l| 4 * l),
                warp(Space::Shared, Kind::Load, |l| 128 * l),
            ],
            &[Some(0)],
        ));
        let doc = roxmltree::Document::parse(&picture).unwrap();
        let banks = with_class(&doc, "bank");
        assert_eq!(banks.len(), 32);
        assert_eq!(banks[0].attribute("data-words"), Some("32"));
        assert!(
            banks[1..]
                .iter()
                .all(|b| b.attribute("data-words") == Some("0"))
        );
        let said = words(&doc);
        assert!(said.contains("shared load"), "{said}");
        assert!(
            said.contains("32 wavefronts where 1 would do, a 32-way bank conflict"),
            "{said}"
        );
        // No global access: no sectors drawn.
        assert!(with_class(&doc, "sector").is_empty());
    }

    #[test]
    fn unwritten_elements_are_marked_and_counted() {
        let mut writers = vec![Some(0); 128];
        writers.extend(vec![Some(1); 128]);
        writers.extend(vec![None; 744]);
        let picture = svg(&launch(vec![], &writers));
        let doc = roxmltree::Document::parse(&picture).unwrap();
        let said = words(&doc);
        assert!(
            said.contains("1,000 elements of 4 B: 2 blocks wrote 256 of them; 744 were never written, the first at element 256."),
            "{said}"
        );
        // 64 a row: elements 256 to 999 start at row 4, so every row
        // from there is one unwritten run; before it, block 0's two rows
        // and block 1's two.
        let unwritten = with_class(&doc, "unwritten");
        assert_eq!(unwritten.len(), 12);
        let written = with_class(&doc, "written");
        assert_eq!(written.len(), 4);
        assert_eq!(written[2].attribute("data-block"), Some("1"));
        assert!(said.contains("never written"), "{said}");
        assert!(said.contains("block 1"), "{said}");
    }

    #[test]
    fn a_square_output_is_drawn_as_its_matrix_and_a_large_one_in_shared_cells() {
        let square = svg(&launch(vec![], &[Some(3); 16 * 16]));
        let doc = roxmltree::Document::parse(&square).unwrap();
        // 16 rows of one run each.
        assert_eq!(with_class(&doc, "written").len(), 16);
        let large: Vec<Option<u64>> = (0..10_000)
            .map(|i| (i < 9_000).then_some(i / 256))
            .collect();
        let picture = svg(&launch(vec![], &large));
        let doc = roxmltree::Document::parse(&picture).unwrap();
        let said = words(&doc);
        assert!(said.contains("Each cell is 2 elements"), "{said}");
        assert!(said.contains("Colours repeat every 7 blocks"), "{said}");
        assert!(
            said.contains("1,000 were never written, the first at element 9,000"),
            "{said}"
        );
    }

    #[test]
    fn without_an_output_the_picture_says_why() {
        let mut launch = launch(vec![], &[]);
        launch.output = None;
        let picture = svg(&launch);
        let doc = roxmltree::Document::parse(&picture).unwrap();
        let said = words(&doc);
        assert!(said.contains("names no output buffer"), "{said}");
        assert!(
            said.contains("made no global or shared memory access"),
            "{said}"
        );
    }
}
