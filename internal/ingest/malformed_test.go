package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scan names each file that gave malformed lines, with the lines of this scan and the file's
// total; a re-read after a crash (cursors file older than what was published) counts its lines
// again for the scan but not for the total.
func TestScan_MalformedFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	big := `{"id":"` + strings.Repeat("x", 3<<20) + `"}`
	write(t, a, `{"id":"a1"}`+"\n"+`not json`+"\n"+big+"\n"+`{"id":"a2"}`+"\n", false)
	write(t, b, `{"id":"b1"}`+"\n", false)
	pub := &collect{}
	maxLine := func(s *Scanner) { s.MaxLine = 2 << 20 }

	sum := scan(t, dir, pub, maxLine)
	if got := sum.MalformedFiles; len(got) != 1 || got[a] != (MalformedFile{Lines: 2, Total: 2}) || sum.Malformed != 2 {
		t.Fatalf("first scan: malformed files %+v, malformed %d", got, sum.Malformed)
	}
	// Nothing new: nothing reported.
	if sum := scan(t, dir, pub, maxLine); sum.MalformedFiles != nil {
		t.Fatalf("re-scan reported %+v", sum.MalformedFiles)
	}

	// The file grows by one bad line; the scan is "killed" before its cursors reach the disk.
	cursors := filepath.Join(dir, "state", "cursors.json")
	saved, err := os.ReadFile(cursors)
	if err != nil {
		t.Fatal(err)
	}
	write(t, a, "{\"id\":\"\xff\"\n"+`{"id":"a3"}`+"\n", true)
	if sum := scan(t, dir, pub, maxLine); sum.MalformedFiles[a] != (MalformedFile{Lines: 1, Total: 3}) {
		t.Fatalf("after growth: %+v", sum.MalformedFiles)
	}
	if err := os.WriteFile(cursors, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	if sum := scan(t, dir, pub, maxLine); sum.MalformedFiles[a] != (MalformedFile{Lines: 1, Total: 3}) {
		t.Fatalf("re-read after the crash: %+v", sum.MalformedFiles)
	}
	if got := strings.Join(pub.ids, ","); got != "a1,a2,b1,a3,a3" {
		t.Fatalf("published %s", got)
	}
}
