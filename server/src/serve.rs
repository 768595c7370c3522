//! `achd serve`: the service over HTTPS.
//!
//! Start-up: the data directory, the operator key file, the TLS certificate, the
//! outbox (`--outbox`), the database, the outbox's exporter thread, the
//! group-commit writer thread, the clock ticker (production) and the listener. Shutdown (SIGINT/SIGTERM): stop accepting, let every connection finish
//! the request it is serving, let the writer drain its queue, close the database,
//! exit 0.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ach_core::engine::{Engine, EngineOptions};
use ach_core::secrets::{load_or_create_secret_file, ApiKey, KeyKind};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio_rustls::TlsAcceptor;
use tracing::{debug, error, info, warn};

use crate::http::App;
use crate::outbox::{Exporter, Outbox};
use crate::shutdown::Signals;
use crate::{directory, http, logging, tls, web, writer};

/// Time to complete the TLS handshake after connecting.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Time to send a request's headers (and the longest an idle keep-alive
/// connection stays open).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Time to receive a whole request (headers and body).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long shutdown waits for requests in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Open connections at most; more are closed at once.
pub const MAX_CONNECTIONS: usize = 1024;
/// How often production runs the cut-offs and settlements due.
const TICK: Duration = Duration::from_secs(5);

/// Arguments of `achd serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of the database (ach.redb), its key, the operator key and the
    /// generated certificate; created if missing.
    #[arg(long, value_name = "DIR", default_value = "./ach-data")]
    data: PathBuf,
    /// Address to listen on (port 0: any free port; the line `listening on
    /// https://ADDR` shows the real one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8443")]
    listen: String,
    /// TLS certificate chain (PEM). Without it, a self-signed certificate is made
    /// in DIR and reused.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Sandbox: the clock starts at the current time and moves only by POST
    /// /admin/clock (no automatic cut-offs).
    #[arg(long)]
    sandbox: bool,
    /// Sandbox: start the clock at this RFC 3339 instant instead of now
    /// (2026-11-25T10:00:00-05:00). A reopened sandbox whose clock already
    /// stands later resumes there: the clock never moves back.
    #[arg(long, value_name = "INSTANT", requires = "sandbox")]
    sandbox_start: Option<String>,
    /// Load this FedACH directory file (FedACHdir.txt) before listening. It is
    /// stored in the database: later starts without the flag keep it, and POST
    /// /admin/routing still replaces it. Without it and without a stored one,
    /// the embedded default (a few dozen routing numbers) is used.
    #[arg(long, value_name = "FEDACH_FILE")]
    routing_directory: Option<PathBuf>,
    /// Serve the static files of this directory at / (API paths take precedence).
    #[arg(long, value_name = "DIR")]
    web: Option<PathBuf>,
    /// Also write every origination file into this directory, for the transfer
    /// job that sends it to the bank: `<id>.ach` (mode 0600), written atomically
    /// within about a second of its cut-off, each file once (the ids written are
    /// kept in `DIR/.exported`; the job may move or delete the `.ach` files).
    /// Created (0700) if missing; a directory that cannot be written stops the
    /// start.
    #[arg(long, value_name = "DIR")]
    outbox: Option<PathBuf>,
}

/// Run the server until a signal; exit 0 after a clean shutdown, 1 if it cannot
/// start.
pub fn run(args: Args) -> ExitCode {
    logging::init();
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("achd serve: {why}");
            ExitCode::from(1)
        }
    }
}

/// A line for the person who started the server (standard output, flushed).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn serve(args: Args) -> Result<(), String> {
    let listen = resolve(&args.listen)?;
    create_data_dir(&args.data)?;
    let key_path = args.data.join("operator.key");
    let existed = key_path.exists();
    let operator_key =
        load_or_create_secret_file(&key_path, || ApiKey::generate(KeyKind::Operator).as_str().to_owned())
            .map_err(|e| e.to_string())?;
    let how = if existed { "existing" } else { "created, mode 0600" };
    say(&format!("operator key: {} ({how})", key_path.display()));
    warn_if_shared(&key_path);

    let tls = tls::setup(&args.data, args.tls_cert.as_deref(), args.tls_key.as_deref(), listen)?;
    say(&tls.note);
    let site = args.web.as_deref().map(web::Site::open).transpose()?;
    let outbox = args.outbox.as_deref().map(Outbox::open).transpose()?;

    let options = if args.sandbox {
        let start = match args.sandbox_start.as_deref() {
            None => chrono::Utc::now(),
            Some(text) => {
                ach_core::calendar::parse_instant(text).map_err(|e| format!("--sandbox-start: {e}"))?
            }
        };
        EngineOptions::manual(start).sandbox()
    } else {
        EngineOptions::system()
    }
    .with_operator_key(operator_key);
    let database = args.data.join("ach.redb");
    let engine = Engine::open(&database, options)
        .map_err(|e| format!("cannot open the database {}: {e}", database.display()))?;
    match args.routing_directory.as_deref() {
        Some(file) => directory::load(&engine, file, say)?,
        None => say(&directory::in_use(&engine)),
    }
    let engine = Arc::new(engine);
    let exporter = match outbox {
        Some(outbox) => {
            say(&format!("outbox: {} ({} files exported before)", outbox.dir().display(), outbox.exported()));
            let started = Exporter::start(Arc::clone(&engine), outbox);
            Some(started.map_err(|e| format!("cannot start the outbox thread: {e}"))?)
        }
        None => None,
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("achd")
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let (writer, writer_thread) =
        writer::start(Arc::clone(&engine)).map_err(|e| format!("cannot start the writer thread: {e}"))?;
    let app = Arc::new(App { engine: Arc::clone(&engine), writer, site, large_bodies: Default::default() });
    let served = runtime.block_on(listen_and_serve(app, listen, tls.config, args.sandbox));
    // Waits for the router's blocking reads still running; drops every task.
    drop(runtime);
    // Every sender is gone: the writer commits what is queued, answers, and stops.
    if writer_thread.join().is_err() {
        error!("the writer thread panicked");
    }
    // Everything is committed: the outbox writes what the last cut-offs made.
    if let Some(exporter) = exporter {
        exporter.stop();
    }
    match Arc::try_unwrap(engine) {
        Ok(engine) => {
            drop(engine);
            info!("database closed");
        }
        Err(_) => warn!("the database is still referenced at exit"),
    }
    served
}

/// The first address `ADDR` names (`127.0.0.1:8443`, `[::1]:0`, `localhost:8443`).
fn resolve(listen: &str) -> Result<SocketAddr, String> {
    listen
        .to_socket_addrs()
        .map_err(|e| format!("cannot use the listen address {listen}: {e}"))?
        .next()
        .ok_or_else(|| format!("the listen address {listen} names no address"))
}

/// Create the data directory (mode 0700 on unix) if it does not exist.
fn create_data_dir(dir: &Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))
}

/// Warn when a secret file is readable by others than its owner.
fn warn_if_shared(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.permissions().mode() & 0o077 != 0 {
                warn!(path = %path.display(), "the operator key file is readable by others: chmod 600 it");
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Accept TLS connections until a signal, then shut down gracefully.
async fn listen_and_serve(
    app: Arc<App>,
    listen: SocketAddr,
    config: Arc<rustls::ServerConfig>,
    sandbox: bool,
) -> Result<(), String> {
    // Signals first: a SIGTERM right after the "listening" line is a clean stop.
    let mut signals = Signals::install().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let listener = TcpListener::bind(listen).await.map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let local = listener.local_addr().map_err(|e| format!("cannot read the bound address: {e}"))?;
    let (stop_ticker, stopped) = watch::channel(false);
    let ticker = (!sandbox).then(|| tokio::spawn(tick(Arc::clone(&app.engine), stopped)));
    info!(address = %local, sandbox, "listening");
    say(&format!("listening on https://{local}"));

    let acceptor = TlsAcceptor::from(config);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let signal = loop {
        tokio::select! {
            signal = signals.next() => break signal,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                        debug!(%peer, "too many connections: closed");
                        continue;
                    };
                    let serving = connection(tcp, peer, acceptor.clone(), Arc::clone(&app), graceful.watcher());
                    tokio::spawn(async move {
                        serving.await;
                        drop(slot);
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: do not spin.
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    };
    info!(signal, "shutting down: no new connections; finishing the requests in flight");
    drop(listener);
    let _ = stop_ticker.send(true);
    tokio::select! {
        finished = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()) => {
            if finished.is_err() {
                warn!("requests still in flight after {} s: closing them", SHUTDOWN_GRACE.as_secs());
            }
        }
        again = signals.next() => warn!(signal = again, "second signal: closing the connections now"),
    }
    if let Some(ticker) = ticker {
        let _ = ticker.await;
    }
    drop(app);
    Ok(())
}

/// One connection: the TLS handshake, then HTTP/1.1 serving `app` until the client
/// leaves, a timeout, or graceful shutdown.
async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    app: Arc<App>,
    watcher: Watcher,
) {
    let _ = tcp.set_nodelay(true);
    let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let service = service_fn(move |request| {
        let app = Arc::clone(&app);
        async move { Ok::<_, Infallible>(http::handle(app, request).await) }
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    if let Err(e) = watcher.watch(conn).await {
        debug!(%peer, error = %e, "connection closed with an error");
    }
}

/// Production: run the cut-offs and settlements due by the wall clock every few
/// seconds (requests also run them before their own operation).
async fn tick(engine: Arc<Engine>, mut stop: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(TICK);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            _ = stop.changed() => return,
        }
        let engine = Arc::clone(&engine);
        let advanced = tokio::task::spawn_blocking(move || {
            let now = engine.now();
            engine.advance_to(now)
        })
        .await;
        match advanced {
            Ok(Ok(progress)) if progress.originated + progress.settled > 0 => {
                info!(originated = progress.originated, settled = progress.settled, "cut-off and settlement");
            }
            Ok(Ok(_)) => {}
            Ok(Err(failure)) => warn!(error = %failure, "cut-off and settlement failed; retrying"),
            Err(e) => error!(error = %e, "cut-off and settlement panicked; retrying"),
        }
    }
}
