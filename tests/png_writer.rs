//! The examples' PNG writer (`examples/digits/png.rs`), read back by hand: the signature, each
//! chunk's length and CRC-32, the header, and the pixels after inflating and undoing the "Sub"
//! filter, which must be the ones written.

#[path = "../examples/digits/png.rs"]
#[allow(
    dead_code,
    reason = "the test reads the bytes; the examples write the file"
)]
mod png;

use flate2::Crc;
use std::io::Read;

/// The chunks of a PNG file, each `(type, data)`, after checking each CRC.
fn chunks(bytes: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "the PNG signature");
    let mut out = Vec::new();
    let mut at = 8;
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind: [u8; 4] = bytes[at + 4..at + 8].try_into().unwrap();
        let data = bytes[at + 8..at + 8 + len].to_vec();
        let crc = u32::from_be_bytes(bytes[at + 8 + len..at + 12 + len].try_into().unwrap());
        let mut want = Crc::new();
        want.update(&kind);
        want.update(&data);
        assert_eq!(
            crc,
            want.sum(),
            "the CRC of chunk {}",
            String::from_utf8_lossy(&kind)
        );
        out.push((kind, data));
        at += 12 + len;
    }
    out
}

#[test]
fn a_small_image_reads_back_pixel_for_pixel() {
    let (width, height) = (5u32, 3u32);
    // Every byte different, with wrap-around differences between neighbours.
    let rgb: Vec<u8> = (0..width * height * 3)
        .map(|i| (i * 37 + 250) as u8)
        .collect();
    let bytes = png::encode_rgb(width, height, &rgb);
    let chunks = chunks(&bytes);
    let kinds: Vec<&[u8; 4]> = chunks.iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, [b"IHDR", b"IDAT", b"IEND"]);
    // 5 x 3, bit depth 8, RGB, deflate, adaptive filtering, no interlace.
    assert_eq!(chunks[0].1, [0, 0, 0, 5, 0, 0, 0, 3, 8, 2, 0, 0, 0]);
    assert!(chunks[2].1.is_empty());
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&chunks[1].1[..])
        .read_to_end(&mut raw)
        .unwrap();
    let row = width as usize * 3;
    assert_eq!(raw.len(), (row + 1) * height as usize);
    let mut pixels = Vec::new();
    for line in raw.chunks_exact(row + 1) {
        assert_eq!(line[0], 1, "each row Sub-filtered");
        let start = pixels.len();
        for i in 0..row {
            let left = if i < 3 { 0 } else { pixels[start + i - 3] };
            pixels.push(line[1 + i].wrapping_add(left));
        }
    }
    assert_eq!(pixels, rgb);
}

#[test]
#[should_panic(expected = "a 2x2 RGB image needs 12 bytes")]
fn a_buffer_of_the_wrong_size_is_refused() {
    let _ = png::encode_rgb(2, 2, &[0; 11]);
}
