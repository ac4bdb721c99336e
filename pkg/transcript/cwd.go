package transcript

import (
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/project"
)

// SetCwd records the working directory of a session whose transcript may give it more than once:
// the first one given stands. It sets *cwd to dir, trimmed and cleaned, and *root to the root of
// its project when dir is absolute (a relative one says nothing of where the session ran, so
// *root stays as it was). A blank dir, or a *cwd already set, changes nothing.
func SetCwd(cwd, root *string, dir string) {
	dir = strings.TrimSpace(dir)
	if dir == "" || *cwd != "" {
		return
	}
	*cwd = filepath.Clean(dir)
	if filepath.IsAbs(*cwd) {
		*root = project.Root(*cwd)
	}
}

// maxCwd bounds the length in bytes of a working directory kept by UpdateCwd.
const maxCwd = 4096

// UpdateCwd records the working directory of a session whose transcript may change it: each one
// given replaces the last. Like SetCwd it trims and cleans dir and sets *root when dir is
// absolute; it also refuses a dir that is not UTF-8 and cuts one longer than maxCwd bytes, so an
// odd value carries neither broken text nor an unbounded length into the events.
func UpdateCwd(cwd, root *string, dir string) {
	dir = strings.TrimSpace(dir)
	if dir == "" || !utf8.ValidString(dir) {
		return
	}
	*cwd = CutBytes(filepath.Clean(dir), maxCwd)
	if filepath.IsAbs(*cwd) {
		*root = project.Root(*cwd)
	}
}
