// Command observer-fakeapi serves a scripted fake of the Anthropic, OpenAI and Gemini APIs, for
// tests and for trying observer offline with the real Claude Code, Codex and Gemini CLI clients.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/observerhq/observer/internal/fakeapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := fakeapi.Run(ctx, os.Args[1:], os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, fakeapi.ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "observer-fakeapi:", err)
		os.Exit(2)
	}
}
