package otlp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// hangGuard bounds every wait of these tests: it only keeps a broken receiver from hanging the
// test, it is no measure of time.
const hangGuard = 20 * time.Second

func startHTTP(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	r := New(cfg)
	srv := httptest.NewServer(r)
	t.Cleanup(func() { srv.Close(); r.Close() })
	return srv
}

func dial(t *testing.T, srv *httptest.Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(hangGuard))
	return conn
}

// A body that trickles in (a few bytes, then nothing) is cut off at [otlp] body_timeout with a 408,
// and its connection closed.
func TestReceiver_TrickledBodyTimesOut(t *testing.T) {
	srv := startHTTP(t, Config{BodyTimeout: 200 * time.Millisecond})
	conn := dial(t, srv)
	fmt.Fprintf(conn, "POST /v1/logs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n\x0a",
		srv.Listener.Addr())
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body (the receiver held the connection open): %v", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(msg), "body_timeout") {
		t.Fatalf("status %d %q, want 408 naming body_timeout", resp.StatusCode, msg)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("the connection stays open after the 408 (read: %v)", err)
	}
}

// A body over [otlp] max_body_bytes gets a 413 the exporter can read, whether its length is
// declared or it comes chunked: an exporter that sends its whole body before it reads the answer
// (most do) must not see a broken pipe or a reset instead.
func TestReceiver_OversizedBodyGets413(t *testing.T) {
	const limit = 64 << 10
	body := bytes.Repeat([]byte("x"), 32<<20) // far more than the sockets' buffers hold
	srv := startHTTP(t, Config{MaxBodyBytes: limit})
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			conn := dial(t, srv)
			w := bufio.NewWriterSize(conn, 64<<10)
			fmt.Fprintf(w, "POST /v1/logs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-protobuf\r\n", srv.Listener.Addr())
			if chunked {
				fmt.Fprintf(w, "Transfer-Encoding: chunked\r\n\r\n")
				for off := 0; off < len(body); off += 1 << 20 {
					fmt.Fprintf(w, "%x\r\n", 1<<20)
					w.Write(body[off : off+1<<20])
					fmt.Fprintf(w, "\r\n")
				}
				fmt.Fprintf(w, "0\r\n\r\n")
			} else {
				fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", len(body))
				w.Write(body)
			}
			if err := w.Flush(); err != nil {
				t.Fatalf("sending the body failed (the receiver closed on it): %v", err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no readable answer: %v", err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "max_body_bytes") {
				t.Fatalf("status %d %q, want 413 naming max_body_bytes", resp.StatusCode, msg)
			}
		})
	}
	t.Run("net/http client", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+PathLogs, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("no readable answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413", resp.StatusCode)
		}
	})
}

// stallConn passes the first left bytes written and then holds every write until the test ends:
// a client whose message stops arriving.
type stallConn struct {
	net.Conn
	mu   sync.Mutex
	left int
	stop chan struct{}
}

func (c *stallConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	n := min(len(p), c.left)
	c.left -= n
	c.mu.Unlock()
	if n > 0 {
		m, err := c.Conn.Write(p[:n])
		if err != nil || m == len(p) {
			return m, err
		}
	}
	<-c.stop
	return n, net.ErrClosed
}

// startGRPC serves a receiver over gRPC as observer-proxy does and returns its address.
func startGRPC(t *testing.T, cfg Config) string {
	t.Helper()
	r := New(cfg)
	s := grpc.NewServer(r.GRPCServerOptions()...)
	r.RegisterGRPC(s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Stop(); r.Close() })
	return ln.Addr().String()
}

func bigExport(t *testing.T, size int) plogotlp.ExportRequest {
	t.Helper()
	er := plogotlp.NewExportRequest()
	lr := er.Logs().ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr(strings.Repeat("x", size))
	return er
}

// Over gRPC a message that stops arriving ends the call with DeadlineExceeded at [otlp]
// body_timeout, and one over max_body_bytes with ResourceExhausted.
func TestReceiver_GRPCLimits(t *testing.T) {
	t.Run("stalled", func(t *testing.T) {
		addr := startGRPC(t, Config{BodyTimeout: 200 * time.Millisecond})
		stop := make(chan struct{})
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, "tcp", a)
				if err != nil {
					return nil, err
				}
				// The preface, settings and headers pass, and the first part of the message.
				return &stallConn{Conn: c, left: 16 << 10, stop: stop}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		defer close(stop) // first: the stalled writes end, then the client closes
		// The hang guard cancels (Canceled), so that only the receiver's bound gives DeadlineExceeded.
		ctx, cancel := context.WithCancel(context.Background())
		guard := time.AfterFunc(hangGuard, cancel)
		defer guard.Stop()
		_, err = plogotlp.NewGRPCClient(cc).Export(ctx, bigExport(t, 1<<20))
		if code := status.Code(err); code != codes.DeadlineExceeded {
			t.Fatalf("a stalled message ended with %v (%v), want DeadlineExceeded from the receiver", code, err)
		}
	})
	t.Run("oversized", func(t *testing.T) {
		addr := startGRPC(t, Config{MaxBodyBytes: 64 << 10})
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		_, err = plogotlp.NewGRPCClient(cc).Export(ctx, bigExport(t, 1<<20))
		if code := status.Code(err); code != codes.ResourceExhausted {
			t.Fatalf("an oversized message ended with %v (%v), want ResourceExhausted", code, err)
		}
	})
}
