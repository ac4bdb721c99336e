//go:build !linux || !cgo

package store

// setMallocArenas does nothing where the C library is not glibc's.
func setMallocArenas(int) bool { return false }

// setMallocTrimThreshold does nothing where the C library is not glibc's.
func setMallocTrimThreshold(int) bool { return false }

// trimMalloc does nothing where the C library is not glibc's.
func trimMalloc() {}
