/* A plugin for plugins.c. */
volatile long plugin_a_sum;

void plugin_work(int n) {
    for (int i = 0; i < n; i++)
        plugin_a_sum += i;
}
