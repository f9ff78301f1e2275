/* C functions whose names a C++ demangler would read as types: `f` as
   float, `Ss` as std::string, `v` as void. */
__attribute__((noinline)) int f(int n) { return n * 3; }
__attribute__((noinline)) int Ss(int n) { return n + 7; }
__attribute__((noinline)) int v(int n) { return n - 1; }

int main(int argc, char **argv) {
    (void)argv;
    return f(argc) + Ss(argc) + v(argc);
}
