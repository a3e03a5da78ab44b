//! Learning curves as a PNG: the training loss (left) and the test accuracy (right) per epoch.
//! Shared by the digits examples (`05-digits`, `06-residual`, `08-digits-cnn`), which include it
//! with `#[path]` next to `trainer.rs`.

use super::trainer::Epoch;
use plotters::prelude::*;
use std::path::Path;

#[path = "png.rs"]
mod png;

/// Draws the loss (left) and the test accuracy (right) per epoch into a PNG at `path`, creating
/// its directory.
///
/// # Errors
/// The directory or the file cannot be written.
pub fn draw(history: &[Epoch], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // plotters draws text with ab_glyph from this font instead of looking for system fonts.
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../fonts/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font is not a valid TrueType file")?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // plotters draws into this buffer, and `png` writes it (see there why not plotters itself).
    let (width, height) = (1200, 500);
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    render(
        history,
        BitMapBackend::with_buffer(&mut rgb, (width, height)),
    )?;
    png::write_rgb(path, width, height, &rgb)?;
    Ok(())
}

/// Draws the two charts on `backend`.
fn render(history: &[Epoch], backend: BitMapBackend<'_>) -> Result<(), Box<dyn std::error::Error>> {
    let root = backend.into_drawing_area();
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
