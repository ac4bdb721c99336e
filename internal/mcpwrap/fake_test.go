package mcpwrap_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The tests run this test binary again as the wrapped MCP server: with MCPWRAP_FAKE=1, TestMain
// serves the fake below on stdin and stdout instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("MCPWRAP_FAKE") == "1" {
		fakeServer()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// rawAnswer is what the fake's "raw" tool writes, byte for byte: odd spacing, a key order no
// encoder would choose, escapes. The proxy must relay it unchanged.
const rawAnswer = `{"result" : {"content":[{"text":"caf\u00e9  \"q\"","type":"text"}],"zeta":1.50e2} , "id":%s, "jsonrpc":"2.0"}`

// fakeServer is a small MCP server. Tools: echo, slow (ms), hang, crash, fail (a tool error with
// secrets in it), rpcerror, counter (a different answer each time), raw, progress (progress
// notifications every 100 ms for ms, then an answer), roots (asks the client for roots/list first).
// FAKE_NO_TOOLS=1 declares no tools capability; FAKE_PAGES=1 lists its tools on two pages;
// FAKE_LOG names a file that receives every line the fake reads; FAKE_STUBBORN=1 ignores SIGTERM and
// the end of its input.
func fakeServer() {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	write := func(v any) {
		var b []byte
		switch v := v.(type) {
		case string:
			b = []byte(v)
		default:
			b, _ = json.Marshal(v)
		}
		mu.Lock()
		out.Write(append(b, '\n'))
		out.Flush()
		mu.Unlock()
	}
	var logf *os.File
	if p := os.Getenv("FAKE_LOG"); p != "" {
		logf, _ = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	var counter atomic.Int64
	clientAnswers := map[string]chan json.RawMessage{}
	var caMu sync.Mutex

	stubborn := os.Getenv("FAKE_STUBBORN") == "1"
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 && logf != nil {
			logf.Write(line)
		}
		if err != nil {
			if stubborn {
				select {} // neither the end of its input nor SIGTERM stops it
			}
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Params struct {
				Name      string `json:"name"`
				Cursor    string `json:"cursor"`
				Arguments struct {
					Text string `json:"text"`
					Ms   int    `json:"ms"`
				} `json:"arguments"`
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil {
			write(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"fake: parse error"}}`)
			continue
		}
		if msg.Method == "" && msg.ID != nil { // the client's answer to our request
			caMu.Lock()
			ch := clientAnswers[string(msg.ID)]
			caMu.Unlock()
			if ch != nil {
				ch <- msg.Result
			}
			continue
		}
		if msg.ID == nil {
			continue // notification
		}
		answer := func(result any) {
			write(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
		}
		text := func(s string) map[string]any {
			return map[string]any{"content": []map[string]string{{"type": "text", "text": s}}}
		}
		switch msg.Method {
		case "initialize":
			caps := map[string]any{"tools": map[string]any{}}
			if os.Getenv("FAKE_NO_TOOLS") == "1" {
				caps = map[string]any{"logging": map[string]any{}}
			}
			answer(map[string]any{"protocolVersion": "2025-06-18", "capabilities": caps,
				"serverInfo": map[string]any{"name": "fake-server", "version": "1"}})
		case "tools/list":
			var tools []map[string]any
			for _, n := range []string{"echo", "slow", "hang", "crash", "fail", "rpcerror", "counter", "raw", "progress", "roots"} {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			switch {
			case os.Getenv("FAKE_PAGES") == "1" && msg.Params.Cursor == "":
				answer(map[string]any{"tools": tools[:5], "nextCursor": "page2"})
			case os.Getenv("FAKE_PAGES") == "1":
				answer(map[string]any{"tools": tools[5:]})
			default:
				answer(map[string]any{"tools": tools})
			}
		case "tools/call":
			a := msg.Params.Arguments
			switch msg.Params.Name {
			case "echo":
				answer(text(a.Text))
			case "slow":
				go func() { time.Sleep(time.Duration(a.Ms) * time.Millisecond); answer(text("slept")) }()
			case "hang":
			case "crash":
				fmt.Fprintln(os.Stderr, "fake: about to crash")
				fmt.Fprintln(os.Stderr, "fake: boom with key sk-ant-api03-abcdefghijklmnopqrstuvwxyz")
				os.Exit(3)
			case "fail":
				answer(map[string]any{"isError": true, "content": []map[string]string{{"type": "text",
					"text": "cannot open: password=hunter2hunter2 for acct-123456"}}})
			case "rpcerror":
				write(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32602, "message": "fake: bad arguments"}})
			case "counter":
				answer(text(fmt.Sprint(counter.Add(1))))
			case "raw":
				write(fmt.Sprintf(rawAnswer, msg.ID))
			case "progress":
				go func() {
					for i := 0; i*100 < a.Ms; i++ {
						time.Sleep(100 * time.Millisecond)
						write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
							"params": map[string]any{"progressToken": msg.Params.Meta.ProgressToken, "progress": i}})
					}
					answer(text("done"))
				}()
			case "roots":
				go func() {
					ch := make(chan json.RawMessage, 1)
					caMu.Lock()
					clientAnswers[`"srv-1"`] = ch
					caMu.Unlock()
					write(`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`)
					res := <-ch
					answer(text("roots: " + strings.TrimSpace(string(res))))
				}()
			default:
				write(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32602, "message": "fake: unknown tool " + msg.Params.Name}})
			}
		default:
			write(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "fake: method not found"}})
		}
	}
}
