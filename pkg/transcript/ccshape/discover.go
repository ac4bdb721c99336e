package ccshape

import (
	"errors"
	"path/filepath"
	"sort"

	"github.com/observerhq/observer/pkg/transcript"
)

// Discover lists the transcripts of the project directories in roots (Claude Code's layout:
// <root>/<project>/...), sorted by path; project lists one project directory. A root named
// twice (through a link, or a relative path) is read once. A missing root is not an error; a
// root that cannot be read is reported after the others are listed.
func Discover(roots []string, project func(dir string) []transcript.Source) ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if seen[real] {
				continue
			}
			seen[real] = true
		}
		projects, err := transcript.ReadDir(abs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, pd := range projects {
			if dir := filepath.Join(abs, pd.Name()); transcript.IsDir(pd, dir) {
				out = append(out, project(dir)...)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}
