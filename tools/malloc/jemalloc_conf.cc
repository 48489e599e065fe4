// jemalloc's options for the executables linked with it (MENTAT_JEMALLOC in
// the top CMakeLists.txt); jemalloc reads this symbol at start-up, and a
// MALLOC_CONF variable still overrides it.
//
// Freed pages go back to the system after 30 s instead of 10: a query that
// builds a large result frees it all at once, and with the shorter decay
// the next such query page-faulted its memory back in (q4 at m: p95 182 ms
// against 64 ms with these).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf = "dirty_decay_ms:30000,muzzy_decay_ms:30000";
}
