package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/pkg/config"
)

// fakeServiceHost records the systemctl and launchctl commands instead of running them.
type fakeServiceHost struct {
	calls [][]string
	// answer gives a command's stdout and error; nil answers every command with success.
	answer func(cmd []string) (string, error)
}

func (f *fakeServiceHost) reset() { f.calls = nil }

// useServiceHost makes observerctl service act as if on goos, with f running its commands. No test
// may reach the real systemctl: it would act on the developer's own user manager.
func useServiceHost(t *testing.T, goos string, answer func(cmd []string) (string, error)) *fakeServiceHost {
	t.Helper()
	f := &fakeServiceHost{answer: answer}
	old := newServiceHost
	newServiceHost = func() serviceHost {
		return serviceHost{GOOS: goos, UID: 501, Run: func(_ context.Context, name string, args ...string) (string, error) {
			cmd := append([]string{name}, args...)
			f.calls = append(f.calls, cmd)
			if f.answer == nil {
				return "", nil
			}
			return f.answer(cmd)
		}}
	}
	t.Cleanup(func() { newServiceHost = old })
	return f
}

// svcEnv is a user's home, XDG config, observer home and a bin directory of stand-in binaries.
type svcEnv struct {
	home, config, obs, bin, units string
}

var serviceBinaries = []string{"observerctl", "observer-proxy", "observer-watch", "observer-dash"}

func newSvcEnv(t *testing.T) *svcEnv {
	t.Helper()
	dir := t.TempDir()
	e := &svcEnv{home: filepath.Join(dir, "home"), config: filepath.Join(dir, "config"), obs: filepath.Join(dir, "obs"),
		bin: filepath.Join(dir, "bin")}
	e.units = filepath.Join(e.config, "systemd", "user")
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	svcMakeBinDir(t, e.bin)
	t.Setenv("HOME", e.home)
	t.Setenv("XDG_CONFIG_HOME", e.config)
	t.Setenv("OBSERVER_HOME", e.obs)
	return e
}

// svcMakeBinDir fills dir with executables named like observer's binaries.
func svcMakeBinDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range serviceBinaries {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

var systemdUnitNames = []string{"observer-bus.service", "observer-writer.service", "observer-proxy.service",
	"observer-watch.service", "observer-dash.service", "observer.target"}

// svcAllUnits is what enable and disable must name: the target, then each service in start order.
var svcAllUnits = append([]string{"observer.target"}, systemdUnitNames[:5]...)

func svcDirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func svcSorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// unitValues returns the values of key in a systemd unit.
func unitValues(t *testing.T, path, key string) []string {
	t.Helper()
	var vals []string
	for _, line := range strings.Split(read(t, path), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

func svcCmds(lines ...string) [][]string {
	var out [][]string
	for _, l := range lines {
		out = append(out, strings.Fields(l))
	}
	return out
}

func svcCheckCalls(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%s ran\n%s\nwant\n%s", what, svcFmtCalls(got), svcFmtCalls(want))
	}
}

func svcFmtCalls(c [][]string) string {
	var b strings.Builder
	for _, x := range c {
		fmt.Fprintf(&b, "  %s\n", strings.Join(x, " "))
	}
	return b.String()
}

func TestServiceInstall_WritesUnits(t *testing.T) {
	e := newSvcEnv(t)
	f := useServiceHost(t, "linux", nil)

	code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin)
	if code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	if len(f.calls) != 0 {
		t.Errorf("--no-load ran commands:\n%s", svcFmtCalls(f.calls))
	}
	if !strings.Contains(out, "not loaded (--no-load)") || !strings.Contains(out, "systemctl --user enable --now observer.target observer-bus.service") {
		t.Errorf("install --no-load does not say how to load the units:\n%s", out)
	}
	if got := svcDirNames(t, e.units); !slices.Equal(got, svcSorted(systemdUnitNames)) {
		t.Fatalf("unit directory holds %v, want %v", got, svcSorted(systemdUnitNames))
	}
	if fi, err := os.Stat(e.units); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("unit directory created with %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	wantExec := map[string]string{
		"observer-bus.service":    filepath.Join(e.bin, "observerctl") + " --home " + e.obs + " bus",
		"observer-writer.service": filepath.Join(e.bin, "observerctl") + " --home " + e.obs + " writer",
		"observer-proxy.service":  filepath.Join(e.bin, "observer-proxy") + " --home " + e.obs,
		"observer-watch.service":  filepath.Join(e.bin, "observer-watch") + " --home " + e.obs,
		"observer-dash.service":   filepath.Join(e.bin, "observer-dash") + " --home " + e.obs,
	}
	for _, name := range systemdUnitNames {
		p := filepath.Join(e.units, name)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", name, fi.Mode().Perm())
		}
		if name == "observer.target" {
			if wants := strings.Join(unitValues(t, p, "Wants"), " "); !slices.Equal(svcSorted(strings.Fields(wants)), svcSorted(systemdUnitNames[:5])) {
				t.Errorf("observer.target Wants=%s, want every service", wants)
			}
			continue
		}
		if got := unitValues(t, p, "ExecStart"); len(got) != 1 || got[0] != wantExec[name] {
			t.Errorf("%s ExecStart=%q, want %q", name, got, wantExec[name])
		}
		if got := unitValues(t, p, "Restart"); !slices.Equal(got, []string{"on-failure"}) {
			t.Errorf("%s Restart=%v", name, got)
		}
		if got := unitValues(t, p, "PartOf"); !slices.Equal(got, []string{"observer.target"}) {
			t.Errorf("%s PartOf=%v", name, got)
		}
		if name != "observer-bus.service" {
			if !slices.Contains(unitValues(t, p, "Requires"), "observer-bus.service") ||
				!slices.Contains(strings.Fields(strings.Join(unitValues(t, p, "After"), " ")), "observer-bus.service") {
				t.Errorf("%s does not start after the bus and require it:\n%s", name, read(t, p))
			}
		}
	}

	t.Run("reinstall identical is a no-op", func(t *testing.T) {
		old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		before := map[string]string{}
		for _, name := range systemdUnitNames {
			p := filepath.Join(e.units, name)
			before[name] = read(t, p)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if n := strings.Count(out, "unchanged "); n != len(systemdUnitNames) || strings.Contains(out, "wrote ") {
			t.Errorf("second install output:\n%s", out)
		}
		for _, name := range systemdUnitNames {
			p := filepath.Join(e.units, name)
			fi, _ := os.Stat(p)
			if !fi.ModTime().Equal(old) || read(t, p) != before[name] {
				t.Errorf("%s was rewritten (mtime %v)", name, fi.ModTime())
			}
		}
		if got := svcDirNames(t, e.units); !slices.Equal(got, svcSorted(systemdUnitNames)) {
			t.Errorf("unit directory holds %v after a re-install", got)
		}
	})

	t.Run("default home passes no --home", func(t *testing.T) {
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "cfg"))
		t.Setenv("OBSERVER_HOME", "")
		code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		p := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "systemd", "user", "observer-writer.service")
		if got := unitValues(t, p, "ExecStart"); !slices.Equal(got, []string{filepath.Join(e.bin, "observerctl") + " writer"}) {
			t.Errorf("ExecStart=%q for the default home", got)
		}
	})

	t.Run("dry run writes nothing", func(t *testing.T) {
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "cfg"))
		code, out, errOut := runCtl(t, "service", "install", "--dry-run", "--bin-dir", e.bin)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		for _, want := range []string{"would write " + filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "systemd", "user", "observer-bus.service"),
			"    ExecStart=" + wantExec["observer-bus.service"], "would run: systemctl --user daemon-reload",
			"would run: systemctl --user enable --now " + strings.Join(svcAllUnits, " "), "dry run: nothing written or run"} {
			if !strings.Contains(out, want) {
				t.Errorf("dry run output lacks %q:\n%s", want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "systemd")); !os.IsNotExist(err) {
			t.Errorf("dry run created the unit directory (%v)", err)
		}
		if len(f.calls) != 0 {
			t.Errorf("dry run ran commands:\n%s", svcFmtCalls(f.calls))
		}
	})
}

func TestServiceInstall_LoadsWithSystemctl(t *testing.T) {
	e := newSvcEnv(t)
	f := useServiceHost(t, "linux", nil)
	enable := "systemctl --user enable --now " + strings.Join(svcAllUnits, " ")

	if code, out, errOut := runCtl(t, "service", "install", "--bin-dir", e.bin); code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	svcCheckCalls(t, "install", f.calls, svcCmds("systemctl --user daemon-reload", enable))

	f.reset()
	if code, out, errOut := runCtl(t, "service", "install", "--bin-dir", e.bin); code != ExitOK {
		t.Fatalf("second install: exit %d\n%s%s", code, out, errOut)
	}
	svcCheckCalls(t, "an identical re-install", f.calls, svcCmds("systemctl --user daemon-reload", enable))

	bin2 := filepath.Join(t.TempDir(), "bin2")
	svcMakeBinDir(t, bin2)
	writerUnit := filepath.Join(e.units, "observer-writer.service")
	before := read(t, writerUnit)

	f.reset()
	code, out, errOut := runCtl(t, "service", "install", "--bin-dir", bin2)
	if code != ExitFailure {
		t.Errorf("install over differing units without --force: exit %d, want %d", code, ExitFailure)
	}
	for _, want := range []string{"-ExecStart=" + filepath.Join(e.bin, "observerctl") + " --home " + e.obs + " writer",
		"+ExecStart=" + filepath.Join(bin2, "observerctl") + " --home " + e.obs + " writer", "written by observerctl with other settings"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not show %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "--force") || !strings.Contains(errOut, "nothing written") {
		t.Errorf("stderr: %s", errOut)
	}
	if read(t, writerUnit) != before || len(f.calls) != 0 {
		t.Errorf("refused install changed the unit or ran %v", f.calls)
	}

	code, out, errOut = runCtl(t, "service", "install", "--bin-dir", bin2, "--force", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "would replace "+writerUnit) || read(t, writerUnit) != before || len(f.calls) != 0 {
		t.Errorf("dry run with --force: exit %d, calls %v\n%s%s", code, f.calls, out, errOut)
	}

	code, out, errOut = runCtl(t, "service", "install", "--bin-dir", bin2, "--force")
	if code != ExitOK {
		t.Fatalf("install --force: exit %d\n%s%s", code, out, errOut)
	}
	if got := unitValues(t, writerUnit, "ExecStart"); !slices.Equal(got, []string{filepath.Join(bin2, "observerctl") + " --home " + e.obs + " writer"}) {
		t.Errorf("after --force ExecStart=%q", got)
	}
	svcCheckCalls(t, "install --force", f.calls, svcCmds("systemctl --user daemon-reload",
		"systemctl --user try-restart "+strings.Join(systemdUnitNames[:5], " "), enable))
}

func TestServiceInstall_ForeignUnitNeedsForce(t *testing.T) {
	e := newSvcEnv(t)
	useServiceHost(t, "linux", nil)
	mine := "[Service]\nExecStart=/usr/bin/my-dash\n"
	write(t, filepath.Join(e.units, "observer-dash.service"), mine)
	code, out, _ := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin)
	if code != ExitFailure || !strings.Contains(out, "not written by observerctl") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if got := svcDirNames(t, e.units); !slices.Equal(got, []string{"observer-dash.service"}) || read(t, filepath.Join(e.units, "observer-dash.service")) != mine {
		t.Errorf("a refused install wrote files: %v", got)
	}
}

func TestServiceInstall_NoUserManager(t *testing.T) {
	e := newSvcEnv(t)
	f := useServiceHost(t, "linux", func(cmd []string) (string, error) {
		return "", errors.New("exit status 1: Failed to connect to bus: No medium found")
	})
	code, out, errOut := runCtl(t, "service", "install", "--bin-dir", e.bin)
	if code != ExitUnavailable {
		t.Errorf("exit %d, want %d", code, ExitUnavailable)
	}
	if got := svcDirNames(t, e.units); !slices.Equal(got, svcSorted(systemdUnitNames)) {
		t.Errorf("the units must be written even when loading fails: %v", got)
	}
	for _, want := range []string{"loading them failed", "No medium found", "loginctl enable-linger",
		"systemctl --user daemon-reload\n", "systemctl --user enable --now " + strings.Join(svcAllUnits, " ")} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the error lacks %q:\n%s", want, errOut)
		}
	}
	svcCheckCalls(t, "install without a user manager", f.calls, svcCmds("systemctl --user daemon-reload"))
	_ = out
}

func TestServiceInstall_MissingBinary(t *testing.T) {
	e := newSvcEnv(t)
	f := useServiceHost(t, "linux", nil)
	if err := os.Remove(filepath.Join(e.bin, "observer-dash")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(e.bin, "observer-watch"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCtl(t, "service", "install", "--bin-dir", e.bin)
	if code != ExitUnavailable || !strings.Contains(errOut, "observer-watch, observer-dash not found in "+e.bin) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(e.units); !os.IsNotExist(err) || len(f.calls) != 0 {
		t.Errorf("install without its binaries wrote (%v) or ran %v", err, f.calls)
	}
}

func TestServiceUninstall(t *testing.T) {
	t.Run("removes exactly its files", func(t *testing.T) {
		e := newSvcEnv(t)
		f := useServiceHost(t, "linux", nil)
		if code, out, errOut := runCtl(t, "service", "install", "--bin-dir", e.bin); code != ExitOK {
			t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
		}
		foreign := filepath.Join(e.units, "mine.service")
		write(t, foreign, "[Service]\nExecStart=/bin/true\n")

		f.reset()
		code, out, errOut := runCtl(t, "service", "uninstall", "--dry-run")
		if code != ExitOK || len(f.calls) != 0 || len(svcDirNames(t, e.units)) != 7 || !strings.Contains(out, "would remove "+filepath.Join(e.units, "observer.target")) {
			t.Errorf("dry run: exit %d, calls %v\n%s%s", code, f.calls, out, errOut)
		}

		code, out, errOut = runCtl(t, "service", "uninstall")
		if code != ExitOK {
			t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
		}
		if got := svcDirNames(t, e.units); !slices.Equal(got, []string{"mine.service"}) {
			t.Errorf("after uninstall the directory holds %v, want only the foreign unit", got)
		}
		svcCheckCalls(t, "uninstall", f.calls, svcCmds("systemctl --user disable --now "+strings.Join(svcAllUnits, " "), "systemctl --user daemon-reload"))

		code, out, _ = runCtl(t, "service", "uninstall")
		if code != ExitOK || !strings.Contains(out, "nothing to uninstall") {
			t.Errorf("second uninstall: exit %d\n%s", code, out)
		}
	})

	t.Run("leaves a same-named unit it did not write", func(t *testing.T) {
		e := newSvcEnv(t)
		f := useServiceHost(t, "linux", nil)
		if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin); code != ExitOK {
			t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
		}
		dash := filepath.Join(e.units, "observer-dash.service")
		write(t, dash, "[Service]\nExecStart=/usr/bin/my-dash\n")
		code, out, errOut := runCtl(t, "service", "uninstall", "--no-load")
		if code != ExitOK {
			t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
		}
		if got := svcDirNames(t, e.units); !slices.Equal(got, []string{"observer-dash.service"}) {
			t.Errorf("after uninstall the directory holds %v", got)
		}
		if !strings.Contains(out, "left "+dash+": not written by observerctl") {
			t.Errorf("uninstall does not say it left %s:\n%s", dash, out)
		}
		if len(f.calls) != 0 {
			t.Errorf("--no-load ran %v", f.calls)
		}
	})

	t.Run("no user manager", func(t *testing.T) {
		e := newSvcEnv(t)
		f := useServiceHost(t, "linux", func(cmd []string) (string, error) {
			if slices.Contains(cmd, "--now") {
				return "", errors.New("exit status 1: Failed to connect to bus: No medium found")
			}
			return "", nil
		})
		if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin); code != ExitOK {
			t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
		}
		code, _, errOut := runCtl(t, "service", "uninstall")
		if code != ExitUnavailable || !strings.Contains(errOut, "could not stop them") || !strings.Contains(errOut, "No medium found") {
			t.Errorf("exit %d: %s", code, errOut)
		}
		if _, err := os.Stat(e.config); !os.IsNotExist(err) {
			t.Errorf("install created %s; uninstall left it (%v)", e.config, err)
		}
		// disable without --now still removes the links that enable made.
		svcCheckCalls(t, "uninstall without a user manager", f.calls, svcCmds("systemctl --user disable --now "+strings.Join(svcAllUnits, " "),
			"systemctl --user disable "+strings.Join(svcAllUnits, " ")))
	})
}

func TestServiceStatus_JSON(t *testing.T) {
	e := newSvcEnv(t)
	down := false
	f := useServiceHost(t, "linux", func(cmd []string) (string, error) {
		unit := cmd[len(cmd)-1]
		switch {
		case down && cmd[2] == "is-active":
			return "", errors.New("exit status 1: Failed to connect to bus: No medium found")
		case cmd[2] == "is-enabled" && unit == "observer-dash.service":
			return "disabled\n", errors.New("exit status 1")
		case cmd[2] == "is-enabled":
			return "enabled\n", nil
		case cmd[2] == "is-active" && unit == "observer-dash.service":
			return "failed\n", errors.New("exit status 3")
		case cmd[2] == "is-active":
			return "active\n", nil
		}
		return "", nil
	})
	type unit struct {
		Component, Unit, File               string
		Installed, Foreign, Enabled, Active bool
		EnabledState                        string `json:"enabled_state"`
		ActiveState                         string `json:"active_state"`
	}
	decode := func(t *testing.T, out string) (map[string]any, []unit) {
		t.Helper()
		var shape map[string]any
		if err := json.Unmarshal([]byte(out), &shape); err != nil {
			t.Fatalf("status --json is not JSON: %v\n%s", err, out)
		}
		var rep struct{ Units []unit }
		json.Unmarshal([]byte(out), &rep)
		return shape, rep.Units
	}

	code, out, _ := runCtl(t, "service", "status", "--json")
	shape, units := decode(t, out)
	if code != ExitFailure || shape["manager"] != "systemd" || shape["dir"] != e.units || len(units) != 6 {
		t.Fatalf("status before install: exit %d\n%s", code, out)
	}
	for _, u := range units {
		if u.Installed || u.EnabledState != "not-found" {
			t.Errorf("before install: %+v", u)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("status asked systemctl about units that are not installed: %v", f.calls)
	}

	if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin); code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCtl(t, "service", "status", "--json")
	shape, units = decode(t, out)
	if code != ExitFailure {
		t.Errorf("status with a failed unit: exit %d, want %d", code, ExitFailure)
	}
	wantKeys := []string{"active", "active_state", "component", "enabled", "enabled_state", "file", "foreign", "installed", "unit"}
	for _, raw := range shape["units"].([]any) {
		var keys []string
		for k := range raw.(map[string]any) {
			keys = append(keys, k)
		}
		if !slices.Equal(svcSorted(keys), wantKeys) {
			t.Errorf("unit keys %v, want %v", svcSorted(keys), wantKeys)
		}
	}
	var comps []string
	for _, u := range units {
		comps = append(comps, u.Component)
		want := unit{Component: u.Component, Unit: u.Unit, File: filepath.Join(e.units, u.Unit), Installed: true,
			Enabled: true, Active: true, EnabledState: "enabled", ActiveState: "active"}
		if u.Component == "dash" {
			want.Enabled, want.Active, want.EnabledState, want.ActiveState = false, false, "disabled", "failed"
		}
		if u != want {
			t.Errorf("status %+v\nwant   %+v", u, want)
		}
	}
	if !slices.Equal(comps, []string{"bus", "writer", "proxy", "watch", "dash", "target"}) {
		t.Errorf("components %v", comps)
	}
	if _, ok := shape["manager_error"]; ok {
		t.Errorf("manager_error set while the manager answers: %v", shape["manager_error"])
	}

	code, out, _ = runCtl(t, "service", "status")
	if code != ExitFailure || !strings.Contains(out, "COMPONENT  UNIT") {
		t.Errorf("human status: exit %d\n%s", code, out)
	}
	var dashRow []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "dash ") {
			dashRow = strings.Fields(l)
		}
	}
	if !slices.Equal(dashRow, []string{"dash", "observer-dash.service", "yes", "disabled", "failed"}) {
		t.Errorf("dash row %q in\n%s", dashRow, out)
	}

	down = true
	code, out, _ = runCtl(t, "service", "status", "--json")
	shape, units = decode(t, out)
	if code != ExitUnavailable || !strings.Contains(fmt.Sprint(shape["manager_error"]), "No medium found") || units[0].ActiveState != "unknown" {
		t.Errorf("status without a user manager: exit %d\n%s", code, out)
	}
}

func TestService_UsageErrors(t *testing.T) {
	e := newSvcEnv(t)
	f := useServiceHost(t, "linux", nil)
	for _, args := range [][]string{
		{"service", "install", "extra"},
		{"service", "install", "--bogus"},
		{"service", "install", "--bin-dir", ""},
		{"service", "install", "--bin-dir", filepath.Join(e.home, `it's`)},
		{"service", "uninstall", "extra"},
		{"service", "uninstall", "--force"},
		{"service", "status", "--json", "extra"},
		{"service", "status", "--bogus"},
		{"service", "bogus"},
	} {
		if code, out, errOut := runCtl(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s%s", args, code, ExitUsage, out, errOut)
		}
	}
	if _, err := os.Stat(e.units); !os.IsNotExist(err) || len(f.calls) != 0 {
		t.Errorf("a usage error wrote files (%v) or ran %v", err, f.calls)
	}
	for _, sub := range []string{"install", "uninstall", "status"} {
		code, out, _ := runCtl(t, "service", sub, "--help")
		if code != ExitOK || !strings.Contains(out, "USAGE:") || !strings.Contains(out, "Exit codes:") {
			t.Errorf("service %s --help: exit %d\n%s", sub, code, out)
		}
	}
	// Without --bin-dir the binaries are looked for beside the running program (here the test binary).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	code, _, errOut := runCtl(t, "service", "install")
	if code != ExitUnavailable || !strings.Contains(errOut, "not found in "+filepath.Dir(exe)) {
		t.Errorf("install without --bin-dir: exit %d: %s", code, errOut)
	}
}

func TestService_UnsupportedOS(t *testing.T) {
	newSvcEnv(t)
	useServiceHost(t, "freebsd", nil)
	code, _, errOut := runCtl(t, "service", "status")
	if code != ExitUnavailable || !strings.Contains(errOut, "observerctl up") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// systemdArgv splits an ExecStart value as systemd does, for the forms install writes: specifiers
// are expanded first (only %% may appear: any other would turn into something else), then words
// split on blanks, a double-quoted word taking \\ and \" escapes; in the arguments, not the
// program, $$ is a dollar and a lone $ a variable. Anything else is an error.
func systemdArgv(v string) ([]string, error) {
	var words []string
	for i := 0; i < len(v); {
		if v[i] == ' ' || v[i] == '\t' {
			i++
			continue
		}
		var w strings.Builder
		if v[i] == '"' {
			for i++; ; i++ {
				if i >= len(v) {
					return nil, errors.New("unterminated quote")
				}
				if v[i] == '\\' {
					if i+1 >= len(v) || (v[i+1] != '\\' && v[i+1] != '"') {
						return nil, fmt.Errorf("escape %q", v[i:])
					}
					i++
				} else if v[i] == '"' {
					i++
					break
				}
				w.WriteByte(v[i])
			}
			if i < len(v) && v[i] != ' ' {
				return nil, errors.New("text right after a closing quote")
			}
		} else {
			for ; i < len(v) && v[i] != ' ' && v[i] != '\t'; i++ {
				if strings.IndexByte(`"'\\`, v[i]) >= 0 {
					return nil, fmt.Errorf("unquoted %c", v[i])
				}
				w.WriteByte(v[i])
			}
			if w.String() == ";" {
				return nil, errors.New("a lone ; separates commands")
			}
		}
		words = append(words, w.String())
	}
	for n, w := range words {
		var out strings.Builder
		for i := 0; i < len(w); i++ {
			switch {
			case w[i] == '%' && i+1 < len(w) && w[i+1] == '%':
				i++
			case w[i] == '%':
				return nil, fmt.Errorf("specifier in %q", w)
			case n > 0 && w[i] == '$' && i+1 < len(w) && w[i+1] == '$':
				i++
			case n > 0 && w[i] == '$':
				return nil, fmt.Errorf("variable in %q", w)
			}
			out.WriteByte(w[i])
		}
		words[n] = out.String()
	}
	return words, nil
}

func TestServiceInstall_ExecStartQuoting(t *testing.T) {
	e := newSvcEnv(t)
	useServiceHost(t, "linux", nil)
	bin := filepath.Join(t.TempDir(), "bin dir;100%h$HOME")
	svcMakeBinDir(t, bin)
	obs := filepath.Join(t.TempDir(), `obs home 50%h $HOME ${USER} "quoted" \ it's ;`)
	t.Setenv("OBSERVER_HOME", obs)
	if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", bin); code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	want := map[string][]string{
		"observer-bus.service":    {filepath.Join(bin, "observerctl"), "--home", obs, "bus"},
		"observer-writer.service": {filepath.Join(bin, "observerctl"), "--home", obs, "writer"},
		"observer-proxy.service":  {filepath.Join(bin, "observer-proxy"), "--home", obs},
		"observer-watch.service":  {filepath.Join(bin, "observer-watch"), "--home", obs},
		"observer-dash.service":   {filepath.Join(bin, "observer-dash"), "--home", obs},
	}
	for name, w := range want {
		execs := unitValues(t, filepath.Join(e.units, name), "ExecStart")
		if len(execs) != 1 {
			t.Fatalf("%s ExecStart=%q", name, execs)
		}
		got, err := systemdArgv(execs[0])
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("%s: ExecStart=%s runs %q (%v), want %q", name, execs[0], got, err, w)
		}
	}
}

// requireServiceTool finds a command the test needs, skipping without it unless
// OBSERVER_REQUIRE_CLIENTS=1 (CI installs it), where its absence fails the test.
func requireServiceTool(t *testing.T, name, pkg, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("OBSERVER_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("%s is not on PATH and OBSERVER_REQUIRE_CLIENTS=1: %s", name, why)
	}
	t.Skipf("%s is not on PATH (apt-get install %s): %s", name, pkg, why)
	return ""
}

// TestServiceUnits_SystemdAnalyzeVerify checks the rendered units with systemd's own parser, as
// --user units, on a bin directory and a home whose names need quoting. It needs no running user
// manager: a private XDG_RUNTIME_DIR is enough.
func TestServiceUnits_SystemdAnalyzeVerify(t *testing.T) {
	analyze := requireServiceTool(t, "systemd-analyze", "systemd", "it verifies the rendered systemd units")
	e := newSvcEnv(t)
	useServiceHost(t, "linux", nil)
	bin := filepath.Join(t.TempDir(), "bin dir;100%$x")
	svcMakeBinDir(t, bin)
	obs := filepath.Join(t.TempDir(), `obs home 50% $HOME "quoted" \ it's`)
	t.Setenv("OBSERVER_HOME", obs)
	if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", bin); code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	runtimeDir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	verify := func() (string, error) {
		var files []string
		for _, n := range systemdUnitNames {
			files = append(files, filepath.Join(e.units, n))
		}
		cmd := exec.Command(analyze, append([]string{"verify", "--man=no", "--user"}, files...)...)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir, "SYSTEMD_LOG_COLOR=0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := verify()
	if err != nil || strings.TrimSpace(out) != "" { // a warning (unknown key, bad value) counts as a failure
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}

	// The check sees the rendered paths: without the binary, the same units fail.
	if err := os.Remove(filepath.Join(bin, "observer-dash")); err != nil {
		t.Fatal(err)
	}
	out, err = verify()
	if err == nil || !strings.Contains(out, filepath.Join(bin, "observer-dash")) {
		t.Errorf("systemd-analyze verify passed a unit whose binary is gone: %v\n%s", err, out)
	}
}

// plistNode is a generic XML element.
type plistNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr  `xml:",any,attr"`
	Nodes   []plistNode `xml:",any"`
	Text    string      `xml:",chardata"`
}

// parsePlist decodes an XML property list into map[string]any, []any, string, bool and int64
// values, failing on anything that is not well-formed or not a plist.
func parsePlist(data []byte) (any, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var root plistNode
	if err := d.Decode(&root); err != nil {
		return nil, err
	}
	for { // nothing but blanks and comments may follow the root
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) == "" {
			continue
		}
		if _, ok := tok.(xml.Comment); !ok {
			return nil, fmt.Errorf("content after the root element: %v", tok)
		}
	}
	if root.XMLName.Local != "plist" || len(root.Nodes) != 1 {
		return nil, fmt.Errorf("root <%s> with %d children, want <plist> with one", root.XMLName.Local, len(root.Nodes))
	}
	if !slices.Contains(root.Attrs, xml.Attr{Name: xml.Name{Local: "version"}, Value: "1.0"}) {
		return nil, fmt.Errorf("plist attributes %v, want version 1.0", root.Attrs)
	}
	return plistValue(root.Nodes[0])
}

func plistValue(n plistNode) (any, error) {
	switch n.XMLName.Local {
	case "dict":
		if len(n.Nodes)%2 != 0 {
			return nil, errors.New("dict with a key and no value")
		}
		m := map[string]any{}
		for i := 0; i < len(n.Nodes); i += 2 {
			k := n.Nodes[i]
			if k.XMLName.Local != "key" {
				return nil, fmt.Errorf("<%s> where a dict key belongs", k.XMLName.Local)
			}
			if _, dup := m[k.Text]; dup {
				return nil, fmt.Errorf("duplicate key %s", k.Text)
			}
			v, err := plistValue(n.Nodes[i+1])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.Text, err)
			}
			m[k.Text] = v
		}
		return m, nil
	case "array":
		var a []any
		for _, c := range n.Nodes {
			v, err := plistValue(c)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case "string":
		return n.Text, nil
	case "integer":
		var i int64
		_, err := fmt.Sscan(n.Text, &i)
		return i, err
	case "true", "false":
		if len(n.Nodes) > 0 || strings.TrimSpace(n.Text) != "" {
			return nil, fmt.Errorf("<%s> with content", n.XMLName.Local)
		}
		return n.XMLName.Local == "true", nil
	}
	return nil, fmt.Errorf("unknown plist element <%s>", n.XMLName.Local)
}

func TestServiceUnits_LaunchdPlists(t *testing.T) {
	e := newSvcEnv(t)
	loaded := false
	f := useServiceHost(t, "darwin", func(cmd []string) (string, error) {
		if cmd[1] == "print" && !loaded {
			return "", errors.New("exit status 113: Could not find service")
		}
		return "", nil
	})
	agents := filepath.Join(e.home, "Library", "LaunchAgents")
	if code, out, errOut := runCtl(t, "service", "install", "--bin-dir", e.bin); code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	var want []string
	for _, c := range serviceComponents {
		want = append(want, "launchctl print gui/501/dev.observer."+c, "launchctl bootstrap gui/501 "+filepath.Join(agents, "dev.observer."+c+".plist"))
	}
	svcCheckCalls(t, "install on macOS", f.calls, svcCmds(want...))
	if fi, err := os.Stat(filepath.Join(e.obs, "logs")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("the agents' log directory: %v %v", fi, err)
	}

	programs := map[string][]string{"bus": {"observerctl", "bus"}, "writer": {"observerctl", "writer"},
		"proxy": {"observer-proxy"}, "watch": {"observer-watch"}, "dash": {"observer-dash"}}
	var files []string
	for _, c := range serviceComponents {
		label := "dev.observer." + c
		p := filepath.Join(agents, label+".plist")
		files = append(files, p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v", p, fi.Mode().Perm())
		}
		v, err := parsePlist(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", p, err, data)
		}
		d, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: the plist holds %T, want a dict", p, v)
		}
		if d["Label"] != label {
			t.Errorf("%s Label %v", p, d["Label"])
		}
		args, _ := d["ProgramArguments"].([]any)
		var strs []string
		for _, a := range args {
			s, ok := a.(string)
			if !ok {
				t.Errorf("%s ProgramArguments holds %T", p, a)
			}
			strs = append(strs, s)
		}
		prog := programs[c]
		wantArgs := append([]string{filepath.Join(e.bin, prog[0]), "--home", e.obs}, prog[1:]...)
		if !slices.Equal(strs, wantArgs) || !filepath.IsAbs(strs[0]) {
			t.Errorf("%s ProgramArguments %q, want %q", p, strs, wantArgs)
		}
		if d["RunAtLoad"] != true {
			t.Errorf("%s RunAtLoad %v", p, d["RunAtLoad"])
		}
		switch ka := d["KeepAlive"].(type) {
		case bool:
			if !ka {
				t.Errorf("%s KeepAlive false", p)
			}
		case map[string]any:
			if ka["SuccessfulExit"] != false {
				t.Errorf("%s KeepAlive %v: want a restart after a failure", p, ka)
			}
		default:
			t.Errorf("%s KeepAlive %T", p, ka)
		}
		if d["StandardErrorPath"] != filepath.Join(e.obs, "logs", c+".log") {
			t.Errorf("%s StandardErrorPath %v", p, d["StandardErrorPath"])
		}
	}
	if xmllint, err := exec.LookPath("xmllint"); err == nil {
		if out, err := exec.Command(xmllint, append([]string{"--noout", "--nonet"}, files...)...).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("xmllint: %v\n%s", err, out)
		}
	} else {
		t.Log("xmllint not on PATH: checked with encoding/xml only")
	}
	if plutil, err := exec.LookPath("plutil"); err == nil {
		for _, p := range files {
			if out, err := exec.Command(plutil, "-lint", p).CombinedOutput(); err != nil {
				t.Errorf("plutil -lint %s: %v\n%s", p, err, out)
			}
		}
	}

	t.Run("replace loaded agents", func(t *testing.T) {
		loaded = true
		bin2 := filepath.Join(t.TempDir(), "bin2")
		svcMakeBinDir(t, bin2)
		f.reset()
		if code, out, errOut := runCtl(t, "service", "install", "--bin-dir", bin2, "--force"); code != ExitOK {
			t.Fatalf("install --force: exit %d\n%s%s", code, out, errOut)
		}
		var want []string
		for _, c := range serviceComponents {
			want = append(want, "launchctl print gui/501/dev.observer."+c, "launchctl bootout gui/501/dev.observer."+c,
				"launchctl bootstrap gui/501 "+filepath.Join(agents, "dev.observer."+c+".plist"))
		}
		svcCheckCalls(t, "install --force over loaded agents", f.calls, svcCmds(want...))
	})

	t.Run("status", func(t *testing.T) {
		f.answer = func(cmd []string) (string, error) {
			switch {
			case cmd[1] == "print-disabled":
				return "disabled services = {\n\t\"com.apple.x\" => enabled\n\t\"dev.observer.dash\" => disabled\n}\n", nil
			case cmd[1] == "print" && cmd[2] == "gui/501/dev.observer.dash":
				return "", errors.New("exit status 113: Could not find service")
			case cmd[1] == "print":
				return cmd[2] + " = {\n\tactive count = 1\n\tstate = running\n\tendpoints = {\n\t\tstate = waiting\n\t}\n}\n", nil
			}
			return "", nil
		}
		code, out, _ := runCtl(t, "service", "status", "--json")
		var rep serviceStatusReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if code != ExitFailure || rep.Manager != "launchd" || rep.Dir != agents || len(rep.Units) != 5 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		for _, u := range rep.Units {
			good := u.Component != "dash"
			if u.Enabled != good || u.Active != good || !u.Installed || u.Foreign {
				t.Errorf("%+v", u)
			}
		}
		if d := rep.Units[4]; d.EnabledState != "disabled" || d.ActiveState != "not-loaded" {
			t.Errorf("dash %+v", d)
		}
		if b := rep.Units[0]; b.ActiveState != "running" {
			t.Errorf("bus %+v", b)
		}
	})

	t.Run("uninstall", func(t *testing.T) {
		f.answer = nil // every agent loaded
		f.reset()
		if code, out, errOut := runCtl(t, "service", "uninstall"); code != ExitOK {
			t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
		}
		var want []string
		for _, c := range slices.Backward(serviceComponents) {
			want = append(want, "launchctl print gui/501/dev.observer."+c, "launchctl bootout gui/501/dev.observer."+c)
		}
		svcCheckCalls(t, "uninstall on macOS", f.calls, svcCmds(want...))
		if _, err := os.Stat(agents); !os.IsNotExist(err) {
			t.Errorf("install created %s; uninstall left it (%v)", agents, err)
		}
	})
}

// TestServiceInstall_WhileUp: with `observerctl up` running on the same home (its supervisor
// answers on the control socket), install refuses (exit 1, nothing written) and says how to go
// on; --no-load writes the units without starting them, and --force installs anyway, each with a
// warning; --dry-run warns.
func TestServiceInstall_WhileUp(t *testing.T) {
	e := newSvcEnv(t)
	f := useServiceHost(t, "linux", nil)
	cfg, err := config.Read(e.obs)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(cfg.RunDir(), 0o700)
	ctrl := &supervisor.Control{Status: func() any { return statusReport{Running: true, PID: 4242, Home: e.obs} }}
	if err := ctrl.Listen(socketPath(&env{cfg: cfg})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctrl.Close)

	code, out, errOut := runCtl(t, "service", "install", "--bin-dir", e.bin)
	if code != ExitFailure || !strings.Contains(errOut, "observer runs under `observerctl up` (pid 4242)") ||
		!strings.Contains(errOut, "`observerctl --home "+e.obs+" down && observerctl --home "+e.obs+" service install`") || !strings.Contains(errOut, "nothing written") {
		t.Errorf("install under up: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(e.units); !os.IsNotExist(err) || len(f.calls) != 0 {
		t.Errorf("install under up wrote %s (%v) or ran %v", e.units, err, f.calls)
	}
	if code, out, errOut = runCtl(t, "service", "install", "--bin-dir", e.bin, "--dry-run"); code != ExitOK || !strings.Contains(errOut, "refuses to start them unless --force or --no-load") {
		t.Errorf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = runCtl(t, "service", "install", "--bin-dir", e.bin, "--no-load"); code != ExitOK || !strings.Contains(errOut, "stop it with `observerctl down`") {
		t.Errorf("--no-load: exit %d\n%s%s", code, out, errOut)
	}
	if n := svcDirNames(t, e.units); len(n) != 6 || len(f.calls) != 0 {
		t.Errorf("--no-load wrote %v, ran %v", n, f.calls)
	}
	if code, out, errOut = runCtl(t, "service", "install", "--bin-dir", e.bin, "--force"); code != ExitOK || !strings.Contains(errOut, "warning: observer runs under `observerctl up`") || len(f.calls) == 0 {
		t.Errorf("--force: exit %d, calls %v\n%s%s", code, f.calls, out, errOut)
	}
}

// TestServiceInstall_WarnsWhenNotInstalled: units that run binaries in a checkout's build tree
// are written, with a warning naming the command that installs them and rewrites the units.
func TestServiceInstall_WarnsWhenNotInstalled(t *testing.T) {
	e := newSvcEnv(t)
	useServiceHost(t, "linux", nil)
	checkout := t.TempDir()
	write(t, filepath.Join(checkout, "go.mod"), "module github.com/observerhq/observer\n")
	bin := filepath.Join(checkout, "bin")
	svcMakeBinDir(t, bin)
	code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", bin)
	want := "make -C " + checkout + " install && " + filepath.Join(e.home, ".local", "bin", "observerctl") + " --home " + e.obs + " service install --force"
	if code != ExitOK || !strings.Contains(errOut, "warning: the units will run the binaries in "+bin+", in the build tree of the checkout "+checkout) || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, want on stderr %q\n%s%s", code, want, out, errOut)
	}
	// Installed (make install's prefix): no warning.
	installed := filepath.Join(e.home, ".local", "bin")
	svcMakeBinDir(t, installed)
	t.Setenv("TMPDIR", filepath.Join(e.home, "tmp")) // the test's home is not temporary here
	if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--force", "--bin-dir", installed); code != ExitOK || strings.Contains(errOut, "warning") {
		t.Errorf("from ~/.local/bin: exit %d\n%s%s", code, out, errOut)
	}
}

// TestServiceUninstall_RemovesCreatedDirs: uninstall removes the directories install created once
// they are empty, and only those: a directory that was there stays, one holding another file stays.
func TestServiceUninstall_RemovesCreatedDirs(t *testing.T) {
	e := newSvcEnv(t)
	useServiceHost(t, "linux", nil)
	write(t, filepath.Join(e.config, "other", "x.conf"), "x") // ~/.config existed
	if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin); code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := runCtl(t, "service", "uninstall", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "would remove "+e.units+", which install created, if it is empty then") {
		t.Errorf("dry run: exit %d\n%s", code, out)
	}
	if code, out, errOut := runCtl(t, "service", "uninstall", "--no-load"); code != ExitOK ||
		!strings.Contains(out, "removed "+e.units+" (install had created it)") || !strings.Contains(out, "removed "+filepath.Join(e.config, "systemd")) {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	if got := svcDirNames(t, e.config); !slices.Equal(got, []string{"other"}) {
		t.Errorf("%s holds %v after uninstall, want only what was there", e.config, got)
	}
	if _, err := os.Stat(filepath.Join(e.obs, serviceDirsName)); !os.IsNotExist(err) {
		t.Errorf("the record of the directories is left (%v)", err)
	}

	// A directory holding a file of the user's stays, and stays recorded.
	if code, out, errOut := runCtl(t, "service", "install", "--no-load", "--bin-dir", e.bin); code != ExitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	write(t, filepath.Join(e.units, "mine.timer"), "[Timer]\n")
	if code, out, _ := runCtl(t, "service", "uninstall", "--no-load"); code != ExitOK || !strings.Contains(out, "left "+e.units+": not empty") {
		t.Errorf("uninstall: exit %d\n%s", code, out)
	}
	os.Remove(filepath.Join(e.units, "mine.timer"))
	if code, out, _ := runCtl(t, "service", "uninstall", "--no-load"); code != ExitOK || !strings.Contains(out, "removed "+e.units) {
		t.Errorf("uninstall once empty: exit %d\n%s", code, out)
	}
}
