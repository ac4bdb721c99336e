package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// demoTests are a module's tests: some pass, two skip for one reason (with different files), one
// skips for another, one fails.
const demoTests = `package demo

import "testing"

func TestPass(t *testing.T) {}

func TestCorpusA(t *testing.T) { t.Skip("SKIPPED: corpus file a.jsonl absent (stat ../../shared/corpus/codex/a.jsonl: no such file or directory)") }

func TestCorpusB(t *testing.T) { t.Skip("SKIPPED: corpus file b.jsonl absent (stat ../../shared/corpus/codex/b.jsonl: no such file or directory)") }

func TestSub(t *testing.T) {
	t.Run("browser", func(t *testing.T) { t.Skipf("no Chromium on PATH") })
	t.Run("ok", func(t *testing.T) {})
}

func TestFail(t *testing.T) {
	if failing {
		t.Log("the detail of the failure")
		t.Fatal("boom")
	}
}
`

// runSummary runs scripts/testsummary.go on a module holding demoTests, with failing set.
func runSummary(t *testing.T, failing bool) (int, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":       "module demo\n\ngo 1.22\n",
		"demo_test.go": demoTests,
		"flag_test.go": "package demo\n\nconst failing = " + map[bool]string{true: "true", false: "false"}[failing] + "\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("testsummary.go")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", script, "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GO=go")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// TestSummary_SkipsByReason: the output is go test's without -json (a line per package, a failing
// test's output), then the skipped tests grouped by reason with their count, then the totals; the
// exit code is go test's.
func TestSummary_SkipsByReason(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	code, out := runSummary(t, true)
	if code != 1 {
		t.Errorf("exit %d with a failing test, want go test's 1:\n%s", code, out)
	}
	for _, want := range []string{
		"--- FAIL: TestFail", "the detail of the failure", "boom", "FAIL\tdemo",
		"3 test(s) skipped, by reason",
		"corpus file … absent (stat ../shared/corpus/…: no such file or directory) (2): TestCorpusA (demo), TestCorpusB (demo)",
		"no Chromium on PATH (1): TestSub/browser (demo)",
		"../shared/corpus beside the checkout, or from $OBSERVER_CORPUS",
		"tests: 3 passed, 1 failed, 3 skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, noise := range []string{`"Action"`, "=== RUN   TestPass", "--- PASS", "--- SKIP: TestCorpusA"} {
		if strings.Contains(out, noise) {
			t.Errorf("output holds %q, which go test without -v does not print:\n%s", noise, out)
		}
	}

	code, out = runSummary(t, false)
	if code != 0 || !strings.Contains(out, "ok  \tdemo") || !strings.Contains(out, "tests: 4 passed, 0 failed, 3 skipped") {
		t.Errorf("all passing: exit %d\n%s", code, out)
	}
}
