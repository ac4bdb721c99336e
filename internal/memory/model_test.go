package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

// The model path's tests run against the fake model API (internal/fakeapi) on a real store: every
// request it answers is in fake.Requests(), every body it received in bodies.

// modelKeyEnv holds the API key in these tests; the secret below is what scrubbing must stop.
const (
	modelKeyEnv  = "OBSERVER_TEST_MEMORY_MODEL_KEY"
	modelSecret  = "sk-ant-api03-Zq8vT3xK9mLp2RwYb7NcDf4HgJs6Ae1Uo5Ii0QyXzWvBnMkLjHgFdSaPoIuYtRe-AbCdEfGh"
	modelDBPass  = "hunter2-Sup3rSecret"
	modelProject = "/src/app"
)

var modelUsage = fakeapi.Usage{Input: 1500, Output: 220, CacheRead: 300, CacheWrite5m: 40}

// modelRig is a store, the fake API, and a ModelClient pointed at it whose api_turns are captured
// and then stored, as the writer would store them from the bus.
type modelRig struct {
	st     *store.Store
	fake   *fakeapi.Server
	url    string
	bodies string
	mc     *memory.ModelClient

	mu        sync.Mutex
	published []event.Event
}

func newModelRig(t *testing.T, provider, model string) *modelRig {
	t.Helper()
	t.Setenv(modelKeyEnv, "test-key-not-a-secret")
	r := &modelRig{bodies: t.TempDir()}
	r.fake = fakeapi.New(fakeapi.Config{Usage: modelUsage, BodyDir: r.bodies})
	srv := httptest.NewServer(r.fake)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	st, err := store.OpenWriter(context.Background(), filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r.st = st
	r.mc = &memory.ModelClient{Provider: provider, Model: model, Upstream: srv.URL, APIKeyEnv: modelKeyEnv,
		MinNewBytes: 20000, MinNewText: 400, DailyCapUSD: 1, MaxOutputTokens: 600,
		DB: st.DB, Prices: pricing.Default(),
		Publish: func(ctx context.Context, ev *event.Event) error {
			if err := ev.Validate(); err != nil {
				t.Errorf("published an invalid event: %v", err)
			}
			r.mu.Lock()
			r.published = append(r.published, *ev)
			r.mu.Unlock()
			_, err := st.WriteBatch(ctx, []event.Event{*ev}, nil)
			return err
		}}
	return r
}

func (r *modelRig) requests() int { return len(r.fake.Requests()) }

func (r *modelRig) turns() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.published...)
}

// modelAct is one action of a seeded session.
type modelAct struct {
	typ    event.ActionType
	target string
	out    int64 // output size
	fail   bool
}

// seed stores acts as one session of claude-code in modelProject, a second apart from start,
// and the session's lifecycle state.
func (r *modelRig) seed(t *testing.T, session string, start time.Time, state string, acts ...modelAct) {
	t.Helper()
	var evs []event.Event
	for i, a := range acts {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project = event.RandomID(), "claude-code", session, modelProject
		ev.Time = start.Add(time.Duration(i) * time.Second).UTC()
		ev.Action = &event.Action{Type: a.typ, Target: a.target, Tool: "T", ToolUseID: ev.ID, OutputSize: a.out}
		if a.typ != event.ActionUserPrompt {
			ok := !a.fail
			ev.Action.Success = &ok
		}
		evs = append(evs, ev)
	}
	if state != "" {
		ev := event.New(event.KindSession, "test")
		ev.ID, ev.Client, ev.SessionID, ev.Project = event.RandomID(), "claude-code", session, modelProject
		ev.Time = start.Add(time.Duration(len(acts)) * time.Second).UTC()
		ev.Session = &event.Session{State: state}
		evs = append(evs, ev)
	}
	if _, err := r.st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
}

// summary is the extractive summary of a session's epoch 0, as the memory loop makes it.
func (r *modelRig) summary(t *testing.T, session string) memory.Summary {
	t.Helper()
	s, err := memory.Summarize(context.Background(), r.st.DB, "claude-code", session, modelProject,
		memory.Window{Epoch: 0, From: math.MinInt64}, "idle")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// work is a session's worth of actions: a prompt, reads, edits and commands with outputs of
// outBytes in all, and files changed named after tag (so that two batches give new text).
func work(prompt, tag string, outBytes int64) []modelAct {
	acts := []modelAct{{typ: event.ActionUserPrompt, target: prompt}}
	for i := range 6 {
		acts = append(acts,
			modelAct{typ: event.ActionReadFile, target: fmt.Sprintf("internal/%s/reader_%d.go", tag, i), out: outBytes / 12},
			modelAct{typ: event.ActionEditFile, target: fmt.Sprintf("internal/%s/handler_%d.go", tag, i)})
	}
	acts = append(acts,
		modelAct{typ: event.ActionRunCommand, target: "go test ./internal/" + tag + "/...", out: outBytes / 4, fail: true},
		modelAct{typ: event.ActionRunCommand, target: "go test ./internal/" + tag + "/...", out: outBytes / 4})
	return acts
}

const modelPrompt = "Make the export handler stream its rows instead of building the whole CSV in memory, and keep the tests green"

// TestModelClient_Gates: no request reaches the API below either growth gate, and after a call
// the gates count from that call.
func TestModelClient_Gates(t *testing.T) {
	ctx := context.Background()
	r := newModelRig(t, memory.ProviderAnthropic, "claude-haiku-4-5")
	start := time.Now().Add(-time.Hour)

	// Enough text but too few bytes.
	r.seed(t, "s1", start, "", work(modelPrompt, "export", 5000)...)
	if err := r.mc.Consider(ctx, r.summary(t, "s1")); err != nil {
		t.Fatal(err)
	}
	if n := r.requests(); n != 0 {
		t.Fatalf("below min_new_bytes: %d requests reached the API", n)
	}

	// Enough bytes but too little text: the same epoch, text gate set above what it has.
	r.seed(t, "s1", start.Add(time.Minute), "", modelAct{typ: event.ActionRunCommand, target: "go test ./internal/export/...", out: 40000})
	s := r.summary(t, "s1")
	r.mc.MinNewText = int64(len(s.Text())) + 1
	if err := r.mc.Consider(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := r.requests(); n != 0 {
		t.Fatalf("below min_new_text: %d requests reached the API", n)
	}

	// Both gates passed: one call.
	r.mc.MinNewText = 400
	if err := r.mc.Consider(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := r.requests(); n != 1 {
		t.Fatalf("above both gates: %d requests, want 1", n)
	}

	// Offered the same epoch again, unchanged: nothing new since the call.
	if err := r.mc.Consider(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Many new bytes, but the summary text barely changes (one more run of the same command).
	r.seed(t, "s1", start.Add(2*time.Minute), "", modelAct{typ: event.ActionRunCommand, target: "go test ./internal/export/...", out: 60000})
	if err := r.mc.Consider(ctx, r.summary(t, "s1")); err != nil {
		t.Fatal(err)
	}
	if n := r.requests(); n != 1 {
		t.Fatalf("without new text since the call: %d requests, want still 1", n)
	}

	// New work in other files, with output: new text and new bytes, a second call.
	r.seed(t, "s1", start.Add(3*time.Minute), "", work("Now do the same for the import handler", "importer", 30000)...)
	if err := r.mc.Consider(ctx, r.summary(t, "s1")); err != nil {
		t.Fatal(err)
	}
	if n := r.requests(); n != 2 {
		t.Fatalf("after new work: %d requests, want 2", n)
	}
	if got := len(r.turns()); got != 2 {
		t.Errorf("%d api_turns published, want one per call (2)", got)
	}
}

// TestModelClient_DailyCap: no call once today's observer cost, with the next call's worst case,
// would pass the cap; yesterday's spend and other clients' turns do not count; 0 means no calls.
func TestModelClient_DailyCap(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	turn := func(client string, at time.Time, cost float64) event.Event {
		ev := event.New(event.KindAPITurn, "test")
		ev.ID, ev.Client, ev.Time = event.RandomID(), client, at.UTC()
		ev.APITurn = &event.APITurn{Provider: "anthropic", Endpoint: "/v1/messages", Model: "claude-haiku-4-5", Status: 200,
			Tokens: event.Tokens{Input: 10, Output: 10}, CostUSD: cost, Reliability: event.ReliabilityAccurate}
		return ev
	}
	for _, tc := range []struct {
		name  string
		cap   float64
		seed  []event.Event
		calls int
	}{
		{"Reached", 1, []event.Event{turn(memory.ModelTurnClient, now, 0.6), turn(memory.ModelTurnClient, now, 0.4)}, 0},
		{"WorstCaseWouldPass", 1, []event.Event{turn(memory.ModelTurnClient, now, 0.999)}, 0},
		{"Zero", 0, nil, 0},
		{"YesterdayAndOtherClients", 1, []event.Event{turn(memory.ModelTurnClient, midnight.Add(-time.Minute), 50),
			turn("claude-code", now, 50)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newModelRig(t, memory.ProviderAnthropic, "claude-haiku-4-5")
			r.mc.DailyCapUSD = tc.cap
			if _, err := r.st.WriteBatch(ctx, tc.seed, nil); err != nil {
				t.Fatal(err)
			}
			r.seed(t, "s1", now.Add(-time.Hour), "", work(modelPrompt, "export", 50000)...)
			if err := r.mc.Consider(ctx, r.summary(t, "s1")); err != nil {
				t.Fatal(err)
			}
			if n := r.requests(); n != tc.calls {
				t.Errorf("%d requests reached the API, want %d", n, tc.calls)
			}
		})
	}

	// The model's own calls fill the cap: each costs about $0.0028, its worst case about $0.0075
	// (a ~3 KB request as 1.5k input tokens, 600 output tokens). Under a $0.02 cap the calls stop
	// before the spend would pass it, whether or not their api_turns have reached the store.
	for _, stored := range []bool{true, false} {
		t.Run(fmt.Sprintf("OwnCalls/stored=%v", stored), func(t *testing.T) {
			r := newModelRig(t, memory.ProviderAnthropic, "claude-haiku-4-5")
			r.mc.DailyCapUSD = 0.02
			if !stored {
				r.mc.Publish = func(context.Context, *event.Event) error { return fmt.Errorf("bus down") }
			}
			for i := range 10 {
				session := fmt.Sprintf("s%d", i)
				r.seed(t, session, now.Add(-time.Hour), "", work(modelPrompt, "export", 50000)...)
				if err := r.mc.Consider(ctx, r.summary(t, session)); err != nil {
					t.Fatal(err)
				}
			}
			spent, err := r.mc.SpentToday(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n := r.requests()
			if n == 0 || n >= 10 || spent > 0.02 {
				t.Errorf("%d calls spent $%.4f under a $0.02 cap: want some calls, then none, within the cap", n, spent)
			}
			per, _ := pricing.Default().Cost("claude-haiku-4-5", event.Tokens{Input: modelUsage.Input, Output: modelUsage.Output,
				CacheRead: modelUsage.CacheRead, CacheCreation: modelUsage.CacheWrite5m})
			if want := float64(n) * per; math.Abs(spent-want) > 1e-9 {
				t.Errorf("spent today $%.6f after %d calls, want $%.6f (each counted once)", spent, n, want)
			}
		})
	}
}

// TestModelClient_Scrubs: a secret in the session's prompts and commands never reaches the API;
// what it received is exactly what Prompt shows.
func TestModelClient_Scrubs(t *testing.T) {
	ctx := context.Background()
	r := newModelRig(t, memory.ProviderAnthropic, "claude-haiku-4-5")
	acts := work("Use the key "+modelSecret+" to call the staging API and fix the export", "export", 50000)
	acts = append(acts,
		modelAct{typ: event.ActionUserPrompt, target: "The database is postgres://admin:" + modelDBPass + "@db.internal:5432/app, run the migration"},
		modelAct{typ: event.ActionRunCommand, target: "psql postgres://admin:" + modelDBPass + "@db.internal:5432/app -c 'select 1'", out: 100},
		modelAct{typ: event.ActionRunCommand, target: "ANTHROPIC_API_KEY=" + modelSecret + " go run ./cmd/probe", out: 100, fail: true})
	r.seed(t, "s1", time.Now().Add(-time.Hour), "", acts...)
	s := r.summary(t, "s1")
	if !strings.Contains(s.Text(), modelSecret[:40]) || !strings.Contains(s.Text(), modelDBPass) {
		t.Fatalf("the test needs the secret in the extractive text, to show it is scrubbed on the way out:\n%s", s.Text())
	}
	prompt, err := r.mc.Prompt(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.mc.Consider(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := r.requests(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	files, err := os.ReadDir(r.bodies)
	if err != nil || len(files) != 1 {
		t.Fatalf("request bodies: %v %v", files, err)
	}
	body, err := os.ReadFile(filepath.Join(r.bodies, files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{modelSecret, modelSecret[:30], modelDBPass} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the request the API received holds %q:\n%s", secret, body)
		}
		if strings.Contains(prompt, secret) {
			t.Errorf("Prompt shows %q", secret)
		}
	}
	log, _ := json.Marshal(r.fake.Requests())
	if strings.Contains(string(log), modelSecret) || strings.Contains(string(log), modelDBPass) {
		t.Errorf("the API's request log holds a secret: %s", log)
	}
	if !strings.Contains(string(body), "[REDACTED:") || !strings.Contains(string(body), "call the staging API") {
		t.Errorf("the request does not carry the scrubbed prompt:\n%s", body)
	}
	// The dry run shows exactly what was sent.
	var sent struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []struct {
			Role, Content string
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Messages) != 1 || sent.System+"\n\n"+sent.Messages[0].Content != prompt {
		t.Errorf("Prompt is not what was sent:\nPrompt:\n%s\nsent:\n%s", prompt, body)
	}
	if sent.Model != "claude-haiku-4-5" || sent.MaxTokens != 600 {
		t.Errorf("sent model %q max_tokens %d, want claude-haiku-4-5 and 600", sent.Model, sent.MaxTokens)
	}
}

// TestModelClient_Step: run by the memory loop, a call is an api_turn of client observer with the
// provider's usage and its price, stored as any turn, and the answer a summary of source 'model'.
func TestModelClient_Step(t *testing.T) {
	for _, tc := range []struct {
		provider, model, endpoint string
		tokens                    event.Tokens
	}{
		{memory.ProviderAnthropic, "claude-haiku-4-5", "/v1/messages",
			event.Tokens{Input: 1500, Output: 220, CacheRead: 300, CacheCreation: 40}},
		// OpenAI counts cached tokens inside the prompt: the turn's input is net of them.
		{memory.ProviderOpenAI, "gpt-4.1-mini", "/v1/chat/completions",
			event.Tokens{Input: 1500, Output: 220, CacheRead: 300}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			ctx := context.Background()
			r := newModelRig(t, tc.provider, tc.model)
			r.seed(t, "s1", time.Now().Add(-time.Hour), "idle", work(modelPrompt, "export", 50000)...)
			m := &memory.Memory{DB: r.st.DB, Model: r.mc}
			p, err := m.Step(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			if p.Summaries != 1 || r.requests() != 1 {
				t.Fatalf("Step made %d summaries and %d requests, want 1 and 1", p.Summaries, r.requests())
			}
			if req := r.fake.Requests()[0]; req.Path != tc.endpoint || req.Provider != tc.provider || req.Model != tc.model {
				t.Errorf("request %+v: want %s to %s for %s", req, tc.provider, tc.endpoint, tc.model)
			}
			turns := r.turns()
			if len(turns) != 1 {
				t.Fatalf("%d api_turns published, want 1", len(turns))
			}
			ev := turns[0]
			want, known := pricing.Default().Cost(tc.model, tc.tokens)
			at := ev.APITurn
			if ev.Kind != event.KindAPITurn || ev.Client != memory.ModelTurnClient || ev.Project != modelProject ||
				at.Provider != tc.provider || at.Endpoint != tc.endpoint || at.Model != tc.model || at.Status != 200 ||
				at.Tokens != tc.tokens || !known || want <= 0 || math.Abs(at.CostUSD-want) > 1e-12 ||
				at.Reliability != event.ReliabilityAccurate || at.MessageID == "" || at.BytesIn == 0 || at.BytesOut == 0 {
				t.Errorf("published %+v %+v\nwant client observer, %s %s %s, tokens %+v, cost $%.6f", ev, *at,
					tc.provider, tc.endpoint, tc.model, tc.tokens, want)
			}
			// Stored by the writer like any turn.
			var client, model string
			var cost float64
			var in, out int64
			if err := r.st.DB.QueryRowContext(ctx, `SELECT client, model, cost_usd, input_tokens, output_tokens FROM api_turns
				WHERE event_id = ?`, ev.ID).Scan(&client, &model, &cost, &in, &out); err != nil {
				t.Fatal(err)
			}
			if client != "observer" || model != tc.model || cost != at.CostUSD || in != tc.tokens.Input || out != tc.tokens.Output {
				t.Errorf("stored turn %s %s $%v %d/%d", client, model, cost, in, out)
			}
			var text, smodel, facts string
			var scost float64
			if err := r.st.DB.QueryRowContext(ctx, `SELECT text, model, cost_usd, facts FROM session_summaries
				WHERE client = 'claude-code' AND session_id = 's1' AND epoch = 0 AND source = 'model'`).Scan(&text, &smodel, &scost, &facts); err != nil {
				t.Fatal(err)
			}
			if text != fakeapi.TextNoTools || smodel != tc.model || scost != at.CostUSD || !strings.Contains(facts, `"goal":"Make the export handler`) {
				t.Errorf("model summary %q by %s at $%v, facts %s", text, smodel, scost, facts)
			}
			// The next Step, with nothing new, calls nothing.
			if _, err := m.Step(ctx, 10); err != nil {
				t.Fatal(err)
			}
			if n := r.requests(); n != 1 {
				t.Errorf("%d requests after an idle Step, want 1", n)
			}
		})
	}
}

// TestModelClient_Refuses: a model without a price or without its key is never called.
func TestModelClient_Refuses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, model, keyEnv, want string }{
		{"NoPrice", "my-private-model", modelKeyEnv, "no known price"},
		{"NoKey", "claude-haiku-4-5", "OBSERVER_TEST_MEMORY_MODEL_NO_KEY", "no API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newModelRig(t, memory.ProviderAnthropic, tc.model)
			r.mc.APIKeyEnv = tc.keyEnv
			r.seed(t, "s1", time.Now().Add(-time.Hour), "", work(modelPrompt, "export", 50000)...)
			err := r.mc.Consider(ctx, r.summary(t, "s1"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Consider: %v, want an error saying %q", err, tc.want)
			}
			if n := r.requests(); n != 0 {
				t.Errorf("%d requests reached the API", n)
			}
		})
	}
}

// TestModelFromConfig_Off: with [memory] model unset nothing is built, and the memory loop makes
// no network call at all, even with the upstream pointing at a live API.
func TestModelFromConfig_Off(t *testing.T) {
	ctx := context.Background()
	r := newModelRig(t, memory.ProviderAnthropic, "")
	cfg := config.Default()
	cfg.Proxy.AnthropicUpstream, cfg.Proxy.OpenAIUpstream = r.url, r.url
	if mc := memory.ModelFromConfig(cfg); mc != nil {
		t.Fatalf("ModelFromConfig built %+v with [memory] model unset", mc)
	}
	// Any request at all fails the test.
	r.mc.HTTP = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		t.Errorf("request to %s with no model configured", req.URL)
		return nil, fmt.Errorf("no network")
	})}
	r.seed(t, "s1", time.Now().Add(-time.Hour), "idle", work(modelPrompt, "export", 50000)...)
	if p, err := (&memory.Memory{DB: r.st.DB}).Step(ctx, 10); err != nil || p.Summaries != 1 {
		t.Fatalf("Step without a model: %+v %v", p, err)
	}
	// A client whose model is empty does nothing either.
	r.seed(t, "s2", time.Now().Add(-time.Hour), "idle", work(modelPrompt, "export", 50000)...)
	if p, err := (&memory.Memory{DB: r.st.DB, Model: r.mc}).Step(ctx, 10); err != nil || p.Summaries != 1 {
		t.Fatalf("Step with an empty model: %+v %v", p, err)
	}
	if n := r.requests(); n != 0 {
		t.Errorf("%d requests reached the API", n)
	}
	var models int
	r.st.DB.QueryRow(`SELECT count(*) FROM session_summaries WHERE source = 'model'`).Scan(&models)
	if models != 0 || len(r.turns()) != 0 {
		t.Errorf("%d model summaries and %d api_turns without a model", models, len(r.turns()))
	}

	// Set, it takes the provider's upstream from [proxy] and the key's variable by provider.
	cfg.Memory.Model, cfg.Memory.Provider = "gpt-4.1-mini", "openai"
	cfg.Proxy.OpenAIUpstream = "https://openai.example/base"
	mc := memory.ModelFromConfig(cfg)
	if mc == nil || mc.Upstream != "https://openai.example/base" || mc.APIKeyEnv != "OPENAI_API_KEY" || mc.Model != "gpt-4.1-mini" ||
		mc.MinNewBytes != 20000 || mc.MinNewText != 400 || mc.DailyCapUSD != 1 || mc.MaxOutputTokens != 600 {
		t.Fatalf("ModelFromConfig: %+v", mc)
	}
	req, err := mc.Request(ctx, memory.Summary{Client: "c", SessionID: "s"})
	if err != nil || req.URL != "https://openai.example/base/v1/chat/completions" {
		t.Errorf("request URL %q (%v)", req.URL, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
