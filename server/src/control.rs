//! The control socket `achd.sock` in the data directory: how a command run
//! beside a serving `achd` (`achd backup`) reaches the database it holds open.
//!
//! The socket is the data directory's (mode 0600, in a directory of mode
//! 0700): whoever may read the database may ask for a copy of it, and nobody
//! else may connect. One request per connection, a line:
//! - `backup`: the server copies one snapshot of the database into
//!   `backups/` in the data directory, answers `ok SIZE ENTRIES` and the
//!   file's SIZE bytes (a database of ENTRIES entries), then removes its copy; or `error MESSAGE`.
//! - `reseal`: the server re-seals every sealed value under a new data key
//!   while it serves (`Engine::reseal`), then answers `ok RESEALED UNOPENED`
//!   (rows sealed again, values no key opens); or `error MESSAGE`.
//!
//! Anything else is answered `error` and the connection closed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use ach_core::engine::Engine;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tracing::{info, warn};

/// The socket's file name in the data directory.
pub const SOCKET: &str = "achd.sock";
/// The directory in the data directory where copies wait to be sent.
const STAGING: &str = "backups";
/// The longest request line read.
const MAX_LINE: u64 = 256;

/// The socket of a data directory.
pub fn socket_for(data: &Path) -> PathBuf {
    data.join(SOCKET)
}

/// The listening socket; its file is removed when this is dropped.
pub struct Control {
    path: PathBuf,
}

impl Drop for Control {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listen on the data directory's socket and answer its requests on the
/// current runtime until it stops. A socket left by an earlier run is
/// replaced (this process holds the database: no other server is on it), and
/// copies an earlier run left unsent are removed.
pub fn start(data: &Path, engine: &Arc<Engine>) -> Result<Control, String> {
    let path = socket_for(data);
    let staging = data.join(STAGING);
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(|e| format!("cannot clear {}: {e}", staging.display()))?;
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot replace the control socket {}: {e}", path.display())),
    }
    let listener =
        UnixListener::bind(&path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    let control = Control { path: path.clone() };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| format!("cannot restrict {}: {e}", path.display()))?;
    }
    info!(socket = %path.display(), "control socket listening");
    let engine = Arc::downgrade(engine);
    crate::tasks::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    crate::tasks::spawn(answer(stream, engine.clone(), staging.clone()));
                }
                Err(e) => warn!(error = %e, "control socket accept failed"),
            }
        }
    });
    Ok(control)
}

/// Answer one connection's request.
async fn answer(stream: UnixStream, engine: Weak<Engine>, staging: PathBuf) {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    let mut reader = BufReader::new(read).take(MAX_LINE);
    let request = match reader.read_line(&mut line).await {
        Ok(_) => line.trim_end_matches(['\n', '\r']).to_owned(),
        Err(_) => String::new(),
    };
    let result = match request.as_str() {
        "backup" => send_backup(&mut write, engine, &staging).await,
        "reseal" => reseal(&mut write, engine).await,
        _ => Err("unknown request: the control socket answers `backup` and `reseal`".to_owned()),
    };
    if let Err(why) = result {
        warn!(request = %request.escape_debug(), "control request failed: {why}");
        let _ = write.write_all(format!("error {}\n", why.replace('\n', " ")).as_bytes()).await;
    }
    let _ = write.shutdown().await;
}

/// Numbers the staged copies of this process.
static COPIES: AtomicU64 = AtomicU64::new(0);

/// Copy the database into the staging directory, then send it.
async fn send_backup(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    engine: Weak<Engine>,
    staging: &Path,
) -> Result<(), String> {
    let engine = engine.upgrade().ok_or("the server is stopping")?;
    let file = staging.join(format!("{}.redb", COPIES.fetch_add(1, Ordering::SeqCst)));
    let copy = {
        let (file, staging) = (file.clone(), staging.to_owned());
        tokio::task::spawn_blocking(move || {
            make_private_dir(&staging)?;
            engine.backup(&file).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("the copy stopped: {e}"))?
    };
    let sent = async {
        let figures = copy?;
        let mut source =
            tokio::fs::File::open(&file).await.map_err(|e| format!("cannot read the copy: {e}"))?;
        let size = source.metadata().await.map_err(|e| format!("cannot read the copy: {e}"))?.len();
        write.write_all(format!("ok {size} {}\n", figures.entries).as_bytes()).await.map_err(gone)?;
        tokio::io::copy(&mut source, write).await.map_err(gone)?;
        info!(entries = figures.entries, bytes = size, "backup sent");
        Ok(())
    }
    .await;
    let _ = tokio::fs::remove_file(&file).await;
    sent
}

/// Re-seal every sealed value, then say how many rows changed.
async fn reseal(write: &mut tokio::net::unix::OwnedWriteHalf, engine: Weak<Engine>) -> Result<(), String> {
    let engine = engine.upgrade().ok_or("the server is stopping")?;
    let figures = tokio::task::spawn_blocking(move || engine.reseal().map_err(|e| e.to_string()))
        .await
        .map_err(|e| format!("the re-seal stopped: {e}"))??;
    info!(resealed = figures.resealed, unopened = figures.unopened, "re-sealed under a new data key");
    let line = format!("ok {} {}\n", figures.resealed, figures.unopened);
    write.write_all(line.as_bytes()).await.map_err(|e| format!("the answer was not sent: {e}"))
}

/// The reader went away before the copy was sent.
fn gone(e: std::io::Error) -> String {
    format!("the backup was not received whole: {e}")
}

/// `dir`, created owner-only if missing.
fn make_private_dir(dir: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}
