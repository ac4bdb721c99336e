//go:build linux && cgo

package store

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static int observer_arena_max(int n) { return mallopt(M_ARENA_MAX, n); }
static void observer_trim(void) { malloc_trim(0); }
static int observer_trim_threshold(int n) { return mallopt(M_TRIM_THRESHOLD, n); }
#else
static int observer_trim_threshold(int n) { return 0; }
static int observer_arena_max(int n) { return 0; }
static void observer_trim(void) {}
#endif
*/
import "C"

// setMallocArenas caps glibc's malloc arenas (mallopt M_ARENA_MAX); it reports whether it did
// (false under another C library).
func setMallocArenas(n int) bool { return C.observer_arena_max(C.int(n)) == 1 }

// setMallocTrimThreshold sets how much free memory at the top of a malloc arena glibc keeps before
// it gives it back (mallopt M_TRIM_THRESHOLD); it reports whether it did.
func setMallocTrimThreshold(n int) bool { return C.observer_trim_threshold(C.int(n)) == 1 }

// trimMalloc gives the system back the memory C's malloc holds freed (glibc's malloc_trim): what
// SQLite's caches and statements freed after bulk work.
func trimMalloc() { C.observer_trim() }
