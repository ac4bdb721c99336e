package compress

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var diffMarker = regexp.MustCompile(`^ … (\d+) unchanged lines$`)

// checkDiff checks that out keeps every line of in but context lines, in order, and that its
// markers count the context lines it dropped.
func checkDiff(tb testing.TB, in, out string) {
	tb.Helper()
	inLines := strings.Split(in, "\n")
	j, kept, dropped := 0, 0, 0
	for _, l := range strings.Split(out, "\n") {
		if m := diffMarker.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			dropped += n
			continue
		}
		kept++
		for j < len(inLines) && inLines[j] != l {
			if !strings.HasPrefix(inLines[j], " ") && inLines[j] != "" {
				tb.Fatalf("dropped %q, which is not context", inLines[j])
			}
			j++
		}
		if j == len(inLines) {
			tb.Fatalf("output line %q is not an input line in order", l)
		}
		j++
	}
	if kept+dropped != len(inLines) {
		tb.Errorf("kept %d + dropped %d lines != %d input lines", kept, dropped, len(inLines))
	}
}

func TestContent_Diff(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"GitDiff", sampleDiff, gitDiffWant},
		{"ApplyPatch", sampleApplyPatch, applyPatchWant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := Content(KindDiff, tc.in)
			if !ok {
				t.Fatal("not compressed")
			}
			if out != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, tc.want)
			}
			checkDiff(t, tc.in, out)
			t.Logf("%s: %d → %d bytes", tc.name, len(tc.in), len(out))
		})
	}
}

func TestContent_DiffRules(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ShortRunsKept", "@@ -1,7 +1,7 @@\n a\n-b\n+B\n c\n d\n e\n-f\n+F\n g\n",
			"@@ -1,7 +1,7 @@\n a\n-b\n+B\n c\n d\n e\n-f\n+F\n g\n"},
		{"LongRunBetweenChanges", "@@ -1,8 +1,8 @@\n-a\n+A\n b\n c\n d\n e\n f\n-g\n+G\n",
			"@@ -1,8 +1,8 @@\n-a\n+A\n b\n … 3 unchanged lines\n f\n-g\n+G\n"},
		{"EdgesOfHunk", "@@ -10,7 +10,7 @@ func f() {\n a\n b\n c\n-d\n+D\n e\n f\n g\n",
			"@@ -10,7 +10,7 @@ func f() {\n … 2 unchanged lines\n c\n-d\n+D\n e\n … 2 unchanged lines\n"},
		{"TrimmedEmptyContext", "@@ -1,6 +1,6 @@\n-a\n+A\n\n\n\n\n x\n",
			"@@ -1,6 +1,6 @@\n-a\n+A\n\n … 4 unchanged lines\n"},
		{"NoNewlineMarker", "@@ -1,4 +1,4 @@\n a\n b\n c\n-d\n\\ No newline at end of file\n+D\n\\ No newline at end of file\n",
			"@@ -1,4 +1,4 @@\n … 2 unchanged lines\n c\n-d\n\\ No newline at end of file\n+D\n\\ No newline at end of file\n"},
		{"RemovedLineLikeHeader", "@@ -1,5 +1,4 @@\n a\n b\n c\n--- a/x\n d\n",
			"@@ -1,5 +1,4 @@\n … 2 unchanged lines\n c\n--- a/x\n d\n"},
		{"CountsOffByOneKeepTheRest", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n d\n e\n",
			"@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n d\n e\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := parseDoc(tc.in)
			if got := d.with(compressDiff(d.lines)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A patch file read with Claude Code's Read tool keeps its line numbers on the lines it keeps.
func TestContent_DiffReadPrefixes(t *testing.T) {
	out, ok := Content(KindDiff, withReadPrefixes(sampleDiff, "\t"))
	if !ok {
		t.Fatal("not compressed")
	}
	for _, want := range []string{
		"\n     5\t@@ -41,20 +41,22 @@ func Open(ctx context.Context, path string) (*Store, error) {\n … 3 unchanged lines\n     9\t \t}\n    10\t-\tif",
		"\n    24\t+// Ping checks the connection.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

const gitDiffWant = `diff --git a/pkg/store/store.go b/pkg/store/store.go
index 3b18e51..a8f2c0d 100644
--- a/pkg/store/store.go
+++ b/pkg/store/store.go
@@ -41,20 +41,22 @@ func Open(ctx context.Context, path string) (*Store, error) {
 … 3 unchanged lines
 	}
-	if _, err := db.ExecContext(ctx, schema); err != nil {
+	if _, err := db.ExecContext(ctx, schemaV2); err != nil {
 		db.Close()
 … 10 unchanged lines
 
+// Ping checks the connection.
+func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
 // Session returns the session with the given id.
 … 2 unchanged lines
@@ -97,8 +98,8 @@ func (s *Store) Sessions(ctx context.Context, project string) ([]Session, error)
 … 2 unchanged lines
 		}
-		sess.StartedAt = time.Unix(0, started)
+		sess.StartedAt = time.Unix(0, started).UTC()
 		out = append(out, sess)
 … 3 unchanged lines
diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1,10 +1,10 @@
 # observer
 
-Observer watches coding agents.
+Observer watches coding agents and what they cost.
 
 … 3 unchanged lines
 Then start it with observer up.
-- not a list item, a removed line that reads like a header
+-- neither is this one
 The end.
`

const applyPatchWant = `*** Begin Patch
*** Update File: src/app.py
@@ def main():
 … 3 unchanged lines
     client = Client(config.url, timeout=config.timeout)
-    result = client.run(args.task)
+    result = client.run(args.task, retries=3)
     print(result.summary)
 … 4 unchanged lines
@@ def parse_args():
 … 2 unchanged lines
     parser.add_argument("--out", default="report.json")
+    parser.add_argument("--retries", type=int, default=3)
     parser.add_argument("task")
 … 3 unchanged lines
*** Add File: src/retry.py
+def retry(fn, times):
+    for _ in range(times):
+        try:
+            return fn()
+        except Exception:
+            pass
*** End Patch
`
