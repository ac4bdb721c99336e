package jsonscan

import (
	"slices"
	"testing"
)

// FuzzValidWalksMatch: on a text Members or Elements accepts, MembersValid and ElementsValid hand
// out the same keys and values, stopping where they are stopped; on any other text they may say
// anything but must not panic or hang.
func FuzzValidWalksMatch(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), 2)
	}
	for _, s := range []string{`{"a":"x\\\"y\\\\","b":{"c":["]","}",{"d":"\\\\"}]},"e":true,"f":-0.5e3,"g":null}`,
		` [ "a\\\\" , {"b" : [ ] } , 12 , "\"" ] `, `{"k":"v\\"}`, `["\\`, `{"a":{"b":"}"`, `{"":1}`} {
		f.Add([]byte(s), 1)
	}
	type kv struct{ k, v string }
	f.Fuzz(func(t *testing.T, data []byte, stop int) {
		stop = stop%4 + 1 // stop after this many
		collect := func(walk func([]byte, func(k, v []byte) bool) error) ([]kv, error) {
			var out []kv
			err := walk(data, func(k, v []byte) bool {
				out = append(out, kv{string(k), string(v)})
				return len(out) < stop
			})
			return out, err
		}
		want, werr := collect(Members)
		got, gerr := collect(MembersValid)
		if werr == nil && Valid(data) && (gerr != nil || !slices.Equal(got, want)) {
			t.Fatalf("MembersValid(%q) = %q, %v; Members: %q", data, got, gerr, want)
		}
		elements := func(walk func([]byte, func([]byte) bool) error) ([]kv, error) {
			var out []kv
			err := walk(data, func(v []byte) bool {
				out = append(out, kv{"", string(v)})
				return len(out) < stop
			})
			return out, err
		}
		want, werr = elements(Elements)
		got, gerr = elements(ElementsValid)
		if werr == nil && Valid(data) && (gerr != nil || !slices.Equal(got, want)) {
			t.Fatalf("ElementsValid(%q) = %q, %v; Elements: %q", data, got, gerr, want)
		}
	})
}
