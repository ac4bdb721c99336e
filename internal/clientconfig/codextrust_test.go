package clientconfig

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/realclient"
)

const observerCodexHook = "/usr/local/bin/observerctl hook --client codex"

// codexHooksDoc is a hooks.json with observer's entry on every event it registers for Codex,
// and a user's hook (matcher, timeout, status message, characters JSON encoders like to escape)
// before observer's in a group of its own.
func codexHooksDoc(tb testing.TB) *Doc {
	tb.Helper()
	events := map[string]any{}
	for _, ev := range HookEvents[Codex] {
		events[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": observerCodexHook}}}}
	}
	events["PreToolUse"] = append([]any{map[string]any{"matcher": "Bash", "hooks": []any{
		map[string]any{"type": "command", "command": "echo 'a<b>&c' é", "timeout": 5, "statusMessage": "hi"},
		map[string]any{"type": "command", "command": observerCodexHook},
	}}}, events["PreToolUse"].([]any)...)
	data, err := json.Marshal(map[string]any{"hooks": events})
	if err != nil {
		tb.Fatal(err)
	}
	d, err := ParseDoc(JSON, data)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// TestCodexHooks_Hashes: the keys and hashes are the ones Codex 0.171.0 gave for the same files in
// `codex app-server` hooks/list (currentHash), and config.toml's trust is read as Codex reads it.
func TestCodexHooks_Hashes(t *testing.T) {
	const file = "/home/me/.codex/hooks.json"
	all := func(string) bool { return true }
	want := map[string]string{
		"pre_tool_use:0:0":       "sha256:be82b3caf1d45cdc8cf5bcb6a00ff4da504060349fd4456158b4b10b155baafa",
		"pre_tool_use:0:1":       "sha256:ee8fc84b2422f24ee22f8a10072d8cc1a20ed45c499d373478d2e20133e07d31",
		"pre_tool_use:1:0":       "sha256:8015955092afd373262526a3cb9152bc05f3d88a802411a2d4c5c7e6c2de707c",
		"post_tool_use:0:0":      "sha256:04fb0b319e50a1672dc7aacb3b96f6e55f236d2e05dbc4bc09bb1698aa559ad4",
		"pre_compact:0:0":        "sha256:30459e2478116ca525c1b14002c9c5631581097bf6f7cf4eefa4e6e581dc38e4",
		"post_compact:0:0":       "sha256:d23426bc92dd1072bb5bfdc98ba6a80112a9a70abb1d5c731b245f103c5f63d6",
		"session_start:0:0":      "sha256:69ea4a96bae9f2037fed6c909ca499f563a3e57aaff38c1faa720678664ca396",
		"session_end:0:0":        "sha256:ec9e6a2685df8009e460b2ae2ad27ac8d24e3145b1edd7002426e4295007175f",
		"user_prompt_submit:0:0": "sha256:de9d1b4e406f72d41447eb3c2fae2ac2b9a22ddcf1588322de5cf802dadd1657",
		"subagent_start:0:0":     "sha256:4ffaebbf4acb08f2a059afe8a530d39cecd417f2ee363c6781970a99029c1e89",
		"subagent_stop:0:0":      "sha256:4148404032b8f02dfe2e318ebeaa7cd23eb8fbe0288333602732112edca1668c",
		"stop:0:0":               "sha256:8ca91317ee1c64179b133013a504d624621eb22bbd8cdd7fbdb85109c60408cd",
	}
	hooks := CodexHooks(file, codexHooksDoc(t), nil, all)
	if len(hooks) != len(want) {
		t.Fatalf("%d hooks, want %d: %+v", len(hooks), len(want), hooks)
	}
	for _, h := range hooks {
		rest, _ := strings.CutPrefix(h.Key, file+":")
		if h.Hash != want[rest] {
			t.Errorf("%s: hash %s, want %s", h.Key, h.Hash, want[rest])
		}
		if h.Trust != CodexUntrusted || !h.Enabled {
			t.Errorf("%s with no config.toml: %s, enabled %v; want untrusted, enabled", h.Key, h.Trust, h.Enabled)
		}
	}

	// SessionEnd's timeout: 1 s when unset, at most 3; async as written (Codex runs it synchronously).
	d, err := ParseDoc(JSON, []byte(`{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"a","timeout":30}]},`+
		`{"hooks":[{"type":"command","command":"b","timeout":0}]},{"hooks":[{"type":"command","command":"c","async":true}]}],`+
		`"Stop":[{"matcher":"ignored","hooks":[{"type":"command","command":"d","timeout":0}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]string{
		"session_end:0:0": "sha256:42a5307396a3311376788cd874aae704206cb585b4da5dbcc11a59a23e824111",
		"session_end:1:0": "sha256:60c18d5d3666ebfcf71a492a0608800064315d5c8ea3b917b7ef513605e712fe",
		"session_end:2:0": "sha256:50266e42a04b93f4ccebcaa91708b1526cecb94d0e085dcc319b4d092a3f06ac",
		"stop:0:0":        "sha256:ed612ea0308a27dbd79777a1127964c050709533f0952aeccea2691b9fd42ea6",
	}
	for _, h := range CodexHooks(file, d, nil, all) {
		rest, _ := strings.CutPrefix(h.Key, file+":")
		if h.Hash != want[rest] {
			t.Errorf("%s: hash %s, want %s", h.Key, h.Hash, want[rest])
		}
	}

	// Trusted, trusted before a change, turned off; only observer's own hooks when ours says so.
	config := fmt.Sprintf(`model = "gpt-5"

[hooks.state]
[hooks.state.%q]
trusted_hash = "sha256:69ea4a96bae9f2037fed6c909ca499f563a3e57aaff38c1faa720678664ca396"

[hooks.state.%q]
trusted_hash = "sha256:0000"

[hooks.state.%q]
trusted_hash = "sha256:8ca91317ee1c64179b133013a504d624621eb22bbd8cdd7fbdb85109c60408cd"
enabled = false
`, file+":session_start:0:0", file+":pre_compact:0:0", file+":stop:0:0")
	ours := func(c string) bool { return c == observerCodexHook }
	got := map[string]string{}
	for _, h := range CodexHooks(file, codexHooksDoc(t), []byte(config), ours) {
		got[h.Event] = fmt.Sprintf("%s enabled=%v", h.Trust, h.Enabled)
		if h.Command != observerCodexHook {
			t.Errorf("%s: not observer's hook: %q", h.Key, h.Command)
		}
	}
	if len(got) != len(HookEvents[Codex]) {
		t.Errorf("observer's hooks: %v, want one per event of %v", got, HookEvents[Codex])
	}
	for ev, w := range map[string]string{"SessionStart": "trusted enabled=true", "PreCompact": "modified enabled=true",
		"Stop": "trusted enabled=false", "SessionEnd": "untrusted enabled=true"} {
		if got[ev] != w {
			t.Errorf("%s: %s, want %s", ev, got[ev], w)
		}
	}
}

// TestCodexHooks_RealCodex asks the real Codex (`codex app-server`, hooks/list, offline) for the
// keys, hashes and trust of the fixture's hooks, with some of them trusted, and compares.
func TestCodexHooks_RealCodex(t *testing.T) {
	codex := realclient.FindCodex(t)
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	hooksFile := filepath.Join(codexHome, "hooks.json")
	doc := codexHooksDoc(t)
	if err := os.WriteFile(hooksFile, doc.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	all := func(string) bool { return true }
	mine := CodexHooks(hooksFile, doc, nil, all)
	// Trust two as Codex would (one with the right hash, one with a stale one).
	config := fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = %q\n\n[hooks.state.%q]\ntrusted_hash = \"sha256:00\"\n",
		mine[0].Key, mine[0].Hash, mine[1].Key)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	mine = CodexHooks(hooksFile, doc, []byte(config), all)

	ctx, cancel := context.WithTimeout(context.Background(), realclient.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "app-server", "-c", "analytics.enabled=false")
	cmd.Dir = home
	cmd.Env = append(realclient.CodexEnv(home), "CODEX_HOME="+codexHome, "PATH="+os.Getenv("PATH"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	fmt.Fprint(stdin, `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"observer-test","version":"0"}}}`+"\n"+
		`{"method":"initialized"}`+"\n"+`{"id":2,"method":"hooks/list","params":{}}`+"\n")
	type entry struct{ Key, CurrentHash, TrustStatus string }
	var listed []entry
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for listed == nil && sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct{ Hooks []entry }
			}
			Error json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		if msg.Error != nil || len(msg.Result.Data) != 1 {
			t.Fatalf("hooks/list: %s", sc.Text())
		}
		listed = append([]entry{}, msg.Result.Data[0].Hooks...)
	}
	if listed == nil {
		t.Fatalf("no answer to hooks/list (%v)\n%s", sc.Err(), stderr.String())
	}
	byKey := map[string]entry{}
	for _, e := range listed {
		byKey[e.Key] = e
	}
	if len(listed) != len(mine) {
		t.Errorf("codex lists %d hooks, CodexHooks %d", len(listed), len(mine))
	}
	for _, h := range mine {
		e, ok := byKey[h.Key]
		if !ok {
			t.Errorf("codex lists no hook %s (it lists %v)", h.Key, listed)
			continue
		}
		if e.CurrentHash != h.Hash || e.TrustStatus != h.Trust {
			t.Errorf("%s: codex says %s %s, CodexHooks %s %s", h.Key, e.CurrentHash, e.TrustStatus, h.Hash, h.Trust)
		}
	}
}
