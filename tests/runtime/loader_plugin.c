/* The object loader_stress loads and unloads: a constructor and a
 * destructor that compute (so that samples land inside dlopen and dlclose
 * while the loader holds its lock) and a function to call. */
static volatile double plugin_sink;

static void spin(int rounds)
{
    for (int i = 0; i < rounds; ++i)
        plugin_sink += i * 0.5;
}

__attribute__((constructor)) static void plugin_loaded(void)
{
    spin(20000);
}

__attribute__((destructor)) static void plugin_unloaded(void)
{
    spin(20000);
}

int plugin_work(int rounds)
{
    spin(rounds);
    return rounds;
}
