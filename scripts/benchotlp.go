//go:build ignore

// benchotlp loads an OTLP/HTTP logs receiver with Claude Code-shaped exports (protobuf, each
// holding -records claude_code.api_request records with unique sessions and request ids) from
// -c concurrent exporters, and prints one JSON line: the receiver's answer latency p50/p99/max,
// exports and records per second accepted, and the records sent. With -serve-bare it serves
// instead a bare receiver that decodes each export with pdata and answers, the floor any OTLP
// receiver pays (and prints its address to -addr-file). scripts/bench-otlp.sh runs both.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

func main() {
	url := flag.String("url", "", "logs endpoint (http://host:port/v1/logs)")
	exports := flag.Int("exports", 2000, "exports to send")
	records := flag.Int("records", 20, "api_request records per export")
	conc := flag.Int("c", 8, "concurrent exporters")
	tag := flag.String("tag", "run", "prefix of session and request ids (unique per run)")
	bare := flag.Bool("serve-bare", false, "serve a bare decoding receiver instead")
	listen := flag.String("listen", "127.0.0.1:0", "with -serve-bare: listen address")
	addrFile := flag.String("addr-file", "", "with -serve-bare: write the address here")
	flag.Parse()
	if *bare {
		serveBare(*listen, *addrFile)
		return
	}
	bodies := make([][]byte, *exports)
	for i := range bodies {
		bodies[i] = export(*tag, i, *records)
	}
	var next atomic.Int64
	lat := make([][]time.Duration, *conc)
	var failed atomic.Int64
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: *conc}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	t0 := time.Now()
	for w := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				s := time.Now()
				resp, err := client.Post(*url, "application/x-protobuf", bytes.NewReader(bodies[i]))
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					failed.Add(1)
					continue
				}
				lat[w] = append(lat[w], time.Since(s))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	out := map[string]any{"exports": len(all), "failed": failed.Load(), "records": len(all) * *records,
		"wall_s": wall.Seconds(), "exports_per_s": float64(len(all)) / wall.Seconds(),
		"records_per_s": float64(len(all)**records) / wall.Seconds(),
		"p50_ms":        pct(0.5), "p99_ms": pct(0.99), "max_ms": pct(1), "sent_at": t0.UnixMilli()}
	json.NewEncoder(os.Stdout).Encode(out)
}

// export builds one Claude Code-shaped logs export: records api_request records of one session.
func export(tag string, i, records int) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-code")
	rl.Resource().Attributes().PutStr("service.version", "2.1.197")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("com.anthropic.claude_code.events")
	now := time.Now()
	for j := range records {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Duration(j) * time.Millisecond)))
		lr.Body().SetStr("claude_code.api_request")
		a := lr.Attributes()
		a.PutStr("event.name", "api_request")
		a.PutStr("session.id", fmt.Sprintf("%s-session-%06d", tag, i))
		a.PutStr("request_id", fmt.Sprintf("req_%s_%06d_%03d", tag, i, j))
		a.PutStr("model", "claude-sonnet-4-5")
		a.PutInt("input_tokens", 120)
		a.PutInt("output_tokens", 45)
		a.PutInt("cache_read_tokens", 1000)
		a.PutInt("cache_creation_tokens", 300)
		a.PutDouble("cost_usd", 0.0045)
		a.PutInt("duration_ms", 900)
		a.PutStr("prompt.id", "p")
		a.PutInt("event.sequence", int64(j))
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

func serveBare(listen, addrFile string) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if addrFile != "" {
		os.WriteFile(addrFile, []byte(ln.Addr().String()), 0o600)
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		er := plogotlp.NewExportRequest()
		if err := er.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		out, _ := plogotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
}
