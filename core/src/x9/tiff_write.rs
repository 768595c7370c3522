//! A Group 4 strip wrapped as a TIFF 6.0 file, the profile check images use:
//! little-endian, one strip, one bit per pixel, WhiteIsZero, 200 dpi.
//!
//! Layout: the 8-byte header, the one image file directory at offset 8, the two
//! resolutions it points to, then the compressed strip.

/// Pixels per inch, both ways: the resolution check images are kept at.
pub(crate) const DPI: u32 = 200;

/// Field types of TIFF 6.0.
const SHORT: u16 = 3;
const LONG: u16 = 4;
const RATIONAL: u16 = 5;

/// Bytes of the header, of each directory entry, and of a rational.
const HEADER_LEN: u32 = 8;
const ENTRY_LEN: u32 = 12;
const RATIONAL_LEN: u32 = 8;

/// The TIFF of a Group 4 `strip` of `width` × `height` pixels; `None` when the
/// strip is too long for a TIFF's 32-bit offsets.
pub(crate) fn wrap_g4(strip: &[u8], width: u16, height: u16) -> Option<Vec<u8>> {
    let strip_len = u32::try_from(strip.len()).ok()?;
    // Tags in ascending order, as TIFF 6.0 requires; each value fits the
    // entry's four bytes except the two rationals, written after the directory.
    const ENTRIES: u32 = 15;
    let directory_len = 2 + ENTRIES * ENTRY_LEN + 4;
    let x_resolution_at = HEADER_LEN + directory_len;
    let y_resolution_at = x_resolution_at + RATIONAL_LEN;
    let strip_at = y_resolution_at + RATIONAL_LEN;
    strip_at.checked_add(strip_len)?;
    let entries: [(u16, u16, u32); ENTRIES as usize] = [
        (254, LONG, 0),                   // NewSubfileType: a full-resolution image
        (256, LONG, u32::from(width)),    // ImageWidth
        (257, LONG, u32::from(height)),   // ImageLength
        (258, SHORT, 1),                  // BitsPerSample
        (259, SHORT, 4),                  // Compression: CCITT T.6 (Group 4)
        (262, SHORT, 0),                  // PhotometricInterpretation: WhiteIsZero
        (266, SHORT, 1),                  // FillOrder: most significant bit first
        (273, LONG, strip_at),            // StripOffsets
        (277, SHORT, 1),                  // SamplesPerPixel
        (278, LONG, u32::from(height)),   // RowsPerStrip: the whole image
        (279, LONG, strip_len),           // StripByteCounts
        (282, RATIONAL, x_resolution_at), // XResolution
        (283, RATIONAL, y_resolution_at), // YResolution
        (293, LONG, 0),                   // T6Options: no uncompressed mode
        (296, SHORT, 2),                  // ResolutionUnit: inch
    ];
    let mut out = Vec::with_capacity(strip_at as usize + strip.len());
    out.extend_from_slice(b"II");
    out.extend_from_slice(&42u16.to_le_bytes());
    out.extend_from_slice(&HEADER_LEN.to_le_bytes());
    out.extend_from_slice(&(ENTRIES as u16).to_le_bytes());
    for (tag, kind, value) in entries {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        match kind {
            // A SHORT sits in the first two bytes of the value field.
            SHORT => {
                out.extend_from_slice(&(value as u16).to_le_bytes());
                out.extend_from_slice(&[0, 0]);
            }
            _ => out.extend_from_slice(&value.to_le_bytes()),
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes()); // no next directory
    for _ in 0..2 {
        out.extend_from_slice(&DPI.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
    }
    out.extend_from_slice(strip);
    Some(out)
}
