package watchcli

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

// hooked follows the transcripts that hooks announced outside the readers' roots.
//
// A Claude Code transcript <root>/<project>/<session>.jsonl whose <root> is named "projects" adds
// <root> as a Claude Code root, so the session's subagent files and the other sessions kept there
// come along; a Codex rollout under <home>/sessions or <home>/archived_sessions adds <home> as a
// Codex home; any other path is followed as one file of the hook's client and session. A path
// under the readers' own roots, a relative path, or one not ending in .jsonl is left alone. The
// list is kept in $OBSERVER_HOME/watch/hooked.json, so a restarted watcher goes on reading them.
type hooked struct {
	path   string
	logger *slog.Logger
	known  []string // the readers' roots, which need no help
	list   hookedList
	prices func() *pricing.Table // the table the readers price usage with; nil: the built-in one
}

type hookedList struct {
	ClaudeRoots []string            `json:"claude_roots,omitempty"`
	CodexHomes  []string            `json:"codex_homes,omitempty"`
	Files       []transcript.Source `json:"files,omitempty"`
}

func newHooked(path string, known []string, logger *slog.Logger) *hooked {
	h := &hooked{path: path, logger: logger}
	for _, r := range known {
		h.known = append(h.known, canonical(r))
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		logger.Warn("hooked transcripts not loaded", "err", err)
	default:
		if err := json.Unmarshal(data, &h.list); err != nil {
			logger.Warn("hooked transcripts not loaded", "path", path, "err", err)
		}
	}
	return h
}

// canonical cleans a path and resolves its symbolic links where it exists.
func canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// within reports whether path is dir or lies under it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// add follows the transcript a hook names, when nothing reads it yet.
func (h *hooked) add(ev event.Event) {
	p := ev.Hook.TranscriptPath
	if p == "" || !filepath.IsAbs(p) || !strings.HasSuffix(p, ".jsonl") {
		return
	}
	p = canonical(p)
	for _, r := range h.roots() {
		if within(r, p) {
			return
		}
	}
	for _, f := range h.list.Files {
		if f.Path == p {
			return
		}
	}
	switch root := filepath.Dir(filepath.Dir(p)); {
	case ev.Client == codex.Client && codexHome(p) != "":
		h.list.CodexHomes = append(h.list.CodexHomes, codexHome(p))
		h.logger.Info("following a Codex home a hook announced", "home", codexHome(p))
	case ev.Client != codex.Client && filepath.Base(root) == "projects":
		h.list.ClaudeRoots = append(h.list.ClaudeRoots, root)
		h.logger.Info("following a Claude Code root a hook announced", "root", root)
	default:
		client := ev.Client
		if client != codex.Client {
			client = claudecode.Client
		}
		h.list.Files = append(h.list.Files, transcript.Source{Client: client, Path: p, SessionID: ev.SessionID})
		h.logger.Info("following a transcript a hook announced", "path", p)
	}
	h.save()
}

// codexHome returns <home> for a rollout under <home>/sessions or <home>/archived_sessions.
func codexHome(p string) string {
	for d := filepath.Dir(p); filepath.Dir(d) != d; d = filepath.Dir(d) {
		if b := filepath.Base(d); b == "sessions" || b == "archived_sessions" {
			return filepath.Dir(d)
		}
	}
	return ""
}

// roots lists the directories read: the readers' roots and those hooks added.
func (h *hooked) roots() []string {
	out := slices.Clone(h.known)
	out = append(out, h.list.ClaudeRoots...)
	for _, home := range h.list.CodexHomes {
		out = append(out, filepath.Join(home, "sessions"), filepath.Join(home, "archived_sessions"))
	}
	return out
}

// extraRoots lists the directories hooks added, for watching.
func (h *hooked) extraRoots() []string { return h.roots()[len(h.known):] }

// adapters returns base with the adapters that read the hooked transcripts.
func (h *hooked) adapters(base []transcript.Adapter) []transcript.Adapter {
	out := slices.Clip(base)
	if len(h.list.ClaudeRoots) > 0 {
		out = append(out, claudecode.New(slices.Clone(h.list.ClaudeRoots)))
	}
	for _, home := range h.list.CodexHomes {
		out = append(out, codex.New(home))
	}
	for _, client := range []string{claudecode.Client, codex.Client} {
		fa := &fileAdapter{client: client}
		for _, f := range h.list.Files {
			if f.Client == client {
				fa.files = append(fa.files, f)
			}
		}
		if len(fa.files) == 0 {
			continue
		}
		if client == codex.Client {
			fa.parser = codex.New("")
		} else {
			fa.parser = claudecode.New(nil)
		}
		if h.prices != nil {
			readers.WithPrices([]transcript.Adapter{fa.parser}, h.prices)
		}
		out = append(out, fa)
	}
	if h.prices != nil {
		readers.WithPrices(out[len(base):], h.prices)
	}
	return out
}

func (h *hooked) save() {
	data, err := json.Marshal(h.list)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(h.path), 0o700); err == nil {
			err = atomicfile.Write(h.path, data, 0o600)
		}
	}
	if err != nil {
		h.logger.Warn("hooked transcripts not saved", "err", err)
	}
}

// fileAdapter reads single transcript files with another adapter's parser.
type fileAdapter struct {
	client string
	parser transcript.Adapter
	files  []transcript.Source
}

func (a *fileAdapter) Client() string { return a.client }

func (a *fileAdapter) Discover() ([]transcript.Source, error) { return slices.Clone(a.files), nil }

func (a *fileAdapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return a.parser.NewParser(src, state)
}
