//! What an image is: its format by its first bytes, and for a TIFF its first
//! image's size, compression and bit depth, proven by decoding it whole.
//!
//! Decoding runs under limits, so a hostile header (a billion pixels) is an
//! error and never an allocation of gigabytes.

use std::io::Cursor;

use tiff::decoder::{Decoder, Limits};
use tiff::tags::Tag;
use tiff::ColorType;

/// TIFF's compression code for CCITT Group 4 (T.6).
pub(crate) const COMPRESSION_G4: u16 = 4;

/// The most bytes a decoded image may take: a check scanned at 240 dpi in
/// 8-bit grey is about 2 MB.
const DECODE_LIMIT: usize = 64 * 1024 * 1024;

/// A TIFF's first image, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TiffImage {
    pub width: u32,
    pub height: u32,
    /// The Compression tag (1 none, 3 Group 3, 4 Group 4, 5 LZW, …).
    pub compression: u16,
    /// Whether it is one sample of one bit per pixel.
    pub bitonal: bool,
}

impl TiffImage {
    /// Whether it is what a cash letter carries: bitonal, Group 4.
    pub fn is_bitonal_g4(&self) -> bool {
        self.bitonal && self.compression == COMPRESSION_G4
    }

    /// The format's name in a summary.
    pub fn format_name(&self) -> &'static str {
        match self.compression {
            1 => "tiff-uncompressed",
            2 => "tiff-ccitt-rle",
            3 => "tiff-g3",
            COMPRESSION_G4 => "tiff-g4",
            5 => "tiff-lzw",
            6 | 7 => "tiff-jpeg",
            8 | 0x80B2 => "tiff-deflate",
            0x8005 => "tiff-packbits",
            _ => "tiff-other",
        }
    }
}

/// What image data is, by its signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// A TIFF (`II*\0` or `MM\0*`), decoded or why not.
    Tiff(Result<TiffImage, String>),
    /// Some other format: `jpeg`, `png`, `unknown`.
    Other(&'static str),
}

impl Sniffed {
    /// The format's name in a summary.
    pub fn format_name(&self) -> &'static str {
        match self {
            Sniffed::Tiff(Ok(image)) => image.format_name(),
            Sniffed::Tiff(Err(_)) => "tiff-damaged",
            Sniffed::Other(name) => name,
        }
    }
}

/// Looks at `bytes` and, for a TIFF, decodes it.
pub(crate) fn sniff(bytes: &[u8]) -> Sniffed {
    match bytes {
        [b'I', b'I', 42, 0, ..] | [b'M', b'M', 0, 42, ..] => Sniffed::Tiff(read_tiff(bytes)),
        [0xFF, 0xD8, 0xFF, ..] => Sniffed::Other("jpeg"),
        [0x89, b'P', b'N', b'G', ..] => Sniffed::Other("png"),
        _ => Sniffed::Other("unknown"),
    }
}

/// Decodes a TIFF's first image whole.
pub(crate) fn read_tiff(bytes: &[u8]) -> Result<TiffImage, String> {
    let mut limits = Limits::default();
    limits.decoding_buffer_size = DECODE_LIMIT;
    limits.intermediate_buffer_size = DECODE_LIMIT;
    let mut decoder = Decoder::new(Cursor::new(bytes)).map_err(|e| e.to_string())?.with_limits(limits);
    let (width, height) = decoder.dimensions().map_err(|e| e.to_string())?;
    let compression =
        decoder.find_tag_unsigned::<u16>(Tag::Compression).map_err(|e| e.to_string())?.unwrap_or(1);
    let bitonal = matches!(decoder.colortype().map_err(|e| e.to_string())?, ColorType::Gray(1));
    decoder.read_image().map_err(|e| e.to_string())?;
    Ok(TiffImage { width, height, compression, bitonal })
}
