//! Line charts as SVG text, written by hand so the report needs no plotting library: axes with
//! round ticks (linear or logarithmic), one polyline per series with optional point markers and
//! min–max whiskers, and a legend.

use std::fmt::Write as _;

/// A point: x, y, and an optional (min, max) range of y drawn as a whisker.
pub(crate) type Point = (f64, f64, Option<(f64, f64)>);

/// One line of a chart.
pub(crate) struct Series {
    /// Its name in the legend.
    pub(crate) name: String,
    /// Its colour (any SVG colour).
    pub(crate) color: &'static str,
    /// Dashed instead of solid.
    pub(crate) dashed: bool,
    /// Its points.
    pub(crate) points: Vec<Point>,
    /// Draws a marker at every point.
    pub(crate) markers: bool,
}

/// A chart: title, axis labels and series.
pub(crate) struct Chart {
    /// The title, above the plot.
    pub(crate) title: String,
    /// The x axis label.
    pub(crate) x_label: String,
    /// The y axis label.
    pub(crate) y_label: String,
    /// A logarithmic y axis.
    pub(crate) log_y: bool,
    /// The lines.
    pub(crate) series: Vec<Series>,
}

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 460.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 640.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 400.0;

impl Chart {
    /// The chart as a complete SVG document.
    pub(crate) fn render(&self) -> String {
        let all: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| {
                s.points.iter().flat_map(|(x, y, range)| {
                    let mut ys = vec![(*x, *y)];
                    if let Some((lo, hi)) = range {
                        ys.push((*x, *lo));
                        ys.push((*x, *hi));
                    }
                    ys
                })
            })
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.log_y || *y > 0.0))
            .collect();
        let x_max = all.iter().map(|p| p.0).fold(0.0_f64, f64::max);
        let x_ticks = linear_ticks(0.0, x_max.max(1.0));
        let x_hi = x_ticks.last().copied().unwrap_or(1.0);
        let (y_ticks, y_lo, y_hi) = if self.log_y {
            let lo = all.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let hi = all.iter().map(|p| p.1).fold(0.0_f64, f64::max);
            let lo = 10f64.powf(lo.max(1e-9).log10().floor());
            let hi = 10f64.powf(hi.max(lo * 10.0).log10().ceil());
            (log_ticks(lo, hi), lo, hi)
        } else {
            let hi = all.iter().map(|p| p.1).fold(0.0_f64, f64::max).max(1.0);
            let ticks = linear_ticks(0.0, hi);
            let top = ticks.last().copied().unwrap_or(hi);
            (ticks, 0.0, top)
        };
        let sx = |x: f64| LEFT + (x / x_hi) * (RIGHT - LEFT);
        let sy = |y: f64| {
            let t = if self.log_y {
                (y.max(y_lo).log10() - y_lo.log10()) / (y_hi.log10() - y_lo.log10())
            } else {
                (y - y_lo) / (y_hi - y_lo)
            };
            BOTTOM - t * (BOTTOM - TOP)
        };

        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(
            out,
            r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="28" font-size="16" font-weight="bold">{}</text>"#,
            LEFT,
            escape(&self.title)
        );
        // Grid and ticks.
        for y in &y_ticks {
            let py = sy(*y);
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{RIGHT}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT - 6.0,
                py + 4.0,
                tick_label(*y)
            );
        }
        for x in &x_ticks {
            let px = sx(*x);
            let _ = writeln!(
                out,
                r##"<line x1="{px:.1}" y1="{BOTTOM}" x2="{px:.1}" y2="{:.1}" stroke="#888"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                BOTTOM + 5.0,
                BOTTOM + 19.0,
                tick_label(*x)
            );
        }
        let _ = writeln!(
            out,
            r##"<polyline points="{LEFT},{TOP} {LEFT},{BOTTOM} {RIGHT},{BOTTOM}" fill="none" stroke="#444"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (LEFT + RIGHT) / 2.0,
            BOTTOM + 42.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            out,
            r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
            (TOP + BOTTOM) / 2.0,
            (TOP + BOTTOM) / 2.0,
            escape(&self.y_label)
        );
        // Series.
        for series in &self.series {
            let points: Vec<&Point> = series
                .points
                .iter()
                .filter(|(x, y, _)| x.is_finite() && y.is_finite() && (!self.log_y || *y > 0.0))
                .collect();
            let path: Vec<String> = points
                .iter()
                .map(|(x, y, _)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
                .collect();
            let dash = if series.dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
                path.join(" "),
                series.color
            );
            for (x, y, range) in &points {
                if let Some((lo, hi)) = range {
                    let px = sx(*x);
                    let _ = writeln!(
                        out,
                        r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="{}" stroke-width="1.5"/>"#,
                        sy(*lo),
                        sy(*hi),
                        series.color
                    );
                }
                if series.markers {
                    let _ = writeln!(
                        out,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"/>"#,
                        sx(*x),
                        sy(*y),
                        series.color
                    );
                }
            }
        }
        // Legend.
        for (i, series) in self.series.iter().enumerate() {
            let y = TOP + 10.0 + i as f64 * 22.0;
            let dash = if series.dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
                RIGHT + 20.0,
                RIGHT + 48.0,
                series.color,
                RIGHT + 56.0,
                y + 4.0,
                escape(&series.name)
            );
        }
        out.push_str("</svg>\n");
        out
    }
}

/// Round ticks from `lo` to at least `hi`: about five steps of 1, 2 or 5 times a power of ten.
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(power * 10.0);
    let mut ticks = Vec::new();
    let mut t = (lo / step).floor() * step;
    while t < hi + step * 0.999 {
        ticks.push(t);
        if t >= hi {
            break;
        }
        t += step;
    }
    ticks
}

/// Powers of ten from `lo` to `hi`.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut t = lo;
    while t <= hi * 1.0001 {
        ticks.push(t);
        t *= 10.0;
    }
    ticks
}

fn tick_label(value: f64) -> String {
    if value >= 1_000_000.0 {
        format!(
            "{}M",
            crate::stats::rate(value / 1_000_000.0).trim_end_matches(".00")
        )
    } else if value >= 10_000.0 {
        format!("{}k", crate::stats::count(value / 1_000.0))
    } else if value >= 1.0 || value == 0.0 {
        crate::stats::count(value)
    } else {
        format!("{value}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            linear_ticks(0.0, 1000.0),
            vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]
        );
        let ticks = linear_ticks(0.0, 153_502.0);
        assert!(ticks.last().is_some_and(|t| *t >= 153_502.0), "{ticks:?}");
        assert_eq!(
            log_ticks(10.0, 10_000.0),
            vec![10.0, 100.0, 1_000.0, 10_000.0]
        );
    }

    #[test]
    fn renders_a_well_formed_document() {
        let chart = Chart {
            title: "Tokens <per> call".into(),
            x_label: "call".into(),
            y_label: "tokens".into(),
            log_y: false,
            series: vec![Series {
                name: "ours & theirs".into(),
                color: "#1f77b4",
                dashed: false,
                points: vec![(1.0, 10.0, None), (2.0, 30.0, Some((25.0, 35.0)))],
                markers: true,
            }],
        };
        let svg = chart.render();
        assert!(svg.starts_with("<svg xmlns="));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("Tokens &lt;per&gt; call"));
        assert!(svg.contains("ours &amp; theirs"));
        assert_eq!(svg.matches("<circle").count(), 2);
    }
}
