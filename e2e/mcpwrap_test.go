package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/realclient"
)

// Versions the wrap test uses; .ci/run installs these.
const (
	inspectorPackage  = "@modelcontextprotocol/inspector@0.15.0"
	filesystemPackage = "@modelcontextprotocol/server-filesystem"
)

// inspector runs the MCP Inspector CLI against the server command line and returns what it prints.
func inspector(tb testing.TB, bin, dir string, env, server []string, args ...string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"--cli"}, server...), args...)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("mcp-inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, &out, &errb)
	}
	return out.String()
}

// TestMCPWrap_Inspector: the real MCP Inspector CLI lists and calls the tools of the reference
// filesystem server directly and through `observer-mcp wrap`; the answers are the same (the wrapped
// list has the trace tools besides), and each wrapped call is a row of mcp_calls.
func TestMCPWrap_Inspector(t *testing.T) {
	insp := realclient.Find(t, "OBSERVER_MCP_INSPECTOR_BIN", "mcp-inspector", "npm install -g "+inspectorPackage)
	fsBin := realclient.Find(t, "OBSERVER_MCP_FILESYSTEM_BIN", "mcp-server-filesystem", "npm install -g "+filesystemPackage)
	js, err := filepath.EvalSymlinks(fsBin) // the package's dist/index.js, run with node as the issue has it
	if err != nil {
		t.Fatal(err)
	}
	node := realclient.Find(t, "OBSERVER_NODE_BIN", "node", "install Node.js 20")

	s := newSuite(t)
	s.start()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nbeta\n"), 0o600)
	os.MkdirAll(filepath.Join(root, "sub"), 0o700)
	os.WriteFile(filepath.Join(root, "sub", "b.md"), []byte("# b\n"), 0o600)
	env := append(append([]string{}, s.env...), "CLAUDE_CODE_SESSION_ID=e2e-wrap-session")
	direct := []string{node, js, root}
	wrapped := append([]string{s.bin("observer-mcp"), "wrap", "--"}, direct...)

	// tools/list: the same tools, plus the four trace tools.
	t0 := time.Now()
	var dl, wl struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal([]byte(inspector(t, insp, root, env, direct, "--method", "tools/list")), &dl); err != nil {
		t.Fatal(err)
	}
	tDirect := time.Since(t0)
	t0 = time.Now()
	if err := json.Unmarshal([]byte(inspector(t, insp, root, env, wrapped, "--method", "tools/list")), &wl); err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: %d tools directly (%v), %d through wrap (%v)", len(dl.Tools), tDirect.Round(time.Millisecond),
		len(wl.Tools), time.Since(t0).Round(time.Millisecond))
	var serverTools []map[string]any
	var trace []string
	for _, tool := range wl.Tools {
		if name, _ := tool["name"].(string); strings.HasPrefix(name, "observer_trace_") {
			trace = append(trace, name)
		} else {
			serverTools = append(serverTools, tool)
		}
	}
	if len(dl.Tools) < 5 || !reflect.DeepEqual(serverTools, dl.Tools) {
		t.Errorf("tools through wrap differ from the server's own list (%d vs %d tools)", len(serverTools), len(dl.Tools))
	}
	if len(trace) != 4 {
		t.Errorf("trace tools listed: %v, want 4", trace)
	}

	// tools/call: byte-identical inspector output, a success and a tool error among them.
	calls := [][]string{
		{"read_text_file", "path=" + filepath.Join(root, "a.txt")},
		{"list_directory", "path=" + root},
		{"search_files", "path=" + root, "pattern=*.md"},
		{"directory_tree", "path=" + root},
		{"read_text_file", "path=/etc/hostname"}, // outside the allowed directory: a tool error
	}
	for _, c := range calls {
		args := []string{"--method", "tools/call", "--tool-name", c[0]}
		for _, a := range c[1:] {
			args = append(args, "--tool-arg", a)
		}
		d := inspector(t, insp, root, env, direct, args...)
		w := inspector(t, insp, root, env, wrapped, args...)
		if d != w || !strings.Contains(d, `"content"`) {
			t.Errorf("%v: through wrap\n%s\ndirectly\n%s", c, w, d)
		}
	}
	// A trace tool answers through the real client, from the wrap process's own (empty) session.
	if out := inspector(t, insp, root, env, wrapped, "--method", "tools/call", "--tool-name", "observer_trace_stats"); !strings.Contains(out, `\"server\":\"secure-filesystem-server\"`) {
		t.Errorf("observer_trace_stats printed %s", out)
	}

	// Every wrapped call is in the store, trace tools excepted.
	s.waitCount(30*time.Second, len(calls), "SELECT count(*) FROM mcp_calls")
	rows, err := s.db().Query(`SELECT tool, server, client, session_id, project, input_bytes, output_bytes, input_hash,
		output_hash, error, token_estimate FROM mcp_calls ORDER BY ts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var tool, server, client, session, project, inHash, outHash, errText string
		var in, out, tokens int64
		if err := rows.Scan(&tool, &server, &client, &session, &project, &in, &out, &inHash, &outHash, &errText, &tokens); err != nil {
			t.Fatal(err)
		}
		c := calls[i]
		if tool != c[0] || server != "secure-filesystem-server" || client == "" || session != "e2e-wrap-session" || project != root {
			t.Errorf("row %d: tool %s server %s client %s session %s project %s", i, tool, server, client, session, project)
		}
		if in == 0 || out == 0 || inHash == "" || outHash == "" || tokens != (out+3)/4 {
			t.Errorf("row %d (%s): in %d out %d hashes %q %q tokens %d", i, tool, in, out, inHash, outHash, tokens)
		}
		if wantErr := i == len(calls)-1; (errText != "") != wantErr {
			t.Errorf("row %d (%s): error %q", i, tool, errText)
		}
		i++
	}
	if i != len(calls) {
		t.Errorf("%d rows, want %d", i, len(calls))
	}
}
