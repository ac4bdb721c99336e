//go:build ignore

// benchupstream is the other end of scripts/bench-proxy.sh, in one of two modes:
//
//   - the fake model API (default): POST /v1/messages answers at once like the Anthropic Messages
//     API, a JSON message with usage, or, when the request body asks for "stream":true, an SSE
//     stream (message_start flushed first, then the rest of the events); each answer has a message
//     id and a request id of its own, as the real API's do (the writer joins a turn to the other
//     records of its message and request: one id shared by every turn made each join a scan of
//     all the turns before it);
//   - -bare URL: a bare httputil.ReverseProxy in front of URL, with the same transport settings
//     observer-proxy uses (256 idle connections, 64 per host), the baseline observer-proxy is
//     compared with.
//
// It listens on -listen (loopback, port 0 picks a free one) and writes its base URL to -addr-file
// once it accepts connections. SIGINT or SIGTERM stops it.
//
//	go build -o /tmp/benchupstream scripts/benchupstream.go
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

const messageJSON = `{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello there, this is a short answer."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":45,"cache_read_input_tokens":1000,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":100}}}`

const streamFirst = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":300,"cache_read_input_tokens":1000,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":100},"output_tokens":1}}}` + "\n\n"

const streamRest = "event: content_block_start\n" +
	`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: ping\n" + `data: {"type": "ping"}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there, "}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"this is a short answer."}}` + "\n\n" +
	"event: content_block_stop\n" +
	`data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":120,"cache_creation_input_tokens":300,"cache_read_input_tokens":1000,"output_tokens":45}}` + "\n\n" +
	"event: message_stop\n" +
	`data: {"type":"message_stop"}` + "\n\n"

// answers numbers the answers, for their ids.
var answers atomic.Int64

func upstream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := answers.Add(1)
	msgID := fmt.Sprintf(`"id":"msg_bench%012d"`, n)
	h := w.Header()
	h.Set("request-id", fmt.Sprintf("req_bench%012d", n))
	if bytes.Contains(body, []byte(`"stream":true`)) {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		io.WriteString(w, strings.Replace(streamFirst, `"id":"msg_bench"`, msgID, 1))
		w.(http.Flusher).Flush()
		io.WriteString(w, streamRest)
		return
	}
	answer := strings.Replace(messageJSON, `"id":"msg_bench"`, msgID, 1)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(answer)))
	io.WriteString(w, answer)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "listen address (loopback)")
	bare := flag.String("bare", "", "run as a bare httputil.ReverseProxy in front of this URL instead of the fake API")
	addrFile := flag.String("addr-file", "", "write the base URL here once listening")
	flag.Parse()

	var handler http.Handler = http.HandlerFunc(upstream)
	if *bare != "" {
		target, err := url.Parse(*bare)
		if err != nil {
			log.Fatal(err)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 64
		rp := &httputil.ReverseProxy{
			Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			Transport: t, // FlushInterval 0: text/event-stream responses are flushed as they come
		}
		// Full duplex: without it the server closes the inbound body when the response headers
		// are written, and the transport's last read of the request body (checking it is not
		// longer than declared) can then fail and cut a stream already under way
		// (golang/go#40747): a few streams in a thousand end in unexpected EOF.
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.NewResponseController(w).EnableFullDuplex()
			rp.ServeHTTP(w, r)
		})
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(base+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatal(err)
		}
	} else {
		fmt.Println(base)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
}
