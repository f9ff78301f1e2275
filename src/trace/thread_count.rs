//! Threads counted as they start. Valgrind gives an ended thread's id to
//! the next thread it creates, so a thread is not an id: an id reused
//! after its thread ended starts another thread when it runs.

use rustc_hash::FxHashSet;

/// The threads a trace ran, as its `thread` and `thread-exit` events tell.
#[derive(Clone, Debug)]
pub struct ThreadCount {
    ids: FxHashSet<u32>,
    /// Ids whose thread ended and that have not run since.
    ended: FxHashSet<u32>,
    started: u64,
}

impl Default for ThreadCount {
    /// Thread 1 running, as a trace starts.
    fn default() -> ThreadCount {
        ThreadCount {
            ids: FxHashSet::from_iter([1]),
            ended: FxHashSet::default(),
            started: 1,
        }
    }
}

impl ThreadCount {
    /// Thread `tid` runs: a thread starts if the id is new or its thread
    /// ended.
    pub fn run(&mut self, tid: u32) {
        let new = self.ids.insert(tid);
        let reused = self.ended.remove(&tid);
        if new || reused {
            self.started += 1;
        }
    }

    /// Thread `tid` has ended.
    pub fn end(&mut self, tid: u32) {
        self.ended.insert(tid);
    }

    /// Threads started.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Thread ids used.
    pub fn ids(&self) -> u64 {
        self.ids.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_reused_after_its_thread_ended_starts_another_thread() {
        let mut threads = ThreadCount::default();
        threads.run(1);
        threads.run(2);
        threads.run(1);
        threads.run(2);
        assert_eq!((threads.started(), threads.ids()), (2, 2));
        threads.end(2);
        threads.run(1);
        threads.run(2);
        threads.run(2);
        assert_eq!((threads.started(), threads.ids()), (3, 2));
        // An id that ends before it is seen to run starts one thread.
        threads.end(3);
        threads.run(3);
        threads.run(1);
        threads.run(3);
        assert_eq!((threads.started(), threads.ids()), (4, 3));
    }
}
