//! The markdown table and the PNG chart. Both are driven by the system names in the results, so a
//! new system needs no change here; a system absent from a workload (the hand-written gradient
//! has no CNN) shows "-" in the table and no bar in the chart.

use crate::WorkloadResult;
use crate::systems::REFERENCE;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else if us >= 10.0 {
        format!("{us:.1} µs")
    } else {
        format!("{us:.2} µs")
    }
}

fn command(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), for how busy the shared machine was.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// The locked version of a dependency, read from this project's Cargo.lock.
fn locked(name: &str) -> String {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .unwrap_or_default();
    let needle = format!("name = \"{name}\"\nversion = \"");
    lock.find(&needle)
        .and_then(|i| lock[i + needle.len()..].split('"').next())
        .unwrap_or("?")
        .to_owned()
}

/// Every system of any workload, in the order they first appear.
fn all_systems(results: &[WorkloadResult]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for name in results.iter().flat_map(|r| &r.systems) {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
}

/// The index of system `name` in workload `r`, if it ran there.
fn index(r: &WorkloadResult, name: &str) -> Option<usize> {
    r.systems.iter().position(|n| *n == name)
}

/// The table (one row per system, one column per workload: median time per step and the ratio
/// to the reference), followed by the conditions of the measurement.
pub fn markdown(results: &[WorkloadResult], quick: bool, alone: bool) -> String {
    let mut s = String::new();
    s.push_str("# Peer comparison: time per gradient step\n\n");
    if quick {
        s.push_str("**Quick smoke run (`--quick`): too few samples to quote.**\n\n");
    }
    s.push_str(&format!(
        "Measured {} on {} ({} logical CPUs visible), {}, {}; load average at the end {}. \
         **The machine is shared with other jobs and noisy**: read differences under ~20% as \
         ties; the brackets give the interquartile range of the samples.\n\n",
        command("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        command("uname", &["-sr"]),
        command("rustc", &["-V"]),
        load_average(),
    ));
    s.push_str(&format!(
        "One step = forward, mean softmax cross-entropy over the batch, gradients of every weight \
         and bias (W1-W3: w1, b1, w2, b2 of a ReLU MLP; CNN: two 3x3 convolutions, padding 1, \
         each + bias -> ReLU, global average pool, linear head; W4: one pre-norm transformer \
         block, exact GELU, no mask, its outputs as class scores; a \"-\" marks a system \
         without that workload); f32; same weights and inputs (fixed seeds) for every system; \
         single-threaded (`RAYON_NUM_THREADS=1`, `CANDLE_NUM_THREADS=1`). Median over {} \
         after warm-up; `(x N)` is the time relative to **{REFERENCE}**. Versions: dfdx \
         {}, candle-core {}. Command: `cargo run --release --manifest-path \
         benchmarks/peers/Cargo.toml{}`.\n\n",
        if alone {
            "samples taken one system at a time (all of a system's samples, then the next \
             system's: the protocol of the Python script)"
        } else {
            "interleaved samples (one sample of each system per round)"
        },
        locked("dfdx"),
        locked("candle-core"),
        if alone { " -- --alone" } else { "" },
    ));
    s.push_str("| system |");
    for r in results {
        s.push_str(&format!(" {} ({}) |", r.name, r.shape));
    }
    s.push_str("\n|---|");
    for _ in results {
        s.push_str("---:|");
    }
    s.push('\n');
    let names = all_systems(results);
    for name in &names {
        s.push_str(&format!("| {name} |"));
        for r in results {
            let Some(k) = index(r, name) else {
                s.push_str(" - |");
                continue;
            };
            let t = r.timings[k];
            let ratio = t.median.as_secs_f64() / r.timings[0].median.as_secs_f64();
            s.push_str(&format!(
                " {} (x {ratio:.2}) [{} – {}] |",
                fmt(t.median),
                fmt(t.q1),
                fmt(t.q3)
            ));
        }
        s.push('\n');
    }
    s.push_str(
        "\nAccuracy, checked before timing: worst relative difference of each system's gradients \
         (and loss) from the reference's (tolerance 1e-4), and of its gradients from the f64 \
         gradient of the same f32 weights and inputs. Per element, relative to \
         `max(|reference|, 1e-2 * max|reference|)` of that parameter's gradient.\n\n| system |",
    );
    for r in results {
        s.push_str(&format!(" {} vs reference | {} vs f64 |", r.name, r.name));
    }
    s.push_str("\n|---|");
    for _ in results {
        s.push_str("---:|---:|");
    }
    s.push('\n');
    for name in &names {
        s.push_str(&format!("| {name} |"));
        for r in results {
            let Some(k) = index(r, name) else {
                s.push_str(" - | - |");
                continue;
            };
            s.push_str(&format!(
                " {:.1e} | {:.1e} |",
                r.worst_error[k], r.error_vs_f64[k]
            ));
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "\nSamples per system: {}.\n",
        results
            .iter()
            .map(|r| format!("{} {}", r.name, r.timings[0].samples))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s
}

/// A row of the Python script's table (`benchmarks/results/python.md`): a framework's median time
/// per step on each workload, measured by a separate run.
pub struct Separate {
    pub name: String,
    pub medians: Vec<Duration>,
}

/// The rows of the Python script's table at `path`, if it exists and names the same workloads in
/// the same order as `results`; otherwise none (the chart then shows the Rust systems alone).
pub fn python_rows(path: &Path, results: &[WorkloadResult]) -> Vec<Separate> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let header_ok = text.lines().any(|l| {
        l.starts_with("| system |")
            && results
                .iter()
                .all(|r| l.contains(&format!("{} ({})", r.name, r.shape)))
    });
    if !header_ok {
        return Vec::new();
    }
    text.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| system") && !l.starts_with("|---"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let medians = cells[1..]
                .iter()
                .map(|c| parse_duration(c))
                .collect::<Option<Vec<_>>>()?;
            (medians.len() == results.len()).then(|| Separate {
                name: format!("{} (separate run)", cells[0]),
                medians,
            })
        })
        .collect()
}

/// The leading `"<number> <unit>"` of a table cell such as `58.3 µs [50.5 µs – 73.8 µs]`.
fn parse_duration(cell: &str) -> Option<Duration> {
    let mut words = cell.split_whitespace();
    let value: f64 = words.next()?.parse().ok()?;
    let scale = match words.next()? {
        "ns" => 1e-9,
        "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(value * scale))
}

/// Time per step by workload, log scale, one bar per system; `separate` adds the frameworks the
/// Python script measured (another process, another time), drawn lighter and labelled as a
/// separate run.
pub fn chart(
    results: &[WorkloadResult],
    separate: &[Separate],
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../fonts/DejaVuSans.ttf"),
    )
    .map_err(|_| "the committed font does not parse")?;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    // Every bar: (name, median per workload if it ran there, measured in a separate run).
    type Bar<'a> = (&'a str, Vec<Option<Duration>>, bool);
    let mut bars: Vec<Bar<'_>> = all_systems(results)
        .into_iter()
        .map(|name| {
            let medians = results
                .iter()
                .map(|r| index(r, name).map(|k| r.timings[k].median))
                .collect();
            (name, medians, false)
        })
        .collect();
    bars.extend(separate.iter().map(|s| {
        let medians = s.medians.iter().copied().map(Some).collect();
        (s.name.as_str(), medians, true)
    }));
    let all = bars
        .iter()
        .flat_map(|(_, m, _)| m.iter().flatten().map(|&d| us(d)));
    let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = (10f64.powf((lo / 2.0).log10().floor()), hi * 3.0);

    // About 330 pixels per workload, so that the workloads' labels do not run into each other.
    let width = 120 + 330 * u32::try_from(results.len()).unwrap_or(4);
    let root = BitMapBackend::new(path, (width, 650)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = results.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Time per gradient step (f32, 1 thread, median; lower is better)",
            ("sans-serif", 24),
        )
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..n, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        // Ticks every half unit; only the group centres (i + 0.5) are labelled.
        .x_labels(2 * results.len() + 1)
        .x_label_formatter(&|x| {
            let i = x.floor();
            match results.get(i as usize) {
                Some(r) if (x - i - 0.5).abs() < 1e-6 => format!("{} ({})", r.name, r.shape),
                _ => String::new(),
            }
        })
        .y_desc("µs per step (log scale)")
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;

    let k = bars.len() as f64;
    let width = 0.8 / k;
    for (j, (name, medians, light)) in bars.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let color = if *light { color.mix(0.45) } else { color };
        chart
            .draw_series(medians.iter().enumerate().filter_map(|(i, t)| {
                let t = (*t)?;
                let x0 = i as f64 + 0.1 + j as f64 * width;
                Some(Rectangle::new(
                    [(x0, lo), (x0 + width * 0.92, us(t))],
                    color.filled(),
                ))
            }))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        // The value above each bar, so the chart can be read without the table.
        chart.draw_series(medians.iter().enumerate().filter_map(|(i, t)| {
            let t = (*t)?;
            let x = i as f64 + 0.1 + (j as f64 + 0.46) * width;
            Some(Text::new(
                fmt(t),
                (x, us(t) * 1.12),
                ("sans-serif", 11)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            ))
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    root.draw(&Text::new(
        format!(
            "{}, {}, 1 thread; shared, noisy machine",
            command("date", &["-u", "+%Y-%m-%d"]),
            cpu_model()
        ),
        (16, 628),
        ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90)),
    ))?;
    root.present()?;
    Ok(())
}
