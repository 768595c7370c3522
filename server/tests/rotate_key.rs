//! `achd rotate-key`: the new key opens what the old key sealed, the old key
//! opens nothing, a wrong current key changes nothing, a served database is
//! not re-keyed, and a key kept in the data directory is replaced with the
//! database.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use ach_testkit::{Achd, Server};
use serde_json::Value;

use common::{printed, redb_root, Tenant, START};

fn achd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_achd")).args(args).output().unwrap()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn serve(data: &Path, key: Option<&Path>) -> Result<Server, ach_testkit::Exit> {
    let mut achd = Achd::new(env!("CARGO_BIN_EXE_achd")).data(data).sandbox_start(START).log_level(None);
    if let Some(key) = key {
        achd = achd.flags(["--key-file", p(key)]);
    }
    achd.try_start()
}

/// A tenant and one transaction with an inline account: the transaction's id.
async fn populate(server: &Server) -> (Tenant, String) {
    let mut c = server.conn().await;
    let t = Tenant::create(server, &mut c).await;
    let txn = t.transaction("125.50");
    let v = c.expect("POST", "/transactions", &t.partner_key, Some(txn), 201).await;
    let id = v["payload"]["id"].as_str().unwrap().to_owned();
    (t, id)
}

async fn still_there(server: &Server, t: &Tenant, id: &str) {
    t.reads_back(&mut server.conn().await, &[id.to_owned()]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_kept_apart_rotates_and_the_old_one_opens_nothing() {
    let Some(root) = redb_root() else { return };
    let (data, first, second, stranger) =
        (root.path().join("data"), root.path().join("k1"), root.path().join("k2"), root.path().join("k3"));
    let mut server = serve(&data, Some(&first)).unwrap();
    let (t, id) = populate(&server).await;
    // Served: not re-keyed under the server.
    assert!(achd(&["keygen", p(&second)]).status.success());
    let out =
        achd(&["rotate-key", "--data", p(&data), "--key-file", p(&first), "--new-key-file", p(&second)]);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    assert!(printed(&out).contains("stop achd first"), "{}", printed(&out));
    server.stop();

    let out =
        achd(&["rotate-key", "--data", p(&data), "--key-file", p(&first), "--new-key-file", p(&second)]);
    assert!(out.status.success(), "{}", printed(&out));
    let said: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["key_file"], p(&second), "{said}");

    let refused = serve(&data, Some(&first)).map(|_| ()).unwrap_err();
    assert!(refused.log.contains("not this database's key"), "{}", refused.log);
    let server = serve(&data, Some(&second)).unwrap();
    still_there(&server, &t, &id).await;
    drop(server);

    // A wrong current key: refused, nothing changed.
    assert!(achd(&["keygen", p(&stranger)]).status.success());
    let out =
        achd(&["rotate-key", "--data", p(&data), "--key-file", p(&first), "--new-key-file", p(&stranger)]);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    assert!(printed(&out).contains("is not this database's key: nothing was changed"), "{}", printed(&out));
    // The same key twice, or a new key file that is not there: refused.
    let out =
        achd(&["rotate-key", "--data", p(&data), "--key-file", p(&second), "--new-key-file", p(&second)]);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    let missing = root.path().join("missing.key");
    let out =
        achd(&["rotate-key", "--data", p(&data), "--key-file", p(&second), "--new-key-file", p(&missing)]);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    assert!(!missing.exists(), "no key is made by a rotation");
    let server = serve(&data, Some(&second)).unwrap();
    still_there(&server, &t, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_data_directory_is_replaced_with_the_database() {
    let Some(root) = redb_root() else { return };
    let (data, new) = (root.path().join("data"), root.path().join("new.key"));
    let mut server = serve(&data, None).unwrap();
    let (t, id) = populate(&server).await;
    server.stop();
    let own = data.join("ach.redb.key");
    let before = std::fs::read_to_string(&own).unwrap();
    assert!(achd(&["keygen", p(&new)]).status.success());
    let out = achd(&["rotate-key", "--data", p(&data), "--new-key-file", p(&new)]);
    assert!(out.status.success(), "{}", printed(&out));
    let after = std::fs::read_to_string(&own).unwrap();
    assert_ne!(after.trim(), before.trim());
    assert_eq!(after.trim(), std::fs::read_to_string(&new).unwrap().trim());
    let server = serve(&data, None).unwrap();
    still_there(&server, &t, &id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reseal_runs_while_the_server_answers_and_a_stopped_one_rotates_both_keys() {
    let Some(root) = redb_root() else { return };
    let (data, first, second) = (root.path().join("data"), root.path().join("k1"), root.path().join("k2"));
    let mut server = serve(&data, Some(&first)).unwrap();
    let (t, id) = populate(&server).await;
    let rotate = |extra: &[&str]| {
        let mut args = vec!["rotate-key", "--data", p(&data), "--key-file", p(&first)];
        args.extend_from_slice(extra);
        achd(&args)
    };
    let out = rotate(&["--reseal"]);
    assert!(out.status.success(), "{}", printed(&out));
    let said: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["from"], "the serving achd", "{said}");
    assert!(said["resealed"].as_u64().unwrap() >= 3, "a partner, a merchant, a transaction: {said}");
    assert_eq!(said["unopened"], 0, "{said}");
    still_there(&server, &t, &id).await;
    let mut c = server.conn().await;
    let v = c.expect("POST", "/transactions", &t.partner_key, Some(t.transaction("42.00")), 201).await;
    let later = v["payload"]["id"].as_str().unwrap().to_owned();
    // The sealing key of a served database does not change under it.
    assert!(achd(&["keygen", p(&second)]).status.success());
    let out = rotate(&["--reseal", "--new-key-file", p(&second)]);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    assert!(printed(&out).contains("stop achd first"), "{}", printed(&out));
    server.stop();

    // Stopped: a new data key and a new sealing key at once.
    let out = rotate(&["--reseal", "--new-key-file", p(&second)]);
    assert!(out.status.success(), "{}", printed(&out));
    let said: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (said["from"].as_str(), said["key_file"].as_str()),
        (Some("the closed database"), Some(p(&second)))
    );
    let refused = serve(&data, Some(&first)).map(|_| ()).unwrap_err();
    assert!(
        refused.log.contains("not this database's key"),
        "the old sealing key opens nothing: {}",
        refused.log
    );
    let server = serve(&data, Some(&second)).unwrap();
    still_there(&server, &t, &id).await;
    still_there(&server, &t, &later).await;
    let out = achd(&["rotate-key", "--data", p(&data), "--key-file", p(&second)]);
    assert_eq!(out.status.code(), Some(1), "nothing asked: {}", printed(&out));
}
