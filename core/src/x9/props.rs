//! Property tests: random letters (1 to 700 items, so bundles split at 300)
//! written and checked back; random and damaged bytes never panic the checker;
//! the Group 4 encoder round-trips random bitmaps through the `tiff` decoder.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;
use std::sync::OnceLock;

use proptest::prelude::*;

use super::convert::encode_g4;
use super::tests::{letter, tiny_g4};
use super::tiff_write::wrap_g4;
use super::*;

/// Valid routing numbers (check digit included).
const ROUTING: [&str; 5] = ["231380104", "121042882", "026009593", "091000019", "011000015"];

/// A few distinct small images, made once.
fn images() -> &'static [Vec<u8>] {
    static IMAGES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    IMAGES.get_or_init(|| (0..6).map(|v| tiny_g4(v, 24 + 8 * u16::from(v))).collect())
}

#[derive(Debug, Clone)]
struct GenItem {
    routing: usize,
    account: String,
    serial: String,
    amount: i64,
    front: usize,
    back: usize,
}

fn gen_item() -> impl Strategy<Value = GenItem> {
    // Everyday amounts and large ones; 300 of the largest still fit a bundle
    // total's twelve digits.
    let amount = prop_oneof![1..=250_000i64, 1..=3_333_333_333i64];
    (0..ROUTING.len(), "[0-9]{1,4}(-?[0-9]{1,4}){0,2}", "[0-9]{0,5}", amount, 0..6usize, 0..6usize).prop_map(
        |(routing, account, serial, amount, front, back)| GenItem {
            routing,
            account,
            serial,
            amount,
            front,
            back,
        },
    )
}

/// Items and distinct item sequence numbers (random, unique, 1 to 15 digits).
fn gen_letter() -> impl Strategy<Value = Vec<(GenItem, u64)>> {
    proptest::collection::vec(gen_item(), 1..=700).prop_flat_map(|items| {
        let n = items.len();
        (Just(items), proptest::collection::hash_set(1..=999_999_999_999_999u64, n))
            .prop_map(|(items, seqs)| items.into_iter().zip(seqs).collect())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_random_letter_is_read_back_as_written(generated in gen_letter()) {
        let given: Vec<CheckItem> = generated
            .iter()
            .map(|(g, seq)| CheckItem {
                payor_routing: ROUTING[g.routing].into(),
                account_number: g.account.clone(),
                check_number: g.serial.clone(),
                amount_cents: g.amount,
                item_sequence: seq.to_string(),
                front_tiff: images()[g.front].clone(),
                back_tiff: images()[g.back].clone(),
            })
            .collect();
        let bytes = write(&letter(given.clone())).unwrap();
        let report = check(&bytes).unwrap();
        prop_assert_eq!(&report.problems, &vec![]);
        let s = &report.summary;
        let n = given.len();
        prop_assert_eq!(s.items, n);
        prop_assert_eq!(s.bundles, n.div_ceil(BUNDLE_MAX_ITEMS));
        prop_assert_eq!(s.cash_letters, 1);
        prop_assert_eq!(s.images, 2 * n);
        prop_assert_eq!(s.image_formats.get("tiff-g4").copied(), Some(2 * n));
        prop_assert_eq!(s.total_amount_cents, given.iter().map(|i| i.amount_cents).sum::<i64>());
        // 01, 10, 90, 99; per bundle 20 and 70; per item 25, 26, 2 x (50, 52).
        prop_assert_eq!(s.records, 4 + 2 * s.bundles + 6 * n);
        let read = items(&bytes).unwrap();
        prop_assert_eq!(read.len(), n);
        for (got, want) in read.iter().zip(&given) {
            prop_assert_eq!(&got.payor_routing, &want.payor_routing);
            prop_assert_eq!(&got.account_number, &want.account_number);
            prop_assert_eq!(&got.check_number, &want.check_number);
            prop_assert_eq!(got.amount_cents, want.amount_cents);
            prop_assert_eq!(&got.item_sequence, &format!("{:0>15}", want.item_sequence));
            prop_assert_eq!(&got.front_image, &want.front_tiff);
            prop_assert_eq!(&got.back_image, &want.back_tiff);
        }
    }
}

/// A written file of a few items, for damage.
fn small_file() -> &'static [u8] {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| write(&letter((1..=4).map(super::tests::item).collect())).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = check(&bytes);
        let _ = items(&bytes);
    }

    #[test]
    fn random_bytes_after_a_file_header_never_panic(
        prefixed in any::<bool>(),
        ebcdic in any::<bool>(),
        tail in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        let mut bytes = if prefixed { vec![0, 0, 0, 80] } else { Vec::new() };
        bytes.extend_from_slice(if ebcdic { &[0xF0, 0xF1] } else { b"01" });
        bytes.extend_from_slice(&tail);
        let report = check(&bytes).unwrap();
        prop_assert!(!report.is_valid());
    }

    #[test]
    fn a_damaged_file_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = small_file().to_vec();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let _ = check(&bytes);
        let _ = items(&bytes);
    }

    #[test]
    fn every_prefix_of_a_written_file_is_a_problem(cut in any::<prop::sample::Index>()) {
        let whole = small_file();
        let n = cut.index(whole.len());
        if let Ok(report) = check(&whole[..n]) {
            prop_assert!(!report.is_valid(), "{} bytes", n);
        }
    }
}

/// Pictures to damage: a Group 4 TIFF, a PNG, an uncompressed RGB TIFF, a JPEG.
fn pictures() -> &'static [Vec<u8>] {
    static PICTURES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    PICTURES.get_or_init(|| {
        use super::image_tests::{picture, png_of, tiff_of};
        let jpeg = {
            let mut out = Cursor::new(Vec::new());
            ::image::DynamicImage::ImageRgb8(picture(24, 16))
                .write_to(&mut out, ::image::ImageFormat::Jpeg)
                .unwrap();
            out.into_inner()
        };
        vec![tiny_g4(4, 48), png_of(&picture(24, 16)), tiff_of(&picture(24, 16)), jpeg]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The decoders of other crates, behind ours, on damaged pictures: an
    /// answer (often an error), never a panic.
    #[test]
    fn damaged_pictures_never_panic(
        which in 0..4usize,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = pictures()[which].clone();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let _ = super::tiff_read::sniff(&bytes);
        let _ = to_g4_tiff(&bytes);
    }
}

/// A bitmap of `width` × `height` pixels (true: black) as its grey levels.
fn grey_of(bits: &[bool]) -> Vec<u8> {
    bits.iter().map(|&black| if black { 0 } else { 255 }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn group_4_round_trips_through_the_tiff_decoder(
        (width, height, bits) in (1..90u16, 1..40u16).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), proptest::collection::vec(any::<bool>(), usize::from(w) * usize::from(h)))
        }),
        runs in any::<bool>(),
    ) {
        // Long runs as well as noise: copy each row's first pixel along it.
        let bits: Vec<bool> = if runs {
            bits.chunks(usize::from(width)).flat_map(|row| {
                let first = row[0];
                row.iter().enumerate().map(move |(x, &b)| if x % 13 < 9 { first } else { b })
            }).collect()
        } else {
            bits
        };
        let tiff = wrap_g4(&encode_g4(&grey_of(&bits), width, 127), width, height).unwrap();
        let mut d = tiff::decoder::Decoder::new(Cursor::new(&tiff)).unwrap();
        let tiff::decoder::DecodingResult::U8(packed) = d.read_image().unwrap() else {
            panic!("not packed bits")
        };
        let row_bytes = usize::from(width).div_ceil(8);
        for (y, row) in bits.chunks(usize::from(width)).enumerate() {
            for (x, &black) in row.iter().enumerate() {
                // The decoder gives brightness: a set bit is white.
                let white = packed[y * row_bytes + x / 8] & (0x80 >> (x % 8)) != 0;
                prop_assert_eq!(black, !white, "pixel ({}, {})", x, y);
            }
        }
    }
}
