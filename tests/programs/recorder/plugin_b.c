/* Another plugin for plugins.c, with code of another shape. */
volatile long plugin_b_mix;

void plugin_work(int n) {
    for (int i = 0; i < n; i++)
        plugin_b_mix ^= (long)i * 7 + (plugin_b_mix >> 3);
}
