# Straddling accesses and modifies, with every number explained.
#
# Lines are 64 bytes: the line at 0x602000 holds bytes [0x602000, 0x602040).
# An access that crosses a line boundary is one access: it looks up both
# lines and misses once if either misses. A modify (read-modify-write, such
# as `add [mem], 1`) is one access counted as one write (Dw), as Callgrind
# counts it.
#
# Expected totals (default caches, nothing is evicted):
#   Ir 9, I1mr 3, ILmr 3    lines 0x401000, 0x401040 and 0x401080
#   Dr 2, D1mr 1, DLmr 1    the first read misses (once, for two lines)
#   Dw 3, D1mw 2, DLmw 2    two of the three writes reach a new line
#   7 lines loaded into L1 (448 bytes), 63 bytes of them used: SpLoss1 385
linegrind-trace text 1
fn 401000 401040 main straddle.c 3
fn 401040 4010c0 bump straddle.c 9

i 401000 7            # I1 miss: line 0x401000
r 60203c 8            # 4 bytes of line 0x602000 + 4 of 0x602040: 1 Dr, 1 D1mr
i 401007 7
r 602040 4            # the first 4 bytes of line 0x602040 again: a hit
i 40100e 5            # call bump
call 401040
i 401040 4            # bump: I1 miss, line 0x401040
m 602038 4            #   bytes 56..60 of line 0x602000: 1 Dw, a hit
i 401044 4
m 60207c 8            #   line 0x602040 hits, line 0x602080 misses: 1 D1mw
i 40107c 6            # bump: an instruction crossing into line 0x401080: I1 miss
i 401082 1            # bump: ret
ret
i 401013 6            # main
w 6020bf 2            # last byte of line 0x602080, first of 0x6020c0: 1 D1mw
i 401019 1            # main: ret
