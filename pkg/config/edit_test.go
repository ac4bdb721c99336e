package config_test

import (
	"os"
	"testing"

	"github.com/observerhq/observer/pkg/config"
)

func TestSetKey(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"Replace", "# top\n[dash]\naddr = \"127.0.0.1:8081\" # mine\ntoken = \"old\" # old one\n\n[log]\nlevel = \"info\"\n",
			"# top\n[dash]\naddr = \"127.0.0.1:8081\" # mine\ntoken = 'NEW'\n\n[log]\nlevel = \"info\"\n"},
		{"UnderHeader", "[dash]\n# token = ''\naddr = \"x:1\"\n[log]\n", "[dash]\ntoken = 'NEW'\n# token = ''\naddr = \"x:1\"\n[log]\n"},
		{"NoSection", "[log]\nlevel = \"info\"", "[log]\nlevel = \"info\"\n\n[dash]\ntoken = 'NEW'\n"},
		{"Empty", "", "\n[dash]\ntoken = 'NEW'\n"},
		{"OtherSectionSameKey", "[mcp]\ntoken = 1\n[dash]\n", "[mcp]\ntoken = 1\n[dash]\ntoken = 'NEW'\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.SetKey([]byte(tc.in), "dash", "token", "NEW")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("SetKey:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	if _, err := config.SetKey([]byte("[dash]\nx = \n"), "dash", "token", "NEW"); err == nil {
		t.Error("SetKey on a file that does not parse succeeded")
	}
	if _, err := config.SetKey([]byte("dash.token = 'a'\n"), "dash", "token", "NEW"); err == nil {
		t.Error("SetKey rewrote a dotted key")
	}
}

// The default file takes a key under its section header and still loads, with the value.
func TestSetKey_DefaultFile(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	if err := config.WriteDefault(config.Path(home)); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, config.Path(home))
	out, err := config.SetKey(data, "dash", "token", "Zk3_q9Lm-8Rt2vX1pQ7sWn4B")
	if err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, string(out))
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dash.Token != "Zk3_q9Lm-8Rt2vX1pQ7sWn4B" {
		t.Errorf("token = %q", cfg.Dash.Token)
	}
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
