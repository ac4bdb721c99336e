package daemon

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// A component started with a misspelt OBSERVER_ variable says so in its log, naming the variable
// it most likely meant, and starts.
func TestStart_WarnsOfAnUnknownVariable(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "OBSERVER_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	t.Setenv("OBSERVER_COMPRESSION_ENABLE", "true")
	var stderr bytes.Buffer
	app := &cli.App{Name: "observer-test", ErrWriter: &stderr, Flags: []cli.Flag{&cli.StringFlag{Name: "home"}},
		Action: func(c *cli.Context) error {
			_, stop, _, _, err := Start(c)
			if err == nil {
				stop()
			}
			return err
		}}
	if err := app.Run([]string{"observer-test", "--home", t.TempDir()}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if log := stderr.String(); !strings.Contains(log, "OBSERVER_COMPRESSION_ENABLE ") || !strings.Contains(log, "OBSERVER_COMPRESSION_ENABLED") {
		t.Errorf("the log does not warn of OBSERVER_COMPRESSION_ENABLE and name OBSERVER_COMPRESSION_ENABLED:\n%s", log)
	}
}
