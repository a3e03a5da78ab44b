//! A minimal PNG writer for the charts: 8-bit RGB, one zlib stream compressed by `flate2` (already
//! the examples' gzip reader). plotters draws into a pixel buffer; writing that buffer here
//! instead of through plotters' `bitmap_encoder` feature keeps the `image` crate, the slowest
//! dependency of a clean `cargo build --examples`, out of the build.
//! Shared with `#[path]` by `plot.rs` (the digits examples) and `benches/scaling.rs`.

use flate2::{Compression, Crc, write::ZlibEncoder};
use std::io::Write;
use std::path::Path;

/// The PNG bytes of a `width` x `height` image whose pixels are `rgb`, row by row, three bytes
/// (red, green, blue) each.
///
/// # Panics
/// `rgb` does not hold `width * height * 3` bytes, or the image is empty.
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let row = width as usize * 3;
    assert!(
        width > 0 && height > 0 && rgb.len() == row * height as usize,
        "a {width}x{height} RGB image needs {} bytes, and at least one pixel; got {}",
        row * height as usize,
        rgb.len()
    );
    // Each row is stored "Sub"-filtered (filter type 1: every byte minus the same channel of the
    // pixel to its left), which turns the charts' flat areas and straight lines into runs of
    // zeros that deflate well.
    let mut filtered = Vec::with_capacity((row + 1) * height as usize);
    for line in rgb.chunks_exact(row) {
        filtered.push(1);
        filtered
            .extend((0..row).map(|i| line[i].wrapping_sub(if i < 3 { 0 } else { line[i - 3] })));
    }
    let mut zlib = ZlibEncoder::new(Vec::new(), Compression::best());
    zlib.write_all(&filtered)
        .expect("compressing into memory cannot fail");
    let idat = zlib.finish().expect("compressing into memory cannot fail");

    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, *b"IHDR", &ihdr);
    chunk(&mut png, *b"IDAT", &idat);
    chunk(&mut png, *b"IEND", &[]);
    png
}

/// Writes the PNG of `rgb` (see [`encode_rgb`]) to `path`.
///
/// # Errors
/// The file cannot be written.
pub fn write_rgb(path: &Path, width: u32, height: u32, rgb: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, encode_rgb(width, height, rgb))
}

/// Appends one chunk: its length, type, data and the CRC-32 of type and data.
fn chunk(png: &mut Vec<u8>, kind: [u8; 4], data: &[u8]) {
    let len = u32::try_from(data.len()).expect("a PNG chunk holds less than 4 GiB");
    png.extend_from_slice(&len.to_be_bytes());
    png.extend_from_slice(&kind);
    png.extend_from_slice(data);
    let mut crc = Crc::new();
    crc.update(&kind);
    crc.update(data);
    png.extend_from_slice(&crc.sum().to_be_bytes());
}
