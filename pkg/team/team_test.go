package team_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
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
	srv     *bus.Server
	dir     string
	members string
	leaf    string
	ca      []byte
}

func startHub(t *testing.T, dir, leaf string) *testHub {
	t.Helper()
	ca, err := team.EnsureTLS(filepath.Join(dir, "tls"), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := team.NewHub(team.HubConfig{Dir: filepath.Join(dir, "tls"), MembersFile: filepath.Join(dir, "members.json"),
		Token: "hub-token", LeafAddr: leaf})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(context.Background(), bus.ServerConfig{Dir: filepath.Join(dir, "bus"), Port: -1, Token: "hub-token",
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
	srv *bus.Server
	cl  *bus.Client
}

func startMember(t *testing.T, dir string, creds team.Credentials, level team.Level) *testMember {
	t.Helper()
	mc := team.MemberConfig{Creds: creds, Share: level}
	srv, err := bus.StartServer(context.Background(), bus.ServerConfig{Dir: filepath.Join(dir, "bus"), Port: -1, Token: "m-token",
		Configure: mc.Configure})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := team.StartSharer(ctx, srv, mc); err != nil {
		t.Fatal(err)
	}
	cl, err := bus.Connect(ctx, bus.Options{Server: srv, Token: "m-token", Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cl.Close(); srv.Close() })
	return &testMember{srv: srv, cl: cl}
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

func TestTeam_AMemberCannotPublishAsAnother(t *testing.T) {
	h := startHub(t, t.TempDir(), freeAddr(t))
	h.add(t, "bob")
	alice := startMember(t, t.TempDir(), h.add(t, "alice"), team.Full)
	waitLeaf(t, alice.srv)
	// Watch the hub for anything arriving on bob's subjects or the team stream's.
	nc, err := nats.Connect(h.srv.ClientURL(), nats.Token("hub-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	got := make(chan string, 16)
	for _, subj := range []string{"deliver.bob.>", "team.>", "share.>", "$JSC.R.>"} {
		nc.Subscribe(subj, func(m *nats.Msg) { got <- m.Subject })
	}
	nc.Flush()
	anc, err := nats.Connect(alice.srv.ClientURL(), nats.Token("m-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer anc.Close()
	for _, subj := range []string{"deliver.bob.x.M.1", "team.bob.action.claude-code", "share.action.claude-code"} {
		anc.Publish(subj, []byte(`{"forged":true}`))
	}
	anc.Flush()
	select {
	case s := <-got:
		t.Fatalf("alice's machine published %s on the hub", s)
	case <-time.After(time.Second):
	}
}

func waitLeaf(t *testing.T, srv *bus.Server) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !team.HubConnected(srv) {
		if time.Now().After(deadline) {
			t.Fatal("the member's leafnode did not connect to the hub")
		}
		time.Sleep(50 * time.Millisecond)
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
	if team.HubConnected(m.srv) || h.srv.NATS().NumLeafNodes() != 0 {
		t.Fatal("a member the hub does not know connected")
	}
}
