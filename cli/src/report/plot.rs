//! SVG plots of a [`Report`], drawn with plotters: each titled, with labelled axes and units,
//! log scales where the data spans decades, and a legend.
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
}

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;

/// Tableau 10: distinguishable, and readable by most colour-blind readers.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Picks one figure of a speed row.
type Pick = fn(&SpeedRow) -> Option<&Stat>;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error + 'static>>;

fn render(title: &str, file: String, draw: impl FnOnce(&Area<'_>) -> DrawResult) -> Result<Plot> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let outcome = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| draw(&root).map_err(|e| e.to_string()))
            .and_then(|()| root.present().map_err(|e| e.to_string()));
        outcome.map_err(|e| Error::Io(format!("cannot draw {file}: {e}")))?;
    }
    Ok(Plot {
        file,
        title: title.to_string(),
        svg,
    })
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

/// A series: a name, a colour, points, and whether it is drawn dashed.
struct Series {
    name: String,
    colour: RGBColor,
    points: Vec<(f64, f64)>,
    dashed: bool,
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
    // Nothing runs faster than the memory limit, and the limit rises with size: the lower
    // right corner is the one part of these plots that never holds data.
    draw_series(&mut chart, series, SeriesLabelPosition::LowerRight)?;
    Ok(())
}

/// Draws the series, then their legend at `legend` (a corner the data leaves free).
fn draw_series<'a, DB: DrawingBackend + 'a, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    series: &[Series],
    legend: SeriesLabelPosition,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
    DB::ErrorType: 'static,
{
    for s in series {
        let style = s.colour.stroke_width(2);
        let legend_colour = s.colour;
        let annotation = if s.dashed {
            chart.draw_series(DashedLineSeries::new(s.points.clone(), 8, 5, style))?
        } else {
            chart.draw_series(LineSeries::new(s.points.clone(), style))?
        };
        let dashed = s.dashed;
        annotation.label(s.name.clone()).legend(move |(x, y)| {
            // Dashed series get a dashed legend line; solid ones a line with the point marker.
            let style = legend_colour.stroke_width(2);
            let (first, second, marker) = if dashed {
                ((0, 8), (12, 20), TRANSPARENT.filled())
            } else {
                ((0, 20), (0, 20), legend_colour.to_rgba().filled())
            };
            EmptyElement::at((x, y))
                + PathElement::new(vec![(first.0, 0), (first.1, 0)], style)
                + PathElement::new(vec![(second.0, 0), (second.1, 0)], style)
                + Circle::new((10, 0), 4, marker)
        });
        if !s.dashed {
            chart.draw_series(
                s.points
                    .iter()
                    .map(|&p| Circle::new(p, 4, s.colour.filled())),
            )?;
        }
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
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
                colour: colour(i),
                points,
                dashed: false,
            })
        })
        .collect();
    series.push(Series {
        name: "memory limit (one random line)".into(),
        colour: BLACK,
        points: rows
            .iter()
            .map(|r| (size_x(r.target_bytes), r.limit_ns))
            .collect(),
        dashed: true,
    });
    let title = format!(
        "{filter}: ns per key vs filter size ({} bits/key)",
        report.config.bits_per_key
    );
    render(&title, format!("{SPEED_PREFIX}{filter}.svg"), |root| {
        size_chart(root, &title, &series)
    })
}

fn compare_plot(report: &Report, key: &str, what: &str, pick: Pick) -> Result<Plot> {
    let mut series: Vec<Series> = report
        .config
        .filters
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let points: Vec<(f64, f64)> = report
                .speed
                .iter()
                .filter(|r| r.filter == c.name())
                .filter_map(|r| pick(r).map(|s| (size_x(r.target_bytes), s.median_ns)))
                .collect();
            (!points.is_empty()).then(|| Series {
                name: c.name().to_string(),
                colour: colour(i),
                points,
                dashed: false,
            })
        })
        .collect();
    if key != "insert" {
        series.push(Series {
            name: "memory limit (one random line)".into(),
            colour: BLACK,
            points: report
                .config
                .sizes
                .iter()
                .zip(&report.limits)
                .map(|(&s, l)| (size_x(s), l.best_ns()))
                .collect(),
            dashed: true,
        });
    }
    let title = format!("{what}: ns per key vs filter size");
    render(&title, format!("{COMPARE_PREFIX}{key}.svg"), |root| {
        size_chart(root, &title, &series)
    })
}

fn fpr_plot(report: &Report) -> Result<Plot> {
    let mut series = Vec::new();
    for (i, c) in report.config.filters.iter().enumerate() {
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
                colour: colour(i),
                points: measured,
                dashed: false,
            });
        }
        if !model.is_empty() {
            series.push(Series {
                name: format!("{} model", c.name()),
                colour: colour(i),
                points: model,
                dashed: true,
            });
        }
    }
    let title = "False-positive rate vs bits per key (measured and model)".to_string();
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x0, x1) = bounds(xs);
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (y0, y1) = bounds(ys);
    render(&title, FPR_FILE.into(), |root| {
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
        // FPR falls with bits per key: few bits and a low FPR (lower left) never meet.
        draw_series(&mut chart, &series, SeriesLabelPosition::LowerLeft)?;
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
                colour: colour(i),
                points,
                dashed: false,
            });
            i += 1;
        }
    }
    let title = "Bulk insert: throughput vs threads".to_string();
    let (_, t1) = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let (y0, y1) = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    render(&title, BULK_FILE.into(), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 24))
            .margin(20)
            .x_label_area_size(55)
            .y_label_area_size(75)
            // Throughputs span decades (a 16 KiB filter against a 256 MiB one): log y, with
            // a decade of headroom for the legend.
            .build_cartesian_2d(0.5..t1 + 0.5, (y0 * 0.5..y1 * 10.0).log_scale())?;
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
        draw_series(&mut chart, &series, SeriesLabelPosition::UpperLeft)?;
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
