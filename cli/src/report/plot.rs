//! SVG plots of a [`Report`], drawn with plotters: each titled, with labelled axes and units,
//! log scales where the data spans decades, and a legend beside the chart, never over its data.
//!
//! Every series has its own colour and marker: the seven colours of Okabe and Ito's palette
//! (told apart by readers with any common colour-vision deficiency; black is kept for the
//! memory limit) and five marker shapes, paired so that no two of a plot's first 35 series
//! share both. A filter keeps its colour and marker in every plot that compares filters. Model
//! curves are dashed with hollow markers; measured ones solid with filled markers.
//!
//! - `speed_<filter>.svg`: ns per key of every operation against filter size, with the memory
//!   limit drawn beside them;
//! - `compare_<operation>.svg`: one operation, every filter, against filter size;
//! - `fpr.svg`: measured (points) and model (dashed) FPR against the bits per key each filter
//!   actually uses;
//! - `bulk_insert.svg`: bulk-insert throughput against threads.
//!
//! Sizes go on a linear axis of log2(bytes), so the ticks fall on powers of two and read as
//! "16 KiB", "1 MiB"; ns and FPR go on log axes.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::byte_size::format_byte_size;
use super::figures::fpr_md;
use super::measure::Stat;
use super::speed::SpeedRow;
use super::subject::Contender;
use super::sweep::Report;
use linebloom::error::{Error, Result};

/// One plot: its file name, its title and the SVG text.
#[derive(Clone, Debug)]
pub struct Plot {
    /// File name, e.g. `speed_blocked.svg`.
    pub file: String,
    /// The title drawn on it.
    pub title: String,
    /// The SVG document.
    pub svg: String,
    /// Its series, in legend order.
    pub legend: Vec<LegendEntry>,
}

const WIDTH: u32 = 1200;
const HEIGHT: u32 = 600;
/// The legend's column on the right of every plot.
const LEGEND_WIDTH: u32 = 290;

/// Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2008), less black.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(240, 228, 66),  // yellow
];

/// Marker shapes; with 7 colours and 5 shapes (coprime), series `i` and `j < i + 35` differ in
/// colour or shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A disc.
    Circle,
    /// A square.
    Square,
    /// A triangle, point up.
    Triangle,
    /// A diamond.
    Diamond,
    /// A triangle, point down.
    TriangleDown,
}

const SHAPES: [Shape; 5] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Diamond,
    Shape::TriangleDown,
];

/// How one series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Its colour, as RGB.
    pub colour: (u8, u8, u8),
    /// Its marker, if it has one, and whether the marker is filled (measured) or hollow
    /// (model).
    pub marker: Option<(Shape, bool)>,
    /// Whether its line is dashed.
    pub dashed: bool,
}

impl Style {
    /// The `i`-th style of a plot: a measured series, solid with filled markers.
    fn nth(i: usize) -> Style {
        let c = PALETTE[i % PALETTE.len()];
        Style {
            colour: (c.0, c.1, c.2),
            marker: Some((SHAPES[i % SHAPES.len()], true)),
            dashed: false,
        }
    }

    /// The model beside a measured series of this style: dashed, hollow markers.
    fn model(self) -> Style {
        Style {
            marker: self.marker.map(|(shape, _)| (shape, false)),
            dashed: true,
            ..self
        }
    }

    /// The memory limit: black, dashed, no marker.
    fn limit() -> Style {
        Style {
            colour: (0, 0, 0),
            marker: None,
            dashed: true,
        }
    }

    fn rgb(self) -> RGBColor {
        RGBColor(self.colour.0, self.colour.1, self.colour.2)
    }
}

/// One entry of a plot's legend: a series' name and how it is drawn.
#[derive(Clone, Debug)]
pub struct LegendEntry {
    /// The series' name.
    pub name: String,
    /// How it is drawn.
    pub style: Style,
}

/// The style of a filter in the plots that compare filters: by its place among all the
/// contenders, so it is the same in every plot and every report.
fn filter_style(name: &str) -> Style {
    let i = Contender::available()
        .iter()
        .position(|c| c.name() == name)
        .unwrap_or(0);
    Style::nth(i)
}

/// Picks one figure of a speed row.
type Pick = fn(&SpeedRow) -> Option<&Stat>;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error + 'static>>;

/// Draws a plot: the chart by `draw` on the left, the legend of `series` in a column of its
/// own on the right.
fn render(
    title: &str,
    file: String,
    series: &[Series],
    draw: impl FnOnce(&Area<'_>) -> DrawResult,
) -> Result<Plot> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let (chart, legend) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let outcome = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| draw(&chart).map_err(|e| e.to_string()))
            .and_then(|()| draw_legend(&legend, series).map_err(|e| e.to_string()))
            .and_then(|()| root.present().map_err(|e| e.to_string()));
        outcome.map_err(|e| Error::io(format!("cannot draw {file}"), std::io::Error::other(e)))?;
    }
    Ok(Plot {
        file,
        title: title.to_string(),
        svg,
        legend: series
            .iter()
            .map(|s| LegendEntry {
                name: s.name.clone(),
                style: s.style,
            })
            .collect(),
    })
}

/// The legend, one row per series, top down from the height of the chart's plotting area.
fn draw_legend(area: &Area<'_>, series: &[Series]) -> DrawResult {
    let top = 70;
    // Rows of 22 pixels, closer where many series would run past the bottom.
    let room = HEIGHT as i32 - top - 10;
    let row = (room / series.len().max(1) as i32).clamp(10, 22);
    for (i, s) in series.iter().enumerate() {
        let y = top + row * i as i32;
        let colour = s.style.rgb();
        let line = colour.stroke_width(2);
        if s.style.dashed {
            area.draw(&PathElement::new(vec![(10, y), (20, y)], line))?;
            area.draw(&PathElement::new(vec![(30, y), (40, y)], line))?;
        } else {
            area.draw(&PathElement::new(vec![(10, y), (40, y)], line))?;
        }
        if let Some(marker) = s.style.marker {
            draw_marker_at(area, (25, y), colour, marker)?;
        }
        area.draw(&Text::new(
            s.name.clone(),
            (50, y - 8),
            ("sans-serif", 15).into_font(),
        ))?;
    }
    Ok(())
}

/// Vertices of a marker shape around (0, 0), in pixels; `None` for the circle.
fn shape_vertices(shape: Shape) -> Option<Vec<(i32, i32)>> {
    match shape {
        Shape::Circle => None,
        Shape::Square => Some(vec![(-4, -4), (4, -4), (4, 4), (-4, 4)]),
        Shape::Triangle => Some(vec![(0, -5), (5, 4), (-5, 4)]),
        Shape::Diamond => Some(vec![(0, -6), (5, 0), (0, 6), (-5, 0)]),
        Shape::TriangleDown => Some(vec![(0, 5), (5, -4), (-5, -4)]),
    }
}

/// One marker at a pixel position of `area` (the legend's).
fn draw_marker_at(
    area: &Area<'_>,
    at: (i32, i32),
    colour: RGBColor,
    (shape, filled): (Shape, bool),
) -> DrawResult {
    let style = if filled {
        colour.filled()
    } else {
        colour.stroke_width(2)
    };
    match (shape_vertices(shape), filled) {
        (None, _) => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), 4, style)))?,
        (Some(v), true) => area.draw(&(EmptyElement::at(at) + Polygon::new(v, style)))?,
        (Some(mut v), false) => {
            v.push(v[0]);
            area.draw(&(EmptyElement::at(at) + PathElement::new(v, style)))?
        }
    }
    Ok(())
}

/// The plot of one filter's figures against size: `speed_<filter>.svg`.
const SPEED_PREFIX: &str = "speed_";
/// The plot of one operation across filters: `compare_<operation>.svg`.
const COMPARE_PREFIX: &str = "compare_";
/// The FPR plot's file name.
const FPR_FILE: &str = "fpr.svg";
/// The bulk-insert plot's file name.
const BULK_FILE: &str = "bulk_insert.svg";

/// Whether `name` is a file name [`plots`] gives a plot (`speed_*.svg`, `compare_*.svg`,
/// `fpr.svg`, `bulk_insert.svg`), of this report or of an earlier one: the files a writer may
/// replace or remove in a results directory, and no others.
pub fn is_plot_file(name: &str) -> bool {
    let stem = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(".svg"))
            .is_some_and(|middle| !middle.is_empty())
    };
    name == FPR_FILE || name == BULK_FILE || stem(SPEED_PREFIX) || stem(COMPARE_PREFIX)
}

/// Every plot of the report (none for parts that measured nothing).
pub fn plots(report: &Report) -> Result<Vec<Plot>> {
    let mut out = Vec::new();
    for c in &report.config.filters {
        let rows: Vec<&SpeedRow> = report
            .speed
            .iter()
            .filter(|r| r.filter == c.name())
            .collect();
        if !rows.is_empty() {
            out.push(speed_plot(report, c.name(), &rows)?);
        }
    }
    if !report.speed.is_empty() {
        let ops: [(&str, &str, Pick); 4] = [
            ("insert", "insert, one key at a time", |r| Some(&r.insert)),
            ("hit", "lookup of inserted keys, one at a time", |r| {
                Some(&r.hit)
            }),
            (
                "miss",
                "lookup of never-inserted keys, one at a time",
                |r| Some(&r.miss),
            ),
            (
                "batched_miss",
                "batched lookup of never-inserted keys",
                |r| r.batched_miss.as_ref(),
            ),
        ];
        for (key, what, pick) in ops {
            out.push(compare_plot(report, key, what, pick)?);
        }
    }
    if !report.fpr.is_empty() {
        out.push(fpr_plot(report)?);
    }
    if !report.bulk.is_empty() {
        out.push(bulk_plot(report)?);
    }
    Ok(out)
}

/// A series: a name, its points and how it is drawn.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    style: Style,
}

/// The x axis of size plots: log2 of the filter's bytes.
fn size_x(bytes: usize) -> f64 {
    (bytes as f64).log2()
}

fn size_label(x: &f64) -> String {
    format_byte_size(2f64.powf(*x).round() as usize)
}

/// A log-y chart of ns per key against filter size.
fn size_chart(root: &Area<'_>, title: &str, series: &[Series]) -> DrawResult {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = bounds(xs);
    let (y0, y1) = bounds(ys.filter(|y| *y > 0.0));
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(75)
        .build_cartesian_2d((x0 - 0.5)..(x1 + 0.5), (y0 * 0.6..y1 * 1.6).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("filter size (log scale)")
        .y_desc("ns per key (log scale)")
        .x_label_formatter(&size_label)
        .y_label_formatter(&|y| trim_number(*y))
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .draw()?;
    draw_series(&mut chart, series)?;
    Ok(())
}

/// Draws the series: lines (dashed or solid), then their markers.
fn draw_series<'a, DB: DrawingBackend + 'a, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    series: &[Series],
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
    DB::ErrorType: 'static,
{
    for s in series {
        let colour = s.style.rgb();
        let line = colour.stroke_width(2);
        if s.style.dashed {
            chart.draw_series(DashedLineSeries::new(s.points.clone(), 8, 5, line))?;
        } else {
            chart.draw_series(LineSeries::new(s.points.clone(), line))?;
        }
        let Some((shape, filled)) = s.style.marker else {
            continue;
        };
        let style = if filled {
            colour.filled()
        } else {
            colour.stroke_width(2)
        };
        let points = s.points.iter().copied();
        match (shape_vertices(shape), filled) {
            (None, _) => {
                chart.draw_series(
                    points.map(|p| EmptyElement::at(p) + Circle::new((0, 0), 4, style)),
                )?;
            }
            (Some(v), true) => {
                chart.draw_series(
                    points.map(|p| EmptyElement::at(p) + Polygon::new(v.clone(), style)),
                )?;
            }
            (Some(mut v), false) => {
                v.push(v[0]);
                chart.draw_series(
                    points.map(|p| EmptyElement::at(p) + PathElement::new(v.clone(), style)),
                )?;
            }
        }
    }
    Ok(())
}

/// Minimum and maximum of finite values; (1, 10) when there are none.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo.is_finite() {
        (lo, hi)
    } else {
        (1.0, 10.0)
    }
}

/// 0.5, 2, 10, 200: a tick label without trailing zeros.
fn trim_number(y: f64) -> String {
    let s = format!("{y:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn speed_plot(report: &Report, filter: &str, rows: &[&SpeedRow]) -> Result<Plot> {
    let pick: [(&str, Pick); 5] = [
        ("insert", |r| Some(&r.insert)),
        ("hit", |r| Some(&r.hit)),
        ("miss", |r| Some(&r.miss)),
        ("batched hit", |r| r.batched_hit.as_ref()),
        ("batched miss", |r| r.batched_miss.as_ref()),
    ];
    let mut series: Vec<Series> = pick
        .iter()
        .enumerate()
        .filter_map(|(i, (name, f))| {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|r| f(r).map(|s| (size_x(r.target_bytes), s.median_ns)))
                .collect();
            (!points.is_empty()).then(|| Series {
                name: name.to_string(),
                points,
                style: Style::nth(i),
            })
        })
        .collect();
    series.push(Series {
        name: "memory limit (one random line)".into(),
        points: rows
            .iter()
            .map(|r| (size_x(r.target_bytes), r.limit_ns))
            .collect(),
        style: Style::limit(),
    });
    let title = format!(
        "{filter}: ns per key vs filter size ({} bits/key)",
        report.config.bits_per_key
    );
    render(
        &title,
        format!("{SPEED_PREFIX}{filter}.svg"),
        &series,
        |root| size_chart(root, &title, &series),
    )
}

fn compare_plot(report: &Report, key: &str, what: &str, pick: Pick) -> Result<Plot> {
    let mut series: Vec<Series> = report
        .config
        .filters
        .iter()
        .filter_map(|c| {
            let points: Vec<(f64, f64)> = report
                .speed
                .iter()
                .filter(|r| r.filter == c.name())
                .filter_map(|r| pick(r).map(|s| (size_x(r.target_bytes), s.median_ns)))
                .collect();
            (!points.is_empty()).then(|| Series {
                name: c.name().to_string(),
                points,
                style: filter_style(c.name()),
            })
        })
        .collect();
    if key != "insert" {
        series.push(Series {
            name: "memory limit (one random line)".into(),
            points: report
                .config
                .sizes
                .iter()
                .zip(&report.limits)
                .map(|(&s, l)| (size_x(s), l.best_ns()))
                .collect(),
            style: Style::limit(),
        });
    }
    let title = format!("{what}: ns per key vs filter size");
    render(
        &title,
        format!("{COMPARE_PREFIX}{key}.svg"),
        &series,
        |root| size_chart(root, &title, &series),
    )
}

fn fpr_plot(report: &Report) -> Result<Plot> {
    let mut series = Vec::new();
    for c in &report.config.filters {
        let style = filter_style(c.name());
        let mut rows: Vec<_> = report.fpr.iter().filter(|r| r.filter == c.name()).collect();
        rows.sort_by(|a, b| a.bits_per_key.total_cmp(&b.bits_per_key));
        let measured: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.measured_fpr > 0.0)
            .map(|r| (r.bits_per_key, r.measured_fpr))
            .collect();
        let model: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| {
                r.model_fpr
                    .filter(|m| *m > 0.0)
                    .map(|m| (r.bits_per_key, m))
            })
            .collect();
        if !measured.is_empty() {
            series.push(Series {
                name: format!("{} measured", c.name()),
                points: measured,
                style,
            });
        }
        if !model.is_empty() {
            series.push(Series {
                name: format!("{} model", c.name()),
                points: model,
                style: style.model(),
            });
        }
    }
    let title = "False-positive rate vs bits per key (measured and model)".to_string();
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x0, x1) = bounds(xs);
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (y0, y1) = bounds(ys);
    render(&title, FPR_FILE.into(), &series, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 24))
            .margin(20)
            .x_label_area_size(55)
            .y_label_area_size(85)
            .build_cartesian_2d(
                (x0 - 0.5).floor()..(x1 + 0.5).ceil(),
                (y0 * 0.5..(y1 * 2.0).min(1.0)).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_desc("bits per key actually used")
            .y_desc("false-positive rate (log scale)")
            .y_label_formatter(&|y| fpr_md(*y))
            .axis_desc_style(("sans-serif", 18))
            .label_style(("sans-serif", 15))
            .draw()?;
        draw_series(&mut chart, &series)?;
        Ok(())
    })
}

fn bulk_plot(report: &Report) -> Result<Plot> {
    let mut series = Vec::new();
    let mut i = 0;
    for c in &report.config.filters {
        for &size in &report.config.sizes {
            let points: Vec<(f64, f64)> = report
                .bulk
                .iter()
                .filter(|r| r.filter == c.name() && r.target_bytes == size)
                .map(|r| (r.threads as f64, r.mkeys_per_s))
                .collect();
            if points.is_empty() {
                continue;
            }
            series.push(Series {
                name: format!("{} {}", c.name(), format_byte_size(size)),
                points,
                style: Style::nth(i),
            });
            i += 1;
        }
    }
    let title = "Bulk insert: throughput vs threads".to_string();
    let (_, t1) = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let (y0, y1) = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    render(&title, BULK_FILE.into(), &series, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 24))
            .margin(20)
            .x_label_area_size(55)
            .y_label_area_size(75)
            // Throughputs span decades (a 16 KiB filter against a 256 MiB one): log y.
            .build_cartesian_2d(0.5..t1 + 0.5, (y0 * 0.6..y1 * 1.6).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("threads")
            .y_desc("million keys per second (log scale)")
            .y_label_formatter(&|y| trim_number(*y))
            .x_labels((t1 as usize + 1).min(16))
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() < 1e-9 && *x >= 1.0 {
                    format!("{}", x.round())
                } else {
                    String::new()
                }
            })
            .axis_desc_style(("sans-serif", 18))
            .label_style(("sans-serif", 15))
            .draw()?;
        draw_series(&mut chart, &series)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_files_are_told_from_others() {
        for name in [
            "speed_blocked.svg",
            "compare_insert.svg",
            "fpr.svg",
            "bulk_insert.svg",
        ] {
            assert!(is_plot_file(name), "{name}");
        }
        for name in [
            "speed_.svg",
            "speed_blocked.png",
            "speed.csv",
            "fpr.csv",
            "notes.txt",
            "report.md",
            "my_fpr.svg",
            "compare_insert.svg.bak",
        ] {
            assert!(!is_plot_file(name), "{name}");
        }
    }
}
