//! A full disk: writes fail with message 7 and the host is told why, then
//! resume by themselves once space is freed (no restart). The disk is the
//! crash tests' simulated one with a capacity: a write past it fails with
//! ENOSPC, as on a full tmpfs.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use ach_core::api::{route, Request};
use ach_core::engine::crash::SimDisk;
use ach_core::engine::{Caller, Engine, LogSettings, Operation, Refusal, StorageEvent, StorageHook};
use ach_core::model::Status;
use ach_core::AchError;
use ach_tests::world::{body, options, transaction, World};

const START: &str = "2026-11-23 10:00";

/// An engine over `disk` with its redo log there (reopened over the same disk
/// after a failure), and
/// what its storage hook was told.
fn engine_on(disk: &SimDisk) -> (World, Arc<Mutex<Vec<StorageEvent>>>) {
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&told);
    let hook = StorageHook::new(move |event| sink.lock().unwrap().push(event.clone()));
    let engine = Engine::open_on_disk(disk, options(START).with_storage_hook(hook), LogSettings::default());
    (World::with(engine.unwrap()), told)
}

fn unavailable(answer: &Result<String, Refusal>) -> bool {
    matches!(answer, Err(f) if f.error() == Some(&AchError::DatabaseUnavailable) && f.status() == 503)
}

#[test]
fn writes_resume_without_a_restart_once_a_full_disk_has_room_again() {
    let disk = SimDisk::new();
    let (w, told) = engine_on(&disk);
    let (partner, caller, merchant) = w.tenant(&["PPD"]);
    let before = w.debit(&partner, &caller, &merchant, "10.00");

    // The disk is full at the file's present length: creates succeed while the
    // file has free pages inside, then the first that needs it to grow fails.
    disk.set_capacity(Some(disk.len()));
    // (In batches of 50, one commit each, to fill it sooner.)
    let mut created = 0;
    let failed = loop {
        let create = || Operation::CreateTransaction {
            partner_id: partner.clone(),
            body: body(&transaction(&merchant, "debit", "1.00")),
        };
        let answers = w.engine.execute_batch((0..50).map(|_| (caller.clone(), create())).collect());
        if answers.iter().any(Result::is_err) {
            break answers;
        }
        created += answers.len();
        assert!(created < 100_000, "the disk never filled");
    };
    assert!(failed.iter().all(|a| unavailable(&a.clone().map(|_| String::new()))), "{failed:?}");
    {
        let told = told.lock().unwrap();
        let fault = told.iter().find(|e| matches!(e, StorageEvent::WriteFailed(_)));
        assert!(
            fault.is_some_and(|e| e.to_string().contains("no space left on device")),
            "the host is told the storage error: {told:?}"
        );
        assert!(told.iter().all(|e| *e != StorageEvent::Resumed), "{told:?}");
    }
    // Still full: refused again once the little room the failure freed (the
    // redo log's space ahead of its last record, given back) is used up, and
    // not ready.
    let again = loop {
        let again = w.create(&partner, &caller, &transaction(&merchant, "debit", "1.00"));
        if again.is_err() {
            break again;
        }
        created += 1;
        assert!(created < 100_000, "the disk never filled again");
    };
    assert!(unavailable(&again), "{again:?}");
    assert!(!w.engine.ready(), "no room: not ready");

    disk.set_capacity(None);
    let after = w.create(&partner, &caller, &transaction(&merchant, "debit", "2.00"));
    let after =
        after.unwrap_or_else(|e| panic!("writes resume once space is back, without a restart: {e:?}"));
    assert_eq!(
        w.history(&partner, &caller, &after).iter().map(|c| c.status).collect::<Vec<_>>(),
        [Status::A],
        "writes resume once space is back, without a restart"
    );
    assert!(w.engine.ready());
    let told = told.lock().unwrap().clone();
    assert!(told.contains(&StorageEvent::Reopened), "{told:?}");
    assert_eq!(told.last(), Some(&StorageEvent::Resumed), "{told:?}");

    // Everything committed is there, once; the failed creates left nothing.
    let ids: Vec<String> = w.changes(&partner, &caller).into_iter().map(|c| c.transaction_id).collect();
    assert_eq!(ids.len(), 1 + created + 1, "{ids:?}");
    assert_eq!(ids.first(), Some(&before));
    assert_eq!(ids.last(), Some(&after));
    assert_eq!(w.engine.audit_records().unwrap(), Ok(()));
    assert_eq!(w.engine.audit_usage().unwrap(), Ok(()));
}

#[test]
fn readiness_follows_the_disk_and_a_failed_reopen_is_tried_again() {
    let disk = SimDisk::new();
    let (w, told) = engine_on(&disk);
    assert!(w.engine.ready(), "a new engine is ready");
    // Nothing fits: every write fails, and so does reopening (redb writes
    // while it opens a database that needs repair).
    disk.set_capacity(Some(0));
    let refused = w.run(&Caller::Operator, Operation::CreatePartner { name: "P".into() });
    assert_eq!(refused.unwrap_err().error(), Some(&AchError::DatabaseUnavailable));
    assert!(!w.engine.ready(), "not ready while writes fail");
    assert!(!w.engine.ready(), "each check tries again");
    let get = |path: &str| {
        route(&w.engine, &Request { method: "GET".into(), path: path.into(), ..Request::default() })
    };
    let ready = get("/readyz");
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(ready.body.contains(&AchError::DatabaseUnavailable.to_string()), "{}", ready.body);
    assert_eq!(
        (get("/healthz").status, get("/healthz").body),
        (200, r#"{"success":true,"payload":{"status":"live"}}"#.into())
    );
    assert!(told.lock().unwrap().iter().any(|e| matches!(e, StorageEvent::ReopenFailed(_))), "{told:?}");

    disk.set_capacity(None);
    assert!(w.engine.ready(), "ready again once a write commits");
    assert_eq!(get("/readyz").body, r#"{"success":true,"payload":{"status":"ready"}}"#);
    let (partner, caller, merchant) = w.tenant(&["PPD"]);
    let id = w.create(&partner, &caller, &transaction(&merchant, "debit", "3.00")).unwrap();
    let history = w.history(&partner, &caller, &id);
    assert_eq!(history.iter().map(|c| c.status).collect::<Vec<_>>(), [ach_core::model::Status::A]);
    assert_eq!(told.lock().unwrap().last(), Some(&StorageEvent::Resumed));
}
