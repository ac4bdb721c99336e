package compress

import (
	"fmt"
	"strings"
	"testing"
)

// lsOutput is "ls -la" of a directory: no timestamps at line starts, no code.
func lsOutput(n int) string {
	var b strings.Builder
	b.WriteString("total 1288\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "-rw-r--r--  1 dev  staff  %5d Mar 14 10:%02d file%d.txt\n", 100*i, i%60, i)
	}
	return b.String()
}

func TestDetect(t *testing.T) {
	prose := strings.Repeat("Observer watches the coding agents on a machine and what they cost.\nIt keeps a record of every session.\n\n", 10)
	gitShow := "commit 3b18e51c0ffee\nAuthor: Dev <dev@example.com>\nDate:   Fri Mar 14 10:22:01 2025 +0100\n\n    store: ping\n\n" + sampleDiff
	for _, tc := range []struct {
		name, tool, path, content string
		want                      Kind
	}{
		// 1. The path's extension.
		{"PathJSON", "Read", "/repo/testdata/issues.json", sampleJSON(), KindJSON},
		{"PathGeoJSON", "read_file", "map.geojson", `{"type":"FeatureCollection","features":[]}`, KindJSON},
		{"PathJSONButCutShort", "Read", "big.json", "{\n  \"items\": [\n    {\"id\": 1},\n", KindText},
		{"PathJSONL", "Read", "events.jsonl", "{\"a\":1}\n{\"a\":2}\n", KindLogs},
		{"PathLog", "Read", "/var/log/app/server.log", prose, KindLogs},
		{"PathGo", "Read", "pkg/store/store.go", prose, KindCode},
		{"PathUpperCase", "Read", "src/App.TSX", prose, KindCode},
		{"PathWindows", "Read", `C:\repo\src\lib.rs`, prose, KindCode},
		{"PathShellScript", "Read", "scripts/build.sh", prose, KindCode},
		{"PathHTML", "Read", "site/index.html", prose, KindHTML},
		{"PathHTM", "Read", "old/INDEX.HTM", prose, KindHTML},
		{"PathXMLIsSniffed", "Read", "feed.xml", `<?xml version="1.0"?><rss><channel><title>x</title></channel></rss>`, KindText},
		{"PathPatch", "Read", "fix.patch", prose, KindDiff},
		{"PathDiff", "Read", "a.diff", prose, KindDiff},
		{"PathMarkdownOverCode", "Read", "README.md", sampleGo, KindText},
		{"PathText", "Read", "notes.txt", sampleGoTestLog(), KindText},
		{"PathRST", "Read", "docs/index.rst", prose, KindText},
		{"PathUnknownIsSniffed", "Read", "Makefile", sampleGoTestLog(), KindLogs},
		{"PathOfSearchIgnored", "Grep", "pkg/store/store.go", "pkg/store/store.go:12:the store is locked\npkg/store/store.go:40:the store is open\n", KindText},

		// 2a. JSON.
		{"JSONObject", "", "", "  {\"a\": [1, 2]}\n", KindJSON},
		{"JSONArray", "WebFetch", "", "[{\"id\":1}]", KindJSON},
		{"JSONScalarIsNot", "", "", "\"just a string\"", KindText},
		{"JSONRead", "Read", "", withReadPrefixes(sampleJSON(), "→") + "\n\n<system-reminder>\nx\n</system-reminder>\n", KindJSON},
		{"JSONUnderShellHeader", "exec_command", "", "Exit code: 0\nWall time: 0.3 seconds\nOutput:\n" + sampleJSON(), KindJSON},
		// 2b. Diffs.
		{"GitDiff", "Bash", "", sampleDiff, KindDiff},
		{"GitShow", "shell", "", gitShow, KindDiff},
		{"DiffU", "", "", "--- a.txt\t2025-03-14\n+++ b.txt\t2025-03-14\n@@ -1 +1 @@\n-a\n+b\n", KindDiff},
		{"ApplyPatch", "apply_patch", "", sampleApplyPatch, KindDiff},
		{"DashesAloneAreNot", "", "", "--- \nsection\n---\n" + prose, KindText},
		// 2c. HTML.
		{"HTMLDoctype", "WebFetch", "", sampleHTML(), KindHTML},
		{"HTMLTagLate", "", "", strings.Repeat(" ", 300) + "<HTML lang=\"en\"><body>x</body></HTML>", KindHTML},
		{"HTMLTagTooLate", "", "", strings.Repeat("x", 600) + "<html><body>x</body></html>", KindText},
		// 2d. Log lines.
		{"GoTestLog", "", "", sampleGoTestLog(), KindLogs},
		{"NpmLog", "", "", sampleNpmLog(), KindLogs},
		{"PytestLog", "", "", samplePytestLog(), KindLogs},
		{"Timestamps", "", "", "2025-03-14T10:22:01Z started\n2025-03-14T10:22:02Z listening on :8080\nrequest served\n", KindLogs},
		{"Levels", "", "", "INFO starting\n[WARN] disk 91% full\nERROR: cannot bind :8080\nshutting down\n", KindLogs},
		{"ClockTimes", "", "", "10:22:01 build started\n10:22:07 build finished\nartifacts in dist/\n", KindLogs},
		// 2e. Code.
		{"GoByContent", "", "", sampleGo, KindCode},
		{"PythonByContent", "", "", samplePython, KindCode},
		{"TSByContent", "", "", sampleTS, KindCode},
		{"CodeRead", "Read", "", withReadPrefixes(sampleGo, "\t"), KindCode},
		{"CodeCatInShell", "Bash", "", sampleGo, KindCode},
		// 2f. Shell output.
		{"ShellLong", "Bash", "", lsOutput(25), KindLogs},
		{"ShellLongCodex", "exec_command", "", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\n" + lsOutput(20), KindLogs},
		{"ShellShort", "Bash", "", lsOutput(10), KindText},
		{"NotShellLong", "Read", "", lsOutput(25), KindText},
		// 2g. Text.
		{"Prose", "WebFetch", "", prose, KindText},
		{"Empty", "", "", "", KindText},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Detect(tc.tool, tc.path, tc.content); got != tc.want {
				t.Errorf("Detect(%q, %q, %.60q) = %s, want %s", tc.tool, tc.path, tc.content, got, tc.want)
			}
		})
	}
}

func TestDetect_Extensions(t *testing.T) {
	for _, ext := range strings.Fields(".go .py .js .ts .tsx .jsx .java .c .h .cc .cpp .rs .rb .cs .kt .swift .php .scala .sh") {
		if got := Detect("Read", "src/file"+ext, "hello"); got != KindCode {
			t.Errorf("%s: %s, want code", ext, got)
		}
	}
	for _, path := range []string{"", "Makefile", ".bashrc", "dir.go/"} {
		if k, ok := kindByExt[extOf(path)]; ok {
			t.Errorf("extOf(%q) maps to %s", path, k)
		}
	}
}
