//! Pictures of checks to the image a cash letter carries: a TIFF, CCITT Group 4
//! bitonal, 200 dpi.
//!
//! A picture is decoded (JPEG, PNG or TIFF), laid over white where it is
//! transparent, turned grey, and split into black and white at the threshold
//! Otsu's method finds in its histogram (the grey level that best separates ink
//! from paper). The pixels keep their number: a scan is relabelled 200 dpi, not
//! resampled.

use std::convert::Infallible;
use std::io::Cursor;

use fax::encoder::Encoder;
use fax::{Color, VecWriter};

use super::tiff_read;
use super::tiff_write;

/// Why a picture was not converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// The bytes are no JPEG, PNG or TIFF this library decodes, or are damaged.
    #[error("not a picture that can be read (JPEG, PNG or TIFF): {0}")]
    Unreadable(String),
    /// Group 4 in TIFF takes 1 to 65,535 pixels each way.
    #[error("{width}x{height} pixels: a Group 4 TIFF takes 1 to 65,535 each way")]
    Size {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
}

/// The most memory decoding a picture may take.
const DECODE_LIMIT: u64 = 256 * 1024 * 1024;

/// `bytes` (a JPEG, a PNG or a TIFF) as a TIFF 6.0, CCITT Group 4 bitonal,
/// WhiteIsZero, 200 dpi, one strip. A TIFF that is already bitonal Group 4 and
/// decodes is returned as it was sent.
pub fn to_g4_tiff(bytes: &[u8]) -> Result<Vec<u8>, ImageError> {
    if tiff_read::read_tiff(bytes).is_ok_and(|image| image.is_bitonal_g4()) {
        return Ok(bytes.to_vec());
    }
    let picture = decode(bytes)?;
    let (width, height) = (picture.width(), picture.height());
    let size = ImageError::Size { width, height };
    let (Ok(w), Ok(h)) = (u16::try_from(width), u16::try_from(height)) else { return Err(size) };
    if w == 0 || h == 0 {
        return Err(size);
    }
    let grey = over_white(&picture);
    let strip = encode_g4(&grey, w, otsu_threshold(&grey));
    tiff_write::wrap_g4(&strip, w, h).ok_or(size)
}

fn decode(bytes: &[u8]) -> Result<::image::DynamicImage, ImageError> {
    let unreadable = |e: &dyn std::fmt::Display| ImageError::Unreadable(e.to_string());
    let mut reader =
        ::image::ImageReader::new(Cursor::new(bytes)).with_guessed_format().map_err(|e| unreadable(&e))?;
    let mut limits = ::image::Limits::default();
    limits.max_alloc = Some(DECODE_LIMIT);
    reader.limits(limits);
    reader.decode().map_err(|e| unreadable(&e))
}

/// The picture's grey levels, row by row; a transparent pixel shows the white
/// paper under it.
fn over_white(picture: &::image::DynamicImage) -> Vec<u8> {
    let grey = picture.to_luma_alpha8();
    grey.pixels()
        .map(|p| {
            let [luma, alpha] = p.0;
            let (luma, alpha) = (u32::from(luma), u32::from(alpha));
            // luma·α + 255·(1-α), rounded; at most 255.
            u8::try_from((luma * alpha + 255 * (255 - alpha) + 127) / 255).unwrap_or(u8::MAX)
        })
        .collect()
}

/// Otsu's threshold: the grey level `t` that maximises the variance between
/// the pixels at or below it (ink) and those above (paper). A picture of one
/// grey level has no such split; it is then cut at mid-grey.
pub(crate) fn otsu_threshold(grey: &[u8]) -> u8 {
    let mut histogram = [0u64; 256];
    for &g in grey {
        histogram[usize::from(g)] += 1;
    }
    let total = grey.len() as f64;
    let sum_all: f64 = histogram.iter().enumerate().map(|(g, &n)| g as f64 * n as f64).sum();
    let (mut below, mut sum_below) = (0f64, 0f64);
    let (mut best, mut best_variance) = (127u8, 0f64);
    for (t, &n) in histogram.iter().enumerate() {
        below += n as f64;
        sum_below += t as f64 * n as f64;
        let above = total - below;
        if below == 0.0 || above == 0.0 {
            continue;
        }
        let mean_below = sum_below / below;
        let mean_above = (sum_all - sum_below) / above;
        let variance = below * above * (mean_below - mean_above).powi(2);
        if variance > best_variance {
            best_variance = variance;
            best = u8::try_from(t).unwrap_or(u8::MAX);
        }
    }
    best
}

/// The Group 4 (T.6) code of `grey` (rows of `width` pixels): a pixel at or
/// below `threshold` is black.
pub(crate) fn encode_g4(grey: &[u8], width: u16, threshold: u8) -> Vec<u8> {
    if width == 0 {
        return Vec::new();
    }
    let mut encoder = Encoder::new(VecWriter::new());
    for row in grey.chunks(usize::from(width)) {
        let pels = row.iter().map(|&g| if g <= threshold { Color::Black } else { Color::White });
        infallible(encoder.encode_line(pels, width));
    }
    infallible(encoder.finish()).finish()
}

fn infallible<T>(result: Result<T, Infallible>) -> T {
    match result {
        Ok(value) => value,
        Err(never) => match never {},
    }
}
