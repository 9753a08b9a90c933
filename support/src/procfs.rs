//! What a measurement reads of another process in `/proc` (Linux): memory figures from
//! `/proc/PID/status` and CPU time from its threads' `schedstat`.

use std::fs;

/// A `kB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`, ...), in KiB; `None` if the
/// process is gone or has no such field.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status_field(&status, field)
}

/// The value of `field` in the text of a `/proc/PID/status` file.
pub fn status_field(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name == field).then(|| value.split_whitespace().next()?.parse().ok())?
    })
}

/// The process's CPU time in seconds: the sum of its threads' run times from
/// `/proc/PID/task/*/schedstat` (nanoseconds, so a few hundred short events still measure),
/// else utime + stime from `/proc/PID/stat` (clock ticks, 100 a second).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    schedstat_seconds(pid).or_else(|| stat_seconds(pid))
}

fn schedstat_seconds(pid: u32) -> Option<f64> {
    let mut nanos = 0u64;
    for task in fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let path = task.ok()?.path().join("schedstat");
        let text = fs::read_to_string(path).ok()?;
        nanos += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(nanos as f64 / 1e9)
}

fn stat_seconds(pid: u32) -> Option<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_ticks(&stat).map(|ticks| ticks as f64 / 100.0)
}

/// utime + stime from the text of a `/proc/PID/stat` file. The command name may hold spaces
/// and parentheses: the fields start after its last closing parenthesis.
pub fn stat_ticks(stat: &str) -> Option<u64> {
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_status_fields() {
        let status = "Name:\tserver\nVmHWM:\t  20480 kB\nVmRSS:\t   10240 kB\n";
        assert_eq!(status_field(status, "VmRSS"), Some(10240));
        assert_eq!(status_field(status, "VmHWM"), Some(20480));
        assert_eq!(status_field(status, "VmSwap"), None);
    }

    #[test]
    fn reads_cpu_ticks_past_an_odd_command_name() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 3 0";
        assert_eq!(stat_ticks(stat), Some(12));
    }

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        assert!(status_kib(pid, "VmRSS").is_some_and(|kib| kib > 0));
        assert!(cpu_seconds(pid).is_some_and(|s| s >= 0.0));
    }
}
