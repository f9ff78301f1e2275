// Symbolication test program: C++ names are demangled.
namespace shapes {
struct Widget {
    int size;
    __attribute__((noinline)) int grow(int by) {
        size += by; // MARK grow-body
        return size;
    }
};
}  // namespace shapes

int main(int argc, char **) {
    shapes::Widget w{argc};
    return w.grow(3);
}
