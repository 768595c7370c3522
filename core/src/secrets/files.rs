//! Secret files: read one, or create it once, atomically, readable by its owner only.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use zeroize::Zeroize;

use super::SecretError;
use crate::ids::random_alphanumeric;

/// No secret file is larger than this; a bigger one is certainly the wrong file.
const MAX_LEN: u64 = 64 * 1024;

/// The secret text in the file at `path`, creating the file with `generate()` if
/// there is none (e.g. the operator key file). Hosts call this at start-up; it and
/// [`EncryptionKey::load_or_create`](super::EncryptionKey::load_or_create) are the
/// only functions of this module that touch the file system.
///
/// The file holds the secret and an optional final newline (`\n` or `\r\n`), which is
/// not part of the secret. A file that is empty, not UTF-8, over 64 KiB, or has any
/// other whitespace or control character is [`SecretError::BadKeyFile`] (naming the
/// path, never the content), and is left as it is. `generate` is called only when
/// the file does not exist, and must return such a text (no whitespace).
///
/// A new file is written completely under a temporary name (mode `0600` on unix) and
/// then linked into place, which fails if the name is taken: so the file appears
/// atomically and only once, and when several processes start together every one of
/// them returns the same secret. On a file system without hard links it is created in
/// place with `create_new`, still never overwriting. The parent directory must exist.
pub fn load_or_create_secret_file(
    path: &Path,
    generate: impl FnOnce() -> String,
) -> Result<String, SecretError> {
    if let Some(text) = read(path)? {
        return Ok(text);
    }
    let mut fresh = generate();
    if let Err(reason) = check(&fresh) {
        fresh.zeroize();
        return Err(bad(path, format!("the newly generated secret {reason}")));
    }
    match create(path, &fresh) {
        Ok(()) => Ok(fresh),
        Err(source) => {
            fresh.zeroize();
            if source.kind() == io::ErrorKind::AlreadyExists {
                // Another process created it first: use theirs.
                if let Some(text) = read(path)? {
                    return Ok(text);
                }
            }
            Err(SecretError::Io { path: path.to_owned(), source })
        }
    }
}

fn bad(path: &Path, reason: String) -> SecretError {
    SecretError::BadKeyFile { path: path.to_owned(), reason }
}

/// The secret in an existing file, `None` if there is no file.
fn read(path: &Path) -> Result<Option<String>, SecretError> {
    let io_error = |source| SecretError::Io { path: path.to_owned(), source };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(e)),
    };
    let mut bytes = Vec::new();
    file.take(MAX_LEN + 1).read_to_end(&mut bytes).map_err(io_error)?;
    if bytes.len() as u64 > MAX_LEN {
        bytes.zeroize();
        return Err(bad(path, format!("it is larger than {MAX_LEN} bytes")));
    }
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            e.into_bytes().zeroize();
            return Err(bad(path, "it is not UTF-8 text".to_owned()));
        }
    };
    let end = text.strip_suffix("\r\n").or_else(|| text.strip_suffix('\n')).unwrap_or(&text).len();
    let mut secret = text[..end].to_owned();
    text.zeroize();
    match check(&secret) {
        Ok(()) => Ok(Some(secret)),
        Err(reason) => {
            secret.zeroize();
            Err(bad(path, format!("the secret {reason}")))
        }
    }
}

/// Replace the secret in the file at `path` with `secret` (e.g. the operator key
/// file after a rotation): written completely under a temporary name (mode
/// `0600` on unix), flushed, then renamed over the old file, so the file holds
/// the old secret or the new one, never a mix. `secret` must be a valid secret
/// text (no whitespace), as for [`load_or_create_secret_file`].
pub fn replace_secret_file(path: &Path, secret: &str) -> Result<(), SecretError> {
    crate::nonblocking::assert_may_block("a secret file's rewrite");
    check(secret).map_err(|reason| bad(path, format!("the new secret {reason}")))?;
    let io_error = |source| SecretError::Io { path: path.to_owned(), source };
    let data = zeroize::Zeroizing::new(format!("{secret}\n"));
    let tmp = temp_name(path).map_err(io_error)?;
    write_new(&tmp, data.as_bytes()).map_err(io_error)?;
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(io_error(e));
    }
    sync_parent(path);
    Ok(())
}

/// A secret is non-empty text with no whitespace or control characters.
fn check(secret: &str) -> Result<(), &'static str> {
    if secret.is_empty() {
        Err("is empty")
    } else if secret.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Err("contains whitespace or a control character (only one final newline is allowed)")
    } else {
        Ok(())
    }
}

/// Create `path` holding `secret` and a newline, failing with `AlreadyExists` (and
/// leaving it alone) if it exists.
fn create(path: &Path, secret: &str) -> io::Result<()> {
    let data = zeroize::Zeroizing::new(format!("{secret}\n"));
    let tmp = temp_name(path)?;
    write_new(&tmp, data.as_bytes())?;
    let linked = fs::hard_link(&tmp, path);
    // Best effort: a leftover temporary file holds a secret the caller also has.
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            sync_parent(path);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        // No hard links here (some network or FAT file systems): create in place.
        Err(_) => {
            write_new(path, data.as_bytes())?;
            sync_parent(path);
            Ok(())
        }
    }
}

/// A fresh, unpredictable name beside `path`: `.<name>.<random>.tmp`.
fn temp_name(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file"))?;
    Ok(path.with_file_name(format!(".{}.{}.tmp", name.to_string_lossy(), random_alphanumeric(12))))
}

/// Write a new file (never an existing one), mode 0600 on unix, flushed to disk. On a
/// failure after creating it, the partial file is removed.
fn write_new(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    let written = file.write_all(data).and_then(|()| file.sync_all());
    if written.is_err() {
        drop(file);
        let _ = fs::remove_file(path);
    }
    written
}

/// Flush the directory entry of a new file (unix; best effort elsewhere).
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if let Ok(dir) = File::open(parent) {
            let _ = dir.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::{Arc, Barrier};

    #[test]
    fn a_secret_file_is_replaced_whole_and_stays_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("operator.key");
        assert_eq!(load_or_create_secret_file(&path, || "ok_first".into()).unwrap(), "ok_first");
        replace_secret_file(&path, "ok_second").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "ok_second\n");
        assert_eq!(load_or_create_secret_file(&path, || "unused".into()).unwrap(), "ok_second");
        assert_eq!(
            replace_secret_file(&path, "two words").unwrap_err().to_string(),
            format!(
                "the secret file {} is not valid: the new secret contains whitespace or a control character \
                 (only one final newline is allowed)",
                path.display()
            )
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "ok_second\n", "a refused secret changes nothing");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left");
    }

    #[test]
    fn creates_with_mode_0600_then_rereads_without_generating() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("operator.key");
        let secret = load_or_create_secret_file(&path, || "ok_secret123".to_owned()).unwrap();
        assert_eq!(secret, "ok_secret123");
        assert_eq!(fs::read_to_string(&path).unwrap(), "ok_secret123\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let again = load_or_create_secret_file(&path, || panic!("must not generate")).unwrap();
        assert_eq!(again, "ok_secret123");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "a temporary file was left");
    }

    #[test]
    fn racing_processes_all_get_the_one_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("race.key"));
        let barrier = Arc::new(Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (path, barrier) = (Arc::clone(&path), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    load_or_create_secret_file(&path, || random_alphanumeric(40)).unwrap()
                })
            })
            .collect();
        let secrets: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(secrets.iter().all(|s| s == &secrets[0]), "{secrets:?}");
        assert_eq!(fs::read_to_string(&*path).unwrap(), format!("{}\n", secrets[0]));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "a temporary file was left");
    }

    #[test]
    fn bad_files_are_clear_errors_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, &[u8]); 6] = [
            ("empty", b""),
            ("newline", b"\n"),
            ("inner-space", b"abc def\n"),
            ("two-lines", b"abc\ndef\n"),
            ("tab", b"abc\t"),
            ("binary", &[0xff, 0xfe, 0x00]),
        ];
        for (name, content) in cases {
            let path = dir.path().join(name);
            fs::write(&path, content).unwrap();
            let err = load_or_create_secret_file(&path, || panic!("must not generate")).unwrap_err();
            assert!(matches!(err, SecretError::BadKeyFile { .. }), "{name}: {err:?}");
            assert!(err.to_string().contains(&path.display().to_string()), "{err}");
            assert_eq!(fs::read(&path).unwrap(), content);
        }
        let path = dir.path().join("huge");
        fs::write(&path, vec![b'a'; 100_000]).unwrap();
        let err = load_or_create_secret_file(&path, String::new).unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
    }

    #[test]
    fn a_bad_generated_secret_creates_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.key");
        for generated in ["", "two\nlines", " padded"] {
            let err = load_or_create_secret_file(&path, || generated.to_owned()).unwrap_err();
            assert!(matches!(err, SecretError::BadKeyFile { .. }), "{err:?}");
            assert!(!path.exists());
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_directory_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_or_create_secret_file(dir.path(), || "x".to_owned()).unwrap_err();
        assert!(matches!(err, SecretError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains(&dir.path().display().to_string()), "{err}");
    }
}
