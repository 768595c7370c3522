//! `table_stats N`: N batches of 1,000 creates on a database file, then redb's
//! statistics of every table (entries, leaf and branch pages, stored, metadata and
//! fragmented bytes) and the file's size: where a create's bytes go on disk.
#![allow(missing_docs, clippy::unwrap_used)]
use ach_benches::Sandbox;
use redb::{Database, ReadableDatabase, ReadableTableMetadata, TableDefinition, TableHandle};
fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let dir = std::env::temp_dir().join(format!("ach-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("engine.redb");
    {
        let s = Sandbox::file(&path);
        s.create_many(0, n * 1000, 1000);
    }
    let db = Database::open(&path).unwrap();
    let r = db.begin_read().unwrap();
    for t in r.list_tables().unwrap() {
        let def: TableDefinition<&[u8], &[u8]> = TableDefinition::new(t.name());
        let tab = r.open_table(def).unwrap();
        let s = tab.stats().unwrap();
        println!(
            "{:14} len {:8} leaf {:6} branch {:4} stored {:10} meta {:8} frag {:8}",
            t.name(),
            tab.len().unwrap(),
            s.leaf_pages(),
            s.branch_pages(),
            s.stored_bytes(),
            s.metadata_bytes(),
            s.fragmented_bytes()
        );
    }
    println!("file {}", std::fs::metadata(&path).unwrap().len());
    let _ = std::fs::remove_dir_all(&dir);
}
