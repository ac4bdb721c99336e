package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/observerhq/observer/pkg/config"
)

// FuzzParse: any config.toml either loads into a configuration every rule accepts, or is refused
// with an error naming the file; it never panics. And when it parses as TOML, SetKey on it gives
// a file whose [dash] token is the value set, the rest still parsing.
func FuzzParse(f *testing.F) {
	home := f.TempDir()
	def := filepath.Join(home, "default.toml")
	if err := config.WriteDefault(def); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(def)
	f.Add(data)
	for _, s := range []string{"[bus]\nport = 4247\n", "[writer]\nflush_interval = 12\n", "[dash]\ntoken = 'x'\n",
		"[pricing.models.\"m\"]\ninput = 1.0\n", "[budget]\nprojects = { \"/a\" = 3 }\n", "dash.token = 'a'\n", "[mcp]\nredact = ['(']\n",
		"[log]\nlevel = \"debug\"\n[log]\n", "\xff", "[dash]\naddr = \"[::1]:0\"\ntoken = \"\"\"multi\nline\"\"\"\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(home, data)
		if err == nil {
			if verr := config.Validate(&cfg, config.Path(home), data, nil); verr != nil {
				t.Fatalf("Parse accepted what Validate refuses: %v", verr)
			}
		}
		var doc map[string]any
		if toml.Unmarshal(data, &doc) != nil {
			return
		}
		out, err := config.SetKey(data, "dash", "token", "Zk3_q9Lm-8Rt2vX1pQ7sWn4B")
		if err != nil {
			return // a dotted or inline key: refused, not rewritten
		}
		var after struct {
			Dash struct {
				Token string `toml:"token"`
			} `toml:"dash"`
		}
		if err := toml.Unmarshal(out, &after); err != nil {
			if _, isTable := doc["dash"].(map[string]any); isTable || doc["dash"] == nil {
				t.Fatalf("SetKey broke a file that parsed: %v\n%q\n->\n%q", err, data, out)
			}
			return
		}
		if after.Dash.Token != "Zk3_q9Lm-8Rt2vX1pQ7sWn4B" {
			t.Fatalf("SetKey set token %q in\n%q", after.Dash.Token, out)
		}
	})
}
