package team_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/team"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type testHub struct {
	srv     *busserver.Server
	dir     string
	members string
	leaf    string
	ca      []byte
}

func startHub(t *testing.T, dir, leaf string) *testHub {
	t.Helper()
	return startHubLogged(t, dir, leaf, nil)
}

// startHubLogged starts a hub whose log goes to logger (nil: none).
func startHubLogged(t *testing.T, dir, leaf string, logger *slog.Logger) *testHub {
	t.Helper()
	ca, err := team.EnsureTLS(filepath.Join(dir, "tls"), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := team.NewHub(team.HubConfig{Dir: filepath.Join(dir, "tls"), MembersFile: filepath.Join(dir, "members.json"),
		Token: "hub-token", LeafAddr: leaf, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := busserver.Start(context.Background(), busserver.Config{Dir: filepath.Join(dir, "bus"), Port: -1, Token: "hub-token",
		Configure: h.Configure, Setup: h.Setup, Stream: team.TeamStream})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go h.Watch(ctx, srv, 100*time.Millisecond)
	t.Cleanup(func() { cancel(); srv.Close() })
	return &testHub{srv: srv, dir: dir, members: filepath.Join(dir, "members.json"), leaf: leaf, ca: ca}
}

func (h *testHub) add(t *testing.T, name string) team.Credentials {
	t.Helper()
	c, pub, err := team.NewMember(name, []string{"tls://" + h.leaf}, h.ca)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := team.LoadMembers(h.members)
	ms = append(ms, team.Member{Name: name, NKey: pub, Added: time.Now()})
	if err := team.SaveMembers(h.members, ms); err != nil {
		t.Fatal(err)
	}
	return c
}

type testMember struct {
	srv   *busserver.Server
	cl    *bus.Client
	m     *team.Sharing
	close func()
}

func startMember(t *testing.T, dir string, creds team.Credentials, level team.Level) *testMember {
	t.Helper()
	return startMemberWith(t, dir, team.MemberConfig{Creds: creds, Share: level})
}

func action(id, target, output string) *event.Event {
	ev := event.New(event.KindAction, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project = id, "claude-code", "s1", "/p"
	ok := true
	ev.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: target, Output: output, Success: &ok}
	return &ev
}

// teamMsgs reads every message of the hub's team stream.
func teamMsgs(t *testing.T, h *testHub, want int) []*jetstream.RawStreamMsg {
	t.Helper()
	nc, err := nats.Connect(h.srv.ClientURL(), nats.Token("hub-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	var n uint64
	for time.Now().Before(deadline) {
		str, err := js.Stream(ctx, team.TeamStream)
		if err == nil {
			si, _ := str.Info(ctx)
			n = si.State.Msgs
			if n >= uint64(want) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n != uint64(want) {
		for _, name := range []string{"TEAM_alice", "TEAM_bob", "TEAM"} {
			if str, err := js.Stream(ctx, name); err == nil {
				si, _ := str.Info(ctx)
				t.Logf("%s: %d msgs mirror %+v sources %+v", name, si.State.Msgs, si.Mirror, si.Sources)
				if si.Mirror != nil && si.Mirror.Error != nil {
					t.Logf("mirror error %v", si.Mirror.Error)
				}
				for _, s := range si.Sources {
					if s.Error != nil {
						t.Logf("source error %v", s.Error)
					}
				}
			}
		}
		t.Fatalf("team stream holds %d events, want %d", n, want)
	}
	str, _ := js.Stream(ctx, team.TeamStream)
	var out []*jetstream.RawStreamMsg
	si, _ := str.Info(ctx)
	for seq := si.State.FirstSeq; seq <= si.State.LastSeq; seq++ {
		m, err := str.GetMsg(ctx, seq)
		if err == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestTeam_MembersReachTheHubUnderTheirOwnNames(t *testing.T) {
	h := startHub(t, t.TempDir(), freeAddr(t))
	alice := startMember(t, t.TempDir(), h.add(t, "alice"), team.Usage)
	bob := startMember(t, t.TempDir(), h.add(t, "bob"), team.Full)
	ctx := context.Background()
	for i := range 5 {
		if _, err := alice.cl.Publish(ctx, action(fmt.Sprintf("a%d", i), "cat secret-plan.txt", "the plan")); err != nil {
			t.Fatal(err)
		}
		if _, err := bob.cl.Publish(ctx, action(fmt.Sprintf("b%d", i), "go test ./...", "ok")); err != nil {
			t.Fatal(err)
		}
	}
	msgs := teamMsgs(t, h, 10)
	by := map[string]int{}
	for _, m := range msgs {
		member := team.MemberOf(m.Subject)
		by[member]++
		ev, err := event.Decode(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		switch member {
		case "alice":
			if ev.Action.Target != "" || ev.Action.Output != "" {
				t.Errorf("alice shares usage only, the hub got target %q output %q", ev.Action.Target, ev.Action.Output)
			}
		case "bob":
			if ev.Action.Target != "go test ./..." || ev.Action.Output != "ok" {
				t.Errorf("bob shares everything, the hub got %+v", ev.Action)
			}
		}
	}
	if by["alice"] != 5 || by["bob"] != 5 {
		t.Fatalf("events by member %v, want 5 each", by)
	}
}

// A member's machine is the member's own: it can run any NATS server with the member's key and
// publish whatever it likes. What it publishes reaches the hub only as its own mirror's
// deliveries and the answers to the hub's requests to it: nothing under another member's
// subjects or the team stream's, and no answer to a request the hub made of another member (nor
// of itself). The hub's watcher counts only the forged payload: the hub's own JetStream traffic
// and the member's legitimate answers also pass on $JSC.R.
func TestTeam_AMemberCannotPublishAsAnother(t *testing.T) {
	h := startHub(t, t.TempDir(), freeAddr(t))
	nc, err := nats.Connect(h.srv.ClientURL(), nats.Token("hub-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The requests the hub's mirror of bob makes of bob's machine (bob is offline: it asks again).
	toBob, err := nc.SubscribeSync("$JS." + team.MemberDomain("bob") + ".API.>")
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	h.add(t, "bob")
	aliceCreds := h.add(t, "alice")
	req, err := toBob.NextMsg(30 * time.Second)
	if err != nil {
		t.Fatalf("the hub's mirror of bob asked nothing of bob: %v", err)
	}
	if req.Reply == "" {
		t.Fatalf("the hub's request %s to bob has no reply subject", req.Subject)
	}
	targets := []string{
		"deliver.bob.hub",               // bob's mirror's deliveries
		"deliver.bob.x.M.1",             // any of bob's subjects
		"team.bob.action.claude-code",   // the team stream, as bob
		"team.alice.action.claude-code", // the team stream, past the mirror
		"share.action.claude-code",      // a mirror's source subjects
		req.Reply,                       // the answer to the hub's request to bob
		"$JS." + team.MemberDomain("bob") + ".API.CONSUMER.RESET.TEAM_OUT.hub", // bob's API
		"$JS.API.STREAM.PURGE." + team.TeamStream,                              // the hub's own API
	}
	// Everything that arrives where alice's machine aimed, in arrival order: the hub's interest
	// in each target reaches her leafnode wherever her permissions let it.
	got := make(chan *nats.Msg, 1024)
	for _, subj := range append(slices.Clone(targets), "$JSC.R.>", "deliver.alice.control") {
		if _, err := nc.ChanSubscribe(subj, got); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
	anc := rogueLeaf(t, aliceCreds)
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	forged := []byte(`{"forged":"alice-` + nonce + `"}`)
	// Rounds of forgeries, each followed by a control on alice's own subject that she may
	// publish: once two rounds' controls have arrived, the hub's interest has reached her
	// leafnode and each round's forgeries, sent before its control on the same connection,
	// would have arrived before it.
	deadline := time.Now().Add(60 * time.Second)
	controls := 0
	for round := 0; controls < 2; round++ {
		if time.Now().After(deadline) {
			t.Fatal("alice's own deliveries never reached the hub: the test proves nothing")
		}
		for _, subj := range targets {
			anc.Publish(subj, forged)
		}
		anc.Publish("deliver.alice.control", []byte("control-"+nonce))
		anc.Flush()
		wait := time.After(500 * time.Millisecond)
	drain:
		for {
			select {
			case m := <-got:
				switch {
				case bytes.Contains(m.Data, forged):
					t.Fatalf("alice's machine published %s on the hub", m.Subject)
				case m.Subject == "deliver.alice.control":
					controls++
				}
			case <-wait:
				break drain
			}
		}
	}
}

// rogueLeaf joins the hub with a member's credentials from a NATS server of the member's own
// making (no deny lists; the member's own server name, the only one the hub admits its key
// under), and returns a connection to that server.
func rogueLeaf(t *testing.T, creds team.Credentials) *nats.Conn {
	t.Helper()
	tc, err := team.ClientTLS([]byte(creds.CA))
	if err != nil {
		t.Fatal(err)
	}
	u, err := team.ParseHubURL(creds.Hub[0])
	if err != nil {
		t.Fatal(err)
	}
	o := &server.Options{DontListen: true, NoSigs: true, ServerName: team.LeafName(creds.Member)}
	o.LeafNode.ReconnectInterval = time.Second
	o.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}, Nkey: creds.Seed, TLS: true, TLSConfig: tc, TLSTimeout: 5}}
	ns, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the rogue server did not start")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func waitLeaf(t *testing.T, m *testMember) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !m.m.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("the member's leafnode did not connect to the hub")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer is a log destination the test reads while the hub writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// leafNamed returns the id of the hub's leafnode connection that names itself name, and how many
// do.
func leafNamed(t *testing.T, h *testHub, name string) (id uint64, n int) {
	t.Helper()
	lz, err := h.srv.NATS().Leafz(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lz.Leafs {
		if l.Name == name {
			id, n = l.ID, n+1
		}
	}
	return id, n
}

// Credentials of one member that claim another member's name (member = "bob" in alice's file)
// must not knock the other off: the hub refuses the claim, bob's leafnode stays the same
// connection all along, and his events still arrive.
func TestTeam_AClaimedNameCannotKnockAnotherMemberOff(t *testing.T) {
	var logs syncBuffer
	h := startHubLogged(t, t.TempDir(), freeAddr(t), slog.New(slog.NewTextHandler(&logs, nil)))
	bob := startMember(t, t.TempDir(), h.add(t, "bob"), team.Full)
	waitLeaf(t, bob)
	bobName := team.LeafName("bob")
	before, n := leafNamed(t, h, bobName)
	if n != 1 {
		t.Fatalf("%d leafnodes named %s, want bob's only", n, bobName)
	}
	impostor := h.add(t, "alice")
	impostor.Member = "bob"
	startMember(t, t.TempDir(), impostor, team.Full)
	// The impostor's share server tries again every 1-2 s: give it several attempts.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "claims another member") {
		if time.Now().After(deadline) {
			t.Fatalf("the hub logged no refusal of alice's key claiming bob; log:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(5 * time.Second)
	after, n := leafNamed(t, h, bobName)
	if n != 1 || after != before {
		t.Fatalf("bob's leafnode was replaced (connection %d, now %d; %d named %s): alice's key knocked him off", before, after, n, bobName)
	}
	if !bob.m.Connected() {
		t.Fatal("bob is not connected")
	}
	line := logs.String()
	if !strings.Contains(line, "member=alice") || !strings.Contains(line, "claimed=bob") {
		t.Errorf("the refusal does not name the key's member and the claimed name:\n%s", line)
	}
	if _, err := bob.cl.Publish(context.Background(), action("b-after", "go vet", "ok")); err != nil {
		t.Fatal(err)
	}
	for _, m := range teamMsgs(t, h, 1) {
		if team.MemberOf(m.Subject) != "bob" {
			t.Errorf("event under %s", m.Subject)
		}
	}
}

func TestTeam_WithoutCredentialsNoLeafnode(t *testing.T) {
	h := startHub(t, t.TempDir(), freeAddr(t))
	// Credentials the hub never registered: a valid key pair, the right CA.
	stranger, _, err := team.NewMember("mallory", []string{"tls://" + h.leaf}, h.ca)
	if err != nil {
		t.Fatal(err)
	}
	m := startMember(t, t.TempDir(), stranger, team.Full)
	time.Sleep(3 * time.Second)
	if m.m.Connected() || h.srv.NATS().NumLeafNodes() != 0 {
		t.Fatal("a member the hub does not know connected")
	}
}

func TestStrip_ShareLevels(t *testing.T) {
	ok := true
	full := func() []event.Event {
		return []event.Event{
			{Kind: event.KindAction, Action: &event.Action{Type: event.ActionRunCommand, Target: "deploy --token sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Output: "out", Error: "err", Transcript: "/home/a/t.jsonl", InputHash: "h", Success: &ok, DurationMs: 5}},
			{Kind: event.KindAction, Action: &event.Action{Type: event.ActionUserPrompt, Target: "my prompt"}},
			{Kind: event.KindSession, Session: &event.Session{State: "active", Cwd: "/home/a/p", TranscriptPath: "/t", Title: "fix the bug", GitBranch: "main", Model: "m", Epoch: 2}},
			{Kind: event.KindHook, Hook: &event.Hook{Event: "Stop", Cwd: "/home/a/p", TranscriptPath: "/t"}},
			{Kind: event.KindAPITurn, APITurn: &event.APITurn{Model: "m", ErrorMessage: "prompt too long: my prompt", CostUSD: 1}},
			{Kind: event.KindCompression, Compression: &event.Compression{Mechanism: "json", Original: "{...}", StashID: "s", BytesBefore: 10}},
			{Kind: event.KindMCPCall, MCPCall: &event.MCPCall{Server: "s", Tool: "t", Error: "boom", InputBytes: 3}},
		}
	}
	key := team.ProjectKey("seed")
	for _, level := range team.Levels {
		evs := full()
		for i := range evs {
			evs[i].Member, evs[i].Project = "bob", "/home/a/p"
			team.Strip(&evs[i], level, key)
			if evs[i].Member != "" {
				t.Errorf("%s: Member %q left in the event", level, evs[i].Member)
			}
			want := "/home/a/p"
			if level == team.Usage {
				want = team.ProjectID(key, "/home/a/p")
			}
			if evs[i].Project != want {
				t.Errorf("%s: project %q, want %q", level, evs[i].Project, want)
			}
		}
		cmd, prompt, sess, hook, turn, comp, mcp := evs[0].Action, evs[1].Action, evs[2].Session, evs[3].Hook, evs[4].APITurn, evs[5].Compression, evs[6].MCPCall
		// What every level keeps: the figures.
		if cmd.Type != event.ActionRunCommand || cmd.Success == nil || cmd.DurationMs != 5 || sess.Model != "m" || sess.Epoch != 2 ||
			turn.CostUSD != 1 || comp.BytesBefore != 10 || mcp.InputBytes != 3 || hook.Event != "Stop" {
			t.Errorf("%s: figures lost", level)
		}
		switch level {
		case team.Usage:
			if cmd.Target != "" || cmd.Output != "" || cmd.Error != "" || cmd.Transcript != "" || prompt.Target != "" ||
				sess.Cwd != "" || sess.Title != "" || sess.TranscriptPath != "" || sess.GitBranch != "" || hook.Cwd != "" ||
				turn.ErrorMessage != "" || comp.Original != "" || mcp.Error != "" {
				t.Errorf("usage lets content out: %+v %+v %+v %+v %+v %+v %+v", cmd, prompt, sess, hook, turn, comp, mcp)
			}
		case team.Actions:
			if cmd.Target == "" || cmd.Output != "" || cmd.Error != "" || prompt.Target != "" || sess.Title != "" || turn.ErrorMessage != "" || comp.Original != "" {
				t.Errorf("actions: want targets without outputs or prompts: %+v %+v %+v", cmd, prompt, sess)
			}
			if sess.Cwd == "" {
				t.Error("actions keeps the session's directory")
			}
		case team.Full:
			if cmd.Output != "out" || prompt.Target != "my prompt" || sess.Title == "" || comp.Original == "" || mcp.Error != "boom" {
				t.Errorf("full lost content: %+v %+v %+v", cmd, prompt, sess)
			}
		}
		if strings.Contains(cmd.Target, "AAAAAAAAAAAAAAAA") {
			t.Errorf("%s: a secret left the machine in %q", level, cmd.Target)
		}
	}
}

// TestStrip_UsageSendsNoPath: at share level usage no path of any kind leaves the machine. Every
// string field of every event kind is filled with a path; after Strip only the fields that hold a
// name, an id or an enum (never a path of the machine) may still hold it, and the project is its
// id. A field added to the schema fails here until it is placed on one side or the other.
func TestStrip_UsageSendsNoPath(t *testing.T) {
	const path = "/home/alice/src/PROJDIR-payroll"
	kept := map[string]bool{
		"Event.ID": true, "Event.Source": true, "Event.Client": true, "Event.SessionID": true,
		"Event.Host": true, "Event.User": true, // the machine's names, which the hub shows by design
		"Action.Type": true, "Action.Tool": true, "Action.ToolUseID": true, "Action.MessageID": true,
		"Action.RequestID": true, "Action.AgentID": true, "Action.Model": true, "Action.Freshness": true,
		"TokenUsage.MessageID": true, "TokenUsage.RequestID": true, "TokenUsage.Model": true,
		"TokenUsage.AgentID": true, "TokenUsage.Reliability": true, "TokenUsage.Origin": true,
		"APITurn.Provider": true, "APITurn.Model": true, "APITurn.MessageID": true, "APITurn.RequestID": true,
		"APITurn.ErrorClass": true, "APITurn.StopReason": true, "APITurn.Reliability": true, "APITurn.Origin": true,
		"APITurn.Endpoint":      true, // the API's route (/v1/messages), not a path of the machine
		"TurnCompression.Mode":  true,
		"Compression.Mechanism": true, "Compression.Mode": true, "Compression.Model": true,
		"Compression.Provider": true, "Compression.TurnID": true,
		"Session.State": true, "Session.ParentSessionID": true, "Session.Model": true,
		"Hook.Event": true, "Hook.ToolName": true, "Hook.ToolUseID": true, "Hook.Matcher": true,
		"MCPCall.Server": true, "MCPCall.Tool": true, "MCPCall.RequestID": true,
		"Limit.Provider": true, "Limit.Window": true, "Limit.Status": true, "Limit.Plan": true,
		"Message.Role": true, "Message.MessageID": true, "Message.ToolUseID": true, "Message.AgentID": true, "Message.Model": true,
	}
	key := team.ProjectKey("alice's seed")
	payloads := map[event.Kind]func(*event.Event){
		event.KindAction:      func(e *event.Event) { e.Action = &event.Action{} },
		event.KindTokenUsage:  func(e *event.Event) { e.TokenUsage = &event.TokenUsage{} },
		event.KindAPITurn:     func(e *event.Event) { e.APITurn = &event.APITurn{Compression: &event.TurnCompression{}} },
		event.KindCompression: func(e *event.Event) { e.Compression = &event.Compression{} },
		event.KindSession:     func(e *event.Event) { e.Session = &event.Session{} },
		event.KindHook:        func(e *event.Event) { e.Hook = &event.Hook{} },
		event.KindMCPCall:     func(e *event.Event) { e.MCPCall = &event.MCPCall{} },
		event.KindLimit:       func(e *event.Event) { e.Limit = &event.Limit{} },
		event.KindMessage:     func(e *event.Event) { e.Message = &event.Message{} },
	}
	seen := map[string]bool{}
	for _, kind := range event.Kinds {
		ev := event.New(kind, "test")
		payloads[kind](&ev)
		fillStrings(reflect.ValueOf(&ev).Elem(), path)
		ev.Kind = kind
		team.Strip(&ev, team.Usage, key)
		if want := team.ProjectID(key, path); ev.Project != want {
			t.Errorf("%s: project %q, want its id %q", kind, ev.Project, want)
		}
		ev.Project = ""
		for _, f := range stringFields(reflect.ValueOf(ev), "Event") {
			seen[f[0]] = true
			if strings.Contains(f[1], "PROJDIR") && !kept[f[0]] {
				t.Errorf("%s: usage lets a path out in %s: %q", kind, f[0], f[1])
			}
		}
	}
	for name := range kept {
		if !seen[name] {
			t.Errorf("kept field %s is not in the schema", name)
		}
	}
}

// fillStrings sets every string field reachable from v (through structs and non-nil pointers) to s.
func fillStrings(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			fillStrings(v.Elem(), s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillStrings(v.Field(i), s)
			}
		}
	case reflect.String:
		v.SetString(s)
	}
}

// stringFields lists the string fields reachable from v as {Type.Field, value}.
func stringFields(v reflect.Value, typ string) [][2]string {
	var out [][2]string
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = stringFields(v.Elem(), v.Elem().Type().Name())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			switch fv := v.Field(i); fv.Kind() {
			case reflect.String:
				out = append(out, [2]string{typ + "." + f.Name, fv.String()})
			case reflect.Struct:
				out = append(out, stringFields(fv, fv.Type().Name())...)
			case reflect.Pointer:
				out = append(out, stringFields(fv, "")...)
			}
		}
	}
	return out
}

func TestProjectID(t *testing.T) {
	a, b := team.ProjectKey("seed-a"), team.ProjectKey("seed-b")
	id := team.ProjectID(a, "/home/alice/src/payroll")
	if len(id) != len("p-")+12 || !strings.HasPrefix(id, "p-") || strings.Contains(id, "payroll") {
		t.Fatalf("ProjectID = %q, want p- and 12 hex digits", id)
	}
	if team.ProjectID(a, "/home/alice/src/payroll") != id {
		t.Error("the same path and key give another id")
	}
	if team.ProjectID(a, "/home/alice/src/billing") == id {
		t.Error("two paths share an id")
	}
	if team.ProjectID(b, "/home/alice/src/payroll") == id {
		t.Error("another member's key gives the same id: the hub could confirm a guessed path")
	}
	if team.ProjectID(a, "") != "" {
		t.Error("no project became an id")
	}
}

// TestTeam_PendingEventsStayWithTheirHub: events a member produced while its hub was away are
// held for that hub and identity. Pointed at another identity, they are not delivered to it,
// unless carry_pending asks for it.
func TestTeam_PendingEventsStayWithTheirHub(t *testing.T) {
	for _, carry := range []bool{false, true} {
		t.Run(fmt.Sprintf("carry=%v", carry), func(t *testing.T) {
			h := startHub(t, t.TempDir(), freeAddr(t))
			dir := t.TempDir()
			// First as "old", whose hub is unreachable: the events wait in the share stream.
			old, _, err := team.NewMember("old", []string{"tls://" + freeAddr(t)}, h.ca)
			if err != nil {
				t.Fatal(err)
			}
			m := startMemberCarry(t, dir, old, false)
			for i := range 4 {
				if _, err := m.cl.Publish(context.Background(), action(fmt.Sprintf("old-%d", i), "", "")); err != nil {
					t.Fatal(err)
				}
			}
			waitShared(t, m, 4)
			m.close()
			// Then the same machine as "new", with a hub that is there.
			m = startMemberCarry(t, dir, h.add(t, "new"), carry)
			if _, err := m.cl.Publish(context.Background(), action("new-0", "", "")); err != nil {
				t.Fatal(err)
			}
			want := 1
			if carry {
				want = 5
			}
			msgs := teamMsgs(t, h, want)
			time.Sleep(time.Second) // nothing more arrives
			if msgs = teamMsgs(t, h, want); len(msgs) != want {
				t.Fatalf("hub got %d events, want %d", len(msgs), want)
			}
			for _, msg := range msgs {
				if team.MemberOf(msg.Subject) != "new" {
					t.Errorf("event under %s", msg.Subject)
				}
			}
		})
	}
}

func startMemberCarry(t *testing.T, dir string, creds team.Credentials, carry bool) *testMember {
	t.Helper()
	return startMemberWith(t, dir, team.MemberConfig{Creds: creds, Share: team.Full, CarryPending: carry})
}

// startMemberWith starts a member's bus with its sharer on dir, closed when the test ends (or
// earlier with close).
func startMemberWith(t *testing.T, dir string, mc team.MemberConfig) *testMember {
	t.Helper()
	srv, err := busserver.Start(context.Background(), busserver.Config{Dir: filepath.Join(dir, "bus"), Port: -1, Token: "m-token"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m, err := team.StartMember(ctx, srv, mc, filepath.Join(dir, "share"))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := bus.Connect(ctx, bus.Options{Server: srv, Token: "m-token", Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	tm := &testMember{srv: srv, cl: cl, m: m}
	var once sync.Once
	tm.close = func() {
		once.Do(func() {
			cancel()
			<-m.Done()
			cl.Close()
			srv.Close()
		})
	}
	t.Cleanup(tm.close)
	return tm
}

// waitShared waits until the member's share stream holds n events.
func waitShared(t *testing.T, m *testMember, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := m.m.Status(context.Background()); err == nil && st.Held == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("share stream did not reach %d events", n)
}

// A member removed from the registry while connected is cut off, and cannot come back.
func TestTeam_RemovedMemberIsCutOff(t *testing.T) {
	h := startHub(t, t.TempDir(), freeAddr(t))
	alice := startMember(t, t.TempDir(), h.add(t, "alice"), team.Full)
	waitLeaf(t, alice)
	ms, err := team.LoadMembers(h.members)
	if err != nil {
		t.Fatal(err)
	}
	if err := team.SaveMembers(h.members, ms[:0]); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alice.m.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("a removed member stays connected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its reconnection attempts are refused.
	time.Sleep(3 * time.Second)
	if alice.m.Connected() || h.srv.NATS().NumLeafNodes() != 0 {
		t.Fatal("a removed member connected again")
	}
}

// The hub reaches the member's share stream and nothing else of its machine: not the observer
// stream with its raw events, whatever JetStream API request it makes.
func TestTeam_HubCannotReachTheObserverStream(t *testing.T) {
	h := startHub(t, t.TempDir(), freeAddr(t))
	alice := startMember(t, t.TempDir(), h.add(t, "alice"), team.Usage)
	waitLeaf(t, alice)
	if _, err := alice.cl.Publish(context.Background(), action("raw-1", "cat ~/.ssh/id_rsa", "-----BEGIN")); err != nil {
		t.Fatal(err)
	}
	teamMsgs(t, h, 1)
	nc, err := nats.Connect(h.srv.ClientURL(), nats.Token("hub-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	api := "$JS." + team.MemberDomain("alice") + ".API."
	// Answers can only come back as the replies a member may send (those about its mirror's
	// consumer): ask with such an inbox, as a curious hub would.
	inbox := "$JSC.R." + team.MemberDomain("alice") + ".probe." + team.ShareStream + "." + team.HubConsumer
	sub, err := nc.SubscribeSync(inbox + ".*")
	if err != nil {
		t.Fatal(err)
	}
	ask := func(req, body string) string {
		t.Helper()
		if err := nc.PublishRequest(api+req, inbox+"."+strings.ReplaceAll(req, ".", "_"), []byte(body)); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(2 * time.Second)
		if err != nil {
			return ""
		}
		return string(m.Data)
	}
	// The path works: the share stream answers.
	if got := ask("STREAM.INFO."+team.ShareStream, ""); !strings.Contains(got, `"name":"`+team.ShareStream+`"`) {
		t.Fatalf("the hub cannot reach the share stream it mirrors: %q", got)
	}
	for _, req := range [][2]string{{"STREAM.INFO.OBSERVER", ""}, {"STREAM.MSG.GET.OBSERVER", `{"seq":1}`}, {"STREAM.NAMES", ""},
		{"CONSUMER.INFO.OBSERVER.writer", ""}, {"DIRECT.GET.OBSERVER", `{"seq":1}`}} {
		got := ask(req[0], req[1])
		if strings.Contains(got, "BEGIN") || strings.Contains(got, "id_rsa") || strings.Contains(got, `"OBSERVER"`) {
			t.Errorf("the hub's %s reached the member's observer stream: %s", req[0], got)
		}
	}
}

// A member given a new key (a new machine, a leaked seed) starts a new share stream: the hub
// takes all of it, not only the events past where the old one stopped.
func TestTeam_NewKeyStartsOver(t *testing.T) {
	h := startHub(t, t.TempDir(), freeAddr(t))
	old := startMember(t, t.TempDir(), h.add(t, "alice"), team.Full)
	for i := range 3 {
		if _, err := old.cl.Publish(context.Background(), action(fmt.Sprintf("old-%d", i), "", "")); err != nil {
			t.Fatal(err)
		}
	}
	teamMsgs(t, h, 3)
	old.close()
	// remove-member, then add-member: the registry holds alice with another key.
	if err := team.SaveMembers(h.members, nil); err != nil {
		t.Fatal(err)
	}
	fresh := startMember(t, t.TempDir(), h.add(t, "alice"), team.Full)
	for i := range 2 {
		if _, err := fresh.cl.Publish(context.Background(), action(fmt.Sprintf("new-%d", i), "", "")); err != nil {
			t.Fatal(err)
		}
	}
	msgs := teamMsgs(t, h, 5)
	if len(msgs) != 5 {
		t.Fatalf("the hub holds %d events of alice, want 5", len(msgs))
	}
}

// A conversation reaches the hub only at share level full: below it, a message is withheld, not
// stripped and sent.
func TestShareable_MessagesOnlyAtFull(t *testing.T) {
	ev := event.New(event.KindMessage, "test")
	ev.ID, ev.Client, ev.SessionID = "m1", "claude-code", "s1"
	ev.Message = &event.Message{Role: event.RoleAssistant, Text: "the migration lock is held by the old worker"}
	data, err := event.Marshal(&ev)
	if err != nil {
		t.Fatal(err)
	}
	key := team.ProjectKey("seed")
	for _, level := range team.Levels {
		out, subject, ok := team.Shareable(data, level, key)
		switch {
		case !ok:
			t.Errorf("%s: a message was refused", level)
		case level == team.Full && (out == nil || !strings.Contains(string(out), "migration lock") || !strings.HasPrefix(subject, "share.message.")):
			t.Errorf("full: %q on %q, want the message whole", out, subject)
		case level != team.Full && out != nil:
			t.Errorf("%s: a message left the machine: %s", level, out)
		}
	}
}
