//! The process's open-file limit (`RLIMIT_NOFILE`): raised to its hard limit at
//! start, since every connection is a file and the soft limit is often 1,024
//! (systemd's default) while the hard one is far higher.

/// The most the soft limit is raised to, whatever the hard limit says (Linux's
/// default `fs.nr_open`: a soft limit of "unlimited" is refused).
const CEILING: u64 = 1 << 20;

/// The open-file limit before and after [`raise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit the process started with.
    pub before: u64,
    /// The soft limit now.
    pub now: u64,
}

/// Raise the soft open-file limit to the hard limit (at most [`CEILING`]).
/// `None` where the limit cannot be read (not unix); a limit that cannot be
/// raised is kept as it is.
// `rlim_t` is `u64` here but narrower on some 32-bit targets.
#[allow(clippy::useless_conversion)]
pub fn raise() -> Option<OpenFiles> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit only writes the struct it is given, which we own.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return None;
        }
        let before = u64::from(limit.rlim_cur);
        let target = u64::from(limit.rlim_max).min(CEILING);
        if target <= before {
            return Some(OpenFiles { before, now: before });
        }
        let raised = libc::rlimit { rlim_cur: target as libc::rlim_t, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit only reads the struct it is given.
        let now = if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 { target } else { before };
        Some(OpenFiles { before, now })
    }
    #[cfg(not(unix))]
    None
}
