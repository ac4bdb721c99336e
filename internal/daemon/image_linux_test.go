package daemon

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Only the executable's read-only mappings that hold no private copy of a page are released:
// never its writable data, never the relocated read-only data (an anonymous page), never another
// file's pages; pages dirty in the page cache (a binary just written) are the file's, released.
func TestImageMappings_OnlyCleanReadOnlyPagesOfTheBinary(t *testing.T) {
	const smaps = `00400000-00403000 r--p 00000000 fe:00 42 /opt/observer/bin/observerctl
Rss:                  12 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
00403000-01316000 r-xp 00003000 fe:00 42 /opt/observer/bin/observerctl
Rss:               13384 kB
Private_Dirty:      2456 kB
Anonymous:             0 kB
020bd000-020c0000 r--p 01cbd000 fe:00 42 /opt/observer/bin/observerctl
Rss:                  12 kB
Private_Dirty:         4 kB
Anonymous:             4 kB
020c0000-02142000 rw-p 01cc0000 fe:00 42 /opt/observer/bin/observerctl
Rss:                 516 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 7 /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                1028 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
Rss:                1024 kB
Private_Dirty:      1024 kB
Anonymous:          1024 kB
`
	got := imageMappings([]byte(smaps), "/opt/observer/bin/observerctl")
	want := []mapping{{0x400000, 0x403000, 12 << 10}, {0x403000, 0x1316000, 13384 << 10}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("mappings %+v, want %+v", got, want)
	}
	if got := imageMappings([]byte(smaps), "/opt/observer/bin/observer-watch"); len(got) != 0 {
		t.Errorf("another binary's mappings: %+v, want none", got)
	}
}

// The test binary's own code and read-only data leave its resident set, and it runs on: what it
// needs again is mapped back.
func TestReleaseImage(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	before := imageRSS(t, exe)
	released, err := ReleaseImage()
	if err != nil {
		t.Fatal(err)
	}
	after := imageRSS(t, exe)
	if released <= 0 || after >= before {
		t.Fatalf("released %d bytes; the binary's resident read-only pages went from %d to %d", released, before, after)
	}
	// Code that ran before runs again (a page fault maps it back), data is intact.
	if s := strings.Repeat("ab", 3); s != "ababab" || !regexp.MustCompile(`^a+b$`).MatchString("aab") {
		t.Fatal("the process does not run right after its image was released")
	}
	t.Logf("resident read-only pages of %s: %d KiB, then %d KiB (%d KiB released)", exe, before>>10, after>>10, released>>10)
}

// imageRSS sums the resident bytes of exe's read-only mappings in /proc/self/smaps.
func imageRSS(t *testing.T, exe string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	var sum int64
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && f[5] == exe && len(f[1]) == 4 && f[1][1] != 'w'
			continue
		}
		if in && f[0] == "Rss:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			sum += n << 10
		}
	}
	return sum
}
