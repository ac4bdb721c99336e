package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// Control serves the supervisor's control API on a unix socket (mode 0600):
//
//	GET  /status           the status report as JSON
//	POST /restart?name=N   restart one component
//	POST /down             stop everything and exit
type Control struct {
	Status  func() any
	Restart func(name string) error
	Down    func()

	srv *http.Server
	ln  net.Listener
}

// Listen starts serving on path, replacing a stale socket (the caller holds the supervisor lock).
func (c *Control) Listen(path string) error {
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c.Status())
	})
	mux.HandleFunc("POST /restart", func(w http.ResponseWriter, r *http.Request) {
		if err := c.Restart(r.URL.Query().Get("name")); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, ErrUnknownComponent) {
				status = http.StatusNotFound
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /down", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		go c.Down()
	})
	c.ln = ln
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go c.srv.Serve(ln)
	return nil
}

// Close stops serving.
func (c *Control) Close() {
	if c.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.srv.Shutdown(ctx)
	}
}

// ErrNotRunning reports that no supervisor answers on the socket.
var ErrNotRunning = errors.New("observer is not running")

// ControlClient talks to a running supervisor.
type ControlClient struct {
	Path string
	hc   *http.Client
}

func (c *ControlClient) client() *http.Client {
	if c.hc == nil {
		c.hc = &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", c.Path)
			}},
		}
	}
	return c.hc
}

func (c *ControlClient) do(ctx context.Context, method, path string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://observer"+path, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w (no supervisor answers on %s)", ErrNotRunning, c.Path)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

// Status fetches the status report into v.
func (c *ControlClient) Status(ctx context.Context, v any) error {
	body, code, err := c.do(ctx, "GET", "/status")
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("status: %s", body)
	}
	return json.Unmarshal(body, v)
}

// Restart asks for a component's restart.
func (c *ControlClient) Restart(ctx context.Context, name string) error {
	body, code, err := c.do(ctx, "POST", "/restart?name="+url.QueryEscape(name))
	if err != nil {
		return err
	}
	switch code {
	case http.StatusNoContent:
		return nil
	case http.StatusNotFound:
		return fmt.Errorf("%w: %s", ErrUnknownComponent, body)
	}
	return fmt.Errorf("restart %s: %s", name, body)
}

// Down asks the supervisor to stop.
func (c *ControlClient) Down(ctx context.Context) error {
	_, code, err := c.do(ctx, "POST", "/down")
	if err != nil {
		return err
	}
	if code != http.StatusAccepted {
		return fmt.Errorf("down: unexpected status %d", code)
	}
	return nil
}
