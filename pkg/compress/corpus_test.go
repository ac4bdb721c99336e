package compress_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/compress"
	"github.com/observerhq/observer/pkg/compress/compresstest"
	"github.com/observerhq/observer/pkg/compress/validate"
)

// figures sums what one mode did to a set of bodies.
type figures struct {
	bodies, changed int
	in, out         int64
	byMech          map[string][2]int64 // mechanism → decisions, bytes saved
	pairs, same     int                 // consecutive requests whose cached prefix was compared, and equal
}

// Every request rebuilt from the corpus's real transcripts (Claude Code as Messages and as Chat
// bodies, Codex as Responses bodies), compressed in each mode with the proxy's memory carried from
// one request of a session to the next, stays valid for its API; in cache_aware mode the prefix up
// to each request's last breakpoint is sent again identically by the next request. The bytes and
// estimated tokens saved per mode and mechanism are logged.
func TestCorpus_EveryModeValidAndCacheStable(t *testing.T) {
	sessions, _ := compresstest.Load(t)
	total := 0
	for _, s := range sessions {
		total += len(s.Bodies)
	}
	if total < 1000 {
		t.Fatalf("the corpus yields %d request bodies, want at least 1,000", total)
	}
	for _, mode := range compress.Modes {
		f := figures{byMech: map[string][2]int64{}}
		invalid := 0
		for _, s := range sessions {
			c, err := compress.New(compress.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			var prev []byte
			var prevIn []byte
			for i, body := range s.Bodies {
				res, err := c.Request(s.API, body)
				if err != nil {
					t.Fatalf("%s body %d: %v", s.Name, i, err)
				}
				if errs := validate.Body(s.API, res.Body); len(errs) > 0 {
					invalid++
					if invalid <= 5 {
						t.Errorf("%s %s body %d is invalid after compression: %v", mode, s.Name, i, errs[:min(3, len(errs))])
					}
				}
				f.bodies++
				f.in += int64(len(body))
				f.out += int64(len(res.Body))
				if len(res.Decisions) > 0 {
					f.changed++
				}
				for _, d := range res.Decisions {
					m := f.byMech[d.Mechanism]
					f.byMech[d.Mechanism] = [2]int64{m[0] + 1, m[1] + int64(d.Before-d.After)}
				}
				if mode == compress.ModeCacheAware && prev != nil {
					if ok, compared := samePrefix(t, s.API, prevIn, body, prev, res.Body); compared {
						f.pairs++
						if ok {
							f.same++
						} else if f.pairs-f.same <= 3 {
							t.Errorf("%s: request %d does not repeat the cached prefix of request %d byte for byte", s.Name, i, i-1)
						}
					}
				}
				prev, prevIn = res.Body, body
			}
		}
		if invalid > 0 {
			t.Errorf("%s: %d of %d bodies invalid after compression", mode, invalid, f.bodies)
		}
		logFigures(t, mode, f)
		if mode == compress.ModeCacheAware {
			if f.pairs < 500 {
				t.Errorf("only %d consecutive request pairs compared", f.pairs)
			}
			t.Logf("cache_aware: %d of %d consecutive request pairs repeat the previous cached prefix identically", f.same, f.pairs)
		}
	}
}

func logFigures(t *testing.T, mode string, f figures) {
	saved := f.in - f.out
	t.Logf("%-11s %5d bodies (%d changed): %s → %s bytes, %.1f%% saved, ~%s tokens (bytes/4)", mode, f.bodies, f.changed,
		comma(f.in), comma(f.out), 100*float64(saved)/float64(f.in), comma(saved/4))
	var mechs []string
	for m := range f.byMech {
		mechs = append(mechs, m)
	}
	sort.Slice(mechs, func(i, j int) bool { return f.byMech[mechs[i]][1] > f.byMech[mechs[j]][1] })
	for _, m := range mechs {
		v := f.byMech[m]
		t.Logf("    %-9s %6d decisions, %s bytes saved (~%s tokens)", m, v[0], comma(v[1]), comma(v[1]/4))
	}
}

func comma(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// samePrefix compares what the upstream has cached from the previous request (its conversation up
// to its last cache breakpoint; for the OpenAI APIs, which cache by prefix without breakpoints,
// the whole previous conversation) with the same messages in the next request, both as
// compressed, breakpoint markers aside (the client moves them). compared is false when the
// client's own requests do not share that prefix (a conversation rebuilt after an interruption).
func samePrefix(t *testing.T, api string, prevIn, nextIn, prevOut, nextOut []byte) (same, compared bool) {
	key := "messages"
	if api == validate.Responses {
		key = "input"
	}
	pi, ni := conv(t, prevIn, key), conv(t, nextIn, key)
	po, no := conv(t, prevOut, key), conv(t, nextOut, key)
	end := len(pi)
	if api == validate.Anthropic {
		end = 0
		for i, m := range pi {
			if bytes.Contains(m, []byte(`"cache_control"`)) {
				end = i + 1
			}
		}
	}
	if end == 0 || len(ni) < end || len(po) != len(pi) || len(no) != len(ni) {
		return false, false
	}
	for i := range end {
		if !bytes.Equal(stripCache(pi[i]), stripCache(ni[i])) {
			return false, false
		}
	}
	for i := range end {
		if !bytes.Equal(stripCache(po[i]), stripCache(no[i])) {
			return false, true
		}
	}
	return true, true
}

func conv(t *testing.T, body []byte, key string) []json.RawMessage {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	json.Unmarshal(v[key], &msgs)
	return msgs
}

var cacheMarker = []byte(`,"cache_control":{"type":"ephemeral"}`)

func stripCache(b []byte) []byte { return bytes.ReplaceAll(b, cacheMarker, nil) }

// BenchmarkRequest_200KB times the compression of request bodies of about 200 KB (the corpus's
// Claude Code requests near that size, in cache_aware mode with a fresh memory so every output is
// new) and reports p50 and p99 per request.
func BenchmarkRequest_200KB(b *testing.B) {
	sessions, _ := compresstest.Load(b)
	var bodies [][]byte
	var api []string
	for _, s := range sessions {
		for _, body := range s.Bodies {
			if len(body) > 150<<10 && len(body) < 250<<10 {
				bodies, api = append(bodies, body), append(api, s.API)
			}
		}
	}
	if len(bodies) == 0 {
		b.Skip("no corpus request of about 200 KB")
	}
	// The baseline: one validity pass of encoding/json over the same bodies, the least any proxy
	// that reads a body as JSON pays.
	b.Run("baseline_json_valid", func(b *testing.B) {
		var times []time.Duration
		for i := 0; b.Loop(); i++ {
			t0 := time.Now()
			json.Valid(bodies[i%len(bodies)])
			times = append(times, time.Since(t0))
		}
		reportPercentiles(b, times, len(bodies))
	})
	for _, mode := range compress.Modes {
		b.Run(mode, func(b *testing.B) {
			var times []time.Duration
			for i := 0; b.Loop(); i++ {
				c, _ := compress.New(compress.Options{Mode: mode})
				k := i % len(bodies)
				t0 := time.Now()
				c.Request(api[k], bodies[k])
				times = append(times, time.Since(t0))
			}
			reportPercentiles(b, times, len(bodies))
		})
	}
}

func reportPercentiles(b *testing.B, times []time.Duration, bodies int) {
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(bodies), "bodies")
}
