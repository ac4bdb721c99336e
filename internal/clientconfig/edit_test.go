package clientconfig

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestJSONDoc_Set(t *testing.T) {
	for _, c := range []struct {
		name, in string
		path     []string
		v        any
		want     string
	}{
		{"empty file", "", []string{"mcpServers", "o"}, Object{{"command", "x"}},
			"{\n  \"mcpServers\": {\n    \"o\": {\n      \"command\": \"x\"\n    }\n  }\n}\n"},
		{"compact", `{"a":1,"mcpServers":{"b":{}}}`, []string{"mcpServers", "o"}, Object{{"args", []string{"1", "2"}}},
			`{"a":1,"mcpServers":{"b":{},"o":{"args":["1","2"]}}}`},
		{"one line with spaces", `{"a": 1, "b": 2}`, []string{"c"}, []string{"x", "y"},
			`{"a": 1, "b": 2, "c": ["x", "y"]}`},
		{"tabs", "{\n\t\"a\": {\n\t\t\"k\": 1\n\t}\n}", []string{"a", "n"}, Object{{"x", true}},
			"{\n\t\"a\": {\n\t\t\"k\": 1,\n\t\t\"n\": {\n\t\t\t\"x\": true\n\t\t}\n\t}\n}"},
		{"empty nested object", "{\n  \"mcpServers\": {},\n  \"z\": 1\n}", []string{"mcpServers", "o"}, "v",
			"{\n  \"mcpServers\": {\n    \"o\": \"v\"\n  },\n  \"z\": 1\n}"},
		{"replace inline array keeps one line", "{\n  \"a\": {\"args\": [\"1\"], \"k\": 2}\n}", []string{"a", "args"}, []string{"x", "<y>"},
			"{\n  \"a\": {\"args\": [\"x\", \"<y>\"], \"k\": 2}\n}"},
		{"replace multi-line array", "{\n  \"args\": [\n    \"1\"\n  ]\n}", []string{"args"}, []string{"x", "y"},
			"{\n  \"args\": [\n    \"x\",\n    \"y\"\n  ]\n}"},
		{"duplicate key: last wins", `{"a": 1, "a": 2}`, []string{"a"}, "x", `{"a": 1, "a": "x"}`},
		{"escaped key", `{"a\u0062": 1}`, []string{"ab"}, "x", `{"a\u0062": "x"}`},
		{"CRLF", "{\r\n  \"a\": 1\r\n}\r\n", []string{"m", "o"}, []string{"x"},
			"{\r\n  \"a\": 1,\r\n  \"m\": {\r\n    \"o\": [\r\n      \"x\"\r\n    ]\r\n  }\r\n}\r\n"},
		{"raw value", `{"a": 1}`, []string{"b"}, json.RawMessage(`{"k":[1,2.50]}`), `{"a": 1, "b": {"k":[1,2.50]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDoc(JSON, []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Set(c.path, c.v); err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestJSONDoc_DeleteUndoesSet(t *testing.T) {
	docs := []string{
		claudeFixture, strings.ReplaceAll(claudeFixture, "\n", "\r\n"), cursorFixture, `{}`, `{"a":1}`, `{"mcpServers":{}}`, "{\n  \"a\": [1, 2],\n  \"mcpServers\": {\n    \"x\": {}\n  }\n}\n",
		`{"mcpServers": {"x": 1}, "b": {"c": {"d": []}}}`,
	}
	paths := [][]string{{"mcpServers", "observer"}, {"new", "deep", "key"}, {"b", "c", "e"}}
	for _, doc := range docs {
		for _, p := range paths {
			d, err := ParseDoc(JSON, []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := d.Lookup(p[:len(p)-1]...); !ok && p[0] == "b" {
				continue
			}
			created, err := d.Set(p, Object{{"command", "c"}, {"args", []string{"a"}}})
			if err != nil {
				t.Fatalf("%q set %v: %v", doc, p, err)
			}
			if err := d.Delete(p); err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= created; n++ {
				d.Delete(p[:len(p)-n])
			}
			want := doc
			if doc == `{}` {
				// The empty document is written as the clients write a new one.
				continue
			}
			if got := string(d.Bytes()); got != want {
				t.Errorf("set then delete %v:\n%s\nbecame\n%s", p, want, got)
			}
		}
	}
}

func TestJSONDoc_DeletePositions(t *testing.T) {
	for _, c := range []struct {
		in, key, want string
	}{
		{`{"a": 1, "b": 2, "c": 3}`, "a", `{"b": 2, "c": 3}`},
		{`{"a": 1, "b": 2, "c": 3}`, "b", `{"a": 1, "c": 3}`},
		{`{"a": 1, "b": 2, "c": 3}`, "c", `{"a": 1, "b": 2}`},
		{"{\n  \"a\": 1\n}", "a", "{}"},
		{`{"a": 1}`, "zz", `{"a": 1}`},
	} {
		d, _ := ParseDoc(JSON, []byte(c.in))
		if err := d.Delete([]string{c.key}); err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != c.want {
			t.Errorf("delete %s from %s: %s, want %s", c.key, c.in, got, c.want)
		}
	}
}

func TestTOMLDoc_SetKey(t *testing.T) {
	for _, c := range []struct {
		name, in string
		path     []string
		v        any
		want     string
	}{
		{"quoted header", "[mcp_servers.\"my server\"]\ncommand = 'x' # c\n", []string{"mcp_servers", "my server", "command"}, "y",
			"[mcp_servers.\"my server\"]\ncommand = \"y\" # c\n"},
		{"literal-quoted header", "[mcp_servers.'a.b']\ncommand = \"x\"\n", []string{"mcp_servers", "a.b", "command"}, "y",
			"[mcp_servers.'a.b']\ncommand = \"y\"\n"},
		{"add missing key after last statement", "[s.a]\ncommand = \"x\"\n\n# next\n[s.b]\n", []string{"s", "a", "args"}, []string{"1"},
			"[s.a]\ncommand = \"x\"\nargs = [\"1\"]\n\n# next\n[s.b]\n"},
		{"add key to last table without newline", "[s.a]\ncommand = \"x\"", []string{"s", "a", "args"}, []string{},
			"[s.a]\ncommand = \"x\"\nargs = []\n"},
		{"multi-line string value", "[s.a]\ncommand = \"\"\"\nx\n\"\"\"\nk = 1\n", []string{"s", "a", "command"}, "a\"b\\c\n",
			"[s.a]\ncommand = \"a\\\"b\\\\c\\n\"\nk = 1\n"},
		{"CRLF", "[s.a]\r\ncommand = \"x\"\r\nk = 1\r\n", []string{"s", "a", "command"}, "y",
			"[s.a]\r\ncommand = \"y\"\r\nk = 1\r\n"},
		{"CRLF new key", "[s.a]\r\ncommand = \"x\"\r\n", []string{"s", "a", "args"}, []string{},
			"[s.a]\r\ncommand = \"x\"\r\nargs = []\r\n"},
		{"CRLF new table", "a = 1\r\n", []string{"s", "o"}, Object{{"command", "x"}},
			"a = 1\r\n\r\n[s.o]\r\ncommand = \"x\"\r\n"},
		{"new table", "a = 1 # c", []string{"mcp_servers", "o"}, Object{{"command", "x"}, {"env", Object{{"K-1", "v"}, {"k 2", "w"}}}},
			"a = 1 # c\n\n[mcp_servers.o]\ncommand = \"x\"\nenv = { K-1 = \"v\", \"k 2\" = \"w\" }\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDoc(TOML, []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Set(c.path, c.v); err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
			if v, ok := parse(t, TOML, d.Bytes()).Lookup(c.path...); !ok || !equal(v, c.v) {
				t.Errorf("%v = %v after the edit", c.path, v)
			}
		})
	}
}

func TestTOMLDoc_Refuses(t *testing.T) {
	for _, c := range []struct {
		name, in string
		path     []string
		v        any
	}{
		{"dotted keys", "[mcp_servers]\ngithub.command = \"npx\"\n", []string{"mcp_servers", "github", "command"}, "x"},
		{"inline table", "[mcp_servers]\ngithub = { command = \"npx\" }\n", []string{"mcp_servers", "github", "command"}, "x"},
		{"top-level dotted", "mcp_servers.github.command = \"npx\"\n", []string{"mcp_servers", "github", "command"}, "x"},
		{"inline parent", "mcp_servers = {}\n", []string{"mcp_servers", "observer"}, Object{{"command", "x"}}},
		{"table exists", "[mcp_servers.observer]\ncommand = \"x\"\n", []string{"mcp_servers", "observer"}, Object{{"command", "y"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDoc(TOML, []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Set(c.path, c.v)
			if err == nil {
				t.Fatalf("no error; wrote\n%s", d.Bytes())
			}
			if c.name != "table exists" && !errors.Is(err, errNotTable) {
				t.Errorf("err = %v, want errNotTable", err)
			}
			if string(d.Bytes()) != c.in {
				t.Errorf("text changed on a refused edit: %q", d.Bytes())
			}
		})
	}
}

func TestTOMLDoc_DeleteTable(t *testing.T) {
	in := "a = 1\n\n[mcp_servers.o]\ncommand = \"x\"\n\n# about b\n[b]\nk = 1\n\n[mcp_servers.o.env]\nK = \"v\"\n"
	d := parse(t, TOML, []byte(in))
	if err := d.Delete([]string{"mcp_servers", "o"}); err != nil {
		t.Fatal(err)
	}
	want := "a = 1\n\n# about b\n[b]\nk = 1\n"
	if got := string(d.Bytes()); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestDisplayPath(t *testing.T) {
	got := DisplayPath([]string{"projects", "/home/me/app", "mcpServers", "git hub", "command"})
	if want := `projects["/home/me/app"].mcpServers["git hub"].command`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if !strings.HasPrefix(DisplayPath([]string{"a.b"}), `["a.b"]`) {
		t.Error("a dotted key is not quoted")
	}
}

func TestTOMLDoc_DeleteUndoesAdd(t *testing.T) {
	for _, doc := range []string{codexFixture, strings.ReplaceAll(codexFixture, "\n", "\r\n"), "", "a = 1\n", "# only a comment\n"} {
		d := parse(t, TOML, []byte(doc))
		if _, err := d.Set([]string{"mcp_servers", "observer"}, Object{{"command", "x"}, {"args", []string{"a"}}}); err != nil {
			t.Fatal(err)
		}
		if err := d.Delete([]string{"mcp_servers", "observer"}); err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != doc {
			t.Errorf("add then delete:\n%q\nbecame\n%q", doc, got)
		}
	}
}

func TestLocate(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	byClient := func() map[string]Location {
		m := map[string]Location{}
		for _, l := range Locate(home, getenv) {
			m[l.Client] = l
		}
		return m
	}
	l := byClient()
	if l[ClaudeCode].File != home+"/.claude.json" || l[Codex].File != home+"/.codex/config.toml" || l[Cursor].File != home+"/.cursor/mcp.json" {
		t.Errorf("defaults: %+v", l)
	}
	if l[ClaudeCode].Found || l[Codex].Found || l[Cursor].Found {
		t.Errorf("found in an empty home: %+v", l)
	}
	writeFile(t, home+"/.claude/settings.json", []byte("{}"), 0o600)
	writeFile(t, home+"/.cursor/x", nil, 0o600)
	env["CLAUDE_CONFIG_DIR"], env["CODEX_HOME"] = home+"/cc", home+"/cx"
	l = byClient()
	if l[ClaudeCode].File != home+"/cc/.claude.json" || l[Codex].File != home+"/cx/config.toml" {
		t.Errorf("with CLAUDE_CONFIG_DIR and CODEX_HOME: %+v", l)
	}
	if l[ClaudeCode].Found || l[Codex].Found || !l[Cursor].Found {
		t.Errorf("found: %+v", l)
	}
}

// Top-level keys (Codex's notify, say) are edited like a table's, and removing one added gives back
// the text.
func TestTOMLDoc_TopLevelKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{codexFixture, strings.Replace(codexFixture, "commands\n", "commands\nnotify = [\"observerctl\", \"hook\"]\n", 1)},
		{"# about t\n# more\n[t]\nk = 1\n", "notify = [\"observerctl\", \"hook\"]\n# about t\n# more\n[t]\nk = 1\n"},
		{"# just a comment", "# just a comment\nnotify = [\"observerctl\", \"hook\"]\n"},
		{"", "notify = [\"observerctl\", \"hook\"]\n"},
	} {
		d := parse(t, TOML, []byte(c.in))
		if _, err := d.Set([]string{"notify"}, []string{"observerctl", "hook"}); err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != c.want {
			t.Errorf("set notify in %q:\n%q\nwant\n%q", c.in, got, c.want)
		}
		if raw, ok := d.Raw([]string{"notify"}); !ok || string(raw) != `["observerctl", "hook"]` {
			t.Errorf("raw = %q, %v", raw, ok)
		}
		if err := d.Delete([]string{"notify"}); err != nil {
			t.Fatal(err)
		}
		if got := string(d.Bytes()); got != c.in && !(c.in == "# just a comment" && got == c.in+"\n") {
			t.Errorf("set then delete notify:\n%q\nbecame\n%q", c.in, got)
		}
	}
}
