package logging

import (
	"os"
	"testing"
)

// /dev/null is a character device but not a terminal: a status line or a service run with it as
// stdin or stdout must not be taken for a terminal.
func TestIsTerminal_DevNull(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("/dev/null taken for a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(r) {
		t.Error("a pipe taken for a terminal")
	}
}
