//! Calls and returns for traces that list only instructions and accesses
//! (Lackey, Dinero), inferred from the program's binaries.
//!
//! An instruction decoded as a call makes the next instruction a `call`
//! to its address; one decoded as a return makes a `ret`. Code the binaries
//! do not cover (a library not given) cannot be decoded: when the trace
//! comes back to the return address of a call still open, that call
//! returns. Jumps into other functions' entries (tail calls, PLT stubs) are
//! calls already by the simulator's rules. Without binaries the events pass
//! through unchanged.

use std::collections::VecDeque;

use super::code_objects::{CodeObjects, Transfer};
use super::{Event, Location, TraceError, TraceRead};

/// Wraps a reader, adding the calls and returns its binaries tell.
pub struct CallInference<R> {
    inner: R,
    code: Option<CodeObjects>,
    out: VecDeque<Event>,
    /// The previous instruction: its end, and what it does.
    previous: Option<(u64, Transfer)>,
    /// Return addresses of the calls still open, innermost last.
    returns: Vec<u64>,
}

impl<R: TraceRead> CallInference<R> {
    /// Infers calls in `inner` from `code`, which also maps the binaries
    /// for symbols; passes `inner` through without `code`.
    pub fn new(inner: R, code: Option<CodeObjects>) -> CallInference<R> {
        let out = code
            .iter()
            .flat_map(CodeObjects::mappings)
            .map(|mapping| Event::Module(Box::new(mapping)))
            .collect();
        CallInference {
            inner,
            code,
            out,
            previous: None,
            returns: Vec::new(),
        }
    }

    /// The reader wrapped.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    fn instruction(&mut self, addr: u64, len: u32, code: &mut CodeObjects) {
        match self.previous {
            Some((end, Transfer::Call)) => {
                self.out.push_back(Event::Call { target: addr });
                self.returns.push(end);
            }
            Some((_, Transfer::Return)) => {
                self.out.push_back(Event::Return);
                if let Some(open) = self.returns.iter().rposition(|&ra| ra == addr) {
                    self.returns.truncate(open);
                }
            }
            _ => {
                if let Some(open) = self.returns.iter().rposition(|&ra| ra == addr) {
                    self.out.push_back(Event::Return);
                    self.returns.truncate(open);
                }
            }
        }
        self.previous = Some((addr.wrapping_add(u64::from(len)), code.transfer(addr)));
        self.out.push_back(Event::Instr { addr, len });
    }
}

impl<R: TraceRead> TraceRead for CallInference<R> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if let Some(event) = self.out.pop_front() {
            return Ok(Some(event));
        }
        let event = self.inner.next_event()?;
        let Some(mut code) = self.code.take() else {
            return Ok(event);
        };
        let next = match event {
            Some(Event::Instr { addr, len }) => {
                self.instruction(addr, len, &mut code);
                self.out.pop_front()
            }
            other => other,
        };
        self.code = Some(code);
        Ok(next)
    }

    fn location(&self) -> Location {
        self.inner.location()
    }

    fn detached_data(&self) -> bool {
        self.inner.detached_data()
    }
}
