package bus

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go/jetstream"
)

// DiskLow is the free space below which observer calls its home's disk full: the bus, the writer
// and the spool need room for a block, a transaction or a line, and fail with ENOSPC below it.
const DiskLow = 1 << 20

// DiskFree returns the space available to an unprivileged writer on the filesystem holding path
// (or its nearest existing parent).
func DiskFree(path string) (int64, error) {
	for {
		var fs syscall.Statfs_t
		err := syscall.Statfs(path, &fs)
		if err == nil {
			return int64(fs.Bavail) * int64(fs.Bsize), nil
		}
		parent := filepath.Dir(path)
		if !errors.Is(err, syscall.ENOENT) || parent == path {
			return 0, fmt.Errorf("statfs %s: %w", path, err)
		}
		path = parent
	}
}

// DiskFull describes a full disk under path ("disk full: 0 B free on /home/me/.observer"), or
// returns "" while it has DiskLow or more free (or cannot be measured).
func DiskFull(path string) string {
	free, err := DiskFree(path)
	if err != nil || free >= DiskLow {
		return ""
	}
	return fmt.Sprintf("disk full: %s free on %s", HumanBytes(free), path)
}

// IsNoSpace reports whether err says the disk is full: ENOSPC, SQLite's SQLITE_FULL ("database or
// disk is full"), or a JetStream that cannot reserve or store.
func IsNoSpace(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == 10047 {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"no space left on device", "database or disk is full", "disk quota exceeded", "insufficient storage resources"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// HumanBytes formats a size in binary units: "512 B", "19.5 MiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}
