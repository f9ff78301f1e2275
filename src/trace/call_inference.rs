//! Calls and returns for traces that list only instructions and accesses
//! (Lackey, Dinero), inferred from the program's binaries.
//!
//! An instruction decoded as a call makes the next instruction a `call`
//! to its address; one decoded as a return makes a `ret`. Code the binaries
//! do not cover (a library not given) cannot be decoded: there an
//! instruction that stores 8 bytes and continues elsewhere is a call, and
//! when the trace comes back to the return address of a call still open,
//! that call returns. Jumps into other functions' entries (tail calls) and
//! from PLT stubs into code of no binary are calls already by the
//! simulator's rules. Without binaries the events pass through unchanged.

use std::collections::VecDeque;

use super::code_objects::{CodeObjects, Transfer};
use super::{Access, Event, Location, TraceError, TraceRead};

/// Wraps a reader, adding the calls and returns its binaries tell.
pub struct CallInference<R> {
    inner: R,
    code: Option<CodeObjects>,
    out: VecDeque<Event>,
    previous: Option<Previous>,
    /// Return addresses of the calls still open, innermost last.
    returns: Vec<u64>,
}

/// The previous instruction, and what it did.
#[derive(Clone, Copy)]
struct Previous {
    addr: u64,
    end: u64,
    transfer: Transfer,
    /// Whether it stored 8 bytes (a return address, if it was a call).
    stored_word: bool,
}

impl Previous {
    /// Whether it called the instruction at `next`: decoded as a call, or,
    /// in code no binary covers, an instruction that stored 8 bytes and
    /// went elsewhere than on or back to itself. On amd64 only a call does
    /// both (a `rep stos` repeats at its own address).
    fn called(&self, next: u64) -> bool {
        match self.transfer {
            Transfer::Call => true,
            Transfer::Unknown => self.stored_word && next != self.end && next != self.addr,
            Transfer::Return | Transfer::Other => false,
        }
    }
}

impl<R: TraceRead> CallInference<R> {
    /// Infers calls in `inner` from `code`, which also maps the binaries
    /// for symbols; passes `inner` through without `code`.
    pub fn new(inner: R, code: Option<CodeObjects>) -> CallInference<R> {
        let out = code.iter().flat_map(CodeObjects::mappings).collect();
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
        // Only a return, or a jump in code no binary covers, can come back
        // to a return address as a return: a decoded jump that lands on
        // one (a branch over the call, in a recursive function) is a jump.
        let returned = self
            .previous
            .is_some_and(|previous| match previous.transfer {
                Transfer::Return => true,
                Transfer::Unknown => previous.end != addr,
                Transfer::Call | Transfer::Other => false,
            });
        let open = match returned {
            true => self.returns.iter().rposition(|&ra| ra == addr),
            false => None,
        };
        match self.previous {
            Some(previous) if previous.called(addr) => {
                self.out.push_back(Event::Call { target: addr });
                self.returns.push(previous.end);
            }
            Some(previous) if previous.transfer == Transfer::Return || open.is_some() => {
                self.out.push_back(Event::Return);
                if let Some(open) = open {
                    self.returns.truncate(open);
                }
            }
            _ => {}
        }
        self.previous = Some(Previous {
            addr,
            end: addr.wrapping_add(u64::from(len)),
            transfer: code.transfer(addr),
            stored_word: false,
        });
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
            Some(Event::Data {
                access: Access::Write,
                size: 8,
                ..
            }) => {
                if let Some(previous) = &mut self.previous {
                    previous.stored_word = true;
                }
                event
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::text::TextReader;

    /// The events inferred from `text` with no binaries: every instruction
    /// is in code no binary covers.
    fn inferred(text: &str) -> Vec<Event> {
        let code = CodeObjects::open(&[]).unwrap();
        let text = format!("linegrind-trace text 1\n{text}");
        let mut reader = CallInference::new(TextReader::new(text.as_bytes()), Some(code));
        std::iter::from_fn(|| reader.next_event().unwrap()).collect()
    }

    fn instr(addr: u64, len: u32) -> Event {
        Event::Instr { addr, len }
    }

    #[test]
    fn a_word_stored_before_going_elsewhere_is_a_call_and_its_return_address_a_return() {
        let events = inferred(
            "i 1000 5\nw 7ff8 8\n\
             i 2000 1\n\
             i 1005 2\n",
        );
        let store = Event::Data {
            access: Access::Write,
            addr: 0x7ff8,
            size: 8,
        };
        assert_eq!(
            events,
            [
                instr(0x1000, 5),
                store,
                Event::Call { target: 0x2000 },
                instr(0x2000, 1),
                Event::Return,
                instr(0x1005, 2),
            ]
        );
    }

    #[test]
    fn repeated_stores_and_jumps_without_stores_are_not_calls() {
        // `rep stos` repeats at its own address; a store followed by the
        // next instruction is sequential; a jump stores nothing.
        let events = inferred(
            "i 1000 3\nw 8000 8\n\
             i 1000 3\nw 8008 8\n\
             i 1003 4\nw 8010 8\n\
             i 1007 2\n\
             i 3000 1\n",
        );
        assert!(
            !events
                .iter()
                .any(|event| matches!(event, Event::Call { .. } | Event::Return)),
            "{events:?}"
        );
    }
}
