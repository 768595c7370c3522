//! Where the sealing key comes from: the key that seals account numbers,
//! check images and stored files at rest.
//!
//! In order: `--key-file PATH`; the systemd credential `sealing-key`
//! (`LoadCredential=sealing-key:…`, found in `$CREDENTIALS_DIRECTORY`); else
//! the data directory's own key file (`ach.redb.key`, or `ach.key` beside a
//! PostgreSQL store), accepted with a warning: whoever copies the directory
//! then reads every account number.
//!
//! An existing database is never given a new key: a key file outside the data
//! directory is made (mode 0600) only for a new service.

use std::path::{Path, PathBuf};

use ach_core::secrets::EncryptionKey;

/// The systemd credential that holds the sealing key.
pub const CREDENTIAL: &str = "sealing-key";

/// The `--key-file` flag, shared by the commands that open a data directory.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct KeyFileArg {
    /// The sealing key's file (64 hex digits), kept apart from the data
    /// directory (another disk, a vault, a systemd credential). Made, mode
    /// 0600, only for a new service; an existing database is never given a
    /// new key. Without it: the systemd credential `sealing-key`, else the
    /// key in the data directory (with a warning)
    #[arg(long = "key-file", value_name = "PATH")]
    pub key_file: Option<PathBuf>,
}

/// Where the key is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file outside the data directory (the flag or the credential).
    Outside(PathBuf),
    /// The data directory's own key file.
    DataDirectory,
}

impl KeyFileArg {
    /// The key's source: the flag, the systemd credential, the data directory.
    pub fn source(&self) -> Source {
        if let Some(path) = &self.key_file {
            return Source::Outside(path.clone());
        }
        credential(std::env::var_os("CREDENTIALS_DIRECTORY").as_deref().map(Path::new))
            .map_or(Source::DataDirectory, Source::Outside)
    }
}

/// The credential's file in `directory`, if it is there.
fn credential(directory: Option<&Path>) -> Option<PathBuf> {
    let path = directory?.join(CREDENTIAL);
    path.is_file().then_some(path)
}

/// The key in `path`, outside the data directory. For a `new` service a
/// missing file is made (and `made` says so, for the caller to remove if the
/// start is refused); for an existing database a missing file is an error.
pub fn load(path: &Path, new: bool) -> Result<(EncryptionKey, bool), String> {
    let exists =
        path.try_exists().map_err(|e| format!("cannot read the key file {}: {e}", path.display()))?;
    if !exists && !new {
        return Err(format!(
            "the key file {} does not exist: an existing database is never given a new key (name the \
             file its data was sealed with)",
            path.display()
        ));
    }
    let key = EncryptionKey::load_or_create(path).map_err(|e| e.to_string())?;
    Ok((key, !exists))
}

/// Arguments of `achd keygen`.
#[derive(clap::Args, Debug)]
pub struct KeygenArgs {
    /// The new key's file (its directory must exist).
    #[arg(value_name = "PATH")]
    path: PathBuf,
}

/// `achd keygen PATH`: a new key in a new file; an existing file is left as
/// it is and refused.
pub fn keygen(args: &KeygenArgs) -> std::process::ExitCode {
    match make(&args.path) {
        Ok(()) => {
            println!("sealing key: {} (created, mode 0600)", args.path.display());
            std::process::ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("achd keygen: {why}");
            std::process::ExitCode::from(1)
        }
    }
}

fn make(path: &Path) -> Result<(), String> {
    if path.try_exists().unwrap_or(true) {
        return Err(format!("{} exists: a key file is never overwritten", path.display()));
    }
    let (_, made) = load(path, true)?;
    if made {
        Ok(())
    } else {
        Err(format!("{} was made by another process meanwhile", path.display()))
    }
}

/// The warning for a key kept in the data directory (none for a sandbox,
/// whose data is not real).
pub fn beside_the_data(key: &Path) -> String {
    format!(
        "the sealing key is kept in the data directory ({}): whoever copies the directory can read \
         every account number; move it elsewhere and name it with --key-file (or the systemd \
         credential {CREDENTIAL})",
        key.display()
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_flag_wins_then_the_credential_then_the_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(credential(Some(dir.path())), None, "no credential file");
        assert_eq!(credential(None), None);
        std::fs::write(dir.path().join(CREDENTIAL), "00".repeat(32)).unwrap();
        assert_eq!(credential(Some(dir.path())), Some(dir.path().join(CREDENTIAL)));
        let flag = KeyFileArg { key_file: Some(PathBuf::from("/vault/k")) };
        assert_eq!(flag.source(), Source::Outside(PathBuf::from("/vault/k")));
    }

    #[test]
    fn keygen_makes_a_key_once_and_never_overwrites_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sealing.key");
        make(&path).unwrap();
        let first = std::fs::read_to_string(&path).unwrap();
        assert_eq!(first.trim().len(), 64);
        assert!(make(&path).unwrap_err().contains("never overwritten"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
        let refused = make(&dir.path().join("no/such/dir/k")).unwrap_err();
        assert!(refused.contains("no/such/dir/k"), "names the file: {refused}");
    }

    #[test]
    fn an_existing_database_never_gets_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sealing.key");
        let refused = load(&path, false).unwrap_err();
        assert!(refused.contains("never given a new key"), "{refused}");
        assert!(!path.exists(), "nothing written");
        let (made, was_made) = load(&path, true).unwrap();
        assert!(was_made);
        let (again, was_made) = load(&path, false).unwrap();
        assert!(!was_made);
        assert_eq!(made.as_bytes(), again.as_bytes());
        std::fs::write(&path, "not a key").unwrap();
        assert!(load(&path, false).unwrap_err().contains(&path.display().to_string()));
    }
}
