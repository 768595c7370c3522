//! Pictures to Group 4 TIFFs: PNG, JPEG and TIFF in; a bitonal Group 4 TIFF out,
//! read back with the `tiff` crate (not our own reader) tag by tag and pixel by
//! pixel.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;

use ::image::{DynamicImage, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use tiff::decoder::ifd::Value;
use tiff::decoder::{Decoder, DecodingResult};
use tiff::tags::Tag;

use super::convert::otsu_threshold;
use super::tests::tiny_g4;
use super::{to_g4_tiff, ImageError};

/// Whether (x, y) is in the ink of [`picture`]: a bar across the middle third.
fn is_ink(x: u32, y: u32, width: u32, height: u32) -> bool {
    (width / 4..3 * width / 4).contains(&x) && (height / 3..2 * height / 3).contains(&y)
}

/// A synthetic check: cream paper, a dark blue bar of ink.
pub(super) fn picture(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        if is_ink(x, y, width, height) {
            Rgb([20, 24, 70])
        } else {
            Rgb([236, 228, 205])
        }
    })
}

fn encoded(picture: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    picture.write_to(&mut out, format).unwrap();
    out.into_inner()
}

pub(super) fn png_of(picture: &RgbImage) -> Vec<u8> {
    encoded(DynamicImage::ImageRgb8(picture.clone()), ImageFormat::Png)
}

pub(super) fn tiff_of(picture: &RgbImage) -> Vec<u8> {
    encoded(DynamicImage::ImageRgb8(picture.clone()), ImageFormat::Tiff)
}

fn jpeg_of(picture: &RgbImage) -> Vec<u8> {
    encoded(DynamicImage::ImageRgb8(picture.clone()), ImageFormat::Jpeg)
}

/// A TIFF as the `tiff` crate reads it.
struct Read {
    width: u32,
    height: u32,
    compression: u16,
    photometric: u16,
    bits_per_sample: u16,
    resolution: (Value, Value, u16),
    strips: u32,
    /// One per pixel, row by row: black.
    black: Vec<bool>,
}

fn read(tiff: &[u8]) -> Read {
    let mut d = Decoder::new(Cursor::new(tiff)).unwrap();
    let (width, height) = d.dimensions().unwrap();
    let compression = d.get_tag_unsigned(Tag::Compression).unwrap();
    let photometric = d.get_tag_unsigned(Tag::PhotometricInterpretation).unwrap();
    let bits_per_sample = d.get_tag_unsigned(Tag::BitsPerSample).unwrap();
    let resolution = (
        d.get_tag(Tag::XResolution).unwrap(),
        d.get_tag(Tag::YResolution).unwrap(),
        d.get_tag_unsigned(Tag::ResolutionUnit).unwrap(),
    );
    let strips = d.strip_count().unwrap();
    let DecodingResult::U8(packed) = d.read_image().unwrap() else { panic!("not 8-bit packed") };
    // Rows are packed most significant bit first, each padded to a byte. The
    // crate gives a bitonal sample as brightness (a set bit is white) whatever
    // the photometric interpretation: libtiff reads the same file's strip, as
    // WhiteIsZero says, with set bits for the ink.
    let row_bytes = width.div_ceil(8) as usize;
    let black = (0..height as usize)
        .flat_map(|y| {
            let row = &packed[y * row_bytes..(y + 1) * row_bytes];
            (0..width as usize).map(move |x| row[x / 8] & (0x80 >> (x % 8)) == 0)
        })
        .collect();
    Read { width, height, compression, photometric, bits_per_sample, resolution, strips, black }
}

/// The profile: Group 4, WhiteIsZero, one bit, 200 × 200 dpi, one strip.
fn assert_profile(r: &Read, width: u32, height: u32) {
    assert_eq!((r.width, r.height), (width, height));
    assert_eq!(r.compression, 4, "Group 4");
    assert_eq!(r.photometric, 0, "WhiteIsZero");
    assert_eq!(r.bits_per_sample, 1);
    assert_eq!(r.resolution, (Value::Rational(200, 1), Value::Rational(200, 1), 2));
    assert_eq!(r.strips, 1);
}

/// Pixels of the picture whose colour is not in doubt: away from the bar's edge
/// by `margin` (JPEG rings there).
fn assert_ink_is_black(r: &Read, margin: u32) {
    let (w, h) = (r.width, r.height);
    let mut checked = 0;
    for y in 0..h {
        for x in 0..w {
            let near_edge = (0..=margin).any(|d| {
                is_ink(x.saturating_sub(d), y, w, h) != is_ink(x, y, w, h)
                    || is_ink(x + d, y, w, h) != is_ink(x, y, w, h)
                    || is_ink(x, y.saturating_sub(d), w, h) != is_ink(x, y, w, h)
                    || is_ink(x, y + d, w, h) != is_ink(x, y, w, h)
            });
            if near_edge {
                continue;
            }
            checked += 1;
            assert_eq!(r.black[(y * w + x) as usize], is_ink(x, y, w, h), "pixel ({x}, {y})");
        }
    }
    assert!(checked > (w * h / 2) as usize, "only {checked} pixels checked");
}

#[test]
fn a_png_a_jpeg_and_a_colour_tiff_each_become_a_bitonal_group_4_tiff() {
    // (what, the source, its width and height, the margin left unchecked at
    // the bar's edges: JPEG rings there).
    let cases = [
        ("png", png_of(&picture(301, 137)), 301, 137, 0),
        ("jpeg", jpeg_of(&picture(240, 96)), 240, 96, 8),
        ("colour tiff", tiff_of(&picture(64, 40)), 64, 40, 0),
    ];
    for (what, source, w, h, slack) in cases {
        let tiff = to_g4_tiff(&source).unwrap_or_else(|e| panic!("{what}: {e}"));
        let r = read(&tiff);
        assert_profile(&r, w, h);
        assert_ink_is_black(&r, slack);
    }
}

#[test]
fn transparency_shows_the_paper() {
    // Black ink on the left half; the right half is black too, but fully
    // transparent, so it is paper.
    let picture =
        RgbaImage::from_fn(32, 8, |x, _| if x < 16 { Rgba([0, 0, 0, 255]) } else { Rgba([0, 0, 0, 0]) });
    let tiff = to_g4_tiff(&encoded(DynamicImage::ImageRgba8(picture), ImageFormat::Png)).unwrap();
    let r = read(&tiff);
    for (i, &black) in r.black.iter().enumerate() {
        assert_eq!(black, i % 32 < 16, "pixel {i}");
    }
}

#[test]
fn a_group_4_tiff_is_kept_byte_for_byte() {
    let g4 = tiny_g4(5, 57);
    assert_eq!(to_g4_tiff(&g4).unwrap(), g4);
    let read_back = read(&g4);
    assert_profile(&read_back, 57, 12);
}

#[test]
fn what_is_no_picture_is_refused() {
    assert!(matches!(to_g4_tiff(b"not a picture"), Err(ImageError::Unreadable(_))));
    assert!(matches!(to_g4_tiff(&[]), Err(ImageError::Unreadable(_))));
    let mut cut = png_of(&picture(50, 50));
    cut.truncate(cut.len() / 2);
    assert!(matches!(to_g4_tiff(&cut), Err(ImageError::Unreadable(_))));
    let wide = encoded(DynamicImage::ImageLuma8(::image::GrayImage::new(70_000, 1)), ImageFormat::Png);
    assert_eq!(to_g4_tiff(&wide), Err(ImageError::Size { width: 70_000, height: 1 }));
}

#[test]
fn otsu_splits_two_levels_between_them() {
    let mut grey = vec![30u8; 400];
    grey.extend(vec![200u8; 600]);
    let t = otsu_threshold(&grey);
    assert!((30..200).contains(&t), "{t}");
    // Noise around each level moves the split but keeps it between them.
    let noisy: Vec<u8> = grey.iter().enumerate().map(|(i, &g)| g.wrapping_add((i % 11) as u8)).collect();
    let t = otsu_threshold(&noisy);
    assert!((40..200).contains(&t), "{t}");
    assert_eq!(otsu_threshold(&[90; 10]), 127, "one level: mid-grey");
}
