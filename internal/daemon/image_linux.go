package daemon

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ReleaseImage takes out of the process's resident set the pages of its own executable that it
// maps read-only: its code and its read-only data. Go's start-up touches nearly all of them (every
// package's initialization runs, and the kernel maps up to 64 KiB around each page it faults in),
// so a component that has started holds its whole binary, 15 to 30 MB, of which it then runs a
// few. madvise(MADV_DONTNEED) unmaps them from this process only: they stay in the page cache
// (shared with every other process of the same binary), and one needed again is mapped back by a
// minor fault, without reading the disk. A mapping that holds a private copy of a page (an
// anonymous page: the read-only data the dynamic loader relocated, any page a debugger wrote) is
// left alone, so nothing the process changed is ever dropped; a page of the file that is dirty in
// the page cache (a binary just built) stays there and is no concern. It returns the bytes that were resident in the
// mappings it released.
func ReleaseImage() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	var released int64
	var errs []string
	for _, m := range imageMappings(data, exe) {
		// MADV_RANDOM first: the kernel then maps a page the process touches again alone, not
		// the 64 KiB (or the large folio) around it, so that what comes back is what runs.
		_, _, e := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_RANDOM)
		if e == 0 {
			_, _, e = syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED)
		}
		if e != 0 {
			errs = append(errs, fmt.Sprintf("%x-%x: %v", m.start, m.end, e))
			continue
		}
		released += m.rss
	}
	if len(errs) > 0 {
		return released, fmt.Errorf("madvise: %s", strings.Join(errs, "; "))
	}
	return released, nil
}

// mapping is one region of /proc/self/smaps that ReleaseImage may drop.
type mapping struct {
	start, end uintptr
	rss        int64
}

// imageMappings reads smaps and returns the mappings of the file exe that are not writable and
// hold no private copy of a page (Anonymous zero).
func imageMappings(smaps []byte, exe string) []mapping {
	var out []mapping
	var cur *mapping
	var dirty bool
	flush := func() {
		if cur != nil && !dirty {
			out = append(out, *cur)
		}
		cur, dirty = nil, false
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: range perms offset dev inode [path]
			flush()
			if len(f) < 6 || strings.Join(f[5:], " ") != exe || len(f[1]) < 4 || f[1][1] == 'w' || f[1][3] != 'p' {
				continue
			}
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || end <= start {
				continue
			}
			cur = &mapping{start: uintptr(start), end: uintptr(end)}
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "Rss:":
			cur.rss = n << 10
		case "Anonymous:":
			dirty = n != 0
		}
	}
	flush()
	return out
}
