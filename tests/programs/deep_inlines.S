# A function whose DWARF nests 5,000 inlined subroutines, each inside the
# one before: a test that reading them does not overflow the simulating
# thread's stack.
        .text
        .globl  main
        .type   main, @function
main:
        xorl    %eax, %eax
        ret
.Lmain_end:
        .size   main, .-main

        .section .debug_abbrev,"",@progbits
.Labbrev:
        .uleb128 1              # compile unit, with children
        .uleb128 0x11
        .byte   1
        .uleb128 0x03, 0x08     # name, string
        .uleb128 0x11, 0x01     # low_pc, address
        .uleb128 0x12, 0x07     # high_pc, length of 8 bytes
        .byte   0, 0
        .uleb128 2              # subprogram, with children
        .uleb128 0x2e
        .byte   1
        .uleb128 0x03, 0x08
        .uleb128 0x11, 0x01
        .uleb128 0x12, 0x07
        .byte   0, 0
        .uleb128 3              # inlined subroutine, with children
        .uleb128 0x1d
        .byte   1
        .byte   0, 0
        .byte   0

        .section .debug_info,"",@progbits
        .long   .Linfo_end - .Linfo_start
.Linfo_start:
        .short  4
        .long   .Labbrev
        .byte   8
        .uleb128 1
        .asciz  "deep_inlines.S"
        .quad   main
        .quad   .Lmain_end - main
        .uleb128 2
        .asciz  "main"
        .quad   main
        .quad   .Lmain_end - main
        .rept   5000
        .uleb128 3
        .endr
.Linfo_end:

        .section .note.GNU-stack,"",@progbits
