//! A real crash, many times: a child process (`sim-writer`) creates transactions
//! in a file database and prints each id once `execute_batch` has returned; the
//! test kills it with SIGKILL at a random moment, reopens the database and checks
//! that every printed (acknowledged) transaction is there, the feed is gapless and
//! agrees with the stored records, and the usage counters equal a recomputation.
//! `SIM_KILLS` sets the number of kills (default 100).
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ach_core::engine::Caller;
use ach_core::model::Status;
use ach_sim::rng::Rng;

const WRITER: &str = env!("CARGO_BIN_EXE_sim-writer");

fn field(out: &str, name: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {out}"))
        .to_owned()
}

#[test]
fn a_hundred_sigkills_lose_no_acknowledged_transaction() {
    let kills: u64 = std::env::var("SIM_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ach.redb");
    let db = db.to_str().unwrap();
    let setup = Command::new(WRITER).args(["setup", db]).output().unwrap();
    assert!(setup.status.success(), "{}", String::from_utf8_lossy(&setup.stderr));
    let out = String::from_utf8_lossy(&setup.stdout);
    let (partner, merchant) = (field(&out, "partner"), field(&out, "merchant"));
    let caller = Caller::Partner { partner_id: partner.clone() };
    let mut rng = Rng::new(0x51_61_4B_11);
    let mut acknowledged: HashSet<String> = HashSet::new();
    let mut unprinted = 0;
    let started = Instant::now();
    for round in 0..kills {
        let mut child = Command::new(WRITER)
            .args(["write", db, &partner, &merchant, &round.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Kill after a random number of acknowledgements (0: during the open or
        // the first commit), a random moment later.
        let wanted = rng.below(30);
        for _ in 0..wanted {
            match lines.next() {
                Some(Ok(line)) => {
                    acknowledged.insert(line.strip_prefix("ack ").unwrap().to_owned());
                }
                _ => break,
            }
        }
        std::thread::sleep(Duration::from_micros(rng.below(3_000) as u64));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(status.code().is_none(), "round {round}: the writer exited by itself ({status:?}): {stderr}");
        // Everything printed before the kill was acknowledged.
        for line in lines {
            acknowledged.insert(line.unwrap().strip_prefix("ack ").unwrap().to_owned());
        }
        let engine = ach_sim::writer::open(db).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let mut pointer = "0".to_owned();
        let mut created = Vec::new();
        loop {
            let page = engine.status_changes(&caller, &partner, &pointer).unwrap();
            if page.changes.is_empty() {
                break;
            }
            created.extend(
                page.changes.iter().filter(|c| c.status == Status::A).map(|c| c.transaction_id.clone()),
            );
            pointer = page.new_pointer;
        }
        let present: HashSet<&String> = created.iter().collect();
        assert_eq!(present.len(), created.len(), "round {round}: a transaction reported twice");
        let lost: Vec<&String> = acknowledged.iter().filter(|id| !present.contains(id)).collect();
        assert!(lost.is_empty(), "round {round}: acknowledged transactions lost after SIGKILL: {lost:?}");
        unprinted = created.len() - acknowledged.len();
        assert_eq!(engine.audit_usage().unwrap(), Ok(()), "round {round}");
        assert_eq!(engine.audit_records().unwrap(), Ok(()), "round {round}");
    }
    println!(
        "{kills} SIGKILLs in {:.1}s: {} acknowledged transactions, all present, 0 lost \
         ({unprinted} more committed but killed before they were printed)",
        started.elapsed().as_secs_f64(),
        acknowledged.len()
    );
}
