//! How much memory the host has left for the simulated caches' tables.
//!
//! Linux grants an allocation of nearly any size (it overcommits) and
//! finds the pages only as they are first written; caches that together
//! need more than the host has would be killed part-way through filling
//! their tables, with no word said. So a large table is first weighed
//! against the memory the host says is available, and against the limit
//! of the process's control group (a container's), whichever is less.

/// Bytes the host can give without swapping or killing, if it says.
pub fn memory_left() -> Option<u64> {
    let available = read("/proc/meminfo").and_then(|text| mem_available(&text));
    let limit = read("/sys/fs/cgroup/memory.max").and_then(|max| {
        let current = read("/sys/fs/cgroup/memory.current")?;
        group_left(&max, &current)
    });
    match (available, limit) {
        (Some(available), Some(limit)) => Some(available.min(limit)),
        (available, limit) => available.or(limit),
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `MemAvailable` of `/proc/meminfo`'s text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?;
    let kib = line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    kib.checked_mul(1024)
}

/// What a control group limited to `max` bytes (or `max`, no limit) has
/// left when it uses `current`.
fn group_left(max: &str, current: &str) -> Option<u64> {
    let max = max.trim().parse::<u64>().ok()?;
    let current = current.trim().parse::<u64>().ok()?;
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_from_meminfo_in_bytes() {
        let meminfo = "MemTotal:       24683880 kB\n\
                       MemFree:        21495956 kB\n\
                       MemAvailable:   24193048 kB\n\
                       Buffers:          123456 kB\n";
        assert_eq!(mem_available(meminfo), Some(24_193_048 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots\n"), None);
    }

    #[test]
    fn a_control_group_without_a_limit_leaves_none_to_count() {
        assert_eq!(group_left("max\n", "4096\n"), None);
        assert_eq!(
            group_left("1073741824\n", "73741824\n"),
            Some(1_000_000_000)
        );
        assert_eq!(group_left("4096\n", "8192\n"), Some(0));
    }

    #[test]
    fn this_host_says_what_it_has_left() {
        // Every Linux since 3.14 gives `MemAvailable`.
        if cfg!(target_os = "linux") {
            assert!(memory_left().is_some_and(|left| left > 0));
        }
    }
}
