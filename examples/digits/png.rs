//! The charts as PNG files, through the `png` crate: plotters draws into a pixel buffer and this
//! writes it, instead of plotters' `bitmap_encoder` feature, which would build the `image` crate,
//! the slowest dependency of a clean `cargo build --examples`.
//! Shared with `#[path]` by `plot.rs` (the digits examples) and `benches/scaling.rs`.

use std::path::Path;

/// The PNG bytes of a `width` x `height` image whose pixels are `rgb`, row by row, three bytes
/// (red, green, blue) each.
///
/// # Panics
/// `rgb` does not hold `width * height * 3` bytes, or the image is empty.
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let bytes = width as usize * height as usize * 3;
    assert!(
        width > 0 && height > 0 && rgb.len() == bytes,
        "a {width}x{height} RGB image needs {bytes} bytes, and at least one pixel; got {}",
        rgb.len()
    );
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // The charts are flat areas and thin lines: the best compression keeps them small.
    encoder.set_compression(png::Compression::High);
    let mut writer = encoder
        .write_header()
        .expect("writing into memory cannot fail");
    writer
        .write_image_data(rgb)
        .expect("the buffer holds the image, checked above");
    writer.finish().expect("writing into memory cannot fail");
    out
}

/// Writes the PNG of `rgb` (see [`encode_rgb`]) to `path`.
///
/// # Errors
/// The file cannot be written.
pub fn write_rgb(path: &Path, width: u32, height: u32, rgb: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, encode_rgb(width, height, rgb))
}
