package clientconfig

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzJSONSetDelete: on any JSON object, setting a new key keeps every other value and leaves
// valid JSON, and deleting it again gives back the text byte for byte.
func FuzzJSONSetDelete(f *testing.F) {
	for _, s := range []string{claudeFixture, cursorFixture, `{}`, `{"a":1}`, `{"mcpServers":{"x":{}}}`, "{\n\t\"a\": [1,\n2]\n}", `{ "a" : { } }`} {
		f.Add(s, "mcpServers", "observer")
	}
	f.Fuzz(func(t *testing.T, doc, k1, k2 string) {
		d, err := ParseDoc(JSON, []byte(doc))
		if err != nil || strings.TrimSpace(doc) == "" || !utf8.ValidString(k1+k2) {
			return // keys are text: encoding/json itself would not keep invalid UTF-8
		}
		path := []string{k1, k2}
		if _, exists := d.Lookup(k1, k2); exists {
			return
		}
		if v, ok := d.Lookup(k1); ok {
			if _, isMap := v.(map[string]any); !isMap {
				return
			}
		}
		before := d.Tree()
		val := Object{{"command", "c\u2028<&>"}, {"args", []string{"a", ""}}}
		created, err := d.Set(path, val)
		if err != nil {
			t.Fatalf("set: %v", err)
		}
		after, err := ParseDoc(JSON, d.Bytes())
		if err != nil {
			t.Fatalf("set made invalid JSON: %v\n%s", err, d.Bytes())
		}
		if v, _ := after.Lookup(path...); !equal(v, val) {
			t.Fatalf("value not set:\n%s", d.Bytes())
		}
		if !equal(prune(before, [][]string{path}), prune(after.Tree(), [][]string{path})) {
			t.Fatalf("other values changed:\n%s\n%s", doc, d.Bytes())
		}
		if err := d.Delete(path); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= created; n++ {
			d.Delete(path[:len(path)-n])
		}
		if string(d.Bytes()) != doc && !isEmpty(before) {
			t.Fatalf("set then delete:\n%q\nbecame\n%q", doc, d.Bytes())
		}
	})
}

// FuzzTOMLSetKey: in any TOML document with a [t] table, setting a key keeps every other value,
// and adding a new table then deleting it gives back the text.
func FuzzTOMLSetKey(f *testing.F) {
	for _, s := range []string{codexFixture, "[t]\n", "[t]\nk = 1 # c\n[u]\n", "a = 1\n[t]\nk = \"\"\"\nx\n\"\"\"\n", "[t]\r\nk = [\r\n1,\r\n]\r\n"} {
		f.Add(s, "k")
	}
	f.Fuzz(func(t *testing.T, doc, key string) {
		d, err := ParseDoc(TOML, []byte(doc))
		if err != nil || key == "" || !utf8.ValidString(key) {
			return
		}
		if _, ok := d.Lookup("t"); !ok {
			return
		}
		if r, ok, _ := d.ed.(*tomlDoc).tableRegion([]string{"t"}); !ok || slices.ContainsFunc(r.stmts, func(e texpr) bool { return len(e.key) > 1 && e.key[0] == key }) {
			return
		}
		if v, ok := d.Lookup("t", key); ok {
			if _, isMap := v.(map[string]any); isMap {
				return
			}
		}
		before := d.Tree()
		path := []string{"t", key}
		if _, err := d.Set(path, []string{"x\"y", "\\"}); err != nil {
			t.Fatalf("set: %v", err)
		}
		after, err := ParseDoc(TOML, d.Bytes())
		if err != nil {
			t.Fatalf("set made invalid TOML: %v\n%s", err, d.Bytes())
		}
		if v, _ := after.Lookup(path...); !equal(v, []string{"x\"y", "\\"}) {
			t.Fatalf("value not set:\n%s", d.Bytes())
		}
		if !equal(prune(before, [][]string{path}), prune(after.Tree(), [][]string{path})) {
			t.Fatalf("other values changed:\n%s\n%s", doc, d.Bytes())
		}

		d2, _ := ParseDoc(TOML, []byte(doc))
		if _, ok := d2.Lookup("zz_new"); ok {
			return
		}
		if _, err := d2.Set([]string{"zz_new", "o"}, Object{{"command", "x"}}); err != nil {
			return // a document whose last line cannot be followed by a table (checked by addTable)
		}
		if err := d2.Delete([]string{"zz_new", "o"}); err != nil {
			t.Fatal(err)
		}
		if got := string(d2.Bytes()); got != doc && strings.HasSuffix(doc, "\n") && !strings.HasSuffix(doc, "\n\n") {
			t.Fatalf("add then delete table:\n%q\nbecame\n%q", doc, got)
		}
	})
}
