//! What the HTTPS examples (`https_load`, `https_reads`) share: the flags of
//! the load they put on and the tenant they run as.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ach_benches::{generous_limits, merchant_application};
use ach_testkit::{Conn, Server};
use serde_json::{json, Value};

/// `--clients` keep-alive connections, `--warmup` seconds and then `--seconds`
/// measured, against the `achd` at `--achd PATH` (if given).
pub struct Load {
    pub clients: usize,
    pub seconds: f64,
    pub warmup: f64,
    pub achd: Option<PathBuf>,
}

/// How the command line is read and complained about.
pub struct CommandLine<'a> {
    /// The example's name, before every complaint.
    pub program: &'a str,
    /// Printed for `--help` (or `-h`) and after every complaint, where there is one.
    pub usage: Option<&'a str>,
}

impl CommandLine<'_> {
    /// Print `why` (and the usage) and exit with 2.
    pub fn fail(&self, why: &str) -> ! {
        match self.usage {
            Some(usage) => eprintln!("{}: {why}\n{usage}", self.program),
            None => eprintln!("{}: {why}", self.program),
        }
        std::process::exit(2)
    }

    /// Read the command line's `--flag value` pairs: [`Load`]'s into `load`,
    /// any other through `other`, which answers whether it took the value (and
    /// ends the program itself on a flag it does not know).
    pub fn read(&self, load: &mut Load, mut other: impl FnMut(&str, String) -> bool) {
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            if let Some(usage) = self.usage.filter(|_| flag == "--help" || flag == "-h") {
                println!("{usage}");
                std::process::exit(0);
            }
            let value = args.next().unwrap_or_else(|| self.fail(&format!("{flag} needs a value")));
            let taken = match flag.as_str() {
                "--clients" => set(&mut load.clients, value.parse().ok().filter(|&n| n > 0)),
                "--seconds" => set(&mut load.seconds, value.parse().ok().filter(|&s| s > 0.0)),
                "--warmup" => set(&mut load.warmup, value.parse().ok().filter(|&s| s >= 0.0)),
                "--achd" => {
                    load.achd = Some(PathBuf::from(&value));
                    true
                }
                _ => other(&flag, value.clone()),
            };
            if !taken {
                self.fail(&format!("{flag} {value}: not a valid value"));
            }
        }
    }
}

/// `value` into `field`, if there is one: whether there was.
pub fn set<T>(field: &mut T, value: Option<T>) -> bool {
    value.map(|v| *field = v).is_some()
}

impl Load {
    /// When the clients start (shortly after now), and when the measured
    /// window begins and ends.
    pub fn window(&self) -> (Instant, Instant, Instant) {
        let start = Instant::now() + Duration::from_millis(50);
        let window_start = start + Duration::from_secs_f64(self.warmup);
        (start, window_start, window_start + Duration::from_secs_f64(self.seconds))
    }
}

/// The tenant a load runs as.
pub struct Tenant {
    pub partner_id: String,
    pub partner_key: String,
    pub merchant_id: String,
}

/// A partner named `name` and its approved merchant (the example application,
/// [`generous_limits`]); `conn` sends `/admin/*` to the operator plane.
pub async fn set_up(server: &Server, conn: &mut Conn, name: &str) -> Tenant {
    let operator = server.operator_key();
    let p = conn.expect("POST", "/admin/partners", &operator, Some(json!({ "name": name })), 201).await;
    let partner_id = p["payload"]["partner_id"].as_str().unwrap().to_owned();
    let partner_key = p["payload"]["api_key"].as_str().unwrap().to_owned();
    let mut application: Value = serde_json::from_slice(&merchant_application()).unwrap();
    application["partner_id"] = json!(partner_id);
    let m = conn.expect("POST", "/merchants", &partner_key, Some(application), 201).await;
    let merchant_id = m["id"].as_str().unwrap().to_owned();
    let approve = json!({ "limits": generous_limits() });
    let approve_path = format!("/admin/merchants/{merchant_id}/approve");
    conn.expect("POST", &approve_path, &operator, Some(approve), 200).await;
    Tenant { partner_id, partner_key, merchant_id }
}
