//! Open-file limits of a process, read from `/proc` and set with util-linux's `prlimit`: to
//! run a server under a small limit, or to let a test open more sockets than a default limit
//! allows.

use std::process::Command;

/// The soft and hard open-file limits of process `pid`.
pub fn open_file_limits(pid: u32) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("/proc limits");
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .expect("an open-file limit");
    let mut numbers = line
        .split_whitespace()
        .filter_map(|word| word.parse::<u64>().ok());
    let soft = numbers.next().expect("a soft limit");
    let hard = numbers.next().unwrap_or(soft);
    (soft, hard)
}

/// Sets the soft open-file limit of process `pid` (of this user) to `soft`, keeping the hard
/// limit, with `prlimit`.
pub fn set_open_file_limit(pid: u32, soft: u64) {
    let status = Command::new("prlimit")
        .arg(format!("--pid={pid}"))
        .arg(format!("--nofile={soft}:"))
        .status()
        .expect("prlimit (util-linux) is needed");
    assert!(
        status.success(),
        "prlimit --pid={pid} --nofile={soft}: failed"
    );
}

/// Raises this process's soft open-file limit to at least `wanted` (at most to the hard
/// limit), when it is lower.
pub fn raise_own_open_file_limit(wanted: u64) {
    let pid = std::process::id();
    let (soft, hard) = open_file_limits(pid);
    if soft < wanted {
        assert!(
            hard >= wanted,
            "the hard open-file limit {hard} is under the {wanted} this test needs"
        );
        set_open_file_limit(pid, wanted);
    }
}
