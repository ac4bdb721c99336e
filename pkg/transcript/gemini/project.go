package gemini

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/project"
)

// Limits on the search for a Gemini CLI project root.
const (
	maxHead     = 8 << 20 // bytes of a .jsonl searched when its layout does not say
	maxRegistry = 4 << 20 // bytes of projects.json read
	maxTested   = 4096    // directories hashed per parser
)

// setRoot makes root the directory the client ran in.
func (p *Parser) setRoot(root string, sure bool) {
	root = filepath.Clean(root)
	p.st.Root, p.st.Sure = root, sure
	p.st.Project = project.Root(root)
}

// guessRoot takes an unverified directory (a workspace directory the client named) when none is
// known yet.
func (p *Parser) guessRoot(dir string) {
	if p.st.Root == "" && filepath.IsAbs(dir) {
		p.setRoot(dir, false)
	}
}

// findRoot looks for the directory Gemini CLI ran in until it is sure of one: first in the
// layout, then among the paths content names (the whole document, or, for a .jsonl, its head
// read once), verified against the projectHash.
func (p *Parser) findRoot(content []byte) {
	if p.st.Sure {
		return
	}
	if !p.triedDisk {
		p.triedDisk = true
		root, dirHash := locate(p.src.Path)
		if p.st.ProjectHash == "" {
			p.st.ProjectHash = dirHash
		}
		if root != "" {
			p.setRoot(root, true)
			return
		}
		if content == nil && !p.src.Document && !p.st.Head {
			p.st.Head = true
			content = readHead(p.src.Path)
		}
	}
	p.verify(content)
}

// verify looks, among the absolute paths content names and their parents, for one whose sha256 is
// the projectHash.
func (p *Parser) verify(content []byte) {
	if p.st.Sure || len(content) == 0 || len(p.st.ProjectHash) != 64 {
		return
	}
	if p.tested == nil {
		p.tested = map[string]bool{}
	}
	absPaths(content, func(path string) bool {
		for d := filepath.Clean(path); len(d) > 1 && len(p.tested) < maxTested; d = filepath.Dir(d) {
			if p.tested[d] {
				break // and its parents
			}
			p.tested[d] = true
			if hashOf(d) == p.st.ProjectHash {
				p.setRoot(d, true)
				return false
			}
		}
		return len(p.tested) < maxTested
	})
}

func hashOf(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:])
}

// absPaths calls fn with each absolute path that raw JSON text names: a "/" that starts a string,
// a word, an escaped line, or follows a colon, up to the end of that path.
func absPaths(raw []byte, fn func(string) bool) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '/' || i+1 >= len(raw) || !pathByte(raw[i+1]) || raw[i+1] == '/' {
			continue
		}
		if i > 0 {
			switch prev := raw[i-1]; {
			case prev == '"' || prev == ' ' || prev == ':' || prev == '(' || prev == '=' || prev == '\'' || prev == '`' || prev == '\t':
			case (prev == 'n' || prev == 't') && i >= 2 && raw[i-2] == '\\':
			default:
				continue
			}
		}
		j := i + 1
		for j < len(raw) && pathByte(raw[j]) {
			j++
		}
		if !fn(string(raw[i:j])) {
			return
		}
		i = j
	}
}

// pathByte reports whether c can continue a path as JSON writes it.
func pathByte(c byte) bool {
	switch c {
	case '"', '\\', ' ', '\t', '\r', '\n', '\'', '`', '<', '>', '|', ',', ';', '(', ')', '*', '?', '[', ']', '{', '}':
		return false
	}
	return c >= 0x20
}

// readHead reads the start of a file.
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxHead))
	return b
}

// locate finds the directory Gemini CLI ran in from a recording's place alone: the
// tmp/<project>/.project_root file, or the runtime directory's projects.json. dirHash is <project>
// when it is a sha256 (the layout before short names).
func locate(path string) (root, dirHash string) {
	chats := filepath.Dir(path)
	if filepath.Base(chats) != "chats" {
		chats = filepath.Dir(chats) // a subagent's chats/<parent>/<session>.jsonl
	}
	if filepath.Base(chats) != "chats" {
		return "", ""
	}
	projDir := filepath.Dir(chats)
	slug := filepath.Base(projDir)
	if isHash(slug) {
		dirHash = strings.ToLower(slug)
	}
	if b, err := os.ReadFile(filepath.Join(projDir, ".project_root")); err == nil && len(b) < 64<<10 {
		if r := strings.TrimSpace(string(b)); filepath.IsAbs(r) {
			return r, dirHash
		}
	}
	tmp := filepath.Dir(projDir)
	if filepath.Base(tmp) != "tmp" {
		return "", dirHash
	}
	for _, r := range registry(filepath.Join(filepath.Dir(tmp), "projects.json")) {
		if r.slug == slug || dirHash != "" && hashOf(r.path) == dirHash {
			return r.path, dirHash
		}
	}
	return "", dirHash
}

type registered struct{ path, slug string }

// registry reads Gemini CLI's projects.json: {"projects": {"/abs/path": "short-name"}}.
func registry(path string) []registered {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRegistry))
	if err != nil {
		return nil
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(data, &reg) != nil {
		return nil
	}
	out := make([]registered, 0, len(reg.Projects))
	for p, s := range reg.Projects {
		if filepath.IsAbs(p) {
			out = append(out, registered{path: p, slug: s})
		}
	}
	return out
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// firstDirectory returns the first string of a JSON array of directories.
func firstDirectory(raw []byte) string {
	var first string
	if len(raw) > 0 && raw[0] == '[' {
		jsonscan.Elements(raw, func(v []byte) bool {
			first = jsonscan.Str(v)
			return first == ""
		})
	}
	return first
}

// contextRoot reads the first workspace directory Gemini CLI's <session_context> message names
// ("- **Workspace Directories:**" followed by "  - /path" lines; older versions: "I'm currently
// working in the directory: /path").
func contextRoot(text string) string {
	if i := strings.Index(text, "Workspace Directories:"); i >= 0 {
		rest := text[i:]
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			for line := range strings.SplitSeq(rest[j+1:], "\n") {
				l := strings.TrimSpace(line)
				dir, ok := strings.CutPrefix(l, "- ")
				if !ok {
					break
				}
				if dir = strings.TrimSpace(dir); filepath.IsAbs(dir) {
					return dir
				}
			}
		}
	}
	const marker = "working in the directory: "
	if i := strings.Index(text, marker); i >= 0 {
		dir := text[i+len(marker):]
		if j := strings.IndexAny(dir, "\n"); j >= 0 {
			dir = dir[:j]
		}
		if dir = strings.TrimSpace(dir); filepath.IsAbs(dir) {
			return dir
		}
	}
	return ""
}
