//! Which connections `achd serve` admits and how long it keeps them: a cap on
//! open connections (derived from the open-file limit), a cap per client
//! address, the write timeout and the lifetime of a connection.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::holders::{Place, Places};
use crate::open_files::OpenFiles;

/// Connections at most by default, however many files may be open: each
/// connection that does not read its answer holds its buffers (a few hundred
/// kilobytes) until the write timeout.
pub const DEFAULT_MAX: usize = 4096;
/// Connections at most from one client address by default (and at most a
/// quarter of the connection cap).
pub const DEFAULT_PER_CLIENT: usize = 100;
/// Connections the operator plane holds at most, in a pool of its own (not
/// counted against the public cap, which therefore cannot lock it out).
pub const OPERATOR_CONNECTIONS: usize = 16;

/// The connection flags of `achd serve`.
#[derive(clap::Args)]
#[group(id = "connections")]
pub struct ConnectionArgs {
    /// Open connections at most; more are closed at once. Default: the
    /// open-file limit (raised to its hard limit at start) less a reserve for
    /// the database and other files (an eighth, at least 32), at most 4096.
    /// Never more than that reserve allows.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: Option<u32>,
    /// Open connections at most from one client address (an IPv6 client: its
    /// /64); more are closed at once. Default: a quarter of the connection cap,
    /// at most 100. Behind a reverse proxy every connection comes from the
    /// proxy: set it to the connection cap.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_connections_per_client: Option<u32>,
    /// Close a connection whose answer could not be sent for this long (the
    /// client does not read it).
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    write_timeout: u64,
    /// A connection open this long answers the request in flight and is
    /// closed; one still busy the write timeout later is closed anyway.
    #[arg(long, value_name = "SECONDS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    connection_lifetime: u64,
}

/// The limits in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open connections at most.
    pub max: usize,
    /// Open connections at most per client address.
    pub per_client: usize,
    /// How long a write may make no progress.
    pub write_timeout: Duration,
    /// How long a connection lives.
    pub lifetime: Duration,
}

impl ConnectionLimits {
    /// The limits of the operator plane's own pool: [`OPERATOR_CONNECTIONS`],
    /// from any one address; the same timeouts.
    pub fn operator_plane(self) -> ConnectionLimits {
        ConnectionLimits { max: OPERATOR_CONNECTIONS, per_client: OPERATOR_CONNECTIONS, ..self }
    }
}

impl ConnectionArgs {
    /// The limits, given the open-file limit (`None`: unknown).
    pub fn limits(&self, open_files: Option<OpenFiles>) -> ConnectionLimits {
        let allowed = open_files.map_or(DEFAULT_MAX, |files| usable(files.now));
        let max = self.max_connections.map_or(allowed.min(DEFAULT_MAX), |n| n as usize).min(allowed).max(1);
        let per_client =
            self.max_connections_per_client.map_or((max / 4).clamp(1, DEFAULT_PER_CLIENT), |n| n as usize);
        ConnectionLimits {
            max,
            per_client,
            write_timeout: Duration::from_secs(self.write_timeout),
            lifetime: Duration::from_secs(self.connection_lifetime),
        }
    }
}

/// Connections the open-file limit leaves room for: the limit less a reserve
/// (the database, standard streams, the runtime's own, files being written)
/// and the operator plane's own pool.
fn usable(open_files: u64) -> usize {
    let reserve = (open_files / 8).max(32) + OPERATOR_CONNECTIONS as u64;
    usize::try_from(open_files.saturating_sub(reserve)).unwrap_or(usize::MAX)
}

/// Who a connection counts against: an IPv4 address, or an IPv6 /64 (one
/// host usually holds a whole /64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ClientAddress {
    V4(u32),
    V6(u64),
}

impl ClientAddress {
    fn of(ip: IpAddr) -> ClientAddress {
        match ip {
            IpAddr::V4(v4) => ClientAddress::V4(v4.into()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientAddress::V4(v4.into()),
                None => ClientAddress::V6((u128::from(v6) >> 64) as u64),
            },
        }
    }
}

/// Why a connection was closed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionRefusal {
    /// The connection cap is reached.
    Full,
    /// This client address holds its share.
    ClientFull,
}

impl fmt::Display for ConnectionRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConnectionRefusal::Full => "too many connections",
            ConnectionRefusal::ClientFull => "too many connections from this client",
        })
    }
}

/// The open connections, counted in all and per client.
pub struct ConnectionSlots {
    places: Arc<Semaphore>,
    limits: ConnectionLimits,
    /// Each client address's connections.
    open: Arc<Places<ClientAddress>>,
}

/// A connection's place; dropping it frees the place and the client's.
pub struct Ticket {
    _client: Place<ClientAddress>,
    _slot: OwnedSemaphorePermit,
}

impl ConnectionSlots {
    /// No connection open yet.
    pub fn new(limits: ConnectionLimits) -> Arc<ConnectionSlots> {
        Arc::new(ConnectionSlots {
            places: Arc::new(Semaphore::new(limits.max)),
            limits,
            open: Places::new(limits.per_client),
        })
    }

    /// A place for a connection from `ip`, or why there is none.
    pub fn take(self: &Arc<Self>, ip: IpAddr) -> Result<Ticket, ConnectionRefusal> {
        let client = self.open.take(&ClientAddress::of(ip)).ok_or(ConnectionRefusal::ClientFull)?;
        // A client refused here gives its place back: it keeps no entry.
        let slot = Arc::clone(&self.places).try_acquire_owned().map_err(|_| ConnectionRefusal::Full)?;
        Ok(Ticket { _client: client, _slot: slot })
    }

    /// Wait until every connection is closed.
    pub async fn all_closed(&self) {
        let all = u32::try_from(self.limits.max).unwrap_or(u32::MAX);
        let _ = self.places.acquire_many(all).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct TestCli {
        #[command(flatten)]
        args: ConnectionArgs,
    }

    fn limits(flags: &[&str], files: Option<u64>) -> ConnectionLimits {
        let cli = TestCli::try_parse_from(std::iter::once("achd").chain(flags.iter().copied())).unwrap();
        cli.args.limits(files.map(|now| OpenFiles { before: now, now }))
    }

    #[test]
    fn the_caps_follow_the_open_file_limit() {
        let l = limits(&[], Some(1_048_576));
        assert_eq!((l.max, l.per_client), (4096, 100));
        assert_eq!((l.write_timeout.as_secs(), l.lifetime.as_secs()), (30, 300));
        let operator = l.operator_plane();
        assert_eq!((operator.max, operator.per_client, operator.write_timeout), (16, 16, l.write_timeout));
        assert_eq!(limits(&[], Some(1024)).max, 880, "systemd's soft limit when it cannot be raised");
        let l = limits(&[], Some(64));
        assert_eq!((l.max, l.per_client), (16, 4));
        assert_eq!(limits(&["--max-connections", "100000"], Some(2048)).max, 1776, "never past the files");
        assert_eq!(limits(&["--max-connections", "10"], Some(2048)).per_client, 2);
        assert_eq!(limits(&[], Some(10)).max, 1);
        assert_eq!(limits(&[], None).max, 4096);
        let l = limits(&["--max-connections-per-client", "5000", "--write-timeout", "1"], Some(1024));
        assert_eq!((l.per_client, l.write_timeout), (5000, Duration::from_secs(1)));
        let refused = |flags: [&str; 3]| {
            TestCli::try_parse_from(flags).map(drop).map_err(|e| (e.kind(), e.to_string()))
        };
        let invalid = |arg: &str, why: &str| {
            let text = format!(
                "error: invalid value '0' for '{arg}': {why}\n\nFor more information, try '--help'.\n"
            );
            Err((clap::error::ErrorKind::ValueValidation, text))
        };
        assert_eq!(
            refused(["achd", "--write-timeout", "0"]),
            invalid("--write-timeout <SECONDS>", "0 is not in 1..=86400")
        );
        assert_eq!(
            refused(["achd", "--max-connections-per-client", "0"]),
            invalid("--max-connections-per-client <N>", "0 is not in 1..=4294967295")
        );
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn each_client_gets_its_share_and_no_more() {
        let slots = ConnectionSlots::new(ConnectionLimits {
            max: 5,
            per_client: 2,
            write_timeout: Duration::from_secs(1),
            lifetime: Duration::from_secs(1),
        });
        let a1 = slots.take(ip("10.0.0.1")).unwrap();
        let a2 = slots.take(ip("::ffff:10.0.0.1")).unwrap();
        assert_eq!(slots.take(ip("10.0.0.1")).err(), Some(ConnectionRefusal::ClientFull));
        let b1 = slots.take(ip("2001:db8::1")).unwrap();
        let b2 = slots.take(ip("2001:db8::ffff:2")).unwrap();
        assert_eq!(slots.take(ip("2001:db8::3")).err(), Some(ConnectionRefusal::ClientFull), "the same /64");
        let c = slots.take(ip("2001:db8:0:1::1")).unwrap();
        assert_eq!(slots.take(ip("10.0.0.2")).err(), Some(ConnectionRefusal::Full));
        assert_eq!(slots.open.holders(), 3, "a refused client leaves no entry");
        drop(a1);
        let _again = slots.take(ip("10.0.0.1")).unwrap();
        drop((a2, b1, b2, c));
        assert_eq!(slots.open.holders(), 1);
    }
}
