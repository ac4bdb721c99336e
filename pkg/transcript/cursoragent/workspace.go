package cursoragent

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/observerhq/observer/pkg/transcript"
)

// tokens splits s at every run of characters other than letters and digits: the parts Cursor's
// slug of a path keeps.
func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// slugOf returns the slug (the projects directory's entry) a transcript path lies under:
// <slug>/agent-transcripts/<id>.jsonl, <id>/<id>.jsonl or <id>/subagents/<child>.jsonl; "" when
// the path is laid out otherwise.
func slugOf(path string) string {
	d := filepath.Dir(filepath.Clean(path))
	for range 3 {
		if filepath.Base(d) == "agent-transcripts" {
			slug := filepath.Base(filepath.Dir(d))
			if slug == "." || slug == string(filepath.Separator) {
				return ""
			}
			return slug
		}
		d = filepath.Dir(d)
	}
	return ""
}

// hintDir returns the nearest directory at or above the absolute path p whose encoding is slug,
// "" when there is none.
func hintDir(p, slug string) string {
	if slug == "" || !filepath.IsAbs(p) || len(p) > 4096 {
		return ""
	}
	want := tokens(slug)
	for d := filepath.Clean(p); ; {
		if slices.Equal(tokens(d), want) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// Limits on the walk that finds a slug's directory.
const (
	maxWalkReads   = 64               // directories listed per slug
	resolveFailTTL = 30 * time.Second // a slug not found is tried again after this
)

var slugCache = struct {
	sync.Mutex
	found  map[string]string
	failed map[string]time.Time
}{found: map[string]string{}, failed: map[string]time.Time{}}

// resolveSlug returns the one directory whose encoding is slug, found by walking the file system
// from the root through the entries whose names encode to the slug's next parts; "" when none or
// more than one does. Results are kept for the process (a failure for resolveFailTTL).
func resolveSlug(slug string) string {
	want := tokens(slug)
	if len(want) == 0 {
		return ""
	}
	slugCache.Lock()
	if d, ok := slugCache.found[slug]; ok {
		slugCache.Unlock()
		return d
	}
	if at, ok := slugCache.failed[slug]; ok && time.Since(at) < resolveFailTTL {
		slugCache.Unlock()
		return ""
	}
	slugCache.Unlock()
	var matches []string
	reads := 0
	var walk func(dir string, rest []string)
	walk = func(dir string, rest []string) {
		if len(matches) > 1 {
			return
		}
		if len(rest) == 0 {
			matches = append(matches, dir)
			return
		}
		if reads >= maxWalkReads {
			matches = append(matches, "", "") // too wide to tell: no answer
			return
		}
		reads++
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			parts := tokens(e.Name())
			if len(parts) == 0 || len(parts) > len(rest) || !slices.Equal(parts, rest[:len(parts)]) {
				continue
			}
			if p := filepath.Join(dir, e.Name()); transcript.IsDir(e, p) {
				walk(p, rest[len(parts):])
			}
		}
	}
	walk(string(filepath.Separator), want)
	slugCache.Lock()
	defer slugCache.Unlock()
	if len(matches) != 1 {
		if len(slugCache.failed) > 4096 {
			clear(slugCache.failed)
		}
		slugCache.failed[slug] = time.Now()
		return ""
	}
	if len(slugCache.found) > 4096 {
		clear(slugCache.found)
	}
	slugCache.found[slug] = matches[0]
	return matches[0]
}

// meta is what this reader takes from a CLI chat's meta.json.
type meta struct {
	Title   string
	Cwd     string
	Created time.Time
	Updated time.Time
}

// readMeta reads a CLI chat's meta.json; the zero meta when there is none or it does not decode.
func readMeta(path string) meta {
	f, err := os.Open(path)
	if err != nil {
		return meta{}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10+1))
	if err != nil || len(data) > 64<<10 {
		return meta{}
	}
	var m struct {
		Title       string          `json:"title"`
		Cwd         string          `json:"cwd"`
		CreatedAtMs json.RawMessage `json:"createdAtMs"`
		UpdatedAtMs json.RawMessage `json:"updatedAtMs"`
	}
	if json.Unmarshal(data, &m) != nil {
		return meta{}
	}
	out := meta{Title: strings.TrimSpace(m.Title), Cwd: strings.TrimSpace(m.Cwd)}
	out.Created, _ = msTime(m.CreatedAtMs)
	out.Updated, _ = msTime(m.UpdatedAtMs)
	return out
}

// msTime reads unix milliseconds (a number or a numeric string) within 1971..2261.
func msTime(raw json.RawMessage) (time.Time, bool) {
	ms := transcript.Count(raw)
	if ms <= 31536000000 || ms >= 9e12 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// The <timestamp> tag Cursor puts before a user's query: "Friday, Aug 14, 2026, 1:23 PM (UTC-5)".
var (
	timestampTag = regexp.MustCompile(`(?s)<timestamp>(.*?)</timestamp>`)
	utcSuffix    = regexp.MustCompile(`^(.*?)\s*\(\s*(?:UTC|GMT)\s*(?:([+-])\s*(\d{1,2})(?::?(\d{2}))?)?\s*\)$`)
)

// tagLayouts are the forms of the tag's date and time, before its "(UTC±h)".
var tagLayouts = []string{
	"Monday, Jan 2, 2006, 3:04 PM", "Monday, Jan 2, 2006, 3:04:05 PM",
	"Monday, January 2, 2006, 3:04 PM", "Monday, January 2, 2006, 3:04:05 PM",
	"Jan 2, 2006, 3:04 PM", "January 2, 2006, 3:04 PM",
}

// parseTag reads the time of a <timestamp> tag's content: the form above, or RFC 3339.
func parseTag(s string) (time.Time, bool) {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" || len(s) > 100 {
		return time.Time{}, false
	}
	if t, ok := transcript.ParseTime(s); ok {
		return t, true
	}
	m := utcSuffix.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	offset := 0
	if m[2] != "" {
		h, _ := strconv.Atoi(m[3])
		mins, _ := strconv.Atoi(m[4])
		if h > 14 || mins > 59 {
			return time.Time{}, false
		}
		offset = h*3600 + mins*60
		if m[2] == "-" {
			offset = -offset
		}
	}
	loc := time.FixedZone("", offset)
	for _, layout := range tagLayouts {
		if t, err := time.ParseInLocation(layout, m[1], loc); err == nil && t.Year() > 1970 && t.Year() < 2262 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// userText splits a user message's text into the query the user typed (the <user_query>
// wrappers' content, else the text without its <timestamp> tags) and the time of its last tag.
func userText(text string) (query string, at time.Time, timed bool) {
	for _, m := range timestampTag.FindAllStringSubmatch(text, -1) {
		if t, ok := parseTag(m[1]); ok {
			at, timed = t, true
		}
	}
	text = timestampTag.ReplaceAllString(text, "")
	var parts []string
	rest := text
	for {
		i := strings.Index(rest, "<user_query>")
		if i < 0 {
			break
		}
		rest = rest[i+len("<user_query>"):]
		j := strings.Index(rest, "</user_query>")
		if j < 0 {
			parts = append(parts, rest)
			break
		}
		parts = append(parts, rest[:j])
		rest = rest[j+len("</user_query>"):]
	}
	if len(parts) > 0 {
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return strings.TrimSpace(strings.Join(parts, "\n")), at, timed
	}
	return strings.TrimSpace(text), at, timed
}
