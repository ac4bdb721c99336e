package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// relay is a TCP forwarder standing in for a member's network link to the hub: down cuts every
// connection and stops listening, up listens again on the same port.
type relay struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newRelay(t *testing.T, target string) *relay {
	r := &relay{t: t, addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), target: target}
	r.up()
	t.Cleanup(r.down)
	return r
}

func (r *relay) up() {
	r.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment after down
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", r.target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, u)
			r.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

func (r *relay) down() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// teamEvents are one round's worth of one member's events: a session start, then for each of n a
// command with its output, a prompt and an API turn (teamRound(n) events in all). Every text is
// marked with the member so the hub's files can be searched, and every path is under the member's
// project directory PROJDIR-<member>-payroll. (No hook: the member's watcher would follow the
// session it starts and report its end, one event more at a moment of its own.)
func teamEvents(member string, round, n int) []byte {
	var b bytes.Buffer
	project := teamProject(member)
	transcript := fmt.Sprintf("/home/%s/.claude/projects/%s/sess-%d.jsonl", member, strings.ReplaceAll(project, "/", "-"), round)
	sess := fmt.Sprintf("sess-%s-%d", member, round)
	at := time.Date(2026, 12, 1, 10, round, 0, 0, time.UTC).Format(time.RFC3339Nano)
	fmt.Fprintf(&b, `{"id":"%s-r%d-session","kind":"session","time":"%s","source":"e2e","client":"claude-code","session_id":"%s","project":"%s","v":1,`+
		`"session":{"state":"started","cwd":"%s/cmd","transcript_path":"%s","git_branch":"fix/PROJDIR-%s-branch","model":"claude-sonnet-4-5"}}`+"\n",
		member, round, at, sess, project, project, transcript, member)
	for i := range n {
		at := time.Date(2026, 12, 1, 10, round, i%60, 0, time.UTC).Format(time.RFC3339Nano)
		id := fmt.Sprintf("%s-r%d-%d", member, round, i)
		fmt.Fprintf(&b, `{"id":"%s-cmd","kind":"action","time":"%s","source":"e2e","client":"claude-code","session_id":"%s","project":"%s","host":"%s-laptop","user":"%s","v":1,"member":"bob",`+
			`"action":{"type":"run_command","tool":"Bash","target":"make -C %s deploy SECRET-TARGET-%s","output":"SECRET-OUTPUT-%s done","error":"","success":true,"transcript":"%s"}}`+"\n",
			id, at, sess, project, member, member, project, member, member, transcript)
		fmt.Fprintf(&b, `{"id":"%s-prompt","kind":"action","time":"%s","source":"e2e","client":"claude-code","session_id":"%s","project":"%s","v":1,`+
			`"action":{"type":"user_prompt","target":"SECRET-PROMPT-%s please fix the build"}}`+"\n", id, at, sess, project, member)
		fmt.Fprintf(&b, `{"id":"%s-turn","kind":"api_turn","time":"%s","source":"observer-proxy","client":"claude-code","session_id":"%s","project":"%s","v":1,`+
			`"api_turn":{"provider":"anthropic","endpoint":"/v1/messages","model":"claude-sonnet-4-5","status":200,"latency_ms":900,"cost_usd":0.01,"bytes_in":100,"bytes_out":200,"input_tokens":1000,"output_tokens":100,"cache_read_tokens":0,"cache_creation_tokens":0}}`+"\n",
			id, at, sess, project)
	}
	return b.Bytes()
}

// teamProject is the project directory of a member's team events.
func teamProject(member string) string {
	return fmt.Sprintf("/home/%s/code/PROJDIR-%s-payroll", member, member)
}

// teamRound is how many events teamEvents(_, _, n) makes.
func teamRound(n int) int { return 3*n + 1 }

func (s *suite) publish(data []byte) {
	s.tb.Helper()
	out, errOut, code := s.ctl(data, "publish")
	if code != 0 {
		s.tb.Fatalf("publish: exit %d\n%s%s", code, out, errOut)
	}
}

type teamStatus struct {
	Member    string `json:"member"`
	Running   bool   `json:"running"`
	Connected bool   `json:"connected"`
	Pending   uint64 `json:"pending"`
	Error     string `json:"error"`
}

func (s *suite) teamStatus() teamStatus {
	s.tb.Helper()
	out, errOut, code := s.ctl(nil, "team", "status", "--json")
	var st teamStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		s.tb.Fatalf("team status: exit %d\n%s%s", code, out, errOut)
	}
	return st
}

// waitTeam waits until cond holds for the member's team status.
func (s *suite) waitTeam(d time.Duration, what string, cond func(teamStatus) bool) teamStatus {
	s.tb.Helper()
	deadline := time.Now().Add(d)
	var st teamStatus
	for time.Now().Before(deadline) {
		if st = s.teamStatus(); cond(st) {
			return st
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.tb.Fatalf("member %s: %s not reached in %v (status %+v)", st.Member, what, d, st)
	return st
}

// newHub makes a hub home listening for leafnodes on a free port, with the named members; it
// returns the hub and each member's credentials file.
func newHub(t *testing.T, extraEnv []string, members ...string) (*suite, string, map[string]string) {
	leaf := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	hub := newSuite(t, append([]string{"OBSERVER_HUB_ADDR=" + leaf}, extraEnv...)...)
	if out, errOut, code := hub.ctl(nil, "hub", "init"); code != 0 {
		t.Fatalf("hub init: exit %d\n%s%s", code, out, errOut)
	}
	creds := map[string]string{}
	for _, m := range members {
		path := filepath.Join(t.TempDir(), m+".observer-team")
		if out, errOut, code := hub.ctl(nil, "hub", "add-member", m, "-o", path); code != 0 {
			t.Fatalf("hub add-member %s: exit %d\n%s%s", m, code, out, errOut)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("credentials of %s: %v, mode %v (want 0600)", m, err, fi.Mode().Perm())
		}
		creds[m] = path
	}
	return hub, leaf, creds
}

func newMember(t *testing.T, creds, share string, extraEnv ...string) *suite {
	m := newSuite(t, extraEnv...)
	if out, errOut, code := m.ctl(nil, "team", "join", creds, "--share", share); code != 0 {
		t.Fatalf("team join: exit %d\n%s%s", code, out, errOut)
	}
	m.start()
	return m
}

// memberCounts is how many actions and turns the hub stored for member.
func (s *suite) memberCounts(member string) (actions, turns int) {
	return s.count(`SELECT count(*) FROM actions WHERE member = ?`, member),
		s.count(`SELECT count(*) FROM api_turns WHERE member = ?`, member)
}

func (s *suite) waitMember(d time.Duration, member string, actions, turns int) {
	s.tb.Helper()
	deadline := time.Now().Add(d)
	var a, tu int
	for time.Now().Before(deadline) {
		if a, tu = s.memberCounts(member); a == actions && tu == turns {
			return
		}
		if a > actions || tu > turns {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.tb.Fatalf("hub holds %d actions and %d turns of %s after %v, want %d and %d", a, tu, member, d, actions, turns)
}

// teamStreamSeq is how many events the hub's team stream has ever taken.
func (s *suite) teamStreamSeq() uint64 {
	s.tb.Helper()
	tok, err := os.ReadFile(filepath.Join(s.home, "bus.token"))
	if err != nil {
		s.tb.Fatal(err)
	}
	var port string
	for _, e := range s.env {
		if v, ok := strings.CutPrefix(e, "OBSERVER_BUS_PORT="); ok {
			port = v
		}
	}
	nc, err := nats.Connect("nats://127.0.0.1:"+port, nats.Token(strings.TrimSpace(string(tok))))
	if err != nil {
		s.tb.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	str, err := js.Stream(ctx, "TEAM")
	if err != nil {
		s.tb.Fatal(err)
	}
	return str.CachedInfo().State.LastSeq
}

// filesContaining lists the files under the hub's home, every regular one (store, WAL, stream
// files, logs, state), whose bytes contain any of markers.
func (s *suite) filesContaining(markers ...string) []string {
	var hits []string
	filepath.WalkDir(s.home, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			s.tb.Errorf("read %s: %v", path, err)
			return nil
		}
		for _, m := range markers {
			if bytes.Contains(data, []byte(m)) {
				hits = append(hits, fmt.Sprintf("%s (%s)", path, m))
			}
		}
		return nil
	})
	return hits
}

// hubFiles is every byte the hub keeps: its store (with the WAL) and its bus's stream files.
func (s *suite) hubFiles() []byte {
	var all []byte
	filepath.WalkDir(s.home, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(path, ".log") {
			if data, err := os.ReadFile(path); err == nil {
				all = append(all, data...)
			}
		}
		return nil
	})
	return all
}

// TestTeam_ThreeMembersOneHub is team mode as a team runs it: a hub and three member suites,
// separate processes with their own homes and ports. One member is cut off for a while and keeps
// producing; the hub restarts mid-way while members keep producing; at the end the hub holds every
// member's events exactly once, each stripped to its member's share level.
func TestTeam_ThreeMembersOneHub(t *testing.T) {
	hub, leaf, creds := newHub(t, nil, "alice", "bob", "carol", "mallory")
	hub.launch("hub", "up", "--grace", "5s")
	hub.waitHealthy(30 * time.Second)

	alice := newMember(t, creds["alice"], "usage")
	bob := newMember(t, creds["bob"], "actions")
	link := newRelay(t, leaf) // carol's network
	carol := newMember(t, creds["carol"], "full", "OBSERVER_TEAM_HUB=tls://"+link.addr)
	members := map[string]*suite{"alice": alice, "bob": bob, "carol": carol}
	for name, m := range members {
		m.waitTeam(30*time.Second, "connected to the hub", func(st teamStatus) bool { return st.Connected })
		if st := m.teamStatus(); st.Member != name {
			t.Fatalf("team status names %q, want %s", st.Member, name)
		}
	}

	const n = 10 // per member and round: 2n actions, n turns
	for name, m := range members {
		m.publish(teamEvents(name, 1, n))
	}
	for name := range members {
		hub.waitMember(30*time.Second, name, 2*n, n)
	}

	// Carol's link goes down; everyone keeps working.
	link.down()
	carol.waitTeam(30*time.Second, "disconnected", func(st teamStatus) bool { return !st.Connected })
	for name, m := range members {
		m.publish(teamEvents(name, 2, n))
	}
	hub.waitMember(30*time.Second, "alice", 4*n, 2*n)
	hub.waitMember(30*time.Second, "bob", 4*n, 2*n)
	if a, tu := hub.memberCounts("carol"); a != 2*n || tu != n {
		t.Fatalf("carol is offline, yet the hub has %d actions and %d turns of hers (want %d and %d)", a, tu, 2*n, n)
	}
	if st := carol.teamStatus(); st.Pending != uint64(teamRound(n)) {
		t.Fatalf("carol holds %d events for the hub, want %d", st.Pending, teamRound(n))
	}

	// The hub restarts while members keep producing.
	hub.stop()
	for name, m := range members {
		m.publish(teamEvents(name, 3, n))
	}
	hub.launch("hub", "up", "--grace", "5s")
	hub.waitHealthy(30 * time.Second)
	hub.waitMember(60*time.Second, "alice", 6*n, 3*n)
	hub.waitMember(60*time.Second, "bob", 6*n, 3*n)

	// Carol's link comes back: her held events arrive.
	link.up()
	hub.waitMember(90*time.Second, "carol", 6*n, 3*n)
	carol.waitTeam(30*time.Second, "nothing pending", func(st teamStatus) bool { return st.Connected && st.Pending == 0 })

	// Exactly once: the team stream took each event once (no redelivery doubled any), and the
	// store holds each once, under the member whose machine produced it (alice's events claim
	// to be bob's: the hub does not believe them).
	if seq, want := hub.teamStreamSeq(), uint64(3*3*teamRound(n)); seq != want {
		t.Errorf("the hub's team stream took %d events, want %d", seq, want)
	}
	if got := hub.count(`SELECT count(*) FROM actions WHERE event_id LIKE 'alice/alice-%'`); got != 6*n {
		t.Errorf("alice's actions stored under her name: %d, want %d", got, 6*n)
	}
	if got := hub.count(`SELECT count(*) FROM actions WHERE member = 'bob' AND event_id NOT LIKE 'bob/bob-%'`); got != 0 {
		t.Errorf("%d actions of another member stored as bob's", got)
	}
	if got := hub.count(`SELECT count(DISTINCT member || session_id) FROM sessions WHERE member != ''`); got != 9 {
		t.Errorf("hub sessions: %d, want 9", got)
	}
	if got := hub.count(`SELECT count(*) FROM sessions WHERE member = 'alice' AND host = 'alice-laptop' AND os_user = 'alice'`); got != 3 {
		t.Errorf("alice's sessions with her host and user: %d, want 3", got)
	}

	// Share levels, checked in the hub's own files: usage lets no target, prompt or output out;
	// actions lets targets out but no output or prompt; full lets everything out.
	files := hub.hubFiles()
	for _, c := range []struct {
		marker string
		want   bool
	}{
		{"SECRET-TARGET-alice", false}, {"SECRET-PROMPT-alice", false}, {"SECRET-OUTPUT-alice", false},
		{"SECRET-TARGET-bob", true}, {"SECRET-PROMPT-bob", false}, {"SECRET-OUTPUT-bob", false},
		{"SECRET-TARGET-carol", true}, {"SECRET-PROMPT-carol", true}, {"SECRET-OUTPUT-carol", true},
	} {
		if got := bytes.Contains(files, []byte(c.marker)); got != c.want {
			t.Errorf("%s in the hub's files: %v, want %v", c.marker, got, c.want)
		}
	}
	// No path of alice's (usage) anywhere in the hub's files, in any form: her project is an id.
	// Bob's (actions) and carol's (full) projects and directories reach the hub by design.
	if hits := hub.filesContaining("PROJDIR-alice", "/home/alice"); len(hits) > 0 {
		t.Errorf("alice shares usage, yet her paths are in the hub's files:\n%s", strings.Join(hits, "\n"))
	}
	for _, m := range []string{"bob", "carol"} {
		if hits := hub.filesContaining(teamProject(m)); len(hits) == 0 {
			t.Errorf("%s's project is in none of the hub's files: the search finds nothing", m)
		}
	}
	if got := hub.count(`SELECT count(DISTINCT project) FROM actions WHERE member = 'alice' AND project LIKE 'p-%'`); got != 1 {
		t.Errorf("alice's actions on the hub are under %d project ids, want 1", got)
	}
	if got := hub.count(`SELECT count(*) FROM sessions WHERE member = 'alice' AND project NOT LIKE 'p-%'`) +
		hub.count(`SELECT count(*) FROM projects WHERE path LIKE '%PROJDIR-alice%' OR name LIKE '%PROJDIR-alice%'`); got != 0 {
		t.Errorf("%d of alice's sessions or projects on the hub are not under her project's id", got)
	}
	if got := hub.count(`SELECT count(*) FROM actions WHERE member = 'alice' AND target != ''`); got != 0 {
		t.Errorf("%d of alice's actions have a target on the hub", got)
	}
	if got := hub.count(`SELECT count(*) FROM actions WHERE member = 'alice' AND type = 'run_command' AND success = 1`); got != 3*n {
		t.Errorf("alice's commands counted on the hub: %d, want %d", got, 3*n)
	}
	if got := hub.count(`SELECT CAST(round(sum(cost_usd) * 100) AS INTEGER) FROM api_turns WHERE member = 'alice'`); got != 3*n {
		t.Errorf("alice's cost on the hub: %d cents, want %d", got, 3*n)
	}

	// A member the hub no longer knows cannot connect: its events never reach the hub.
	loads := strings.Count(hub.readFile("logs/supervisor.log"), "hub members loaded")
	if out, errOut, code := hub.ctl(nil, "hub", "remove-member", "mallory"); code != 0 {
		t.Fatalf("remove-member: %s%s", out, errOut)
	}
	deadline := time.Now().Add(30 * time.Second) // the running hub reads the registry again
	for strings.Count(hub.readFile("logs/supervisor.log"), "hub members loaded") == loads {
		if time.Now().After(deadline) {
			t.Fatal("the hub did not read its members again after remove-member")
		}
		time.Sleep(100 * time.Millisecond)
	}
	mallory := newMember(t, creds["mallory"], "full")
	mallory.publish(teamEvents("mallory", 1, n))
	time.Sleep(5 * time.Second)
	if st := mallory.teamStatus(); st.Connected || st.Pending != uint64(teamRound(n)) {
		t.Errorf("mallory without valid credentials: %+v, want not connected with %d pending", st, teamRound(n))
	}
	if a, tu := hub.memberCounts("mallory"); a+tu != 0 {
		t.Errorf("the hub stored %d events of a member it does not know", a+tu)
	}
	if !strings.Contains(hub.readFile("logs/supervisor.log"), "authentication error") {
		t.Errorf("the hub's log does not say it refused mallory")
	}
	// doctor tells the two apart.
	for _, c := range []struct {
		m    *suite
		want string
	}{{alice, "ok"}, {mallory, "warn"}} {
		if got := c.m.doctorCheck("team"); got != c.want {
			t.Errorf("doctor's team check: %q, want %q", got, c.want)
		}
	}
}

// doctorCheck is the status of one of doctor's checks.
func (s *suite) doctorCheck(name string) string {
	s.tb.Helper()
	out, _, _ := s.ctl(nil, "doctor", "--json")
	var rep struct {
		Checks []struct{ Name, Status, Detail string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		s.tb.Fatalf("doctor --json: %v\n%s", err, out)
	}
	for _, c := range rep.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}

// TestTeam_HubCluster runs the hub as a three-node NATS cluster on one machine (every stream with
// three replicas): the first node runs the writer and the dashboard, the other two are NATS only.
// One node is killed (kill -9) while members produce, and comes back: the store holds every event
// once.
func TestTeam_HubCluster(t *testing.T) {
	cports := []int{freePort(t), freePort(t), freePort(t)}
	leafs := []string{fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	nodeEnv := func(i int) []string {
		var routes []string
		for j, p := range cports {
			if j != i {
				routes = append(routes, fmt.Sprintf("127.0.0.1:%d", p))
			}
		}
		return []string{fmt.Sprintf("OBSERVER_HUB_NODE_NAME=n%d", i+1), "OBSERVER_HUB_CLUSTER_NAME=team",
			fmt.Sprintf("OBSERVER_HUB_CLUSTER_ADDR=127.0.0.1:%d", cports[i]), "OBSERVER_HUB_ROUTES=" + strings.Join(routes, ","),
			"OBSERVER_HUB_REPLICAS=3", "OBSERVER_HUB_ADDR=" + leafs[i]}
	}
	n1, _, creds := newHub(t, nodeEnv(0), "alice", "bob")
	shared := filepath.Join(n1.home, "hub")
	nodes := []*suite{n1}
	for i := 1; i < 3; i++ {
		nodes = append(nodes, newSuite(t, append(nodeEnv(i), "OBSERVER_HUB_WRITER=false",
			"OBSERVER_HUB_CERT_FILE="+filepath.Join(shared, "server.pem"), "OBSERVER_HUB_KEY_FILE="+filepath.Join(shared, "server-key.pem"),
			"OBSERVER_HUB_MEMBERS_FILE="+filepath.Join(shared, "members.json"),
			"OBSERVER_HUB_CLUSTER_SECRET_FILE="+filepath.Join(shared, "cluster-secret"))...))
	}
	// The nodes wait for each other (a JetStream cluster needs a quorum): start them together.
	for _, n := range nodes {
		n.launch("hub", "up", "--grace", "5s")
	}
	for _, n := range nodes {
		n.waitHealthy(10 * time.Minute) // the hub waits as long for its cluster to form
	}
	var urls []string
	for _, l := range leafs {
		urls = append(urls, "tls://"+l)
	}
	hubs := "OBSERVER_TEAM_HUB=" + strings.Join(urls, ",")
	members := map[string]*suite{"alice": newMember(t, creds["alice"], "full", hubs), "bob": newMember(t, creds["bob"], "full", hubs)}
	for _, m := range members {
		m.waitTeam(60*time.Second, "connected to the hub", func(st teamStatus) bool { return st.Connected })
	}
	const n = 20
	for name, m := range members {
		m.publish(teamEvents(name, 1, n))
	}
	for name := range members {
		n1.waitMember(60*time.Second, name, 2*n, n)
	}

	// Node 2 dies mid-way; the members keep producing and whoever was connected to it moves to
	// another node.
	nodes[1].kill9Up()
	for name, m := range members {
		m.publish(teamEvents(name, 2, n))
	}
	for name := range members {
		n1.waitMember(90*time.Second, name, 4*n, 2*n)
	}
	nodes[1].launch("hub", "up", "--grace", "5s")
	nodes[1].waitHealthy(90 * time.Second)
	for name, m := range members {
		m.publish(teamEvents(name, 3, n))
	}
	for name := range members {
		n1.waitMember(90*time.Second, name, 6*n, 3*n)
	}
	if seq, want := n1.teamStreamSeq(), uint64(2*3*teamRound(n)); seq != want {
		t.Errorf("the cluster's team stream took %d events, want %d", seq, want)
	}
	if got := n1.count(`SELECT count(*) FROM actions`); got != 2*6*n {
		t.Errorf("hub store: %d actions, want %d", got, 2*6*n)
	}
}
