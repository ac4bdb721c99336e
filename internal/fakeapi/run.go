package fakeapi

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ErrUsage wraps the errors of a bad command line; Run has already printed them and the usage.
var ErrUsage = errors.New("bad command line")

// DefaultUsage is the usage observer-fakeapi returns unless flags say otherwise. Every bucket is
// non-zero and distinct so that a test can tell them apart.
var DefaultUsage = Usage{Input: 120, Output: 45, CacheRead: 1000, CacheWrite5m: 200, CacheWrite1h: 100, Reasoning: 10}

// Run is the observer-fakeapi command: it parses args (without the program name), serves the fake
// API until ctx is done, and returns nil on a normal stop. It prints the listen address on stderr.
// It returns flag.ErrHelp for -h and an ErrUsage error for a bad command line, both after printing
// the usage.
func Run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("observer-fakeapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: observer-fakeapi [flags]\n\n"+
			"A scripted fake of the Anthropic Messages API, the OpenAI Responses and Chat Completions APIs\n"+
			"and the Gemini API, for trying observer offline (Claude Code, Codex, Gemini CLI and others).\n\n")
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:9999", "address to listen on")
	logPath := fs.String("log", "", "append every request as a JSON line to this `file`")
	latency := fs.Duration("latency", 0, "delay before the first byte of every model response")
	model := fs.String("model", "", "model to name in every response (default: echo the request's)")
	command := fs.String("command", "ls", "command line the fake model asks a shell tool to run")
	bodyDir := fs.String("body-dir", "", "save the body of every POST as a file in this `directory`")
	readPath := fs.String("read", "", "absolute `path` of a file the fake model asks Claude Code's Read tool to read (instead of Bash)")
	u := DefaultUsage
	fs.Int64Var(&u.Input, "usage-input", u.Input, "uncached input tokens per response")
	fs.Int64Var(&u.Output, "usage-output", u.Output, "output tokens per response (reasoning included)")
	fs.Int64Var(&u.CacheRead, "usage-cache-read", u.CacheRead, "cache-read input tokens per response")
	fs.Int64Var(&u.CacheWrite5m, "usage-cache-write-5m", u.CacheWrite5m, "5-minute cache-write tokens per response (Anthropic)")
	fs.Int64Var(&u.CacheWrite1h, "usage-cache-write-1h", u.CacheWrite1h, "1-hour cache-write tokens per response (Anthropic)")
	fs.Int64Var(&u.Reasoning, "usage-reasoning", u.Reasoning, "reasoning tokens per response, part of the output (OpenAI; Gemini's thoughtsTokenCount)")
	limit5h := fs.Float64("limit-5h", -1, "percent of the five-hour plan usage window to report in limit headers (negative: none)")
	limit7d := fs.Float64("limit-7d", -1, "percent of the weekly plan usage window to report in limit headers (negative: none)")
	reset5h := fs.Duration("limit-5h-reset", 2*time.Hour, "time from start to the five-hour window's reset")
	reset7d := fs.Duration("limit-7d-reset", 96*time.Hour, "time from start to the weekly window's reset")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	if *logPath != "" {
		// Fail now rather than on the first request.
		if err := appendLine(*logPath, nil); err != nil {
			return fmt.Errorf("open request log: %w", err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (choose another address with --addr)", *addr, err)
	}
	var limits *PlanLimits
	if *limit5h >= 0 || *limit7d >= 0 {
		now := time.Now().Truncate(time.Second)
		limits = &PlanLimits{}
		if *limit5h >= 0 {
			limits.FiveHour, limits.FiveHourReset = *limit5h, now.Add(*reset5h)
		}
		if *limit7d >= 0 {
			limits.Weekly, limits.WeeklyReset = *limit7d, now.Add(*reset7d)
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv := &http.Server{
		Handler: New(Config{Usage: u, Model: *model, LogPath: *logPath, Latency: *latency, Logger: logger,
			Command: *command, BodyDir: *bodyDir, ReadPath: *readPath, Limits: limits}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(stderr, "observer-fakeapi listening on http://%s\n", ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}
