//! Starting `achd serve` and what a running one offers.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use tokio::net::{TcpSocket, TcpStream};
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::client::{connector, Conn};
use crate::raw::{self, Raw};

/// How long a start may take before the server is taken for hung and killed.
const START_LIMIT: Duration = Duration::from_secs(60);

/// How to start `achd serve`: always `--listen 127.0.0.1:0 --admin-listen
/// 127.0.0.1:0`, plus what is asked here.
#[derive(Clone, Debug, Default)]
pub struct Achd {
    exe: PathBuf,
    data: Option<PathBuf>,
    sandbox: bool,
    sandbox_start: Option<String>,
    flags: Vec<OsString>,
    shell: Option<String>,
    log_level: Option<String>,
    current_dir: Option<PathBuf>,
}

impl Achd {
    /// `achd serve` of this binary (`env!("CARGO_BIN_EXE_achd")` in a test).
    pub fn new(exe: impl Into<PathBuf>) -> Achd {
        Achd { exe: exe.into(), log_level: Some("debug".to_owned()), ..Achd::default() }
    }

    /// `--data DIR`. Without it: no `--data` flag when a current directory is
    /// set (the server's default `./ach-data` there), else `data` in a
    /// temporary directory the server makes itself and that goes with it.
    pub fn data(mut self, dir: impl Into<PathBuf>) -> Achd {
        self.data = Some(dir.into());
        self
    }

    /// `--sandbox`: the manual clock, a new service made when there is none.
    pub fn sandbox(mut self) -> Achd {
        self.sandbox = true;
        self
    }

    /// `--sandbox --sandbox-start INSTANT` (RFC 3339): a clock that never
    /// depends on the day the test runs.
    pub fn sandbox_start(mut self, instant: &str) -> Achd {
        self.sandbox = true;
        self.sandbox_start = Some(instant.to_owned());
        self
    }

    /// More flags, after the others.
    pub fn flags<S: Into<OsString>>(mut self, flags: impl IntoIterator<Item = S>) -> Achd {
        self.flags.extend(flags.into_iter().map(Into::into));
        self
    }

    /// Start it from `sh -c "SETUP exec achd serve …"`: `umask 000 &&`,
    /// `ulimit -n 64 &&` and the like, for what the server inherits.
    pub fn shell(mut self, setup: &str) -> Achd {
        self.shell = Some(setup.to_owned());
        self
    }

    /// `ACHD_LOG` (`debug` unless told; `None`: inherited).
    pub fn log_level(mut self, level: Option<&str>) -> Achd {
        self.log_level = level.map(str::to_owned);
        self
    }

    /// Run it in `dir`.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Achd {
        self.current_dir = Some(dir.into());
        self
    }

    /// Start it and wait for its `listening on https://…` line; panics with its
    /// log if it does not come.
    pub fn start(self) -> Server {
        self.try_start().unwrap_or_else(|exit| panic!("{exit}"))
    }

    /// Start it and wait for its `listening on https://…` line, or for it to
    /// end without one (a refused start: its exit code, output and log).
    pub fn try_start(self) -> Result<Server, Exit> {
        let scratch = tempfile::Builder::new().prefix("achd-test-").tempdir().expect("a temporary directory");
        let log = scratch.path().join("server.log");
        let data = match (&self.data, &self.current_dir) {
            (Some(data), _) => data.clone(),
            (None, Some(cwd)) => cwd.join("ach-data"),
            (None, None) => scratch.path().join("data"),
        };
        let mut args: Vec<OsString> = vec!["serve".into()];
        if self.data.is_some() || self.current_dir.is_none() {
            args.extend(["--data".into(), data.clone().into_os_string()]);
        }
        args.extend(["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"].map(OsString::from));
        if self.sandbox {
            args.push("--sandbox".into());
        }
        if let Some(start) = &self.sandbox_start {
            args.extend(["--sandbox-start".into(), start.into()]);
        }
        args.extend(self.flags.iter().cloned());
        if let Some(store) = postgres_store(&data, &args) {
            args.extend(["--store".into(), store.into()]);
        }
        let mut command = match &self.shell {
            None => Command::new(&self.exe),
            Some(setup) => {
                let mut sh = Command::new("sh");
                sh.args(["-c", &format!(r#"{setup} exec "$0" "$@""#)]).arg(&self.exe);
                sh
            }
        };
        command.args(&args);
        if let Some(cwd) = &self.current_dir {
            command.current_dir(cwd);
        }
        if let Some(level) = &self.log_level {
            command.env("ACHD_LOG", level);
        }
        let stderr = std::fs::File::create(&log).expect("the server's log file");
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.exe.display()));
        let said = Arc::new(Mutex::new(Vec::new()));
        let found = read_addresses(&mut child, Arc::clone(&said));
        let exit = |child: &mut Child, timed_out| Exit {
            code: child.wait().ok().and_then(|s| s.code()),
            timed_out,
            stdout: said.lock().unwrap().join("\n"),
            log: std::fs::read_to_string(&log).unwrap_or_default(),
        };
        let (addr, admin) = match found.recv_timeout(START_LIMIT) {
            Ok(addresses) => addresses,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Its standard output closed without a listening line: it ends.
                let deadline = Instant::now() + START_LIMIT;
                while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                let timed_out = child.try_wait().ok().flatten().is_none();
                let _ = child.kill();
                return Err(exit(&mut child, timed_out));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                return Err(exit(&mut child, true));
            }
        };
        let pem = std::fs::read(data.join("tls-cert.pem")).expect("the server's tls-cert.pem");
        Ok(Server { child, addr, admin, data, log, tls: connector(&pem), said, _scratch: scratch })
    }
}

/// With `ACH_TEST_POSTGRES` set (a connection string), a server started
/// without `--store` keeps its data there instead of in `ach.redb`: in a schema
/// named after its data directory, so a restart on the same directory finds
/// its data again and every test's servers stay apart.
fn postgres_store(data: &Path, args: &[OsString]) -> Option<String> {
    let url = std::env::var("ACH_TEST_POSTGRES").ok().filter(|u| !u.is_empty())?;
    if args.iter().any(|a| a == "--store") {
        return None;
    }
    let dir = std::path::absolute(data).unwrap_or_else(|_| data.to_path_buf());
    // FNV-1a of the path: stable across runs of the test, unlike std's hasher.
    let hash = dir
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3));
    let join = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{join}options=-csearch_path%3Dach_h_{hash:016x}"))
}

/// Whether servers started here keep their data in PostgreSQL.
pub fn on_postgres() -> bool {
    std::env::var("ACH_TEST_POSTGRES").is_ok_and(|u| !u.is_empty())
}

/// Read the child's standard output on a thread: every line into `said`, and
/// the operator plane's and the public address once `listening on` comes.
fn read_addresses(
    child: &mut Child,
    said: Arc<Mutex<Vec<String>>>,
) -> mpsc::Receiver<(SocketAddr, SocketAddr)> {
    let stdout = child.stdout.take().expect("a piped standard output");
    let (send, found) = mpsc::channel();
    std::thread::spawn(move || {
        let mut admin = None;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let parsed = |prefix| line.strip_prefix(prefix).and_then(|a: &str| a.trim().parse().ok());
            let public: Option<SocketAddr> = parsed("listening on https://");
            if let Some(a) = parsed("operator plane on https://") {
                admin = Some(a);
            }
            said.lock().unwrap().push(line);
            if let Some(public) = public {
                let admin = admin.expect("the operator plane's line comes before the listening line");
                let _ = send.send((public, admin));
            }
        }
    });
    found
}

/// A start that ended without listening.
#[derive(Debug)]
pub struct Exit {
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// It neither listened nor ended in time, and was killed.
    pub timed_out: bool,
    /// What it printed on standard output.
    pub stdout: String,
    /// What it wrote on standard error.
    pub log: String,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if self.timed_out { "hung and was killed" } else { "ended" };
        write!(
            f,
            "achd serve {how} without listening (exit code {:?}); stdout: {}; log: {}",
            self.code, self.stdout, self.log
        )
    }
}

/// A running `achd serve`; killed on drop (its temporary directory removed).
pub struct Server {
    child: Child,
    addr: SocketAddr,
    admin: SocketAddr,
    data: PathBuf,
    log: PathBuf,
    tls: TlsConnector,
    said: Arc<Mutex<Vec<String>>>,
    _scratch: tempfile::TempDir,
}

impl Server {
    /// The public address (`listening on https://…`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The operator plane's address (`operator plane on https://…`).
    pub fn admin_addr(&self) -> SocketAddr {
        self.admin
    }

    /// Its data directory.
    pub fn data(&self) -> &Path {
        &self.data
    }

    /// Every byte the server's store holds: the database file and its redo
    /// log, or, on PostgreSQL, its rows (`COPY … (FORMAT binary)` through
    /// `psql`: keys and values as stored). For scans of what is kept at rest.
    pub fn stored_bytes(&self) -> Vec<u8> {
        match postgres_store(&self.data, &[]) {
            Some(url) => {
                let out = Command::new("psql")
                    .args([
                        url.as_str(),
                        "-v",
                        "ON_ERROR_STOP=1",
                        "-c",
                        "COPY ach_kv TO STDOUT (FORMAT binary)",
                    ])
                    .output()
                    .expect("psql");
                assert!(out.status.success(), "psql: {}", String::from_utf8_lossy(&out.stderr));
                out.stdout
            }
            None => {
                let mut bytes = std::fs::read(self.data.join("ach.redb")).expect("the database file");
                bytes.extend(std::fs::read(self.data.join("ach.redb.log")).unwrap_or_default());
                bytes
            }
        }
    }

    /// The operator key, from `operator.key` in the data directory.
    pub fn operator_key(&self) -> String {
        std::fs::read_to_string(self.data.join("operator.key")).unwrap().trim().to_owned()
    }

    /// Its log (standard error) so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Where its log is written.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Every line it printed on standard output so far.
    pub fn said(&self) -> Vec<String> {
        self.said.lock().unwrap().clone()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// SIGKILL, and wait for it to be gone.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Send it a signal by name (`TERM`, `INT`) with `kill`.
    pub fn signal(&self, name: &str) {
        let pid = self.pid().to_string();
        let sent = Command::new("kill").args([&format!("-{name}"), &pid]).status().unwrap();
        assert!(sent.success(), "kill -{name} {pid}");
    }

    /// Wait for it to end by itself (up to `limit`); panics with its log after.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit; log: {}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, and its exit status 0 within 30 s.
    pub fn stop(&mut self) {
        self.signal("TERM");
        let status = self.wait_exit(Duration::from_secs(30));
        assert!(status.success(), "achd exited with {status}; log: {}", self.log());
    }

    /// The TLS client configuration that trusts exactly its certificate.
    pub fn tls(&self) -> &TlsConnector {
        &self.tls
    }

    /// A TLS connection to `addr` (one of its addresses), certificate verified.
    pub async fn tls_stream(&self, addr: SocketAddr) -> std::io::Result<TlsStream<TcpStream>> {
        let tcp = TcpStream::connect(addr).await?;
        self.handshake(addr, tcp).await
    }

    /// A TLS connection to `addr` from the local address `from` (a loopback
    /// address: the server counts connections per client address).
    pub async fn tls_stream_from(
        &self,
        from: IpAddr,
        addr: SocketAddr,
    ) -> std::io::Result<TlsStream<TcpStream>> {
        let socket = if from.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
        socket.bind(SocketAddr::new(from, 0))?;
        let tcp = socket.connect(addr).await?;
        self.handshake(addr, tcp).await
    }

    /// [`Server::tls_stream_from`] the public address, with a receive buffer
    /// as small as the kernel allows: for a client that never reads, so
    /// what it is sent stays on the server.
    pub async fn tls_stream_not_reading(&self, from: IpAddr) -> std::io::Result<TlsStream<TcpStream>> {
        let socket = if from.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
        socket.set_recv_buffer_size(1)?;
        socket.bind(SocketAddr::new(from, 0))?;
        let tcp = socket.connect(self.addr).await?;
        self.handshake(self.addr, tcp).await
    }

    async fn handshake(&self, addr: SocketAddr, tcp: TcpStream) -> std::io::Result<TlsStream<TcpStream>> {
        tcp.set_nodelay(true)?;
        self.tls.connect(ServerName::IpAddress(addr.ip().into()), tcp).await
    }

    /// One HTTP/1.1 keep-alive connection to `addr`, every path sent there.
    pub async fn connect(&self, addr: SocketAddr) -> Result<Conn, String> {
        let stream = self.tls_stream(addr).await.map_err(|e| e.to_string())?;
        Conn::handshake(stream, addr.to_string()).await
    }

    /// A connection to the public address that sends `/admin/*` over a second
    /// one, to the operator plane, opened at the first such request.
    pub async fn try_conn(&self) -> Result<Conn, String> {
        let public = self.connect(self.addr).await?;
        Ok(public.with_admin(self.tls.clone(), self.admin))
    }

    /// [`Server::try_conn`], which must succeed.
    pub async fn conn(&self) -> Conn {
        self.try_conn().await.unwrap()
    }

    /// Send these bytes on a new TLS connection (writing while reading, so an
    /// answer that comes before the body is all in is heard) and read the
    /// answer (up to 40 s). A request line naming `/admin…` goes to the
    /// operator plane.
    pub async fn raw(&self, request: Vec<Vec<u8>>) -> Raw {
        let line = request.first().map(Vec::as_slice).unwrap_or_default();
        let target = line.split(|b| *b == b' ').nth(1).unwrap_or_default();
        let addr = if target.starts_with(b"/admin") { self.admin } else { self.addr };
        raw::exchange(self.tls_stream(addr).await.unwrap(), request).await
    }

    /// A request with a `Content-Length` body (`Host` its address,
    /// `Connection: close`), sent by [`Server::raw`].
    pub async fn send_raw(&self, method: &str, target: &[u8], headers: &[(&str, &[u8])], body: &[u8]) -> Raw {
        self.raw(raw::request_bytes(method, target, &self.addr.to_string(), headers, body)).await
    }
}

/// What a debug build of `achd` writes when an async worker reached storage or
/// a file (`ach_core::nonblocking`): every test of a server fails on it.
const ASYNC_WORKER_BLOCKED: &str = "on an async worker thread";

impl Drop for Server {
    /// Kill the server; then fail the test if any of its async workers ever
    /// reached storage or a file (the request it served may have looked
    /// answered: the panic only ended its connection).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            let log = self.log();
            assert!(!log.contains(ASYNC_WORKER_BLOCKED), "achd blocked an async worker:\n{log}");
        }
    }
}
