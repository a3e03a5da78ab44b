//! Handwritten digits: a 64 -> 128 -> 10 MLP trained with AdamW, checkpointed, with learning curves.
//!
//! ```text
//! cargo run --release --example 05-digits -- [--epochs N] [--seed S] [--checkpoint-every N]
//!     [--checkpoint PATH] [--resume] [--plot PATH]
//! ```
//!
//! The training loop, the checkpoint format and the one gradient function live in
//! `examples/digits/trainer.rs`, shared with the kill test (`tests/checkpoint_resume.rs`).

#[path = "digits/trainer.rs"]
mod trainer;

use autograd_core::optim::Optimizer;
use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;
use trainer::{BATCH, Config, Epoch, Event, HIDDEN};

struct Args {
    cfg: Config,
    plot: PathBuf,
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "{problem}\nusage: 05-digits [--epochs N] [--seed S] [--checkpoint-every N] [--checkpoint PATH] [--resume] [--plot PATH]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let mut cfg = trainer::default_config(&target);
    let mut plot = target.join("digits-curves.png");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{flag} needs a value")))
        };
        let number = |v: String| -> u64 {
            v.parse()
                .unwrap_or_else(|_| usage(&format!("{flag}: `{v}` is not a number")))
        };
        match flag.as_str() {
            "--epochs" => cfg.epochs = number(value()) as usize,
            "--seed" => cfg.seed = number(value()),
            "--checkpoint-every" => cfg.checkpoint_every = Some(number(value()).max(1)),
            "--checkpoint" => cfg.checkpoint = value().into(),
            "--resume" => cfg.resume = true,
            "--plot" => plot = value().into(),
            "-h" | "--help" => usage("Trains an MLP on the digits data set."),
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    Args { cfg, plot }
}

fn main() {
    let Args { cfg, plot } = parse_args();
    let started = Instant::now();
    let data_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/digits.csv.gz");
    let data = trainer::read_digits(&data_path).unwrap_or_else(|e| {
        eprintln!("{}: {e}", data_path.display());
        std::process::exit(1)
    });
    let (train, test) = trainer::split(data, cfg.seed);
    println!(
        "digits: {} train / {} test rows, 64 -> {HIDDEN} -> 10 MLP, AdamW lr {}, batch {BATCH}, {} epochs",
        train.len(),
        test.len(),
        cfg.lr,
        cfg.epochs
    );

    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:40.cyan/blue} {pos}/{len} steps {elapsed} {msg}")
            .expect("a valid template"),
    );
    let observe = |e: Event<'_>| match e {
        Event::Start {
            step,
            total,
            resumed,
        } => {
            bar.set_length(total);
            bar.set_position(step);
            if resumed {
                bar.suspend(|| {
                    println!("resumed from {} at step {step}", cfg.checkpoint.display());
                });
            }
        }
        Event::Step { loss, .. } => {
            bar.inc(1);
            bar.set_message(format!("loss {loss:.4}"));
        }
        // Printed above the bar (and to stdout even when the bar is hidden, as in a pipe).
        Event::Epoch { index, summary } => bar.suspend(|| {
            println!(
                "epoch {:>3}: loss {:.4}, test accuracy {:.2}%",
                index + 1,
                summary.loss,
                100.0 * summary.accuracy
            );
        }),
        Event::Saved { .. } => {}
    };
    let state = trainer::train::<BATCH, HIDDEN>(&cfg, &train, &test, observe).unwrap_or_else(|e| {
        bar.abandon();
        eprintln!("{e}");
        std::process::exit(1)
    });
    bar.finish_and_clear();

    let acc = trainer::accuracy(&state.model, &test);
    println!(
        "test accuracy {:.2}% ({} of {} rows) after {} steps, {:.1} s",
        100.0 * acc,
        (acc * test.len() as f32).round(),
        test.len(),
        state.opt.steps(),
        started.elapsed().as_secs_f64()
    );
    if cfg.checkpoint_every.is_some() {
        println!("checkpoint: {}", cfg.checkpoint.display());
    }
    match draw(&state.history, &plot) {
        Ok(()) => println!("learning curves: {}", plot.display()),
        Err(e) => eprintln!("could not write the plot {}: {e}", plot.display()),
    }
}

/// Draws the loss (left) and the test accuracy (right) per epoch into a PNG.
fn draw(history: &[Epoch], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // plotters draws text with ab_glyph from this font instead of looking for system fonts.
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("fonts/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font is not a valid TrueType file")?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let root = BitMapBackend::new(path, (1200, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(600);
    let epochs = history.len().max(1) as f32;

    let max_loss = history.iter().map(|e| e.loss).fold(0.0f32, f32::max) * 1.05;
    let mut chart = ChartBuilder::on(&left)
        .caption("training loss", ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(1f32..epochs, 0f32..max_loss.max(1e-3))?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("mean cross-entropy")
        .draw()?;
    chart.draw_series(LineSeries::new(
        history
            .iter()
            .enumerate()
            .map(|(i, e)| (i as f32 + 1.0, e.loss)),
        BLUE.stroke_width(2),
    ))?;

    let min_acc = history
        .iter()
        .map(|e| 100.0 * e.accuracy)
        .fold(100.0f32, f32::min);
    let mut chart = ChartBuilder::on(&right)
        .caption("test accuracy", ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(1f32..epochs, (min_acc - 1.0).floor().max(0.0)..100f32)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("% correct")
        .draw()?;
    chart.draw_series(LineSeries::new(
        history
            .iter()
            .enumerate()
            .map(|(i, e)| (i as f32 + 1.0, 100.0 * e.accuracy)),
        RED.stroke_width(2),
    ))?;
    root.present()?;
    Ok(())
}
