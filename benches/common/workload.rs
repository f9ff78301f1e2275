//! A synthetic program for benchmarks: call chains up to four deep through
//! a call graph of 32 functions where each function calls one of three
//! others (120 distinct call paths, like a modest real program), each leaf
//! running a small loop that reads a hot 16 KiB table, streams through a
//! large array and writes a strided one, so that hits, misses, evictions and
//! the back-dating tree all get work.

use linegrind::trace::{Access, Event, FunctionSymbol};

const FUNCTIONS: u64 = 32;

fn base(func: u64) -> u64 {
    0x400000 + func * 0x200
}

/// About `iterations * 60` events.
pub fn events(iterations: u64) -> Vec<Event> {
    let mut out: Vec<Event> = (0..FUNCTIONS)
        .map(|func| {
            Event::Function(Box::new(FunctionSymbol {
                start: base(func),
                end: base(func + 1),
                name: format!("f{func}"),
                file: Some("bench.c".into()),
                line: 10 * func as u32,
            }))
        })
        .collect();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut stream = 0x1000_0000u64;
    let mut strided = 0x4000_0000u64;
    out.push(Event::Instr {
        addr: base(0),
        len: 4,
    });
    for _ in 0..iterations {
        let depth = 1 + next() % 4;
        let mut chain = vec![0u64];
        for _ in 0..depth {
            let caller = *chain.last().unwrap();
            let callee = 1 + (3 * caller + next() % 3) % (FUNCTIONS - 1);
            out.push(Event::Instr {
                addr: base(caller) + 8,
                len: 5,
            });
            out.push(Event::Data {
                access: Access::Write,
                addr: 0x7fff_0000 - 8 * chain.len() as u64,
                size: 8,
            });
            out.push(Event::Call {
                target: base(callee),
            });
            chain.push(callee);
        }
        let leaf = *chain.last().unwrap();
        for round in 0..8u64 {
            let body = base(leaf) + 0x20;
            out.push(Event::Instr { addr: body, len: 4 });
            out.push(Event::Data {
                access: Access::Read,
                addr: 0x600000 + (next() % 2048) * 8,
                size: 8,
            });
            out.push(Event::Instr {
                addr: body + 4,
                len: 4,
            });
            out.push(Event::Data {
                access: Access::Read,
                addr: stream,
                size: 8,
            });
            stream += 8;
            out.push(Event::Instr {
                addr: body + 8,
                len: 7,
            });
            if round % 2 == 0 {
                out.push(Event::Data {
                    access: Access::Modify,
                    addr: strided,
                    size: 4,
                });
                strided += 256;
            }
            out.push(Event::Instr {
                addr: body + 15,
                len: 2,
            });
        }
        for frame in (1..chain.len()).rev() {
            out.push(Event::Instr {
                addr: base(chain[frame]) + 0x40,
                len: 1,
            });
            out.push(Event::Data {
                access: Access::Read,
                addr: 0x7fff_0000 - 8 * frame as u64,
                size: 8,
            });
            out.push(Event::Return);
            out.push(Event::Instr {
                addr: base(chain[frame - 1]) + 13,
                len: 3,
            });
        }
    }
    out
}
