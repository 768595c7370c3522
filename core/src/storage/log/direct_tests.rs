//! Direct appends leave the file as appends through the page cache would,
//! but for zeros after each append's end to the end of its block.
#![allow(clippy::unwrap_used)]

use super::super::file::{FsLog, LogFile};
use super::{Direct, BLOCK};

/// A file of `len` bytes, each `0xee` (what an earlier round left).
fn old_file(dir: &tempfile::TempDir, len: usize) -> std::path::PathBuf {
    let path = dir.path().join("log");
    std::fs::write(&path, vec![0xee; len]).unwrap();
    path
}

/// `n` bytes of record `tag`.
fn record(tag: u8, n: usize) -> Vec<u8> {
    (0..n).map(|i| tag ^ (i % 251) as u8).collect()
}

#[test]
fn appends_keep_the_bytes_before_them_and_zero_their_last_block() {
    let dir = tempfile::tempdir().unwrap();
    let path = old_file(&dir, 4 * BLOCK as usize);
    let mut direct = Direct::open(&path).unwrap();
    let mut expected = vec![0xee; 4 * BLOCK as usize];
    let mut at = 0usize;
    // Within a block, up to a block's end, across two blocks, from a block's start.
    for (tag, n) in [(1u8, 100usize), (2, 3_000), (3, BLOCK as usize - 3_100), (4, 5_000), (5, 10)] {
        let data = record(tag, n);
        let unread = |_: u64, _: &mut [u8]| -> std::io::Result<()> { panic!("the tail is known") };
        direct.write(at as u64, &data, unread).unwrap();
        expected[at..at + n].copy_from_slice(&data);
        let block_end = (at + n).next_multiple_of(BLOCK as usize);
        expected[at + n..block_end].fill(0);
        at += n;
        assert_eq!(std::fs::read(&path).unwrap(), expected, "after record {tag}");
    }
}

#[test]
fn an_unknown_tail_is_read_back_before_the_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = old_file(&dir, 2 * BLOCK as usize);
    let mut direct = Direct::open(&path).unwrap();
    direct.write(0, &record(1, 700), |_, _| panic!("nothing before offset 0")).unwrap();
    direct.forget();
    let mut asked = None;
    let file = std::fs::File::open(&path).unwrap();
    direct
        .write(700, &record(2, 50), |at, out| {
            asked = Some((at, out.len()));
            std::os::unix::fs::FileExt::read_exact_at(&file, out, at)
        })
        .unwrap();
    assert_eq!(asked, Some((0, 700)));
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..700], &record(1, 700)[..]);
    assert_eq!(&bytes[700..750], &record(2, 50)[..]);
    assert!(bytes[750..BLOCK as usize].iter().all(|b| *b == 0));
    assert!(bytes[BLOCK as usize..].iter().all(|b| *b == 0xee), "the next block is untouched");
}

/// The log's own sequence of calls on a file: grown by zeros through the page
/// cache, appended durably, cut back. Its bytes up to each append's end are
/// the same with direct writes and without.
#[test]
fn a_log_file_reads_the_same_with_direct_writes_and_without() {
    let run = |direct: bool| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine.redb.log");
        let log = FsLog::open(&path).unwrap();
        if !direct {
            log.without_direct_writes();
        }
        let mut ends = Vec::new();
        let mut end = 0u64;
        log.write_at(0, &vec![0; 3 * BLOCK as usize]).unwrap();
        for tag in 1..=12u8 {
            let data = record(tag, 900 * usize::from(tag));
            log.write_synced(end, &data).unwrap();
            end += data.len() as u64;
            ends.push(end);
            if tag == 5 {
                // A failed record cut off, the file grown again.
                log.set_len(end).unwrap();
                log.sync_data().unwrap();
                log.write_at(end, &vec![0; 60_000]).unwrap();
            }
        }
        let bytes = std::fs::read(&path).unwrap();
        (bytes[..end as usize].to_vec(), ends)
    };
    assert_eq!(run(true), run(false));
}

/// A disk that refuses a direct write's alignment (`EINVAL`): that append
/// and every later one go through the page cache, and the file holds what
/// it would have.
#[test]
fn a_refused_direct_write_falls_back_to_the_page_cache_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine.redb.log");
    let log = FsLog::open(&path).unwrap();
    log.write_at(0, &vec![0; 2 * BLOCK as usize]).unwrap();
    log.write_synced(0, &record(1, 300)).unwrap();
    log.write_synced(300, &record(2, 300)).unwrap();
    assert!(log.writes_directly(), "direct writes are on before the refusal");
    assert!(log.refuse_direct_writes());
    log.write_synced(600, &record(3, 300)).unwrap();
    assert!(!log.writes_directly(), "a refusal turns direct writes off");
    log.write_synced(900, &record(4, 300)).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    for (i, tag) in (1..=4u8).enumerate() {
        assert_eq!(&bytes[i * 300..(i + 1) * 300], &record(tag, 300)[..], "record {tag}");
    }
}
