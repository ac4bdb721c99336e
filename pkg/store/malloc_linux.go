//go:build linux && cgo

package store

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static int observer_arena_max(int n) { return mallopt(M_ARENA_MAX, n); }
#else
static int observer_arena_max(int n) { return 0; }
#endif
*/
import "C"

// setMallocArenas caps glibc's malloc arenas (mallopt M_ARENA_MAX); it reports whether it did
// (false under another C library).
func setMallocArenas(n int) bool { return C.observer_arena_max(C.int(n)) == 1 }
