//! Calls and returns for traces that list only instructions and accesses
//! (Lackey, Dinero), inferred from the program's binaries.
//!
//! An instruction decoded as a call makes the next instruction a `call`
//! to its address; one decoded as a return makes a `ret`. Code the binaries
//! do not cover (a library not given) cannot be decoded: there an
//! instruction that stores 8 bytes and continues elsewhere is a call (the
//! 8 bytes its return address, stored in its slot on the stack), and one
//! that loads 8 bytes from the slot of a call still open and continues at
//! that call's return address returns from it. Jumps into other
//! functions' entries (tail calls) and from PLT stubs into code of no
//! binary are calls already by the simulator's rules. Without binaries the
//! events pass through unchanged.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::code_objects::{CodeObjects, Transfer};
use super::{Access, Event, Location, TraceError, TraceRead};

/// Wraps a reader, adding the calls and returns its binaries tell.
pub struct CallInference<R> {
    inner: R,
    code: Option<CodeObjects>,
    out: VecDeque<Event>,
    previous: Option<Previous>,
    /// The calls still open, innermost last.
    returns: Vec<OpenCall>,
    /// Per return address, the indices in `returns` of the calls open to
    /// it, innermost last: a return that matches none of many open calls
    /// (calls inferred in code that then never returns) looks at none.
    open_to: FxHashMap<u64, Vec<usize>>,
}

/// A call still open: where it returns to, and the stack slot its return
/// address was stored in, when the trace showed the store.
#[derive(Clone, Copy)]
struct OpenCall {
    to: u64,
    slot: Option<u64>,
}

/// The previous instruction, and what it did.
#[derive(Clone, Copy)]
struct Previous {
    addr: u64,
    end: u64,
    transfer: Transfer,
    /// Where it stored 8 bytes (a return address, if it was a call).
    stored_word: Option<u64>,
    /// Where it loaded 8 bytes from (a return address, if it returned).
    loaded_word: Option<u64>,
}

impl Previous {
    /// Whether it called the instruction at `next`: decoded as a call, or,
    /// in code no binary covers, an instruction that stored 8 bytes and
    /// went elsewhere than on or back to itself. On amd64 only a call does
    /// both (a `rep stos` repeats at its own address).
    fn called(&self, next: u64) -> bool {
        match self.transfer {
            Transfer::Call => true,
            Transfer::Unknown => {
                self.stored_word.is_some() && next != self.end && next != self.addr
            }
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
            open_to: FxHashMap::default(),
        }
    }

    /// The reader wrapped.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    fn instruction(&mut self, addr: u64, len: u32, code: &mut CodeObjects) {
        let open = self
            .previous
            .and_then(|previous| self.returned_from(previous, addr));
        match self.previous {
            Some(previous) if previous.called(addr) => {
                self.out.push_back(Event::Call { target: addr });
                let to = previous.end;
                self.open_to.entry(to).or_default().push(self.returns.len());
                self.returns.push(OpenCall {
                    to,
                    slot: previous.stored_word,
                });
            }
            Some(previous) if previous.transfer == Transfer::Return || open.is_some() => {
                self.out.push_back(Event::Return);
                if let Some(open) = open {
                    self.close_from(open);
                }
            }
            _ => {}
        }
        self.previous = Some(Previous {
            addr,
            end: addr.wrapping_add(u64::from(len)),
            transfer: code.transfer(addr),
            stored_word: None,
            loaded_word: None,
        });
        self.out.push_back(Event::Instr { addr, len });
    }

    /// The open call that `previous` returned from by going on at `next`,
    /// if it did: a decoded `ret` to an open call's return address, or in
    /// code no binary covers an instruction that loaded a return address
    /// from the slot an open call stored it in and went to it. A decoded
    /// jump that lands on a return address (a branch over the call, in a
    /// recursive function) is a jump, and so is one of code no binary
    /// covers, however it lands there, that did not load it.
    fn returned_from(&self, previous: Previous, next: u64) -> Option<usize> {
        let open = self.open_to.get(&next)?;
        match previous.transfer {
            Transfer::Return => open.last().copied(),
            Transfer::Unknown if previous.end != next => {
                let slot = previous.loaded_word?;
                // From the innermost call: most returns are its.
                let from_slot = |&at: &usize| self.returns[at].slot.is_none_or(|at| at == slot);
                open.iter().rev().copied().find(from_slot)
            }
            Transfer::Unknown | Transfer::Call | Transfer::Other => None,
        }
    }

    /// Closes the open calls from index `open` on.
    fn close_from(&mut self, open: usize) {
        for call in self.returns.drain(open..).rev() {
            if let Some(open) = self.open_to.get_mut(&call.to) {
                open.pop();
                if open.is_empty() {
                    self.open_to.remove(&call.to);
                }
            }
        }
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
                access,
                size: 8,
                addr,
            }) => {
                if let Some(previous) = &mut self.previous {
                    match access {
                        Access::Write => previous.stored_word = Some(addr),
                        Access::Read => previous.loaded_word = Some(addr),
                        Access::Modify => {}
                    }
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

    /// The calls and returns inferred from `text`.
    fn transfers(text: &str) -> Vec<Event> {
        let mut events = inferred(text);
        events.retain(|event| matches!(event, Event::Call { .. } | Event::Return));
        events
    }

    fn instr(addr: u64, len: u32) -> Event {
        Event::Instr { addr, len }
    }

    fn word(access: Access, addr: u64) -> Event {
        Event::Data {
            access,
            addr,
            size: 8,
        }
    }

    #[test]
    fn a_word_stored_before_going_elsewhere_is_a_call_and_loading_it_back_a_return() {
        let events = inferred(
            "i 1000 5\nw 7ff8 8\n\
             i 2000 1\nr 7ff8 8\n\
             i 1005 2\n",
        );
        assert_eq!(
            events,
            [
                instr(0x1000, 5),
                word(Access::Write, 0x7ff8),
                Event::Call { target: 0x2000 },
                instr(0x2000, 1),
                word(Access::Read, 0x7ff8),
                Event::Return,
                instr(0x1005, 2),
            ]
        );
    }

    /// In nested calls of one recursive function (a sort called from its
    /// own callback), a branch over a call lands on the return address
    /// of the outer call still open: no return, as it loaded no return
    /// address; nor is a load from another slot one.
    #[test]
    fn reaching_a_return_address_without_loading_it_from_its_slot_is_no_return() {
        let transfers = transfers(
            "i 1000 5\nw 7ff8 8\n\
             i 2000 1\n\
             i 1005 2\n\
             i 3000 1\nr 7000 8\n\
             i 1005 2\n",
        );
        assert_eq!(transfers, [Event::Call { target: 0x2000 }]);
    }

    /// A return to an outer call's address, loaded from its slot (a
    /// `longjmp` out of nested calls), closes the calls inside it too: a
    /// later return to one of those is none.
    #[test]
    fn a_return_from_an_outer_call_closes_the_calls_inside_it() {
        let transfers = transfers(
            "i 1000 5\nw 7ff8 8\n\
             i 2000 5\nw 7ff0 8\n\
             i 3000 1\nr 7ff8 8\n\
             i 1005 1\nr 7ff0 8\n\
             i 2005 1\n",
        );
        assert_eq!(
            transfers,
            [
                Event::Call { target: 0x2000 },
                Event::Call { target: 0x3000 },
                Event::Return
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
