package openclaw

import (
	"context"
	"database/sql"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// fixtureRecords returns the records of the fixtures: the legacy file's lines and the database's
// events (decompressed).
func fixtureRecords(tb testing.TB) [][]byte {
	tb.Helper()
	recs := transcripttest.ReadLines(tb, fixLegacy)
	err := sqliteread.Read(context.Background(), abs(tb, fixDB), func(ctx context.Context, db *sql.DB) error {
		q, err := db.QueryContext(ctx, "SELECT seq, event_json, event_zstd FROM transcript_events ORDER BY session_id, seq")
		if err != nil {
			return err
		}
		for q.Next() {
			var r row
			var js, zs []byte
			if err := q.Scan(&r.seq, &js, &zs); err != nil {
				q.Close()
				return err
			}
			r.json, r.zstd = js, zs
			data, err := r.payload()
			if err != nil {
				q.Close()
				return err
			}
			recs = append(recs, data)
		}
		return sqliteread.CloseRows(q)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

// FuzzRecord feeds arbitrary records to a session file's parser: it must never panic, every
// event must validate, token counts must not be negative, its state must survive a round trip,
// and the same input must yield the same events.
func FuzzRecord(f *testing.F) {
	seeds := []string{
		`{"type":"session","version":4,"id":"s","timestamp":"2026-12-01T22:59:14.314Z","cwd":"/w","parentSession":"92614f30-4fb9-4803-9aad-8d86b7ea54c4"}`,
		`{"type":"message","id":"a","timestamp":"2026-12-01T22:59:22.468Z","message":{"role":"user","content":"hi","timestamp":1796165936118,"__openclaw":{"senderIsOwner":true},"idempotencyKey":"k"}}`,
		`{"type":"message","id":"b","timestamp":"2026-12-01T22:59:23.928Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"tool_call","arguments":{"id":"x:sessions_spawn","args":{"task":"t"}}},{"type":"toolCall","name":"exec","arguments":{"command":"ls"}}],"provider":"p","model":"claude-sonnet-4-6","usage":{"input":-1,"output":"7","cacheRead":1.5,"cacheWrite":1e300,"cacheWrite1h":9,"reasoningTokens":99,"cost":{"total":-2}},"stopReason":"toolUse","timestamp":1796165943928}}`,
		`{"type":"message","id":"n","timestamp":"2026-12-01T22:59:24.000Z","message":{"role":"custom","customType":"openclaw.nested-tool.v1","content":"","details":{"toolCallId":"n1","toolName":"sessions_spawn","parentToolCallId":"c","input":{"task":"t"},"result":{"content":[{"type":"text","text":"ok"}]},"isError":false,"startedAt":1796165944000,"timestamp":1796165944500},"timestamp":1796165944000}}`,
		`{"type":"message","id":"d","timestamp":"2026-12-01T22:59:25.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"tool_call","content":[{"type":"text","text":"x"},{"type":"image","data":"AAA"}],"isError":true,"timestamp":1}}`,
		`{"type":"message","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"e","timestamp":1796165944000}}`,
		`{"type":"compaction","id":"e","timestamp":"2026-12-01T22:59:26.000Z","summary":"s","tokensBefore":100}`,
		`{"type":"custom","customType":"model-snapshot","data":{}}`, `{"type":"session_info","name":"n"}`,
		"\xff\xfe", `[]`, `{}`, `{"type":7}`, `{"type":"message","message":[]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(seeds[0] + "\n" + seeds[1] + "\n" + seeds[2] + "\n" + seeds[3] + "\n" + seeds[4]))
	for _, r := range fixtureRecords(f) {
		if len(r) < 8192 {
			f.Add(r)
		}
	}
	a := New(nil)
	src := transcript.Source{Client: Client, Path: "/fuzz/agents/main/sessions/00000000-0000-4000-8000-000000000001.jsonl"}
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := transcripttest.FuzzLines(t, a, src, data, badUsage)
		transcripttest.SameEvents(t, evs, transcripttest.FuzzLines(t, a, src, data, badUsage))
	})
}

// badUsage is a usage a fuzzed parser must never return: a negative figure, a part above its
// whole (1-hour cache writes above cache writes, reasoning above output) or a cost that is not a
// number.
func badUsage(u *event.TokenUsage) bool {
	return u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0 ||
		u.CacheCreation1h < 0 || u.CacheCreation1h > u.CacheCreation || u.Reasoning < 0 || u.Reasoning > u.Output ||
		u.CostUSD < 0 || u.CostUSD != u.CostUSD
}

// FuzzPayload feeds arbitrary bytes as a row's compressed event: never a panic, an error or the
// event.
func FuzzPayload(f *testing.F) {
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0})
	f.Add([]byte("not zstd"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := row{zstd: data}
		if out, err := r.payload(); err == nil && len(out) > maxEventBytes {
			t.Fatalf("%d bytes decoded", len(out))
		}
	})
}
