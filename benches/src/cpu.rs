//! CPU time a process has used, from Linux's `/proc` (for the benches that
//! report CPU per create beside their rates; elsewhere every figure is 0).

/// Seconds of CPU (user and system, every thread, ended ones included) the
/// process whose `stat` file is `stat` has used: `/proc/self/stat`, or
/// `/proc/PID/stat`. 0 where there is no such file.
pub fn cpu_seconds(stat: &str) -> f64 {
    let Ok(text) = std::fs::read_to_string(stat) else { return 0.0 };
    // The command name (field 2) may hold spaces; the fields after ")" are plain.
    let rest = text.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After ")": state is field 3, utime field 14, stime field 15.
    let tick = |i: usize| fields.get(i - 3).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(14) + tick(15)) / 100.0
}

/// Seconds of CPU this process has used.
pub fn own_cpu_seconds() -> f64 {
    cpu_seconds("/proc/self/stat")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn user_and_system_ticks_are_read_after_a_command_name_with_spaces_and_parentheses() {
        let dir = tempfile::tempdir().unwrap();
        let stat = dir.path().join("stat");
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        std::fs::write(&stat, "4242 (a (b) c) S 1 1 1 0 -1 0 0 0 0 0 250 75 0 0 20 0\n").unwrap();
        assert!((cpu_seconds(stat.to_str().unwrap()) - 3.25).abs() < 1e-9);
        assert_eq!(cpu_seconds("/nonexistent/stat"), 0.0);
    }
}
