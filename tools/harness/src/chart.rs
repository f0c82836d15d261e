//! `build/bench.svg`: each Stet operation next to its Linux counterpart
//! (`linux::PAIRS`) as two horizontal bars on a logarithmic scale (the
//! figures run from about a hundred instructions to millions), with both
//! figures and the ratio written out. Plain SVG text, written by hand: a
//! chart crate (plotters) would bring a font stack and its build time for
//! two dozen rectangles.

use std::fmt::Write;

use crate::bench_json::BenchRow;
use crate::linux;

const WIDTH: f64 = 960.0;
const LABEL: f64 = 230.0;
const BARS: f64 = 560.0;
const ROW: f64 = 54.0;
const TOP: f64 = 64.0;

/// Where a value lands on the log scale `[10, 10^decades]`.
fn x_of(v: u64, decades: f64) -> f64 {
    let v = (v.max(10) as f64).log10();
    LABEL + BARS * ((v - 1.0) / (decades - 1.0)).clamp(0.0, 1.0)
}

/// The chart, or `None` when no pair has both rows.
pub fn svg(rows: &[BenchRow]) -> Option<String> {
    let get = |n: &str| {
        rows.iter()
            .find(|r| r.name == n && r.percent.is_none())
            .map(|r| r.instructions)
    };
    let pairs: Vec<(&str, u64, &str, u64)> = linux::PAIRS
        .iter()
        .filter_map(|(s, l)| Some((*s, get(s)?, *l, get(l)?)))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let max = pairs.iter().map(|p| p.1.max(p.3)).max().unwrap_or(10);
    let decades = ((max as f64).log10().ceil()).max(2.0);
    let height = TOP + ROW * pairs.len() as f64 + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="10" y="22" font-size="16">Stet and Linux 6.1: guest instructions per operation (QEMU TCG -icount; log scale; fewer is better)</text>"#
    );
    let _ = writeln!(
        s,
        r##"<rect x="10" y="34" width="12" height="10" fill="#2b6cb0"/><text x="26" y="44">Stet</text><rect x="70" y="34" width="12" height="10" fill="#a0a0a0"/><text x="86" y="44">Linux</text>"##
    );
    // Decade grid lines.
    for d in 1..=decades as u32 {
        let x = x_of(10u64.pow(d), decades);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e0e0e0"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#707070">1e{d}</text>"##,
            height - 30.0,
            height - 16.0
        );
    }
    for (i, (stet, a, lin, b)) in pairs.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let ratio = *a as f64 / (*b).max(1) as f64;
        let _ = writeln!(
            s,
            r##"<text x="10" y="{:.1}">{stet}</text><text x="10" y="{:.1}" fill="#707070">{lin}</text>"##,
            y + 16.0,
            y + 34.0
        );
        for (k, (v, colour)) in [(*a, "#2b6cb0"), (*b, "#a0a0a0")].iter().enumerate() {
            let top = y + 6.0 + 18.0 * k as f64;
            let end = x_of(*v, decades);
            let _ = writeln!(
                s,
                r#"<rect x="{LABEL}" y="{top:.1}" width="{:.1}" height="14" fill="{colour}"/><text x="{:.1}" y="{:.1}">{v}</text>"#,
                end - LABEL,
                end + 4.0,
                top + 11.0
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{ratio:.2}x</text>"#,
            WIDTH - 10.0,
            y + 26.0
        );
    }
    s.push_str("</svg>\n");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, instructions: u64) -> BenchRow {
        BenchRow {
            name: name.into(),
            instructions,
            iterations: 1,
            rdtsc_overhead: 4,
            percent: None,
        }
    }

    #[test]
    fn one_bar_pair_per_counterpart_on_a_log_scale() {
        let rows = [
            row("null_invoke", 100),
            row("linux_null_syscall", 1000),
            row("ipc_rt_empty", 10_000),
        ];
        let s = svg(&rows).unwrap();
        assert!(s.starts_with("<svg ") && s.ends_with("</svg>\n"));
        // One pair (ipc_rt_empty has no Linux row here): two bars, a ratio.
        assert_eq!(s.matches(r#"height="14""#).count(), 2);
        assert!(s.contains(">0.10x</text>"));
        assert!(s.contains(">null_invoke</text>") && !s.contains(">ipc_rt_empty<"));
        // 100 is one decade of two above 10: half the bar width.
        assert!(s.contains(&format!(
            r##"width="{:.1}" height="14" fill="#2b6cb0""##,
            BARS / 2.0
        )));
        assert_eq!(svg(&rows[..1]), None);
    }
}
