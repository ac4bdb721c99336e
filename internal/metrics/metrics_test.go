package metrics

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// parsed is an exposition: per family its type and help, per series (name and its labels in
// order) its value.
type parsed struct {
	types, help map[string]string
	values      map[string]float64
}

var (
	nameRe   = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	sampleRe = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$`)
	labelRe  = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\["\\n])*)"(,|$)`)
)

// parse reads the text exposition format strictly: a family's HELP and TYPE come before its
// samples, each family once, names and labels well formed, label values unescaped, no series
// twice, values numbers.
func parse(t *testing.T, text string) parsed {
	t.Helper()
	p := parsed{types: map[string]string{}, help: map[string]string{}, values: map[string]float64{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		fail := func(why string) { t.Fatalf("line %d: %s: %q", ln, why, line) }
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, help, _ := strings.Cut(rest, " ")
			if !nameRe.MatchString(name) || p.help[name] != "" || p.types[name] != "" {
				fail("bad or repeated HELP")
			}
			p.help[name] = help
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			if p.help[name] == "" || p.types[name] != "" || (typ != "counter" && typ != "gauge") {
				fail("TYPE without HELP, repeated or unknown")
			}
			p.types[name] = typ
			continue
		}
		m := sampleRe.FindStringSubmatch(line)
		if m == nil {
			fail("not a sample")
		}
		if p.types[m[1]] == "" {
			fail("sample before its TYPE")
		}
		if p.types[m[1]] == "counter" && !strings.HasSuffix(m[1], "_total") {
			fail("a counter's name must end in _total")
		}
		key := m[1]
		if m[2] != "" {
			body := m[2][1 : len(m[2])-1]
			for body != "" {
				l := labelRe.FindStringSubmatch(body)
				if l == nil {
					fail("bad labels")
				}
				val := strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n").Replace(l[2])
				key += fmt.Sprintf("|%s=%s", l[1], val)
				body = body[len(l[0]):]
			}
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			fail("bad value")
		}
		if _, dup := p.values[key]; dup {
			fail("series repeated")
		}
		p.values[key] = v
	}
	return p
}

func series(name string, kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		name += "|" + kv[i] + "=" + kv[i+1]
	}
	return name
}

func action(id, client, session, typ string, ok *bool) event.Event {
	ev := event.New(event.KindAction, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project = id, client, session, "/p"
	ev.Action = &event.Action{Type: event.ActionType(typ), Tool: "T", Target: id, ToolUseID: id, Success: ok}
	return ev
}

func tokenRow(id, client, session, model, msg string, in, out, cr, cc int64, usd float64) event.Event {
	ev := event.New(event.KindTokenUsage, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project = id, client, session, "/p"
	ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: in, Output: out, CacheRead: cr, CacheCreation: cc}, Model: model, MessageID: msg, CostUSD: usd}
	return ev
}

// wantFromRawRows computes every counter and gauge straight from the raw tables.
func wantFromRawRows(t *testing.T, st *store.Store) map[string]float64 {
	t.Helper()
	want := map[string]float64{}
	q := func(stmt string, fn func(k []string, v []float64), nk, nv int) {
		t.Helper()
		if err := scan(context.Background(), st.DB, stmt, fn, nk, nv, sql.Named("window", store.JoinWindowMs)); err != nil {
			t.Fatal(err)
		}
	}
	q("SELECT client, type, count(*), sum(success = 0) FROM actions GROUP BY client, type", func(k []string, v []float64) {
		want[series("observer_actions_total", "client", k[0], "type", k[1])] = v[0]
		want[series("observer_action_failures_total", "client", k[0], "type", k[1])] = v[1]
	}, 2, 2)
	q(`SELECT client, model, count(*), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_creation_tokens), sum(cost_usd)
		FROM (`+fmt.Sprintf(store.TurnsSQL, "1", "1")+") GROUP BY client, model", func(k []string, v []float64) {
		want[series("observer_turns_total", "client", k[0], "model", k[1])] = v[0]
		for i, b := range []string{"input", "output", "cache_read", "cache_creation"} {
			want[series("observer_tokens_total", "client", k[0], "model", k[1], "bucket", b)] = v[1+i]
		}
		want[series("observer_cost_usd_total", "client", k[0], "model", k[1])] = v[5]
	}, 2, 6)
	q("SELECT client, count(*) FROM sessions GROUP BY client", func(k []string, v []float64) {
		want[series("observer_sessions_total", "client", k[0])] = v[0]
	}, 1, 1)
	var quarantined, pending float64
	st.DB.QueryRow("SELECT count(*) FROM quarantine").Scan(&quarantined)
	st.DB.QueryRow("SELECT count(*) FROM analysis_dirty").Scan(&pending) // 0 where the table is absent
	want["observer_quarantined_messages"] = quarantined
	want["observer_analysis_pending_sessions"] = pending
	return want
}

func TestCollect_EqualsRawRowsWhateverTheRollups(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	yes, no := true, false
	weird := "we\"ird\\model\nv2" // a label value that needs every escape
	evs := []event.Event{
		action("a1", "claude-code", "c1", "run_command", &yes),
		action("a2", "claude-code", "c1", "run_command", &no),
		action("a3", "claude-code", "c2", "read_file", nil),
		action("a4", "codex", "x1", "read_file", &no),
		tokenRow("u1", "claude-code", "c1", "claude-sonnet-4-5", "m1", 100, 10, 1000, 50, 0.5),
		tokenRow("u2", "claude-code", "c2", "claude-sonnet-4-5", "m2", 200, 20, 0, 0, 0.25),
		tokenRow("u3", "codex", "x1", weird, "", 300, 30, 5, 0, 0),
	}
	p := event.New(event.KindAPITurn, "test")
	p.ID, p.Client, p.SessionID = "p1", "claude-code", "c1"
	p.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 111, Output: 11, CacheRead: 1000, CacheCreation: 50}, Provider: "anthropic",
		Model: "claude-sonnet-4-5", MessageID: "m1", Status: 200, CostUSD: 0.55} // the same turn as u1: it replaces it
	evs = append(evs, p)
	if _, err := st.WriteBatch(ctx, evs, []store.Rejected{{Subject: "observer.v1.x.y", Reason: "bad", Data: []byte("{")}}); err != nil {
		t.Fatal(err)
	}
	want := wantFromRawRows(t, st)
	if want[series("observer_tokens_total", "client", "claude-code", "model", "claude-sonnet-4-5", "bucket", "input")] != 311 ||
		want[series("observer_actions_total", "client", "claude-code", "type", "run_command")] != 2 || want["observer_quarantined_messages"] != 1 {
		t.Fatalf("the raw figures are not what the events say: %v", want)
	}
	check := func(name string) {
		t.Helper()
		counts, err := query.StoreCounts(ctx, st.DB)
		if err != nil {
			t.Fatal(err)
		}
		fams := Collect(counts, path)
		var buf bytes.Buffer
		if err := Write(&buf, fams); err != nil {
			t.Fatal(err)
		}
		got := parse(t, buf.String())
		for _, f := range []string{"observer_actions_total", "observer_action_failures_total", "observer_turns_total", "observer_tokens_total",
			"observer_cost_usd_total", "observer_sessions_total"} {
			if got.types[f] != "counter" {
				t.Errorf("%s: %s has type %q", name, f, got.types[f])
			}
		}
		size := got.values["observer_store_size_bytes"]
		delete(got.values, "observer_store_size_bytes")
		if got.types["observer_store_size_bytes"] != "gauge" || size < 4096 {
			t.Errorf("%s: store size %v", name, size)
		}
		for k, v := range want {
			if g, ok := got.values[k]; !ok || math.Abs(g-v) > 1e-9 {
				t.Errorf("%s: %s = %v (present %v), want %v", name, k, g, ok, v)
			}
		}
		for k := range got.values {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: unexpected series %s", name, k)
			}
		}
	}
	check("daily rollup")
	if _, err := st.DB.Exec("UPDATE rollup_state SET value = '' WHERE key = 'zone'"); err != nil {
		t.Fatal(err)
	}
	check("hourly rollup")
	if _, err := st.DB.Exec("DROP TABLE usage_hourly; DROP TABLE actions_hourly"); err != nil {
		t.Fatal(err)
	}
	check("raw rows")
}

func TestCollect_NoStore(t *testing.T) {
	fams := Collect(nil, filepath.Join(t.TempDir(), "none.db"))
	var buf bytes.Buffer
	Write(&buf, fams)
	got := parse(t, buf.String())
	if len(got.values) != 3 || got.values["observer_store_size_bytes"] != 0 || len(got.types) != len(fams) {
		t.Errorf("without a store: %v", got.values)
	}
}

// scan runs q, whose rows are nk text keys then nv numbers, and hands each row to fn.
func scan(ctx context.Context, db *sql.DB, q string, fn func(keys []string, vals []float64), nk, nv int, args ...any) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		keys := make([]string, nk)
		vals := make([]sql.NullFloat64, nv)
		dest := make([]any, 0, nk+nv)
		for i := range keys {
			dest = append(dest, &keys[i])
		}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		out := make([]float64, nv)
		for i, v := range vals {
			out[i] = v.Float64
		}
		fn(keys, out)
	}
	return rows.Err()
}
