//! Fixed-size tables in the host's huge pages.
//!
//! An 8 MiB LL keeps 5 MiB of ways and line states that L1 misses touch at
//! random. In 4 KiB pages nearly every such touch also misses the host's
//! TLB; in 2 MiB pages the whole table needs three TLB entries. Linux backs
//! memory with huge pages only where asked (`transparent_hugepage` is
//! `madvise` on Debian), and only for whole aligned 2 MiB ranges, so a table
//! of a huge page or more is allocated on a huge-page boundary and advised
//! before its first write. Elsewhere, or if the kernel declines, it is an
//! ordinary allocation.

use std::alloc::{Layout, alloc, dealloc};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::{Mutex, PoisonError};

use super::host_memory::memory_left;

const HUGE_PAGE: usize = 2 << 20;

/// Bytes of the host's available memory a table leaves, for the rest of
/// the run and the rest of the host.
const SPARE: u64 = 256 << 20;

/// Held while a huge table is checked against the host's memory and
/// written.
static FILLING: Mutex<()> = Mutex::new(());

/// The host's cache line. Every table starts on one, so that an element
/// straddles two only if its size does not divide it.
const HOST_LINE: usize = 64;

/// A boxed slice of `T` whose length never changes.
pub struct HugeTable<T> {
    start: NonNull<T>,
    len: usize,
    layout: Layout,
}

// SAFETY: the table owns its elements like a `Box<[T]>` does.
unsafe impl<T: Send> Send for HugeTable<T> {}
// SAFETY: shared access only hands out `&[T]`.
unsafe impl<T: Sync> Sync for HugeTable<T> {}

/// The host refused the memory of a table, or has less available than it
/// needs: the simulated caches are too large for it (or for the
/// address-space limit the process runs under).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoMemory {
    /// The bytes asked for.
    pub bytes: usize,
    /// What the host had available, when that was too little; `None` when
    /// it refused the allocation.
    pub available: Option<u64>,
}

impl NoMemory {
    /// The host refused `bytes`.
    pub fn refused(bytes: usize) -> NoMemory {
        NoMemory {
            bytes,
            available: None,
        }
    }
}

impl fmt::Display for NoMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |bytes: f64| bytes / f64::from(1u32 << 20);
        let bytes = self.bytes;
        let needed = mib(bytes as f64);
        match self.available {
            None => write!(
                f,
                "the host refused {bytes} bytes ({needed:.1} MiB) for a table of the simulated \
                 caches"
            ),
            Some(left) => write!(
                f,
                "a table of the simulated caches needs {bytes} bytes ({needed:.1} MiB), and the \
                 host has {left} bytes ({:.1} MiB) available: less than that and {:.0} MiB to \
                 spare",
                mib(left as f64),
                mib(SPARE as f64)
            ),
        }
    }
}

impl std::error::Error for NoMemory {}

impl<T: Copy> HugeTable<T> {
    /// `len` copies of `value`, or the memory the host refused or has not
    /// available.
    pub fn filled(value: T, len: usize) -> Result<HugeTable<T>, NoMemory> {
        HugeTable::filled_within(value, len, memory_left)
    }

    /// [`HugeTable::filled`], with what the host has available told by
    /// `left`, asked once the allocation was granted.
    fn filled_within(
        value: T,
        len: usize,
        left: impl FnOnce() -> Option<u64>,
    ) -> Result<HugeTable<T>, NoMemory> {
        // Whole huge pages, or a plain allocation on a host cache line (of at
        // least one byte: a zero-sized one is not allowed).
        let layout = Layout::array::<T>(len).and_then(|array| {
            if array.size() >= HUGE_PAGE {
                Layout::from_size_align(array.size().next_multiple_of(HUGE_PAGE), HUGE_PAGE)
            } else {
                Layout::from_size_align(array.size().max(1), array.align().max(HOST_LINE))
            }
        });
        let Ok(layout) = layout else {
            return Err(NoMemory::refused(len.saturating_mul(size_of::<T>())));
        };
        // SAFETY: the layout has a non-zero size.
        let bytes = unsafe { alloc(layout) };
        let Some(start) = NonNull::new(bytes.cast::<T>()) else {
            return Err(NoMemory::refused(layout.size()));
        };
        // Writing the table finds its pages: a huge one must fit in what
        // the host has available, with some to spare, or the kernel would
        // kill the process part-way. Huge tables are checked and written
        // one at a time (a sweep's walks build their caches at once), so
        // that each is checked against what the ones before it left.
        let _one_at_a_time = (layout.size() >= HUGE_PAGE)
            .then(|| FILLING.lock().unwrap_or_else(PoisonError::into_inner));
        if layout.size() >= HUGE_PAGE
            && let Some(left) = left()
            && layout.size() as u64 + SPARE > left
        {
            // SAFETY: allocated above with this layout, and never written.
            unsafe { dealloc(bytes, layout) };
            return Err(NoMemory {
                bytes: layout.size(),
                available: Some(left),
            });
        }
        if layout.align() == HUGE_PAGE {
            advise_huge_pages(bytes, layout.size());
        }
        for i in 0..len {
            // SAFETY: `i` is within the allocation, which fits `len` values.
            unsafe { start.add(i).write(value) };
        }
        Ok(HugeTable { start, len, layout })
    }
}

impl<T> HugeTable<T> {
    /// Asks the host to bring element `index` into its caches, ahead of a
    /// use that other work will come between: both of its host cache lines
    /// where an element can straddle two (a 24-byte LL line state does in
    /// a quarter of the slots).
    #[inline]
    pub fn prefetch(&self, index: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(element) = self.get(index) {
            let first = (element as *const T).cast::<i8>();
            // SAFETY: a prefetch is a hint; it reads nothing and cannot
            // fault, and both pointers are to bytes of the element.
            unsafe {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                _mm_prefetch::<_MM_HINT_T0>(first);
                if !HOST_LINE.is_multiple_of(size_of::<T>()) {
                    _mm_prefetch::<_MM_HINT_T0>(first.add(size_of::<T>() - 1));
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = index;
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, len: usize) {
    // SAFETY: advice on whole pages of an allocation this table owns; it
    // changes how they are backed, never what they hold. Failure (a kernel
    // without transparent huge pages) leaves ordinary pages, so the result
    // is ignored.
    unsafe {
        libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: *mut u8, _: usize) {}

impl<T> Deref for HugeTable<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised values start at `start` and live as
        // long as `self`.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for HugeTable<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl<T> Drop for HugeTable<T> {
    fn drop(&mut self) {
        // SAFETY: the elements are initialised and dropped once, here; the
        // memory was allocated in `filled` with this layout.
        unsafe {
            std::ptr::drop_in_place(&mut **self as *mut [T]);
            dealloc(self.start.as_ptr().cast(), self.layout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_tables_hold_what_is_written() {
        for len in [0, 1, 1000, 3 * HUGE_PAGE / 16 + 7] {
            let mut table = HugeTable::filled((7u64, 1u32), len).unwrap();
            assert_eq!(table.len(), len);
            assert!(table.iter().all(|&e| e == (7, 1)));
            if len > 0 {
                table[len - 1] = (9, 2);
                assert_eq!(table[len - 1], (9, 2));
                assert_eq!(table[0], if len == 1 { (9, 2) } else { (7, 1) });
            }
        }
    }

    #[test]
    fn a_small_table_starts_on_a_host_cache_line() {
        for len in [1, 3, 1000] {
            let table = HugeTable::filled([0u8; 24], len).unwrap();
            assert_eq!(table.as_ptr() as usize % HOST_LINE, 0);
        }
    }

    #[test]
    fn a_table_of_a_huge_page_or_more_starts_on_a_huge_page() {
        let table = HugeTable::filled(0u64, HUGE_PAGE / 8).unwrap();
        assert_eq!(table.as_ptr() as usize % HUGE_PAGE, 0);
    }

    #[test]
    fn a_table_the_host_cannot_hold_is_refused() {
        let err = HugeTable::filled(0u64, usize::MAX / 4).err();
        assert_eq!(err.map(|err| err.bytes), Some(usize::MAX));
        let err = HugeTable::filled(0u64, 1 << 58).err();
        assert_eq!(err.map(|err| err.bytes), Some(8 << 58));
    }

    /// A huge table that would leave the host less than [`SPARE`] of its
    /// available memory is refused before any of it is written (the
    /// kernel would grant it, then kill the process as the writes found
    /// no pages); a small one, or one on a host that says nothing, is made.
    #[test]
    fn a_huge_table_is_made_only_with_memory_to_spare() {
        let len = 2 * HUGE_PAGE;
        let short = len as u64 + SPARE - 1;
        let Err(err) = HugeTable::filled_within(0u8, len, || Some(short)) else {
            panic!("a table of {len} bytes, with {short} available, was made");
        };
        assert_eq!((err.bytes, err.available), (len, Some(short)));
        assert_eq!(
            err.to_string(),
            format!(
                "a table of the simulated caches needs {len} bytes (4.0 MiB), and the host has \
                 {short} bytes (260.0 MiB) available: less than that and 256 MiB to spare"
            )
        );
        let enough = short + 1;
        let table = HugeTable::filled_within(7u8, len, || Some(enough)).unwrap();
        assert!(table.len() == len && table.iter().all(|&b| b == 7));
        assert!(HugeTable::filled_within(0u8, len, || None).is_ok());
        assert!(HugeTable::filled_within(0u8, HUGE_PAGE - 1, || Some(0)).is_ok());
    }

    /// Huge tables made at once on two threads (a sweep's walks) are
    /// checked one after the other, each against what the host has left
    /// once the other is written: here, the host's memory is told to fall
    /// only as a table's writing ends, and holds one table, not two.
    #[test]
    fn huge_tables_made_at_once_are_checked_one_after_the_other() {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::time::Duration;

        let len = 2 * HUGE_PAGE;
        let total = len as u64 + SPARE + len as u64 / 2;
        let written = AtomicU64::new(0);
        let left = || {
            let before = written.load(Ordering::SeqCst);
            // The other thread's check would come here, were they not one
            // after the other.
            std::thread::sleep(Duration::from_millis(50));
            let left = total - before;
            if left >= len as u64 + SPARE {
                written.fetch_add(len as u64, Ordering::SeqCst);
            }
            Some(left)
        };
        let made: Vec<bool> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..2)
                .map(|_| scope.spawn(|| HugeTable::filled_within(0u8, len, left).is_ok()))
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(made.iter().filter(|&&made| made).count(), 1, "{made:?}");
    }
}
