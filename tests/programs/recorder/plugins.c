/* Loads plugin_a.so, runs it, unloads it, then the same with plugin_b.so,
 * which the loader maps where plugin_a.so was. */
#include <dlfcn.h>

static int run(const char* path) {
    void* plugin = dlopen(path, RTLD_NOW);
    if (!plugin)
        return 1;
    void (*work)(int) = (void (*)(int))dlsym(plugin, "plugin_work");
    if (!work)
        return 1;
    work(1000);
    return dlclose(plugin) != 0;
}

int main(void) {
    return run("./plugin_a.so") || run("./plugin_b.so");
}
