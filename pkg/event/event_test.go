package event_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// sample returns a valid event of kind k with its payload set and every envelope field filled.
func sample(tb testing.TB, k event.Kind) event.Event {
	tb.Helper()
	ok := true
	ev := event.Event{
		ID:        event.ID("sample", string(k)),
		Kind:      k,
		Time:      time.Date(2025, 3, 4, 5, 6, 7, 890123456, time.UTC),
		Source:    "observer-test",
		Client:    "claude-code",
		SessionID: "sess-1",
		Project:   "/work/p",
		Host:      "box",
		User:      "dev",
		V:         event.SchemaVersion,
	}
	tokens := event.Tokens{Input: 10, Output: 20, CacheRead: 30, CacheCreation: 40, CacheCreation1h: 5, Reasoning: 6}
	switch k {
	case event.KindAction:
		ev.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Target: "go test", Success: &ok,
			DurationMs: 12, Output: "ok", OutputSize: 2, Sidechain: true}
	case event.KindTokenUsage:
		ev.TokenUsage = &event.TokenUsage{Tokens: tokens, MessageID: "m1", Model: "claude", CostUSD: 0.0125,
			Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	case event.KindAPITurn:
		ev.APITurn = &event.APITurn{Tokens: tokens, Provider: "anthropic", Endpoint: "/v1/messages", Status: 200,
			Stream: true, LatencyMs: 123.5, CostUSD: 0.5, BytesIn: 100, BytesOut: 200, Partial: true}
	case event.KindCompression:
		ev.Compression = &event.Compression{Mechanism: "dedupe", BytesBefore: 1000, BytesAfter: 400, TokensBefore: 250, TokensAfter: 100}
	case event.KindSession:
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: "/work/p", Epoch: 2,
			StartedAt: time.Date(2025, 3, 4, 5, 0, 0, 0, time.UTC)}
	case event.KindHook:
		ev.Hook = &event.Hook{Event: "PreToolUse", ToolName: "Bash", PayloadBytes: 42}
	case event.KindMCPCall:
		ev.MCPCall = &event.MCPCall{Server: "fs", Tool: "read", InputBytes: 3, OutputBytes: 4, DurationMs: 1.5, Error: "boom"}
	case event.KindLimit:
		ev.Limit = &event.Limit{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: 42, Status: event.LimitAllowed,
			ResetsAt: time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)}
	case event.KindMessage:
		ev.Message = &event.Message{Role: event.RoleAssistant, Text: "Done: the tests pass.", Seq: 129, MessageID: "msg_1", Model: "claude-sonnet-4-5"}
	default:
		tb.Fatalf("sample: no payload for kind %q", k)
	}
	return ev
}

func TestID(t *testing.T) {
	t.Run("Deterministic", func(t *testing.T) {
		a, b := event.ID("/tmp/t.jsonl", "uuid-1"), event.ID("/tmp/t.jsonl", "uuid-1")
		if a != b {
			t.Fatalf("ID is not deterministic: %q != %q", a, b)
		}
		if len(a) != 32 {
			t.Errorf("len(ID) = %d, want 32 hex chars", len(a))
		}
		if strings.Trim(a, "0123456789abcdef") != "" {
			t.Errorf("ID %q is not lowercase hex", a)
		}
	})
	t.Run("PartsAreSeparated", func(t *testing.T) {
		pairs := [][2][]string{
			{{"ab", "c"}, {"a", "bc"}},
			{{"abc"}, {"ab", "c"}},
			{{"a", ""}, {"a"}},
			{{"", "a"}, {"a"}},
			{{"a", "b"}, {"b", "a"}},
			{{}, {""}},
		}
		for _, p := range pairs {
			if x, y := event.ID(p[0]...), event.ID(p[1]...); x == y {
				t.Errorf("ID(%q) == ID(%q) == %q", p[0], p[1], x)
			}
		}
	})
}

func TestRandomID(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := event.RandomID()
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("RandomID() = %q, want 32 lowercase hex chars", id)
		}
		if seen[id] {
			t.Fatalf("RandomID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestKind_Valid(t *testing.T) {
	for _, k := range event.Kinds {
		if !k.Valid() {
			t.Errorf("%q.Valid() = false", k)
		}
	}
	for _, k := range []event.Kind{"", "Action", "actions", "hook ", "unknown"} {
		if k.Valid() {
			t.Errorf("%q.Valid() = true", k)
		}
	}
}

func TestNew(t *testing.T) {
	before := time.Now()
	ev := event.New(event.KindHook, "observerctl")
	if ev.Kind != event.KindHook || ev.Source != "observerctl" || ev.V != event.SchemaVersion {
		t.Errorf("New = %+v", ev)
	}
	if ev.Time.Location() != time.UTC {
		t.Errorf("New time is in %v, want UTC", ev.Time.Location())
	}
	if ev.Time.Before(before.Add(-time.Second)) || ev.Time.After(time.Now().Add(time.Second)) {
		t.Errorf("New time %v is not now", ev.Time)
	}
	// New leaves the id and the payload to the caller.
	if err := ev.Validate(); !errors.Is(err, event.ErrNoID) {
		t.Errorf("Validate of a fresh New = %v, want ErrNoID", err)
	}
}

func TestEvent_Validate(t *testing.T) {
	for _, k := range event.Kinds {
		ev := sample(t, k)
		if err := ev.Validate(); err != nil {
			t.Errorf("Validate(valid %s) = %v", k, err)
		}
	}

	for _, tc := range []struct {
		name   string
		mutate func(*event.Event)
		want   error
	}{
		{"NoID", func(e *event.Event) { e.ID = "" }, event.ErrNoID},
		{"EmptyKind", func(e *event.Event) { e.Kind = "" }, event.ErrUnknownKind},
		{"UnknownKind", func(e *event.Event) { e.Kind = "telemetry" }, event.ErrUnknownKind},
		{"VersionZero", func(e *event.Event) { e.V = 0 }, event.ErrVersion},
		{"VersionNegative", func(e *event.Event) { e.V = -1 }, event.ErrVersion},
		{"VersionTooNew", func(e *event.Event) { e.V = event.SchemaVersion + 1 }, event.ErrVersion},
		{"ZeroTime", func(e *event.Event) { e.Time = time.Time{} }, event.ErrNoTime},
		{"MissingPayload", func(e *event.Event) { e.Hook = nil }, event.ErrPayload},
		{"WrongPayload", func(e *event.Event) {
			e.Hook = nil
			e.Action = &event.Action{Type: event.ActionReadFile}
		}, event.ErrPayload},
		{"ExtraPayload", func(e *event.Event) { e.MCPCall = &event.MCPCall{Server: "s", Tool: "t"} }, event.ErrPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := sample(t, event.KindHook)
			tc.mutate(&ev)
			err := ev.Validate()
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate = %v, want %v", err, tc.want)
			}
			for _, other := range []error{event.ErrNoID, event.ErrUnknownKind, event.ErrPayload, event.ErrVersion, event.ErrNoTime, event.ErrMalformedJSON} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("Validate = %v, also matches %v", err, other)
				}
			}
			if _, err := event.Marshal(&ev); !errors.Is(err, tc.want) {
				t.Errorf("Marshal = %v, want %v", err, tc.want)
			}
		})
	}

	// Every kind rejects every other kind's payload.
	for _, k := range event.Kinds {
		for _, other := range event.Kinds {
			if other == k {
				continue
			}
			ev := sample(t, other)
			ev.Kind = k
			if err := ev.Validate(); !errors.Is(err, event.ErrPayload) {
				t.Errorf("kind %s with a %s payload: Validate = %v, want ErrPayload", k, other, err)
			}
		}
	}
}

func TestEvent_Payload(t *testing.T) {
	for _, k := range event.Kinds {
		ev := sample(t, k)
		p := ev.Payload()
		if p == nil {
			t.Errorf("Payload of %s = nil", k)
			continue
		}
		// The payload is the pointer held in the field json names after the kind.
		field := reflect.ValueOf(ev)
		var found bool
		for i := range field.NumField() {
			sf := field.Type().Field(i)
			if strings.Split(sf.Tag.Get("json"), ",")[0] == string(k) {
				found = true
				if field.Field(i).Interface() != p {
					t.Errorf("Payload of %s = %v, want field %s", k, p, sf.Name)
				}
			}
		}
		if !found {
			t.Errorf("no payload field has json name %q", k)
		}
	}
	ev := sample(t, event.KindHook)
	ev.Hook = nil
	if p := ev.Payload(); p != nil {
		t.Errorf("Payload with the field unset = %#v, want untyped nil", p)
	}
	ev.Kind = "nope"
	if p := ev.Payload(); p != nil {
		t.Errorf("Payload of an unknown kind = %#v, want nil", p)
	}
}

func TestSubject(t *testing.T) {
	for _, tc := range []struct {
		kind   event.Kind
		client string
		want   string
	}{
		{event.KindHook, "claude-code", "observer.v1.hook.claude-code"},
		{event.KindAPITurn, "", "observer.v1.api_turn.unknown"},
		{event.KindAction, "gemini.cli", "observer.v1.action.gemini_cli"},
		{event.KindAction, "a*b>c", "observer.v1.action.a_b_c"},
		{event.KindAction, "my client\t1\n", "observer.v1.action.my_client_1_"},
		{event.KindAction, "del\x7f", "observer.v1.action.del_"},
		{event.KindAction, ">", "observer.v1.action._"},
		{event.KindAction, "*", "observer.v1.action._"},
		{event.KindAction, "codex-é", "observer.v1.action.codex-é"},
		{"bad.kind", "c", "observer.v1.bad_kind.c"},
		{"", "c", "observer.v1.unknown.c"},
	} {
		if got := event.Subject(tc.kind, tc.client); got != tc.want {
			t.Errorf("Subject(%q, %q) = %q, want %q", tc.kind, tc.client, got, tc.want)
		}
		ev := event.Event{Kind: tc.kind, Client: tc.client}
		if got := ev.Subject(); got != tc.want {
			t.Errorf("Event{%q, %q}.Subject() = %q, want %q", tc.kind, tc.client, got, tc.want)
		}
		// A subject has exactly four tokens, none empty, whatever the input.
		toks := strings.Split(event.Subject(tc.kind, tc.client), ".")
		if len(toks) != 4 {
			t.Errorf("Subject(%q, %q) has %d tokens", tc.kind, tc.client, len(toks))
		}
	}
}

func TestSubjectFilter(t *testing.T) {
	for _, tc := range []struct {
		kind   event.Kind
		client string
		want   string
	}{
		{"", "", "observer.v1.*.*"},
		{event.KindHook, "", "observer.v1.hook.*"},
		{"", "codex", "observer.v1.*.codex"},
		{event.KindMCPCall, "claude-code", "observer.v1.mcp_call.claude-code"},
		{event.KindAction, "a.b", "observer.v1.action.a_b"},
		{event.KindAction, "*", "observer.v1.action._"},
		{event.KindAction, ">", "observer.v1.action._"},
		{"x y", "c d", "observer.v1.x_y.c_d"},
	} {
		if got := event.SubjectFilter(tc.kind, tc.client); got != tc.want {
			t.Errorf("SubjectFilter(%q, %q) = %q, want %q", tc.kind, tc.client, got, tc.want)
		}
	}
	// A filter for a client names the same subject events from it are published on.
	for _, client := range []string{"gemini.cli", "a b", "x*"} {
		if f, s := event.SubjectFilter(event.KindHook, client), event.Subject(event.KindHook, client); f != s {
			t.Errorf("SubjectFilter(hook, %q) = %q, Subject = %q", client, f, s)
		}
	}
}

func TestMarshalDecode_RoundTrip(t *testing.T) {
	for _, k := range event.Kinds {
		t.Run(string(k), func(t *testing.T) {
			ev := sample(t, k)
			data, err := event.Marshal(&ev)
			if err != nil {
				t.Fatal(err)
			}
			// The payload sits under the key named after the kind, and no other payload key is written.
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw[string(k)]; !ok {
				t.Errorf("encoded %s has no %q key: %s", k, k, data)
			}
			for _, other := range event.Kinds {
				if _, ok := raw[string(other)]; ok && other != k {
					t.Errorf("encoded %s has a %q key: %s", k, other, data)
				}
			}
			got, err := event.Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, data)
			}
			if !reflect.DeepEqual(got, ev) {
				t.Errorf("round trip changed the event:\n got  %+v\n want %+v", got, ev)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	t.Run("MalformedJSON", func(t *testing.T) {
		for _, in := range []string{"", "{", "not json", `{"id":1}`, `{"time":"yesterday"}`, `[]`, `{"hook":[]}`} {
			_, err := event.Decode([]byte(in))
			if !errors.Is(err, event.ErrMalformedJSON) {
				t.Errorf("Decode(%q) = %v, want ErrMalformedJSON", in, err)
			}
		}
	})
	t.Run("InvalidEvent", func(t *testing.T) {
		for _, tc := range []struct {
			in   string
			want error
		}{
			{`{}`, event.ErrNoID},
			{`{"id":"x","kind":"nope","v":1,"time":"2025-01-01T00:00:00Z","hook":{}}`, event.ErrUnknownKind},
			{`{"id":"x","kind":"hook","v":2,"time":"2025-01-01T00:00:00Z","hook":{}}`, event.ErrVersion},
			{`{"id":"x","kind":"hook","time":"2025-01-01T00:00:00Z","hook":{}}`, event.ErrVersion},
			{`{"id":"x","kind":"hook","v":1,"hook":{}}`, event.ErrNoTime},
			{`{"id":"x","kind":"hook","v":1,"time":"2025-01-01T00:00:00Z"}`, event.ErrPayload},
			{`{"id":"x","kind":"hook","v":1,"time":"2025-01-01T00:00:00Z","hook":null}`, event.ErrPayload},
			{`{"id":"x","kind":"hook","v":1,"time":"2025-01-01T00:00:00Z","action":{}}`, event.ErrPayload},
			{`{"id":"x","kind":"hook","v":1,"time":"2025-01-01T00:00:00Z","hook":{},"action":{}}`, event.ErrPayload},
		} {
			_, err := event.Decode([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Errorf("Decode(%s) = %v, want %v", tc.in, err, tc.want)
			}
			if errors.Is(err, event.ErrMalformedJSON) {
				t.Errorf("Decode(%s) = %v, which is well-formed JSON", tc.in, err)
			}
		}
	})
	t.Run("UnknownFieldsIgnored", func(t *testing.T) {
		in := `{"id":"x","kind":"hook","v":1,"time":"2025-01-01T00:00:00+02:00","hook":{"event":"Stop","future":1},"added_later":true}`
		ev, err := event.Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Hook == nil || ev.Hook.Event != "Stop" {
			t.Errorf("Hook = %+v", ev.Hook)
		}
		if want := time.Date(2024, 12, 31, 22, 0, 0, 0, time.UTC); !ev.Time.Equal(want) {
			t.Errorf("Time = %v, want %v", ev.Time, want)
		}
	})
}

// FuzzDecode checks that Decode never panics, and that whatever it accepts survives Marshal and
// Decode unchanged.
func FuzzDecode(f *testing.F) {
	for _, k := range event.Kinds {
		ev := sample(f, k)
		data, err := event.Marshal(&ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"id":"x","kind":"hook","v":1,"time":"2025-01-01T00:00:00+02:00","hook":{}}`))
	f.Add([]byte(`{"id":"x","kind":"session","v":1,"time":"0001-01-01T00:00:00.5Z","session":{"started_at":"9999-12-31T23:59:59-23:59"}}`))
	f.Add([]byte(`{"id":"\u0000","kind":"action","v":1,"time":"2025-01-01T00:00:00Z","action":{"success":false,"target":"\xff"}}`))
	f.Add([]byte(`{"ID":"x","KIND":"hook","V":1,"Time":"2025-01-01T00:00:00Z","Hook":{},"hook":null}`))
	f.Add([]byte(`{"id":"x","kind":"hook","v":1e0,"time":"2025-01-01T00:00:00Z","hook":{}}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := event.Decode(data)
		if err != nil {
			return
		}
		out, err := event.Marshal(&ev)
		if err != nil {
			t.Fatalf("Decode accepted %q but Marshal failed: %v", data, err)
		}
		again, err := event.Decode(out)
		if err != nil {
			t.Fatalf("Decode(Marshal(Decode(%q))) failed: %v\n%s", data, err, out)
		}
		if !sameEvent(ev, again) {
			t.Fatalf("round trip changed the event:\n in   %q\n got  %+v\n want %+v", data, again, ev)
		}
		if out2, err := event.Marshal(&again); err != nil || string(out2) != string(out) {
			t.Fatalf("re-encoding is not stable: %v\n%s\n%s", err, out, out2)
		}
	})
}

// sameEvent compares two events, times by instant and offset (a decoded time's *Location differs
// from one decode to the next), everything else exactly.
func sameEvent(a, b event.Event) bool {
	if !sameTime(a.Time, b.Time) {
		return false
	}
	a.Time, b.Time = time.Time{}, time.Time{}
	if (a.Session == nil) != (b.Session == nil) {
		return false
	}
	if a.Session != nil {
		sa, sb := *a.Session, *b.Session
		if !sameTime(sa.StartedAt, sb.StartedAt) {
			return false
		}
		sa.StartedAt, sb.StartedAt = time.Time{}, time.Time{}
		a.Session, b.Session = &sa, &sb
	}
	return reflect.DeepEqual(a, b)
}

func sameTime(a, b time.Time) bool {
	_, oa := a.Zone()
	_, ob := b.Zone()
	return a.Equal(b) && oa == ob
}

// A limit snapshot needs its provider and window, and a used share that is a number in range.
func TestLimit_Validate(t *testing.T) {
	ok := event.Limit{Provider: "openai", Window: "7d", UsedPercent: 100}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid limit: %v", err)
	}
	for name, l := range map[string]event.Limit{
		"no provider": {Window: "5h"},
		"no window":   {Provider: "anthropic"},
		"negative":    {Provider: "anthropic", Window: "5h", UsedPercent: -1},
		"NaN":         {Provider: "anthropic", Window: "5h", UsedPercent: math.NaN()},
	} {
		if err := l.Validate(); !errors.Is(err, event.ErrPayload) {
			t.Errorf("%s: Validate = %v, want ErrPayload", name, err)
		}
	}
}

// Windows given by length are named as Anthropic names its own, and the names read back.
func TestLimitWindow(t *testing.T) {
	for _, c := range []struct {
		minutes int
		family  string
		want    string
	}{{300, "", "5h"}, {10080, "", "7d"}, {90, "", "90m"}, {0, "", "window"}, {300, "GPT-5.3 Spark", "5h_gpt-5_3_spark"}} {
		if got := event.LimitWindow(c.minutes, c.family, "window"); got != c.want {
			t.Errorf("LimitWindow(%d, %q) = %q, want %q", c.minutes, c.family, got, c.want)
		}
	}
	for w, want := range map[string]int{"5h": 300, "7d": 10080, "7d_opus": 10080, "90m": 90, "overage": 0, "7": 0, "": 0} {
		if got := event.LimitMinutes(w); got != want {
			t.Errorf("LimitMinutes(%q) = %d, want %d", w, got, want)
		}
	}
}
