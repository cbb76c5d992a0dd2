//! What the harness (and `cargo xtask bench-store`) reads from `/proc`: a process's resident
//! memory and CPU time, its parent, the processes under it or of a name, the process listening
//! on a local TCP port, and the open-files limit.
//!
//! Everything here is Linux-only and best-effort: a value that cannot be read is `None`, and the
//! report says so instead of failing the run.

use std::time::Duration;

/// `VmRSS` of process `pid`, in bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status_field_kib(&status, "VmRSS:").map(|kib| kib * 1024)
}

/// A `kB` field of `/proc/PID/status`, e.g. `VmRSS:`, in KiB.
fn status_field_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// User plus system CPU time of process `pid` so far (`/proc/PID/stat` utime + stime).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    stat_of(&format!("/proc/{pid}/stat")).map(|stat| ticks(stat.utime + stat.stime))
}

/// User plus system CPU time of process `pid` and of its children it has reaped (`cutime`,
/// `cstime`): what a server that forks and reaps workers has spent.
pub fn cpu_time_with_children(pid: u32) -> Option<Duration> {
    stat_of(&format!("/proc/{pid}/stat"))
        .map(|stat| ticks(stat.utime + stat.stime + stat.cutime + stat.cstime))
}

/// User plus system CPU time of this process so far (`/proc/self/stat` utime + stime; all its
/// threads).
pub fn own_cpu_time() -> Option<Duration> {
    stat_of("/proc/self/stat").map(|stat| ticks(stat.utime + stat.stime))
}

/// The parent of process `pid`.
pub fn parent_pid(pid: u32) -> Option<u32> {
    stat_of(&format!("/proc/{pid}/stat")).map(|stat| stat.parent)
}

/// `roots` and every process under them now (children, their children, …).
pub fn process_tree(roots: &[u32]) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = all_pids()
        .into_iter()
        .filter_map(|pid| Some((pid, parent_pid(pid)?)))
        .collect();
    tree_of(roots, &parents)
}

/// `roots` and their descendants, from (pid, parent) pairs.
fn tree_of(roots: &[u32], parents: &[(u32, u32)]) -> Vec<u32> {
    let mut tree = roots.to_vec();
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, parent) in parents {
            if tree.contains(parent) && !tree.contains(pid) {
                tree.push(*pid);
                grew = true;
            }
        }
    }
    tree
}

/// Every process running now whose command name (`/proc/PID/comm`) is `name`.
pub fn processes_named(name: &str) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() == name)
        })
        .collect()
}

fn all_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect()
}

/// `ticks` of the kernel's clock (`_SC_CLK_TCK`) as a duration.
fn ticks(ticks: u64) -> Duration {
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_second = if per_second > 0 {
        per_second as f64
    } else {
        100.0
    };
    Duration::from_secs_f64(ticks as f64 / per_second)
}

/// The fields of a `/proc/PID/stat` line that the harness reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ProcessStat {
    parent: u32,
    utime: u64,
    stime: u64,
    cutime: u64,
    cstime: u64,
}

fn stat_of(path: &str) -> Option<ProcessStat> {
    parse_stat(&std::fs::read_to_string(path).ok()?)
}

/// Reads a `/proc/PID/stat` line: the parent (field 4), utime, stime, cutime and cstime
/// (fields 14–17). The command name (field 2) is in parentheses and may hold spaces, so fields
/// are counted after its closing `)`.
fn parse_stat(stat: &str) -> Option<ProcessStat> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name, field 3 (state) is `fields[0]`.
    let field = |n: usize| fields.get(n - 3)?.parse().ok();
    Some(ProcessStat {
        parent: field(4)? as u32,
        utime: field(14)?,
        stime: field(15)?,
        cutime: field(16)?,
        cstime: field(17)?,
    })
}

/// The process listening on TCP `port` on this machine: the socket's inode from
/// `/proc/net/tcp` (and `tcp6`), then the process holding an fd `socket:[inode]`. Needs
/// permission to read the other process's fds (same user, or root).
pub fn pid_listening_on(port: u16) -> Option<u32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            inodes.extend(listening_inodes(&text, port));
        }
    }
    if inodes.is_empty() {
        return None;
    }
    let targets: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path())
                && targets.iter().any(|t| link.as_os_str() == t.as_str())
            {
                return Some(pid);
            }
        }
    }
    None
}

/// Inodes of sockets in state LISTEN (`0A`) on `port` in a `/proc/net/tcp`-format table.
fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local = fields.get(1)?;
            let state = fields.get(3)?;
            let inode = fields.get(9)?;
            let local_port = u16::from_str_radix(local.rsplit(':').next()?, 16).ok()?;
            (local_port == port && *state == "0A")
                .then(|| inode.parse().ok())
                .flatten()
        })
        .collect()
}

/// Raises the soft limit of open files to the hard limit; returns the new soft limit (the old
/// one if raising it was refused).
pub fn raise_nofile_limit() -> Option<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
        .or_else(|_| rlimit::Resource::NOFILE.get_soft())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_stat_fields_after_a_name_with_spaces() {
        let stat =
            "1234 (tokio rt) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 4 0 1 1 1";
        assert_eq!(
            parse_stat(stat),
            Some(ProcessStat {
                parent: 1,
                utime: 250,
                stime: 50,
                cutime: 7,
                cstime: 3
            })
        );
        assert_eq!(parse_stat("1234 (cut short) S 1 2"), None);
    }

    #[test]
    fn a_tree_holds_its_roots_and_everything_under_them() {
        let parents = [(2, 1), (3, 2), (4, 3), (5, 9), (6, 1)];
        let mut tree = tree_of(&[2], &parents);
        tree.sort();
        assert_eq!(tree, [2, 3, 4]);
        assert_eq!(tree_of(&[7], &parents), [7]);
    }

    #[test]
    fn finds_listening_sockets_by_port() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 100 0 0 10 0\n";
        assert_eq!(listening_inodes(table, 8080), vec![4242]);
        assert!(listening_inodes(table, 8081).is_empty());
    }

    #[test]
    fn reads_this_process() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(status_field_kib(&status, "VmRSS:").unwrap() > 0);
        assert!(own_cpu_time().is_some());
        assert!(raise_nofile_limit().unwrap() > 0);
        let me = std::process::id();
        assert_eq!(parent_pid(me), Some(std::os::unix::process::parent_id()));
        assert!(cpu_time_with_children(me).unwrap() >= cpu_time(me).unwrap());
        assert!(process_tree(&[std::os::unix::process::parent_id()]).contains(&me));
        let name = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert!(processes_named(name.trim()).contains(&me));
    }
}
