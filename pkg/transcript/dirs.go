package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EnvDirs returns the directories the environment variable name lists (separated like PATH, each
// trimmed and with ~ expanded, repeats dropped), and whether it is set to anything but blanks:
// then they replace a client's default directories, even when none is left.
func EnvDirs(name string) ([]string, bool) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return nil, false
	}
	var out []string
	for _, d := range filepath.SplitList(v) {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, ExpandHome(d))
		}
	}
	return DedupePaths(out), true
}

// DatabaseSources lists the paths that are regular files (a link followed), made absolute, each
// once, in the order of paths, as Database sources of client. A path that is missing or cannot
// be read is passed over, not an error: a client that never ran has no database.
func DatabaseSources(client string, paths []string) []Source {
	var out []Source
	seen := map[string]bool{}
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, Source{Client: client, Path: p, Database: true})
	}
	return out
}

// DiscoverDatabases lists, sorted by path, the regular file (a link followed) named name directly
// in each root, as Database sources of client, made absolute, each once. With resolve, two paths
// that lead to one file through symbolic links (filepath.EvalSymlinks) are one, and the first
// found is listed. A missing root is not an error; a root that cannot be read is reported after
// the others are listed.
func DiscoverDatabases(client string, roots []string, name string, resolve bool) ([]Source, error) {
	var out []Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range roots {
		entries, err := ReadDir(root)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			path := filepath.Join(root, e.Name())
			if e.Name() != name || !IsFile(e, path) {
				continue
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				abs = path
			}
			key := abs
			if resolve {
				if real, err := filepath.EvalSymlinks(abs); err == nil {
					key = real
				}
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, Source{Client: client, Path: abs, Database: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}
