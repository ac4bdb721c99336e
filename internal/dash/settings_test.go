package dash

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/pricing"
)

func postSettings(t *testing.T, srv *testServer, body string, csrf bool) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/settings", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if csrf {
		req.Header.Set(csrfHeader, srv.csrf)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func jsonContent(s string) string {
	b, _ := json.Marshal(map[string]string{"content": s})
	return string(b)
}

// TestSettings: config.toml shown; a save needs the CSRF token, is refused with the loader's
// message when invalid (file untouched), and when valid replaces the file 0600 with a backup.
func TestSettings(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.toml")
	orig := "[dash]\naddr = \"127.0.0.1:8081\"\n"
	if err := os.WriteFile(cfgPath, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	prices := pricing.Default().WithOverrides(map[string]pricing.Price{"my-local-model": {Input: 1, Output: 2}})
	srv := startServer(t, Options{StorePath: filepath.Join(home, "observer.db"), Prices: prices})

	var st Settings
	mustGet(t, srv.URL, "/api/settings", &st)
	if st.Path != cfgPath || !st.Exists || st.Content != orig || st.Mode != "0600" {
		t.Errorf("settings %+v", st)
	}
	if len(st.Pricing.Overrides) != 1 || st.Pricing.Overrides[0].Model != "my-local-model" || st.Pricing.Overrides[0].Output != 2 || len(st.Pricing.Builtin) == 0 {
		t.Errorf("pricing overrides %+v (%d built-in)", st.Pricing.Overrides, len(st.Pricing.Builtin))
	}
	if code := get(t, srv.URL, "/api/settings?x=1", nil); code != 400 {
		t.Errorf("unknown parameter: %d", code)
	}

	unchanged := func(what string) {
		t.Helper()
		if data, _ := os.ReadFile(cfgPath); string(data) != orig {
			t.Errorf("%s changed config.toml to %q", what, data)
		}
		if _, err := os.Stat(cfgPath + ".bak"); err == nil {
			t.Errorf("%s left a backup", what)
		}
	}
	valid := "[dash]\naddr = \"127.0.0.1:8099\"\n"
	if code, _ := postSettings(t, srv, jsonContent(valid), false); code != http.StatusForbidden {
		t.Errorf("without CSRF: %d, want 403", code)
	}
	unchanged("a save without CSRF")
	for _, c := range []struct{ name, body, want string }{
		{"invalid TOML", jsonContent("[dash\naddr = 1"), cfgPath},
		{"unknown key", jsonContent("[dash]\nnot_a_key = 1\n"), "unknown key"},
		{"wrong type", jsonContent("[dash]\naddr = 12\n"), cfgPath},
		{"not JSON", "addr = 1", "content"},
	} {
		code, out := postSettings(t, srv, c.body, true)
		msg, _ := out["error"].(string)
		if code != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %q, want 400 mentioning %q", c.name, code, msg, c.want)
		}
		unchanged(c.name)
	}

	code, out := postSettings(t, srv, jsonContent(valid), true)
	if code != http.StatusOK || out["saved"] != true {
		t.Fatalf("valid save: %d %v", code, out)
	}
	data, _ := os.ReadFile(cfgPath)
	bak, _ := os.ReadFile(cfgPath + ".bak")
	if string(data) != valid || string(bak) != orig {
		t.Errorf("after save: config %q backup %q", data, bak)
	}
	for _, p := range []string{cfgPath, cfgPath + ".bak"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", p, fi.Mode(), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(home, ".config.toml*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	mustGet(t, srv.URL, "/api/settings", &st)
	if st.Content != valid {
		t.Errorf("GET after save: %q", st.Content)
	}
}
