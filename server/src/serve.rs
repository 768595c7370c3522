//! `achd serve`: the service over HTTPS.
//!
//! Start-up: the data directory, the operator key file, the TLS certificate, the
//! outbox (`--outbox`), the database, the outbox's exporter thread, the
//! group-commit writer thread, the clock ticker (production) and the two
//! listeners (the public API on `--listen`, the operator plane on `--admin-listen`). Shutdown (SIGINT/SIGTERM): stop accepting, let every connection finish
//! the request it is serving, let the writer drain its queue, close the database,
//! exit 0. Connections: see [`crate::connections`] for who is admitted and for
//! how long.

use std::net::{SocketAddr, ToSocketAddrs};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use ach_core::engine::{Engine, EngineOptions};
use tracing::{error, info, warn};

use crate::connections::ConnectionLimits;
use crate::datadir::{self, MayCreate, OperatorKey};
use crate::http::App;
use crate::logging::say;
use crate::outbox::{Exporter, Outbox};
use crate::sealing_key::{self, KeyFileArg, Source};
use crate::writer::Writer;
use crate::{connections, directory, logging, open_files, tls, web, writer};

/// Arguments of `achd serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Directory of the database (ach.redb), its key, the operator key and the
    /// generated certificate [default: ./ach-data]. A directory without a
    /// database is refused unless --init or --sandbox is given (or, on the first
    /// start, the default directory does not exist yet: it is created).
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Make a new service in DIR (created, mode 0700) if it holds no database
    /// and no key; an existing service is opened as without it. A database
    /// without its key, or a key without its database, is refused all the same.
    #[arg(long)]
    init: bool,
    /// Address to listen on (port 0: any free port; the line `listening on
    /// https://ADDR` shows the real one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8443")]
    listen: String,
    /// Address of the operator plane: `/admin/*` is answered here only (and is
    /// an unknown path, 404, on --listen), nothing else is. Loopback by default;
    /// port 0: any free port (the line `operator plane on https://ADDR` shows
    /// it). Must differ from --listen.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8444")]
    admin_listen: String,
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
    /// Take webhook endpoints at http:// URLs and private or loopback
    /// addresses, and deliver to them (a sandbox always does): for a
    /// receiver inside the operator's own network.
    #[arg(long)]
    webhook_allow_private: bool,
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
    /// Keep the data in PostgreSQL instead of DIR/ach.redb: a libpq
    /// connection string or URL (several hosts with
    /// target_session_attrs=read-write find the primary after a failover).
    /// The schema is created or migrated at start. DIR still holds the
    /// encryption key (DIR/ach.key: every achd over one database needs the
    /// same), the operator key and the certificate.
    #[cfg(feature = "postgres")]
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Requests per second each partner's keys (and each merchant's key) may
    /// make, in bursts of twice as many, where the operator set no rate for
    /// the partner (its limits' `requests_per_second`); past it the answer is
    /// 429 with `Retry-After`. The operator is never rated.
    #[arg(long, value_name = "N", default_value_t = crate::rate::DEFAULT_PER_SECOND,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    requests_per_second: u32,
    #[command(flatten)]
    connections: connections::ConnectionArgs,
    #[command(flatten)]
    key: KeyFileArg,
}

/// Run the server until a signal; exit 0 after a clean shutdown, 1 if it cannot
/// start.
pub fn run(args: ServeArgs) -> ExitCode {
    logging::init();
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("achd serve: {why}");
            ExitCode::from(1)
        }
    }
}

/// The steps of a run: check the arguments, open the data directory's engine,
/// start the threads and the runtime, serve both planes, then shut down in order.
fn serve(args: ServeArgs) -> Result<(), String> {
    let listen = resolve(&args.listen)?;
    let admin_listen = resolve(&args.admin_listen)?;
    if admin_listen == listen && listen.port() != 0 {
        return Err(format!("--admin-listen must differ from --listen ({listen})"));
    }
    let open_files = open_files::raise();
    let limits = args.connections.limits(open_files);
    say(&limits_line(&limits, open_files));
    // What can be checked before the data directory is touched.
    let site = args.web.as_deref().map(web::Site::open).transpose()?;
    let outbox = args.outbox.as_deref().map(Outbox::open).transpose()?;
    let options = engine_options(&args)?;

    let data = args.data.clone().unwrap_or_else(|| PathBuf::from(datadir::DEFAULT));
    let (engine, operator) = open_engine(&args, &data, options)?;
    let tls = tls::setup(&data, args.tls_cert.as_deref(), args.tls_key.as_deref(), listen)?;
    say(&tls.note);
    match args.routing_directory.as_deref() {
        Some(file) => directory::load(&engine, file, say)?,
        None => say(&directory::in_use(&engine)),
    }
    let engine = Arc::new(engine);
    let exporter = outbox.map(|outbox| start_exporter(&engine, outbox)).transpose()?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("achd")
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let metrics = Arc::new(crate::metrics::Metrics::new());
    let (writer, writer_thread) = writer::start(Arc::clone(&engine), Arc::clone(&metrics))
        .map_err(|e| format!("cannot start the writer thread: {e}"))?;
    let rates = NonZeroU32::new(args.requests_per_second).unwrap_or(NonZeroU32::MIN);
    let (app, admin) = planes(&engine, writer, site, operator.path.clone(), rates, metrics);
    // A database file is backed up through the server holding it open.
    let control = match on_postgres(&args) {
        false => Some(runtime.block_on(async { crate::control::start(&data, &engine) })?),
        true => None,
    };
    let served = runtime.block_on(ach_core::nonblocking::Marked::new(crate::listen::listen_and_serve(
        [(app, listen), (admin, admin_listen)],
        tls.config,
        (args.sandbox, args.sandbox || args.webhook_allow_private),
        limits,
    )));
    // Waits for the router's blocking reads still running; drops every task.
    drop(runtime);
    shut_down(writer_thread, exporter, engine);
    drop(control);
    served
}

/// Whether the database is PostgreSQL's (backed up by PostgreSQL's tools).
fn on_postgres(args: &ServeArgs) -> bool {
    #[cfg(feature = "postgres")]
    return args.store.is_some();
    #[cfg(not(feature = "postgres"))]
    {
        let _ = args;
        false
    }
}

/// The engine's options: a sandbox's manual clock (from `--sandbox-start` or
/// now), else the system clock.
fn engine_options(args: &ServeArgs) -> Result<EngineOptions, String> {
    if !args.sandbox {
        let options = EngineOptions::system();
        return Ok(if args.webhook_allow_private { options.with_private_webhooks() } else { options });
    }
    let start = match args.sandbox_start.as_deref() {
        None => chrono::Utc::now(),
        Some(text) => ach_core::calendar::parse_instant(text).map_err(|e| format!("--sandbox-start: {e}"))?,
    };
    Ok(EngineOptions::manual(start).sandbox())
}

/// Open the engine of the data directory `data` (a new service's made first, when
/// allowed) with its operator key, and say what was found or made.
fn open_engine(
    args: &ServeArgs,
    data: &Path,
    options: EngineOptions,
) -> Result<(Engine, OperatorKey), String> {
    #[cfg(feature = "postgres")]
    let store = args.store.as_deref();
    #[cfg(not(feature = "postgres"))]
    let store: Option<&str> = None;
    let key_in_data = match store {
        Some(_) => datadir::store_key(data),
        None => ach_core::engine::key_file_for(&datadir::database(data)),
    };
    let source = args.key.source();
    let new = match (&source, store) {
        (Source::Outside(path), Some(_)) => !path.try_exists().unwrap_or(true),
        (Source::Outside(_), None) => !datadir::database(data).try_exists().unwrap_or(true),
        (Source::DataDirectory, Some(_)) => datadir::holds_no_key(data),
        (Source::DataDirectory, None) => datadir::holds_no_service(data),
    };
    let made_dir = if new { datadir::prepare_new(data, may_create(args))? } else { false };
    let operator = OperatorKey::of(data)?;
    let mut options =
        options.with_operator_key(operator.key.clone()).with_storage_hook(logging::storage_hook());
    let mut made_key = None;
    match &source {
        Source::Outside(path) => {
            let (key, made) = sealing_key::load(path, new)?;
            made_key = made.then(|| path.clone());
            options = options.with_encryption_key(key);
            if key_in_data.try_exists().unwrap_or(false) {
                warn!(
                    "{} is a sealing key left in the data directory: the key in {} seals the data; remove the \
                     copy beside it",
                    key_in_data.display(),
                    path.display()
                );
            }
        }
        Source::DataDirectory if !args.sandbox => warn!("{}", sealing_key::beside_the_data(&key_in_data)),
        Source::DataDirectory => {}
    }
    let opened = match store {
        #[cfg(feature = "postgres")]
        Some(url) => datadir::open_postgres(data, url, options, made_dir),
        _ => datadir::open(data, options, made_dir),
    };
    let engine = opened.inspect_err(|_| {
        // A refused start leaves no key it made.
        if let Some(made) = &made_key {
            let _ = std::fs::remove_file(made);
        }
    })?;
    if new {
        let shown = std::path::absolute(data).unwrap_or_else(|_| data.to_path_buf());
        say(&format!(
            "data directory: {} (a new service: database and its key created, mode 0600)",
            shown.display()
        ));
    }
    operator.keep()?;
    let how = if operator.fresh { "created, mode 0600" } else { "existing" };
    say(&format!("operator key: {} ({how})", operator.path.display()));
    warn_if_shared(&operator.path);
    crate::operator::check_key(&engine, &operator.key, &operator.path);
    Ok((engine, operator))
}

/// Start the thread that exports origination files to the outbox.
fn start_exporter(engine: &Arc<Engine>, outbox: Outbox) -> Result<Exporter, String> {
    say(&format!("outbox: {} ({} files exported before)", outbox.dir().display(), outbox.exported()));
    Exporter::start(Arc::clone(engine), outbox).map_err(|e| format!("cannot start the outbox thread: {e}"))
}

/// What the public API's and the operator plane's handlers share: one engine,
/// one writer, one set of large-body permits and one of request buckets. The site is the public
/// plane's; the operator key file is the operator plane's.
fn planes(
    engine: &Arc<Engine>,
    writer: Writer,
    site: Option<web::Site>,
    key_file: PathBuf,
    requests_per_second: NonZeroU32,
    metrics: crate::metrics::Shared,
) -> (Arc<App>, Arc<App>) {
    let large_bodies = Arc::new(crate::body::LargeBodies::default());
    let rates = Arc::new(crate::rate::RequestRates::new(requests_per_second));
    let answers = Arc::new(crate::answers::Answers::default());
    let admin = Arc::new(App {
        engine: Arc::clone(engine),
        writer: writer.clone(),
        site: None,
        operator_plane: true,
        operator_key_file: Some(key_file),
        large_bodies: large_bodies.clone(),
        rates: Arc::clone(&rates),
        answers: Arc::clone(&answers),
        metrics: Arc::clone(&metrics),
    });
    let app = Arc::new(App {
        engine: Arc::clone(engine),
        writer,
        site,
        operator_plane: false,
        operator_key_file: None,
        large_bodies,
        rates,
        answers,
        metrics,
    });
    (app, admin)
}

/// After the runtime is gone: the writer commits what is queued and stops, the
/// outbox writes what the last cut-offs made, and the database closes.
fn shut_down(writer_thread: std::thread::JoinHandle<()>, exporter: Option<Exporter>, engine: Arc<Engine>) {
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
}

/// `connections: at most N (M per client address; O more for the operator
/// plane), open-file limit F (raised from S); write timeout W s, lifetime L s`.
fn limits_line(limits: &ConnectionLimits, open_files: Option<open_files::OpenFiles>) -> String {
    let files = match open_files {
        Some(f) if f.now > f.before => format!(", open-file limit {} (raised from {})", f.now, f.before),
        Some(f) => format!(", open-file limit {}", f.now),
        None => String::new(),
    };
    format!(
        "connections: at most {} ({} per client address; {} more for the operator plane){files}; write timeout {} s, lifetime {} s",
        limits.max,
        limits.per_client,
        crate::connections::OPERATOR_CONNECTIONS,
        limits.write_timeout.as_secs(),
        limits.lifetime.as_secs()
    )
}

/// The first address `ADDR` names (`127.0.0.1:8443`, `[::1]:0`, `localhost:8443`).
fn resolve(listen: &str) -> Result<SocketAddr, String> {
    listen
        .to_socket_addrs()
        .map_err(|e| format!("cannot use the listen address {listen}: {e}"))?
        .next()
        .ok_or_else(|| format!("the listen address {listen} names no address"))
}

/// Whether this start may make a new service in a directory without one.
fn may_create(args: &ServeArgs) -> MayCreate {
    if args.init {
        MayCreate::Asked
    } else if args.sandbox {
        MayCreate::Sandbox
    } else if args.data.is_none() && !Path::new(datadir::DEFAULT).exists() {
        MayCreate::FirstStart
    } else {
        MayCreate::No
    }
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
