package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// doctorSetup is a working observer home, without the supervisor: a store, a config, a token, a
// running bus, something listening on the proxy's, the OTLP receiver's and the dashboard's
// addresses, and Claude Code
// set up with observer's hooks (Codex and Cursor absent).
type doctorSetup struct {
	*ctlEnv
	srv      *busserver.Server
	proxy    net.Listener
	otlp     net.Listener // the OTLP/HTTP address
	settings string
}

func newDoctorSetup(t *testing.T) *doctorSetup {
	t.Helper()
	e := newCtlEnv(t)
	os.Remove(e.codexHome)
	t.Setenv("PATH", t.TempDir())
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(e.obs, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := config.WriteDefault(config.Path(e.obs)); err != nil {
		t.Fatal(err)
	}
	token, err := bus.LoadOrCreateToken(filepath.Join(e.obs, "bus.token"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := busserver.Start(ctx, busserver.Config{Dir: filepath.Join(e.obs, "bus"), Host: "127.0.0.1", Port: -1, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	t.Setenv("OBSERVER_BUS_PORT", srv.ClientURL()[strings.LastIndex(srv.ClientURL(), ":")+1:])
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	t.Setenv("OBSERVER_PROXY_ADDR", proxy.Addr().String())
	// The OTLP receiver's two listeners, which observer-proxy would hold.
	otlpHTTP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { otlpHTTP.Close() })
	otlpGRPC, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { otlpGRPC.Close() })
	t.Setenv("OBSERVER_OTLP_ADDR", otlpHTTP.Addr().String())
	t.Setenv("OBSERVER_OTLP_GRPC_ADDR", otlpGRPC.Addr().String())
	dash := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(dash.Close)
	t.Setenv("OBSERVER_DASH_ADDR", strings.TrimPrefix(dash.URL, "http://"))
	if code, out, errOut := runCtl(t, "init", "--client", "claude-code"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	return &doctorSetup{ctlEnv: e, srv: srv, proxy: proxy, otlp: otlpHTTP, settings: filepath.Join(e.home, ".claude", "settings.json")}
}

// doctor runs `observerctl doctor --json` and returns its exit code and checks by name.
func doctor(t *testing.T) (int, map[string]check) {
	t.Helper()
	code, out, errOut := runCtl(t, "doctor", "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	checks := map[string]check{}
	fails := 0
	for _, c := range rep.Checks {
		checks[c.Name] = c
		if c.Status == checkFail {
			fails++
		}
		if c.Status != checkOK && c.Fix == "" && c.Name != "hooks" {
			t.Errorf("check %s is %s without a fix: %+v", c.Name, c.Status, c)
		}
	}
	if rep.OK != (fails == 0) || rep.Failures != fails {
		t.Errorf("report says ok=%v with %d failures, counted %d", rep.OK, rep.Failures, fails)
	}
	return code, checks
}

// expect fails unless each named check has its status and its detail and fix hold the words.
func expect(t *testing.T, checks map[string]check, name, status string, words ...string) {
	t.Helper()
	c, ok := checks[name]
	if !ok {
		t.Errorf("no check %q", name)
		return
	}
	if c.Status != status {
		t.Errorf("%s: %s (%s), want %s", name, c.Status, c.Detail, status)
	}
	for _, w := range words {
		if !strings.Contains(c.Detail+" "+c.Fix, w) {
			t.Errorf("%s: %q / %q lacks %q", name, c.Detail, c.Fix, w)
		}
	}
}

func TestDoctor_HealthyThenBroken(t *testing.T) {
	s := newDoctorSetup(t)
	dbPath := filepath.Join(s.obs, "observer.db")

	code, checks := doctor(t)
	for _, name := range []string{"home", "config", "bus.token", "store", "schema", "quarantine", "bus", "proxy", "otlp", "otlp.grpc", "dash", "hooks:claude-code"} {
		expect(t, checks, name, checkOK)
	}
	expect(t, checks, "supervisor", checkWarn, "observerctl up")
	expect(t, checks, "writer", checkWarn)
	expect(t, checks, "hooks:claude-code", checkOK, "all 9 events")
	expect(t, checks, "capture", checkOK, "no session in the last 24 h")
	if _, ok := checks["hooks:codex"]; ok || code != ExitOK {
		t.Errorf("exit %d; codex is not installed here: %+v", code, checks["hooks:codex"])
	}
	code, out, _ := runCtl(t, "doctor")
	if code != ExitOK || !strings.Contains(out, "CHECK") || !strings.Contains(out, "to fix:") || !strings.Contains(out, "0 failure(s), 2 warning(s)") {
		t.Errorf("human report: exit %d\n%s", code, out)
	}

	t.Run("writer outside the supervisor", func(t *testing.T) {
		st, err := store.OpenWriter(context.Background(), dbPath)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, checks := doctor(t)
		expect(t, checks, "writer", checkOK, "pid "+strconv.Itoa(os.Getpid()))
	})
	t.Run("home open to others", func(t *testing.T) {
		os.Chmod(s.obs, 0o755)
		defer os.Chmod(s.obs, 0o700)
		code, checks := doctor(t)
		expect(t, checks, "home", checkFail, "0755", "chmod 700 "+s.obs)
		if code != ExitFailure {
			t.Errorf("exit %d, want 1", code)
		}
		if fi, _ := os.Stat(s.obs); fi.Mode().Perm() != 0o755 {
			t.Error("doctor changed the home's mode")
		}
		if code, out, _ := runCtl(t, "doctor"); code != ExitFailure || !strings.Contains(out, "home: chmod 700") {
			t.Errorf("human report: exit %d\n%s", code, out)
		}
	})
	t.Run("store and token open to others", func(t *testing.T) {
		os.Chmod(dbPath, 0o644)
		os.Chmod(filepath.Join(s.obs, "bus.token"), 0o640)
		defer os.Chmod(dbPath, 0o600)
		defer os.Chmod(filepath.Join(s.obs, "bus.token"), 0o600)
		code, checks := doctor(t)
		expect(t, checks, "store", checkFail, "0644", "chmod 600")
		expect(t, checks, "bus.token", checkFail, "0640", "chmod 600")
		if code != ExitFailure {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("config does not parse", func(t *testing.T) {
		path := config.Path(s.obs)
		good := read(t, path)
		write(t, path, "[bus]\nprot = 4247\n")
		defer write(t, path, good)
		code, checks := doctor(t)
		expect(t, checks, "config", checkFail, "unknown key", "prot")
		expect(t, checks, "bus", checkOK) // the other checks go on with the defaults and environment
		if code != ExitFailure {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("an OBSERVER_ variable observer does not read", func(t *testing.T) {
		t.Setenv("OBSERVER_COMPRESSION_ENABLE", "true")
		code, checks := doctor(t)
		expect(t, checks, "config", checkWarn, "OBSERVER_COMPRESSION_ENABLE ", "OBSERVER_COMPRESSION_ENABLED", "correct its name")
		if code != ExitOK {
			t.Errorf("exit %d: a warning fails nothing", code)
		}
	})
	t.Run("values out of range", func(t *testing.T) {
		path := config.Path(s.obs)
		good := read(t, path)
		write(t, path, "[log]\nlevel = \"loud\"\n[writer]\nbatch_size = 0\n")
		defer write(t, path, good)
		code, checks := doctor(t)
		expect(t, checks, "config", checkFail, "config.toml:2: [log] level", "config.toml:4: [writer] batch_size")
		if code != ExitFailure {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("a price override the components refuse", func(t *testing.T) {
		path := config.Path(s.obs)
		good := read(t, path)
		write(t, path, good+"\n[pricing.models.\"house-model\"]\ninput = -1\noutput = 2\n")
		defer write(t, path, good)
		code, checks := doctor(t)
		expect(t, checks, "config", checkFail, "house-model")
		if code != ExitFailure {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("quarantine and newer schema", func(t *testing.T) {
		st, err := store.OpenWriter(context.Background(), dbPath)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.WriteBatch(context.Background(), nil, []store.Rejected{{Subject: "observer.v1.x.y", Reason: "bad", Data: []byte("{")}}); err != nil {
			t.Fatal(err)
		}
		st.DB.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '0999_future.sql', 0)")
		st.Close()
		defer func() {
			db, _ := store.OpenWriter(context.Background(), dbPath)
			db.DB.Exec("DELETE FROM schema_migrations WHERE version = 999")
			db.DB.Exec("DELETE FROM quarantine")
			db.Close()
		}()
		code, checks := doctor(t)
		expect(t, checks, "quarantine", checkWarn, "1 message", "quarantine")
		expect(t, checks, "schema", checkFail, "version 999", "newer")
		if code != ExitFailure {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("bus refuses the token", func(t *testing.T) {
		tok := filepath.Join(s.obs, "bus.token")
		good := read(t, tok)
		write(t, tok, "not-the-token\n")
		defer write(t, tok, good)
		_, checks := doctor(t)
		expect(t, checks, "bus", checkFail, "token")
	})
	t.Run("hook missing for some events", func(t *testing.T) {
		good := read(t, s.settings)
		defer write(t, s.settings, good)
		var doc map[string]any
		json.Unmarshal([]byte(good), &doc)
		delete(doc["hooks"].(map[string]any), "Stop")
		delete(doc["hooks"].(map[string]any), "PreCompact")
		b, _ := json.Marshal(doc)
		write(t, s.settings, string(b))
		code, checks := doctor(t)
		expect(t, checks, "hooks:claude-code", checkWarn, "PreCompact, Stop", "observerctl init --client claude-code")
		if code != ExitOK {
			t.Errorf("a missing hook is a warning; exit %d", code)
		}
	})
	t.Run("supervisor with an unhealthy writer and a silent proxy", func(t *testing.T) {
		cfg := config.Default()
		cfg.Home = s.obs
		os.MkdirAll(cfg.RunDir(), 0o700)
		ctrl := &supervisor.Control{Status: func() any {
			return statusReport{Running: true, PID: 4242, Home: s.obs, Components: []supervisor.ChildStatus{
				{Name: "bus", State: supervisor.StateRunning, Health: "ok"},
				{Name: "writer", PID: 4243, State: supervisor.StateBackoff, Health: "unhealthy", LastExit: "exit status 1"},
				{Name: "proxy", PID: 4244, State: supervisor.StateRunning, Health: "ok"},
			}}
		}}
		if err := ctrl.Listen(socketPath(&env{cfg: cfg})); err != nil {
			t.Fatal(err)
		}
		defer ctrl.Close()
		s.proxy.Close()
		s.otlp.Close()
		code, checks := doctor(t)
		expect(t, checks, "supervisor", checkOK, "pid 4242")
		expect(t, checks, "writer", checkFail, "unhealthy", "exit status 1", "observerctl logs writer")
		expect(t, checks, "proxy", checkFail, "runs but", "observerctl restart proxy")
		expect(t, checks, "otlp", checkFail, "proxy runs but its OTLP/HTTP receiver does not answer", "observerctl logs proxy")
		expect(t, checks, "otlp.grpc", checkOK)
		if code != ExitFailure {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("another program holds the OTLP port", func(t *testing.T) {
		// The test's listener on the OTLP/HTTP address answers the dial, as another collector
		// would: only the proxy's own report tells that its receiver is not the one listening.
		addr := s.otlp.Addr().String()
		if l, err := net.Listen("tcp", addr); err == nil {
			defer l.Close() // the previous subtest closed it: hold the port again
		}
		problem := "otlp/http listener " + addr + ": address already in use (another program holds the port (an OpenTelemetry collector?): stop it, or change [otlp] addr)"
		defer degradedSupervisor(t, s.obs, supervisor.ChildStatus{Name: "proxy", PID: 4244, State: supervisor.StateRunning, Health: "degraded",
			Problems: []string{problem}, Detail: problem + "; 127.0.0.1:8820, 0 requests"}).Close()
		code, checks := doctor(t)
		expect(t, checks, "supervisor", checkWarn, "proxy running/degraded", problem)
		expect(t, checks, "otlp", checkFail, "not listening", problem, "observerctl restart proxy")
		if code != ExitFailure {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("a reader cannot read its database", func(t *testing.T) {
		problem := "opencode: cannot read /home/u/.local/share/opencode/opencode.db: file is not a database"
		defer degradedSupervisor(t, s.obs, supervisor.ChildStatus{Name: "watch", PID: 4245, State: supervisor.StateRunning, Health: "degraded",
			Problems: []string{problem}, Detail: problem + "; 12 passes"}).Close()
		_, checks := doctor(t)
		expect(t, checks, "supervisor", checkWarn, "watch running/degraded", problem)
	})
	t.Run("bus down", func(t *testing.T) {
		s.srv.Close()
		code, checks := doctor(t)
		expect(t, checks, "bus", checkWarn, "bus down", "start it with `observerctl up`")
		if code != ExitOK {
			t.Errorf("bus down is a warning; exit %d", code)
		}
	})
}

// TestDoctor_FreshHome: before observer's first start everything missing is a warning, and
// doctor creates nothing.
func TestDoctor_FreshHome(t *testing.T) {
	e := newCtlEnv(t)
	t.Setenv("PATH", t.TempDir())
	os.Remove(e.codexHome)
	t.Setenv("OBSERVER_BUS_PORT", strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_PROXY_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_DASH_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_OTLP_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_OTLP_GRPC_ADDR", "")
	code, checks := doctor(t)
	expect(t, checks, "home", checkWarn, "does not exist yet")
	expect(t, checks, "otlp", checkWarn, "nothing answers", "OTLP/HTTP")
	if _, ok := checks["otlp.grpc"]; ok {
		t.Error("an empty grpc_addr is checked")
	}
	if _, ok := checks["capture"]; ok {
		t.Error("a capture check without a store")
	}
	expect(t, checks, "store", checkWarn, "observerctl backfill")
	expect(t, checks, "bus.token", checkWarn)
	expect(t, checks, "proxy", checkWarn, "nothing answers")
	expect(t, checks, "hooks", checkWarn, "no AI client found")
	if code != ExitOK {
		t.Errorf("exit %d", code)
	}
	if _, err := os.Stat(e.obs); !os.IsNotExist(err) {
		t.Errorf("doctor created the home (%v)", err)
	}
	if code, _, errOut := runCtl(t, "doctor", "--bogus"); code != ExitUsage || !strings.Contains(errOut, "bogus") {
		t.Errorf("bad flag: exit %d %s", code, errOut)
	}
}

// doctor tells, per client observer reads, whether its records are where observer looks, and how
// to meter it through the proxy; a client installed without records is a warning.
func TestDoctor_Clients(t *testing.T) {
	e := newCtlEnv(t)
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	for _, name := range []string{"gemini", "qwen", "crush"} {
		write(t, filepath.Join(bin, name), "#!/bin/sh\n")
		os.Chmod(filepath.Join(bin, name), 0o755)
	}
	write(t, filepath.Join(e.home, ".gemini", "tmp", "proj", "chats", "session-2026-06-01T10-00-abcd1234.json"),
		`{"sessionId":"abcd1234","projectHash":"x","startTime":"2026-06-01T10:00:00Z","lastUpdated":"2026-06-01T10:00:00Z","messages":[]}`)
	for _, k := range []string{"OBSERVER_CRUSH_DIRS", "CRUSH_GLOBAL_DATA", "XDG_DATA_HOME"} {
		t.Setenv(k, "")
	}
	crushData := filepath.Join(e.home, "src", "app", ".crush")
	write(t, filepath.Join(e.home, ".local", "share", "crush", "projects.json"),
		`{"projects":[{"path":"`+filepath.Dir(crushData)+`","data_dir":"`+crushData+`"}]}`)
	write(t, filepath.Join(crushData, "crush.db"), "")
	_, checks := doctor(t)
	expect(t, checks, "client:gemini-cli", checkOK, "1 record file", "GOOGLE_GEMINI_BASE_URL=http://")
	expect(t, checks, "client:crush", checkOK, "1 record file", `"base_url": "http://`)
	expect(t, checks, "client:qwen-code", checkWarn, "installed at "+filepath.Join(bin, "qwen"), "no records")
	if _, ok := checks["client:pi"]; ok {
		t.Error("doctor reported pi, neither installed nor recorded")
	}
}

// TestDoctor_RegisteredCommandGone: a hook entry (or observer-mcp entry) whose program is gone,
// as after `make clean` in the checkout init ran from, fails the commands check with the file, the
// missing path and the fix; so does a service unit whose binary is gone.
func TestDoctor_RegisteredCommandGone(t *testing.T) {
	e := newCtlEnv(t)
	os.Remove(e.codexHome)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("OBSERVER_BUS_PORT", strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_PROXY_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_DASH_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	if code, out, errOut := runCtl(t, "init", "--client", "claude-code"); code != ExitOK {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	_, checks := doctor(t)
	expect(t, checks, "commands", checkOK, "the 9 command(s) observer registered with the clients exist")

	// A checkout whose bin/ was cleaned: an entry of observer's (by hand, or an older init) runs it.
	checkout := t.TempDir()
	write(t, filepath.Join(checkout, "go.mod"), "module github.com/observerhq/observer\n")
	gone := filepath.Join(checkout, "bin", "observerctl")
	codexHooks := filepath.Join(e.codexHome, "hooks.json")
	write(t, codexHooks, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "`+gone+` hook --client codex"}]}]}}`)
	code, checks := doctor(t)
	expect(t, checks, "commands", checkFail, codexHooks+": hooks.Stop runs "+gone+", which does not exist",
		"make -C "+checkout+" install && "+filepath.Join(e.home, ".local", "bin", "observerctl")+" --home "+e.obs+" init")
	if code != ExitFailure {
		t.Errorf("doctor: exit %d with a failing check", code)
	}

	// A service unit whose binary is gone.
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	unit := filepath.Join(cfg, "systemd", "user", "observer-bus.service")
	write(t, unit, "# "+serviceMarker+"\n[Service]\nExecStart=\"/gone dir/bin/observerctl\" --home "+e.obs+" bus\n")
	_, checks = doctor(t)
	expect(t, checks, "units", checkFail, unit+" runs /gone dir/bin/observerctl, which does not exist", "service install --force")
	os.Remove(codexHooks)
	write(t, unit, "# "+serviceMarker+"\n[Service]\nExecStart="+strings.Fields(hookCommandFor(t, e, "x"))[0]+" bus\n")
	_, checks = doctor(t)
	expect(t, checks, "units", checkOK)
	expect(t, checks, "commands", checkOK)
}

// TestDoctor_Capture: the capture check lists the capture paths of the newest sessions of the
// last 24 h and hints at the gaps: a client's records without a proxy turn (not pointed at the
// proxy), and, while the OTLP receiver is on, a client that exports telemetry but whose recent
// sessions never reached it.
func TestDoctor_Capture(t *testing.T) {
	e := newCtlEnv(t)
	os.Remove(e.codexHome)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("OBSERVER_BUS_PORT", strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_PROXY_ADDR", "127.0.0.1:4999")
	t.Setenv("OBSERVER_DASH_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_OTLP_ADDR", "127.0.0.1:"+strconv.Itoa(closedPort(t)))
	t.Setenv("OBSERVER_OTLP_GRPC_ADDR", "")
	st, err := store.OpenWriter(context.Background(), filepath.Join(e.obs, "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	writeSessions := func(sessions ...captureFixture) {
		t.Helper()
		var evs []event.Event
		for _, s := range sessions {
			evs = append(evs, s.events(now)...)
		}
		if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
			t.Fatal(err)
		}
	}
	writeSessions(
		captureFixture{"claude-code", "aaaaaaaa-1111", time.Minute, []string{"proxy", "records", "otlp"}},
		captureFixture{"claude-code", "bbbbbbbb-2222", 2 * time.Minute, []string{"records", "hooks"}},
		captureFixture{"codex", "cccccccc-3333", 3 * time.Minute, []string{"proxy", "records"}},
		captureFixture{"gemini-cli", "dddddddd-4444", 4 * time.Minute, []string{"records"}},
		captureFixture{"claude-code", "eeeeeeee-5555", 30 * time.Hour, []string{"records"}}, // not recent
	)

	code, checks := doctor(t)
	expect(t, checks, "capture", checkWarn,
		"the 4 newest session(s) of the last 24 h: claude-code aaaaaaaa: proxy, records, otlp; claude-code bbbbbbbb: records, hooks; codex cccccccc: proxy, records; gemini-cli dddddddd: records",
		"claude-code is not pointed at the proxy (bbbbbbbb: records but no proxy turn): ANTHROPIC_BASE_URL=http://127.0.0.1:4999",
		"gemini-cli is not pointed at the proxy (dddddddd: records but no proxy turn): GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4999",
		"no recent session of codex reached the OTLP receiver: `observerctl --home "+e.obs+" init --otel`")
	if c := checks["capture"]; strings.Contains(c.Detail+c.Fix, "eeeeeeee") || strings.Contains(c.Fix, "of claude-code") {
		t.Errorf("capture: %+v", c)
	}
	if got := checks["capture"].Sessions; len(got) != 4 || got[0].SessionID != "aaaaaaaa-1111" || got[3].Client != "gemini-cli" ||
		strings.Join(got[1].Paths, ",") != "records,hooks" {
		t.Errorf("capture sessions in the JSON: %+v", got)
	}
	if code != ExitOK {
		t.Errorf("a capture gap is a hint, not a failure: exit %d", code)
	}
	_, out, _ := runCtl(t, "doctor")
	if !strings.Contains(out, "capture: claude-code is not pointed at the proxy") {
		t.Errorf("human report:\n%s", out)
	}

	t.Run("ReceiverOff", func(t *testing.T) {
		t.Setenv("OBSERVER_OTLP_ADDR", "")
		_, checks := doctor(t)
		expect(t, checks, "capture", checkWarn, "claude-code is not pointed at the proxy")
		expect(t, checks, "otlp", checkOK, "the OTLP receiver is off")
		if c := checks["capture"]; strings.Contains(c.Fix, "--otel") {
			t.Errorf("an OTLP hint with the receiver off: %s", c.Fix)
		}
	})

	t.Run("TenNewestNoGap", func(t *testing.T) {
		var fresh []captureFixture
		for i := range 12 {
			fresh = append(fresh, captureFixture{"claude-code", fmt.Sprintf("f%07d-new", i), time.Duration(i) * time.Second, []string{"proxy", "records", "otlp"}})
		}
		writeSessions(fresh...)
		_, checks := doctor(t)
		expect(t, checks, "capture", checkOK, "the 10 newest session(s) of the last 24 h: claude-code f0000000: proxy, records, otlp;")
		if got := checks["capture"].Sessions; len(got) != 10 || got[9].SessionID != "f0000009-new" {
			t.Errorf("capture sessions: %+v", got)
		}
	})
}

// captureFixture is a session last seen ago, with the rows each of its capture paths writes.
type captureFixture struct {
	client, id string
	ago        time.Duration
	paths      []string
}

func (f captureFixture) events(now time.Time) []event.Event {
	at := now.Add(-f.ago)
	mk := func(kind event.Kind, source, key string) event.Event {
		e := event.New(kind, source)
		e.ID = event.ID("doctor-test", f.client, f.id, key)
		e.Time, e.Client, e.SessionID, e.Project = at, f.client, f.id, "/home/u/proj"
		return e
	}
	var evs []event.Event
	for _, p := range f.paths {
		switch p {
		case store.PathProxy:
			e := mk(event.KindAPITurn, "observer-proxy", "turn")
			e.APITurn = &event.APITurn{Provider: "anthropic", Model: "claude-sonnet-4-5", RequestID: "req_p_" + f.id, Status: 200}
			evs = append(evs, e)
		case store.PathRecords:
			u := mk(event.KindTokenUsage, "observer-watch", "usage")
			u.TokenUsage = &event.TokenUsage{MessageID: "msg_" + f.id, Model: "claude-sonnet-4-5", Origin: "transcript"}
			evs = append(evs, u)
		case store.PathHooks:
			h := mk(event.KindHook, "observerctl", "hook")
			h.Hook = &event.Hook{Event: "SessionStart"}
			evs = append(evs, h)
		case store.PathOTLP:
			s := mk(event.KindSession, "otlp", "otlp-session")
			s.Session = &event.Session{State: event.SessionActive}
			evs = append(evs, s)
		}
	}
	return evs
}

// TestDoctorDisk_Bound: the disk check warns when the next start cannot reserve the stream's bound,
// in the bus's own words (busserver.CheckReserve), naming [bus] max_bytes, or [hub] max_bytes in a team
// hub's home, whose stream [bus] max_bytes does not bound.
func TestDoctorDisk_Bound(t *testing.T) {
	const huge = 1 << 60
	run := func(t *testing.T, cfg config.Config) check {
		t.Helper()
		var got []check
		doctorDisk(cfg, func(name, status, detail, fix string) {
			got = append(got, check{Name: name, Status: status, Detail: detail, Fix: fix})
		})
		if len(got) != 1 || got[0].Name != "disk" {
			t.Fatalf("checks %+v, want one disk check", got)
		}
		return got[0]
	}
	home := t.TempDir()
	cfg := config.Default()
	cfg.Home = home
	cfg.Bus.MaxBytes = huge
	if c := run(t, cfg); c.Status != checkWarn || !strings.Contains(c.Detail, "[bus] max_bytes is 1024.0 PiB") || !strings.Contains(c.Fix, "[bus] max_bytes") {
		t.Errorf("member home, [bus] max_bytes 1 EiB: %+v, want a warning naming [bus] max_bytes", c)
	}

	if err := os.MkdirAll(filepath.Join(home, "hub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "hub", "ca.pem"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := run(t, cfg); c.Status != checkOK {
		t.Errorf("hub home, [bus] max_bytes 1 EiB, [hub] max_bytes default: %+v, want ok", c)
	}
	cfg.Bus.MaxBytes, cfg.Hub.MaxBytes = 1<<20, huge
	if c := run(t, cfg); c.Status != checkWarn || !strings.Contains(c.Detail, "[hub] max_bytes is 1024.0 PiB") || !strings.Contains(c.Fix, "[hub] max_bytes") {
		t.Errorf("hub home, [hub] max_bytes 1 EiB: %+v, want a warning naming [hub] max_bytes", c)
	}
}

// degradedSupervisor answers doctor's status request for home as a supervisor whose bus and writer
// are healthy and whose other component is c; the caller closes it.
func degradedSupervisor(tb testing.TB, home string, c supervisor.ChildStatus) *supervisor.Control {
	tb.Helper()
	cfg := config.Default()
	cfg.Home = home
	ctrl := &supervisor.Control{Status: func() any {
		return statusReport{Running: true, PID: 4242, Home: home, Components: []supervisor.ChildStatus{
			{Name: "bus", State: supervisor.StateRunning, Health: "ok"},
			{Name: "writer", PID: 4243, State: supervisor.StateRunning, Health: "ok"},
			c,
		}}
	}}
	if err := ctrl.Listen(socketPath(&env{cfg: cfg})); err != nil {
		tb.Fatal(err)
	}
	return ctrl
}

// doctorAlerts: no URL says so; a failing delivery the writer reports is a warning naming the
// host only; a URL without a supervised writer is not checked.
func TestDoctorAlerts(t *testing.T) {
	cfg := config.Default()
	var got []check
	add := func(name, status, detail, fix string) {
		got = append(got, check{Name: name, Status: status, Detail: detail, Fix: fix})
	}
	doctorAlerts(cfg, nil, true, add)
	cfg.Alerts.WebhookURL = "https://hooks.slack.com/services/T0/B0/doctortoken"
	doctorAlerts(cfg, []bus.Notice{{Name: "alerts:webhook", OK: false, Detail: "the last delivery to https://hooks.slack.com/… (slack) failed: HTTP 404"}}, true, add)
	doctorAlerts(cfg, nil, false, add)
	if len(got) != 3 {
		t.Fatalf("checks %+v", got)
	}
	if got[0].Status != checkOK || !strings.Contains(got[0].Detail, "not set") {
		t.Errorf("no URL: %+v", got[0])
	}
	if got[1].Name != "alerts:webhook" || got[1].Status != checkWarn || !strings.Contains(got[1].Detail, "HTTP 404") {
		t.Errorf("failing: %+v", got[1])
	}
	if got[2].Status != checkOK || !strings.Contains(got[2].Detail, "https://hooks.slack.com/…") || !strings.Contains(got[2].Detail, "not checked") {
		t.Errorf("not supervised: %+v", got[2])
	}
	for _, c := range got {
		if strings.Contains(c.Detail+c.Fix, "doctortoken") {
			t.Errorf("the check shows the URL's token: %+v", c)
		}
	}
}

// Every client of the registry that has a command gets its `client:NAME` line once that command
// is on PATH (installed, records or not): doctor reads the registry, not a list of its own.
func TestDoctor_EveryInstalledClientHasItsLine(t *testing.T) {
	newCtlEnv(t)
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	var want, none []string
	for _, c := range client.All() {
		if len(c.Bins) == 0 {
			none = append(none, c.Name) // an editor's extension: doctor reports it by its records
			continue
		}
		p := filepath.Join(bin, c.Bins[0])
		write(t, p, "#!/bin/sh\n")
		os.Chmod(p, 0o755)
		want = append(want, c.Name)
	}
	if len(want) < 30 {
		t.Fatalf("only %d clients with a command in the registry", len(want))
	}
	_, checks := doctor(t)
	for _, name := range want {
		c, ok := checks["client:"+name]
		if !ok {
			t.Errorf("no client:%s line with its command on PATH", name)
			continue
		}
		if c.Status != checkOK && c.Status != checkWarn {
			t.Errorf("client:%s: %s (%s)", name, c.Status, c.Detail)
		}
	}
	t.Logf("%d clients checked by their command; without one (reported by their records): %v", len(want), none)
}
