/* A C task in the benchmark's layout: the importer lists it as skipped. */
int add_counts(int a, int b) {
    // BEGIN SOLUTION
    if ((b > 0 && a > __INT_MAX__ - b) || (b < 0 && a < -__INT_MAX__ - 1 - b)) return -1;
    return a + b;
}
