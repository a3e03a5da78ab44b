//! The examples' PNG writer (`examples/digits/png.rs`): what it writes decodes, with the `png`
//! crate's own decoder, to the pixels it was given, as 8-bit RGB.

#[path = "../../examples/digits/png.rs"]
#[allow(
    dead_code,
    reason = "the test reads the bytes; the examples write the file"
)]
mod chart_png;

#[test]
fn a_small_image_reads_back_pixel_for_pixel() {
    let (width, height) = (5u32, 3u32);
    // Every byte different, with wrap-around differences between neighbours.
    let rgb: Vec<u8> = (0..width * height * 3)
        .map(|i| (i * 37 + 250) as u8)
        .collect();
    let bytes = chart_png::encode_rgb(width, height, &rgb);
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (width, height));
    assert_eq!(frame.color_type, png::ColorType::Rgb);
    assert_eq!(frame.bit_depth, png::BitDepth::Eight);
    assert_eq!(&pixels[..frame.buffer_size()], &rgb[..]);
}

#[test]
#[should_panic(expected = "a 2x2 RGB image needs 12 bytes")]
fn a_buffer_of_the_wrong_size_is_refused() {
    let _ = chart_png::encode_rgb(2, 2, &[0; 11]);
}
