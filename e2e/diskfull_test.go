package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
)

// mountTmpfs mounts a tmpfs of size bytes (mode 0700, as observer's home must be) on a fresh
// directory and unmounts it when the test ends: call it before newSuite, so that the unmount runs
// after the suite has stopped. It skips the test, saying why, where mounting is not allowed.
func mountTmpfs(tb testing.TB, size int64) string {
	tb.Helper()
	dir, why := tryMountTmpfs(tb, size)
	if why != "" {
		tb.Skip(why)
	}
	return dir
}

// tryMountTmpfs is mountTmpfs for a test that goes on without the tmpfs: it returns why it could
// not mount one ("" when it did) instead of skipping.
func tryMountTmpfs(tb testing.TB, size int64) (dir, why string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		return "", "needs root to mount a small tmpfs (a full disk)"
	}
	dir = tb.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput(); err != nil {
		return "", fmt.Sprintf("cannot mount a tmpfs here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			tb.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir, ""
}

// fillDisk writes a file in dir until its disk is full, to the last 512 bytes, and returns its path.
func fillDisk(tb testing.TB, dir string) string {
	tb.Helper()
	path, err := fillDiskErr(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// fillDiskErr is fillDisk for a goroutine other than the test's: it returns its error. The file
// may exist (and hold some of the disk) on an error.
func fillDiskErr(dir string) (string, error) {
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, size := range []int{64 << 10, 512} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					return path, fmt.Errorf("fill %s: %w", path, err)
				}
				break
			}
		}
	}
	return path, nil
}

// proxyCounts reads what the proxy's heartbeat says in `status --json`: the turns it served and
// those it could not record ("…, 400 requests, 400 turns; …; 300 turns not confirmed recorded (disk full)").
var (
	proxyTurnsRE       = regexp.MustCompile(`\d+ requests, (\d+) turns`)
	proxyNotRecordedRE = regexp.MustCompile(`(\d+) turns not confirmed recorded`)
)

type diskFullStatus struct {
	Components []struct {
		Name     string   `json:"name"`
		Health   string   `json:"health"`
		Restarts int      `json:"restarts"`
		Detail   string   `json:"detail"`
		Problems []string `json:"problems"`
	} `json:"components"`
	Bus struct {
		Pending uint64 `json:"pending"`
		Spooled int    `json:"spool_files"`
	} `json:"bus"`
}

func (s *suite) diskFullStatus() (diskFullStatus, int) {
	out, _, code := s.ctl(nil, "status", "--json")
	var st diskFullStatus
	json.Unmarshal([]byte(out), &st)
	return st, code
}

// proxyCounts returns the turns the proxy served and those it counted as not recorded, from its
// heartbeat's detail; ok is false before the proxy has reported.
func (st diskFullStatus) proxyCounts() (served, notRecorded int, ok bool) {
	for _, c := range st.Components {
		if c.Name != "proxy" {
			continue
		}
		m := proxyTurnsRE.FindStringSubmatch(c.Detail)
		if m == nil {
			return 0, 0, false
		}
		served, _ = strconv.Atoi(m[1])
		if m := proxyNotRecordedRE.FindStringSubmatch(c.Detail); m != nil {
			notRecorded, _ = strconv.Atoi(m[1])
		}
		return served, notRecorded, true
	}
	return 0, 0, false
}

// TestDiskFull_ProxyServesCountsAndRecovers runs the suite with its home on a 24 MB tmpfs and a
// 4 MiB stream. After 50 turns through the proxy the disk is filled: 300 more are all answered
// (the user's agent is never blocked), status and doctor say the disk is full, and the proxy
// counts the turns it could neither publish nor spool. Once the filler is deleted, 50 more turns
// are recorded without a restart, status is healthy again, and every turn served is either in the
// store or counted as not recorded: none the stream acknowledged was lost, none is counted twice.
func TestDiskFull_ProxyServesCountsAndRecovers(t *testing.T) {
	home := mountTmpfs(t, 24<<20) // before newSuite: unmounted after the suite stops
	// On a failure, the logs say what the components saw (this runs after the suite has stopped,
	// before the unmount).
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{"up-stderr.log", "logs/proxy.log", "logs/writer.log"} {
				data, _ := os.ReadFile(filepath.Join(home, f))
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				t.Logf("--- %s (last lines):\n%s", f, strings.Join(lines[max(0, len(lines)-15):], "\n"))
			}
		}
	})
	fake := httptest.NewServer(fakeapi.New(fakeapi.Config{}))
	defer fake.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_HOME="+home, "OBSERVER_BUS_MAX_BYTES=4194304",
		"OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+fake.URL)
	s.home = home // the suite's own temporary home keeps only the clients' HOME
	s.start()

	client := &http.Client{Timeout: time.Minute}
	phase := map[string]string{} // the message id of each turn served, to its phase
	served := 0
	send := func(name string, n int) {
		t.Helper()
		for i := range n {
			body := fmt.Sprintf(`{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"%s %d"}]}`, name, i)
			resp, err := client.Post("http://"+proxyAddr+"/v1/messages", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatalf("%s request %d: %v", name, i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var msg struct {
				ID string `json:"id"`
			}
			if resp.StatusCode != 200 || json.Unmarshal(b, &msg) != nil || msg.ID == "" {
				t.Fatalf("%s request %d: the proxy answered %d: %s", name, i, resp.StatusCode, b)
			}
			if phase[msg.ID] != "" {
				t.Fatalf("%s request %d: message id %s served twice", name, i, msg.ID)
			}
			phase[msg.ID] = name
			served++
		}
	}

	send("before", 50)
	s.waitCount(time.Minute, 50, "SELECT count(*) FROM api_turns")

	filler := fillDisk(t, home)
	send("full", 300)

	// The stream does not answer a publish its store cannot write: the proxy's client spools after
	// its timeout, and the spool's disk is full too. Wait until the proxy has counted a turn it
	// could not record, so that the disk is freed only after that path ran.
	var st diskFullStatus
	var code int
	deadline := time.Now().Add(patient(0))
	for {
		st, code = s.diskFullStatus()
		if _, nr, _ := st.proxyCounts(); nr > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy counted no turn as not recorded %v after 300 turns on a full disk: %+v", patient(0), st)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Status and doctor say the disk is full while it is.
	health := map[string]string{}
	for _, c := range st.Components {
		health[c.Name] = c.Health
		if c.Name == "proxy" || c.Name == "bus" || c.Name == "writer" {
			if !strings.Contains(c.Detail, "disk full: ") || !strings.Contains(c.Detail, home) {
				t.Errorf("status --json on a full disk: %s detail %q, want it to say the disk holding %s is full", c.Name, c.Detail, home)
			}
		}
	}
	if code != 1 || health["bus"] != "unhealthy" || health["writer"] != "unhealthy" || health["proxy"] != "degraded" {
		t.Errorf("status --json on a full disk: exit %d, health %v; want exit 1, the bus and the writer unhealthy, the proxy degraded", code, health)
	}
	out, _, code := s.ctl(nil, "doctor", "--json")
	var rep struct {
		Checks []struct{ Name, Status, Detail, Fix string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code == 0 {
		t.Errorf("doctor --json on a full disk: exit %d, %v, want a failure\n%s", code, err, out)
	}
	diskCheck := ""
	for _, c := range rep.Checks {
		if c.Name == "disk" {
			diskCheck = c.Status + ": " + c.Detail
		}
	}
	if !strings.HasPrefix(diskCheck, "fail: disk full: ") {
		t.Errorf("doctor --json on a full disk: disk check %q, want a failure saying the disk is full", diskCheck)
	}
	out, _, _ = s.ctl(nil, "statusline", "--json")
	var sl struct {
		Line     string `json:"line"`
		DiskFull string `json:"disk_full"`
	}
	if json.Unmarshal([]byte(out), &sl); !strings.HasPrefix(sl.DiskFull, "disk full: ") {
		t.Errorf("statusline --json on a full disk: disk_full %q, want it set\n%s", sl.DiskFull, out)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	send("after", 50)

	// Settled: the proxy has published or counted all it served, the stream has nothing pending
	// for the writer and no spool waits; then nothing more arrives.
	var recorded, notRecorded int
	deadline = time.Now().Add(patient(0))
	for {
		st, _ := s.diskFullStatus()
		proxyServed, nr, ok := st.proxyCounts()
		recorded = s.count("SELECT count(*) FROM api_turns")
		notRecorded = nr
		if ok && proxyServed == served && recorded+notRecorded >= served && st.Bus.Pending == 0 && st.Bus.Spooled == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not settled after %v: the proxy served %d (ok %v), %d recorded, %d counted as not recorded, %d pending, %d spool files; want %d",
				patient(0), proxyServed, ok, recorded, nr, st.Bus.Pending, st.Bus.Spooled, served)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Status is healthy again without a restart, of observer or of a component (the proxy stays
	// degraded a while after its last lost turn).
	s.waitHealthy(time.Minute)
	st, _ = s.diskFullStatus()
	for _, c := range st.Components {
		if c.Restarts != 0 {
			t.Errorf("%s was restarted %d times", c.Name, c.Restarts)
		}
	}
	_, notRecorded, _ = st.proxyCounts()
	recorded = s.count("SELECT count(*) FROM api_turns")

	byPhase := map[string]int{}
	rows, err := s.db().Query("SELECT message_id FROM api_turns")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		p := phase[id]
		if p == "" {
			t.Errorf("api_turns holds message %q, which the proxy never served", id)
		}
		byPhase[p]++
	}
	rows.Close()
	if d := s.count("SELECT count(DISTINCT message_id) FROM api_turns"); d != recorded {
		t.Errorf("%d turns recorded, %d distinct: a turn was stored twice", recorded, d)
	}
	t.Logf("turns served %d; recorded %d (%d before the disk filled, %d while it was full, %d after space was freed); not recorded %d (disk full)",
		served, recorded, byPhase["before"], byPhase["full"], byPhase["after"], notRecorded)
	if recorded+notRecorded != served {
		t.Errorf("recorded %d + not recorded %d = %d, want the %d served: a turn was lost without a word, or counted and stored",
			recorded, notRecorded, recorded+notRecorded, served)
	}
	if notRecorded == 0 {
		t.Error("no turn was counted as not recorded on a full disk")
	}
	if byPhase["before"] != 50 || byPhase["after"] != 50 {
		t.Errorf("recorded %d of the 50 turns before the disk filled and %d of the 50 after space was freed, want all", byPhase["before"], byPhase["after"])
	}
}
