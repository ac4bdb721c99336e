package clientconfig

import (
	"os"
	"slices"
	"strings"
)

// Registered is one command of observer's in a client's file: a hook entry or an MCP server.
type Registered struct {
	Client  string `json:"client"`
	File    string `json:"file"`
	Where   string `json:"where"`   // the key: hooks.Stop, mcpServers.observer
	Command string `json:"command"` // the command line the client runs
	Program string `json:"program"` // its program: the first word, as the shell reads it
}

// Program returns the program a hook's shell command line runs: its first word.
func Program(command string) string {
	if f := shellFields(command); len(f) > 0 {
		return f[0]
	}
	return ""
}

// Registrations lists the commands of observer's that the clients' files hold now: in each hooks
// file given (wherever init writes them) and in each file the manifest in home records, every hook
// entry that runs observerctl's hook handler (or holds the command init registered), and every MCP
// server the manifest says init registered or wrapped that runs observer-mcp. Files that are
// missing or do not parse are skipped.
func Registrations(home string, hookFiles []Location) []Registered {
	man, err := LoadManifest(home)
	if err != nil {
		man = &Manifest{}
	}
	type file struct {
		client, path string
		format       Format
		rec          *FileRecord
	}
	var files []file
	add := func(f file) {
		if i := slices.IndexFunc(files, func(x file) bool { return x.path == f.path }); i >= 0 {
			if f.rec != nil {
				files[i].rec = f.rec
			}
			return
		}
		files = append(files, f)
	}
	for _, l := range hookFiles {
		add(file{l.Client, l.File, l.Format, nil})
	}
	for i := range man.Files {
		r := &man.Files[i]
		add(file{r.Client, r.Path, r.Format, r})
	}
	var out []Registered
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			continue
		}
		d, err := ParseDoc(f.format, data)
		if err != nil {
			continue
		}
		var markers []string
		if f.rec != nil {
			for _, ch := range f.rec.Changes {
				if ch.Marker != "" {
					markers = append(markers, ch.Marker)
				}
			}
		}
		if hooks, ok := d.Lookup("hooks"); ok && f.format == JSON {
			m, _ := hooks.(map[string]any)
			events := make([]string, 0, len(m))
			for ev := range m {
				events = append(events, ev)
			}
			slices.Sort(events)
			for _, ev := range events {
				list, _ := m[ev].([]any)
				for _, el := range list {
					if !looksLikeObserverHook(el) && !slices.ContainsFunc(markers, func(mk string) bool { return holds(el, mk) }) {
						continue
					}
					for _, c := range Commands(el) {
						out = append(out, Registered{Client: f.client, File: f.path, Where: DisplayPath([]string{"hooks", ev}), Command: c, Program: Program(c)})
					}
				}
			}
		}
		if f.rec == nil {
			continue
		}
		var servers [][]string
		for _, ch := range f.rec.Changes {
			if ch.Op != opSet || ch.Reason != "observer MCP server" && !strings.HasPrefix(ch.Reason, "wrap ") {
				continue
			}
			p := ch.Path
			if last := p[len(p)-1]; last == "command" || last == "args" {
				p = p[:len(p)-1]
			}
			if !slices.ContainsFunc(servers, func(x []string) bool { return slices.Equal(x, p) }) {
				servers = append(servers, p)
			}
		}
		for _, p := range servers {
			v, _ := d.Lookup(p...)
			m, _ := v.(map[string]any)
			if c, _ := m["command"].(string); IsObserverMCP(c) {
				out = append(out, Registered{Client: f.client, File: f.path, Where: DisplayPath(p), Command: c, Program: c})
			}
		}
	}
	return out
}
