// A C++ exception unwinding several frames, many times.
#include <stdexcept>

static volatile int sink;

__attribute__((noinline)) void thrower(int n) {
    for (int i = 0; i < 200; i++)
        sink += i * n;
    throw std::runtime_error("deep");
}
__attribute__((noinline)) void middle(int n) { sink += n; thrower(n); }
__attribute__((noinline)) void outer(int n) { sink += n; middle(n); }

int main() {
    int caught = 0;
    for (int i = 0; i < 1000; i++) {
        try {
            outer(i);
        } catch (const std::exception &) {
            caught++;
        }
    }
    return caught & 0x7f;
}
