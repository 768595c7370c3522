//! TLS: rustls with the ring provider. The certificate is `--tls-cert`/`--tls-key`,
//! or a self-signed one made in the data directory on first start and reused
//! after (`tls-cert.pem`, `tls-key.pem` with mode 0600).

use std::fs;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{Datelike, Duration, Utc};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;

/// The generated certificate's file in the data directory.
pub const CERT_FILE: &str = "tls-cert.pem";
/// The generated certificate's private key in the data directory.
pub const KEY_FILE: &str = "tls-key.pem";

/// The server's TLS set-up.
pub struct Tls {
    /// rustls configuration (HTTP/1.1 by ALPN).
    pub config: Arc<ServerConfig>,
    /// Where the certificate comes from, for the person starting the server.
    pub note: String,
}

/// Load the given certificate and key, or make (or reuse) the self-signed one in
/// `data`.
pub fn setup(
    data: &Path,
    cert: Option<&Path>,
    key: Option<&Path>,
    listen: SocketAddr,
) -> Result<Tls, String> {
    // ring only, installed explicitly (also as the process default).
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (chain, private_key, note) = match (cert, key) {
        (Some(cert), Some(key)) => {
            (read_chain(cert)?, read_key(key)?, format!("TLS certificate: {}", cert.display()))
        }
        _ => self_signed(data, listen)?,
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up failed: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, private_key)
        .map_err(|e| format!("the TLS certificate and key are not usable together: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Tls { config: Arc::new(config), note })
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bad = |e: &dyn std::fmt::Display| format!("cannot read the TLS certificate {}: {e}", path.display());
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    if chain.is_empty() {
        return Err(bad(&"no CERTIFICATE in it"));
    }
    Ok(chain)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| format!("cannot read the TLS key {}: {e}", path.display()))
}

/// The self-signed certificate in `data`: reused if both files exist, otherwise
/// made (for `localhost`, 127.0.0.1, ::1 and the listen address), valid five years.
fn self_signed(
    data: &Path,
    listen: SocketAddr,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>, String), String> {
    let (cert_path, key_path) = (data.join(CERT_FILE), data.join(KEY_FILE));
    if cert_path.exists() && key_path.exists() {
        let note = format!(
            "TLS certificate: {} (self-signed, made on an earlier start; clients must trust it)",
            cert_path.display()
        );
        return Ok((read_chain(&cert_path)?, read_key(&key_path)?, note));
    }
    let (cert_pem, key_pem) = generate(listen).map_err(|e| format!("cannot make a certificate: {e}"))?;
    // The key first: a certificate file is only ever beside its key.
    write_file(&key_path, key_pem.as_bytes(), 0o600)?;
    write_file(&cert_path, cert_pem.as_bytes(), 0o644)?;
    let note = format!(
        "TLS certificate: {} (self-signed, made now; clients must trust it; key {})",
        cert_path.display(),
        key_path.display()
    );
    Ok((read_chain(&cert_path)?, read_key(&key_path)?, note))
}

/// A new ECDSA P-256 key and its self-signed server certificate, as PEM.
fn generate(listen: SocketAddr) -> Result<(String, String), rcgen::Error> {
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    let ip = listen.ip();
    if !ip.is_unspecified() && !ip.is_loopback() {
        names.push(ip.to_string());
    }
    let mut params = rcgen::CertificateParams::new(names)?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, "achd (self-signed)");
    let from = (Utc::now() - Duration::days(1)).date_naive();
    let day = |d: u32| u8::try_from(d.min(28)).unwrap_or(28);
    let month = u8::try_from(from.month()).unwrap_or(1);
    params.not_before = rcgen::date_time_ymd(from.year(), month, day(from.day()));
    params.not_after = rcgen::date_time_ymd(from.year() + 5, month, day(from.day()));
    params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = rcgen::KeyPair::generate()?;
    let cert = params.self_signed(&key)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// Write `path` whole (under a temporary name, then renamed into place) with
/// `mode` on unix.
fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let tmp: PathBuf = path.with_extension("pem.tmp");
    let _ = fs::remove_file(&tmp);
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(&tmp).map_err(fail)?;
    file.write_all(bytes).and_then(|()| file.sync_all()).map_err(fail)?;
    drop(file);
    fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_generated_certificate_is_usable_and_reused() {
        let dir = std::env::temp_dir().join(format!("achd-tls-{}", ach_core::ids::random_alphanumeric(12)));
        fs::create_dir(&dir).unwrap();
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let first = setup(&dir, None, None, addr).unwrap();
        assert!(first.note.contains("made now"), "{}", first.note);
        let pem = fs::read(dir.join(CERT_FILE)).unwrap();
        let again = setup(&dir, None, None, addr).unwrap();
        assert!(again.note.contains("earlier"), "{}", again.note);
        assert_eq!(fs::read(dir.join(CERT_FILE)).unwrap(), pem);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(dir.join(KEY_FILE)).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let given = setup(&dir, Some(&dir.join(CERT_FILE)), Some(&dir.join(KEY_FILE)), addr).unwrap();
        assert_eq!(given.config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert_eq!(
            setup(&dir, Some(&dir.join(KEY_FILE)), Some(&dir.join(KEY_FILE)), addr).map(drop),
            Err(format!(
                "cannot read the TLS certificate {}: no CERTIFICATE in it",
                dir.join(KEY_FILE).display()
            ))
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
