/* Two functions that start together and end apart, as hand-written
   assembly may name a routine and its first part: Valgrind gives the
   shorter the start and the longer what lies past it. */
    .text
    .globl  main, whole, first_part
    .type   whole, @function
    .type   first_part, @function
    .type   main, @function
whole:
first_part:
    movl    %edi, %eax
    addl    $1, %eax
.Lfirst_part_end:
    addl    $2, %eax /* MARK whole-tail */
    ret
.Lwhole_end:
    .size   first_part, .Lfirst_part_end - first_part
    .size   whole, .Lwhole_end - whole

main:
    xorl    %edi, %edi
    call    whole
    xorl    %eax, %eax
    ret
    .size   main, . - main
    .section .note.GNU-stack, "", @progbits
