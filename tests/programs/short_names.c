/* C functions whose names a C++ demangler would read as types: `f` as
   float, `Ss` as std::string, `v` as void; and code typed as data. */
__attribute__((noinline)) int f(int n) { return n * 3; }
__attribute__((noinline)) int Ss(int n) { return n + 7; }
__attribute__((noinline)) int v(int n) { return n - 1; }

/* Code typed as a data object, as assemblers' tables in `.text` are:
   Valgrind names it all the same. */
__asm__(".text\n"
        ".globl obj_in_text\n"
        ".type obj_in_text, @object\n"
        "obj_in_text:\n"
        "    lea 2(%rdi), %eax\n"
        "    ret\n"
        ".size obj_in_text, . - obj_in_text\n");
int obj_in_text(int n);

int main(int argc, char **argv) {
    (void)argv;
    return f(argc) + Ss(argc) + v(argc) + obj_in_text(argc);
}
