/* Two static functions of one name, one here and one in unlisted_other.c,
   linked with --discard-all so that no symbol names them: only DWARF does. */
__attribute__((noinline)) static int helper(int x) { /* MARK helper-here */
    return x * 5 + 2;
}

int other(int x);

int main(int argc, char **argv) {
    (void)argv;
    return helper(argc) + other(argc);
}
