# A call chain three deep with a loop: main -> outer -> middle -> inner.
# inner sums a 16-element array of 4-byte ints in a loop of four iterations,
# reading 16 bytes per iteration (four ints) from one 64-byte line.
#
#   int data[16];                           // at 0x601000, one cache line
#   int inner(void)  { int s = 0; for (int i = 0; i < 16; i += 4) s += sum4(&data[i]); return s; }
#   int middle(void) { return inner(); }
#   int outer(void)  { return middle() + 1; }
#   int main(void)   { return outer(); }
#
# (sum4 is inlined; each iteration is one 16-byte vector load.)
linegrind-trace text 1
fn 401000 401020 main   chain.c 20
fn 401020 401040 outer  chain.c 16
fn 401040 401060 middle chain.c 12
fn 401060 4010a0 inner  chain.c 4

i 401000 4            # main: sub rsp
w 7ffffff8 8          #   push of the frame
i 401004 5            # call outer
call 401020
i 401020 5            # outer: call middle
call 401040
i 401040 5            # middle: call inner
call 401060
i 401060 2            # inner: s = 0
i 401062 2            # i = 0
# loop body, four times: load 16 bytes, add, i += 4, compare, branch
i 401064 4
r 601000 16
i 401068 3
i 40106b 3
i 40106e 2
i 401064 4
r 601010 16
i 401068 3
i 40106b 3
i 40106e 2
i 401064 4
r 601020 16
i 401068 3
i 40106b 3
i 40106e 2
i 401064 4
r 601030 16
i 401068 3
i 40106b 3
i 40106e 2
i 401070 1            # inner: ret
ret
i 401045 1            # middle: ret
ret
i 401025 3            # outer: add 1
i 401028 1            # outer: ret
ret
i 401009 4            # main: add rsp
i 40100d 1            # main: ret
