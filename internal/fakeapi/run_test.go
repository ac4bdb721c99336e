package fakeapi

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestRun_Help: -h names every API the fake serves, Gemini's included.
func TestRun_Help(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Run(-h) = %v, want flag.ErrHelp", err)
	}
	for _, api := range []string{"Anthropic", "OpenAI", "Gemini"} {
		if !strings.Contains(out.String(), api) {
			t.Errorf("-h does not name the %s API:\n%s", api, out.String())
		}
	}
}
