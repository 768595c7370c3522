//! Writes a small image cash letter whose check images were converted from
//! pictures (a PNG and a JPEG, drawn here), checks it, then splits its images
//! back out of the file, for an outside TIFF reader to judge:
//!
//! ```text
//! cargo run -p ach-core --example x9_images -- DIR
//! ```
//!
//! leaves `DIR/letter.x937` and `DIR/item-N-front.tif`, `DIR/item-N-back.tif`
//! (scripts/test-all runs libtiff's `tiffinfo` on each). Exits non-zero when the
//! written file has a problem.

use std::error::Error;
use std::io::Cursor;
use std::path::PathBuf;

use ach_core::x9::{self, CashLetter, CheckItem};
use chrono::NaiveDate;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};

/// A check drawn in colour: cream paper, a darker border, a signature line and
/// a MICR band; `seed` moves the strokes so each picture differs.
fn drawing(width: u32, height: u32, seed: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        let border = x < 4 || y < 4 || x >= width - 4 || y >= height - 4;
        let signature = y.abs_diff(height * 2 / 3) < 2 + (x + seed) % 3 && x > width / 2;
        let micr = y > height - height / 6 && (x / 6 + seed).is_multiple_of(3) && x > width / 8;
        if border || signature || micr {
            Rgb([30, 30, 80])
        } else {
            Rgb([240 - (x % 17) as u8, 232, 210 - (y % 11) as u8])
        }
    })
}

fn encoded(picture: RgbImage, format: ImageFormat) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(picture).write_to(&mut out, format)?;
    Ok(out.into_inner())
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: x9_images DIR")?);
    std::fs::create_dir_all(&dir)?;
    let mut items = Vec::new();
    for n in 1..=3u32 {
        let front = x9::to_g4_tiff(&encoded(drawing(600, 270, n), ImageFormat::Png)?)?;
        let back = x9::to_g4_tiff(&encoded(drawing(600, 270, n + 7), ImageFormat::Jpeg)?)?;
        items.push(CheckItem {
            payor_routing: "121042882".into(),
            account_number: "938383".into(),
            check_number: format!("{}", 1000 + n),
            amount_cents: i64::from(n) * 10_050,
            item_sequence: n.to_string(),
            front_tiff: front,
            back_tiff: back,
        });
    }
    let letter = CashLetter {
        destination_routing: "011000015".into(),
        destination_name: "FRB BOSTON".into(),
        origin_routing: "231380104".into(),
        origin_name: "CITADEL".into(),
        created: NaiveDate::from_ymd_opt(2026, 1, 30).and_then(|d| d.and_hms_opt(9, 15, 0)).ok_or("date")?,
        file_id_modifier: 'A',
        cash_letter_id: "EX1".into(),
        items,
    };
    let bytes = x9::write(&letter)?;
    std::fs::write(dir.join("letter.x937"), &bytes)?;
    let report = x9::check(&bytes)?;
    if !report.is_valid() {
        return Err(format!("the written letter has problems: {:?}", report.problems).into());
    }
    let read = x9::items(&bytes).map_err(|problems| format!("{problems:?}"))?;
    for (n, item) in read.iter().enumerate() {
        std::fs::write(dir.join(format!("item-{}-front.tif", n + 1)), &item.front_image)?;
        std::fs::write(dir.join(format!("item-{}-back.tif", n + 1)), &item.back_image)?;
    }
    println!("{}: {} items, {} images", dir.join("letter.x937").display(), read.len(), 2 * read.len());
    Ok(())
}
