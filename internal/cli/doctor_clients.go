package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/clientconfig"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/store"
)

// doctorClients reports, for each client observer reads, whether it is installed and whether its
// records are where the reader looks (so observer-watch and `observerctl scan` capture them), and
// how to meter its API traffic through the proxy. A client installed without records is a warning
// (a custom data directory, or not used yet); one neither installed nor recorded is skipped.
func doctorClients(cfg config.Config, add func(name, status, detail, fix string)) {
	for _, ad := range readers.All() {
		name := ad.Client()
		info, _ := client.Lookup(name)
		bin := ""
		for _, b := range info.Bins {
			if p, err := exec.LookPath(b); err == nil {
				bin = p
				break
			}
		}
		srcs, err := ad.Discover()
		proxy := ""
		if info.Proxy != "" {
			proxy = "; meter its API calls: " + fmt.Sprintf(info.Proxy, cfg.Proxy.Addr)
		}
		check := "client:" + name
		switch {
		case err != nil:
			add(check, checkWarn, fmt.Sprintf("its records cannot be listed: %v", err), "check the directory's permissions")
		case len(srcs) > 0:
			where := "installed at " + bin
			if bin == "" {
				where = "not on PATH"
			}
			add(check, checkOK, fmt.Sprintf("%d record file(s) read by observer-watch and `observerctl scan` (%s)%s", len(srcs), where, proxy), "")
		case bin != "":
			add(check, checkWarn, fmt.Sprintf("installed at %s, but no records where observer looks", bin),
				"run it once; if it keeps its data elsewhere, see the README's client table for the variable that points observer there"+proxy)
		}
	}
}

// The capture check looks at the captureMax newest sessions last seen within captureWindow.
const (
	captureWindow = 24 * time.Hour
	captureMax    = 10
)

// captureSession is one recent session in the capture check's JSON.
type captureSession = query.CaptureSession

// doctorCapture says which capture paths saw each recent session (store.PathBitsSQL), and hints
// at the usual gaps: a client whose records came without a proxy turn is not pointed at the
// proxy; a client that exports OpenTelemetry, none of whose recent sessions reached the receiver
// (while it is on), was not set up with `observerctl init --otel`. Gaps are warnings: a client
// may be kept off a path on purpose. Nil when there is no store to read (the store check says so).
func doctorCapture(ctx context.Context, cfg config.Config, home string, now time.Time) *check {
	path := cfg.StorePath()
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	st, err := store.OpenReader(ctx, path)
	if err != nil {
		return nil
	}
	defer st.Close()
	if v, err := st.SchemaVersion(ctx); err != nil || v < store.LatestSchemaVersion() {
		return nil // the schema check tells; the paths need the OTLP columns
	}
	c := &check{Name: "capture", Status: checkOK}
	sessions, err := query.RecentCapture(ctx, st.DB, now.Add(-captureWindow), captureMax)
	c.Sessions = append(c.Sessions, sessions...)
	if err != nil {
		c.Status, c.Detail = checkWarn, "the capture paths of the recent sessions cannot be read: "+err.Error()
		c.Fix = "see the store check; `observerctl doctor` again once the writer runs"
		return c
	}
	if len(c.Sessions) == 0 {
		c.Detail = "no session in the last 24 h"
		return c
	}
	// Per client, in the order first met: its recent sessions with records and no proxy turn, and
	// whether any reached the OTLP receiver.
	var clients []string
	noProxy := map[string][]string{}
	otel := map[string]bool{}
	var lines []string
	for _, s := range c.Sessions {
		if !slices.Contains(clients, s.Client) {
			clients = append(clients, s.Client)
		}
		lines = append(lines, s.Client+" "+shortSession(s.SessionID)+": "+strings.Join(orNone(s.Paths), ", "))
		if slices.Contains(s.Paths, store.PathRecords) && !slices.Contains(s.Paths, store.PathProxy) {
			noProxy[s.Client] = append(noProxy[s.Client], shortSession(s.SessionID))
		}
		otel[s.Client] = otel[s.Client] || slices.Contains(s.Paths, store.PathOTLP)
	}
	c.Detail = fmt.Sprintf("the %d newest session(s) of the last 24 h: %s", len(c.Sessions), strings.Join(lines, "; "))
	var hints []string
	for _, name := range clients {
		ids := noProxy[name]
		info, _ := client.Lookup(name)
		if len(ids) == 0 || info.Proxy == "" {
			continue
		}
		hints = append(hints, fmt.Sprintf("%s is not pointed at the proxy (%s: records but no proxy turn): %s", name,
			strings.Join(ids, ", "), fmt.Sprintf(info.Proxy, cfg.Proxy.Addr)))
	}
	if cfg.OTLP.Addr != "" || cfg.OTLP.GRPCAddr != "" {
		var silent []string
		for _, client := range clients {
			if slices.Contains(clientconfig.OTelClients, client) && !otel[client] {
				silent = append(silent, client)
			}
		}
		if len(silent) > 0 {
			hints = append(hints, fmt.Sprintf("no recent session of %s reached the OTLP receiver: `%s init --otel`, then start a new session",
				strings.Join(silent, " or "), ctlCommand(home)))
		}
	}
	if len(hints) > 0 {
		c.Status, c.Fix = checkWarn, strings.Join(hints, "; ")
	}
	return c
}

// shortSession is a session id as doctor prints it: its first 8 characters.
func shortSession(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func orNone(paths []string) []string {
	if len(paths) == 0 {
		return []string{"none"}
	}
	return paths
}

// ctlCommand is how to run observerctl on home: with --home unless it is the default.
func ctlCommand(home string) string {
	if userHome, err := os.UserHomeDir(); err == nil && home == filepath.Join(userHome, ".observer") {
		return "observerctl"
	}
	return "observerctl --home " + clientconfig.ShellQuote(home)
}
