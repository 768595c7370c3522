//! The other end of the control socket (`control.rs`): a command run beside a
//! data directory finds the serving `achd` there, or none, and asks it one
//! request whose answer starts with a line `ok N…` or `error MESSAGE`.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use crate::control::socket_for;

/// The longest answer line read.
const MAX_LINE: u64 = 4096;

/// The serving achd of `data`, or `None` when no server listens there (no
/// socket, or one a stopped server left).
pub fn reach(data: &Path) -> Result<Option<UnixStream>, String> {
    let socket = socket_for(data);
    match UnixStream::connect(&socket) {
        Ok(stream) => Ok(Some(stream)),
        Err(e)
            if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused) =>
        {
            Ok(None)
        }
        Err(e) => Err(format!("cannot reach the server at {}: {e}", socket.display())),
    }
}

/// Send `request` and read the answer's line: the `N` numbers after `ok`,
/// and the stream for what follows it.
pub fn ask<const N: usize>(
    mut stream: UnixStream,
    request: &str,
) -> Result<([u64; N], BufReader<UnixStream>), String> {
    stream
        .write_all(format!("{request}\n").as_bytes())
        .map_err(|e| format!("cannot ask the server to {request}: {e}"))?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader
        .by_ref()
        .take(MAX_LINE)
        .read_line(&mut line)
        .map_err(|e| format!("the server's answer is unreadable: {e}"))?;
    let line = line.trim_end();
    let answered = || format!("the server answered {line:?}");
    match line.split_once(' ') {
        Some(("ok", rest)) => {
            let numbers: Vec<u64> =
                rest.split(' ').map(str::parse).collect::<Result<_, _>>().map_err(|_| answered())?;
            Ok((numbers.try_into().map_err(|_| answered())?, reader))
        }
        Some(("error", why)) => Err(format!("the server refused: {why}")),
        _ if line.is_empty() => Err("the server closed the connection without an answer".into()),
        _ => Err(answered()),
    }
}
