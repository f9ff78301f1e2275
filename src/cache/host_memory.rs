//! How much memory the host has left for the simulated caches' tables.
//!
//! Linux grants an allocation of nearly any size (it overcommits) and
//! finds the pages only as they are first written; caches that together
//! need more than the host has would be killed part-way through filling
//! their tables, with no word said. So a large table is first weighed
//! against the memory the host says is available. (A control group's
//! limit, a container's, is not weighed: what it counts as used includes
//! page cache that the kernel would free, so it would refuse caches that
//! fit.)

/// Bytes the host can give without swapping or killing, if it says.
pub fn memory_left() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&meminfo)
}

/// `MemAvailable` of `/proc/meminfo`'s text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?;
    let kib = line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    kib.checked_mul(1024)
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
    fn this_host_says_what_it_has_left() {
        // Every Linux since 3.14 gives `MemAvailable`.
        if cfg!(target_os = "linux") {
            assert!(memory_left().is_some_and(|left| left > 0));
        }
    }
}
