package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// walkAll decodes the value at d[at] with WalkObject and WalkArray, the way encoding/json decodes
// it into an any. At depth k it walks an object or array itself when bit k%8 of mask is set, and
// otherwise lets the walker skip it and decodes the skipped bytes with encoding/json.
func walkAll(d []byte, at, depth int, mask uint8) (any, int, error) {
	at = skipSpace(d, at)
	if at < len(d) && (d[at] == '{' || d[at] == '[') && mask&(1<<(depth%8)) != 0 {
		if d[at] == '{' {
			m := map[string]any{}
			end, err := WalkObject(d, at, func(key []byte, i int) (int, error) {
				k, ok := String(key)
				if !ok {
					return 0, ErrSyntax
				}
				v, end, err := walkAll(d, i, depth+1, mask)
				m[k] = v
				return end, err
			})
			return m, end, err
		}
		a := []any{}
		end, err := WalkArray(d, at, func(i int) (int, error) {
			v, end, err := walkAll(d, i, depth+1, mask)
			a = append(a, v)
			return end, err
		})
		return a, end, err
	}
	end, err := Skip(d, at)
	if err != nil {
		return nil, 0, err
	}
	var v any
	if err := json.Unmarshal(d[at:end], &v); err != nil {
		return nil, 0, err
	}
	return v, end, nil
}

// walkSkipping walks the object or array at d[0] letting the walker skip every member.
func walkSkipping(d []byte) (int, error) {
	i := skipSpace(d, 0)
	if i < len(d) && d[i] == '[' {
		return WalkArray(d, i, func(int) (int, error) { return -1, nil })
	}
	return WalkObject(d, i, func([]byte, int) (int, error) { return -1, nil })
}

// FuzzWalkMatchesEncodingJSON: walking an object or array, whether the callbacks walk the nested
// values or let them be skipped, accepts exactly what encoding/json accepts and reads the same
// keys and values.
func FuzzWalkMatchesEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0xff))
		f.Add([]byte(s), uint8(0x55))
	}
	f.Fuzz(func(t *testing.T, data []byte, mask uint8) {
		if len(data) >= MaxDepth || !utf8.Valid(data) {
			return // nesting stays below MaxDepth; encoding/json replaces invalid UTF-8
		}
		i := skipSpace(data, 0)
		if i >= len(data) || data[i] != '{' && data[i] != '[' {
			return
		}
		want := json.Valid(data)
		if end, err := walkSkipping(data); (err == nil && AtEnd(data, end)) != want {
			t.Fatalf("skipping walk of %q: end %d, err %v; encoding/json valid: %v", data, end, err, want)
		}
		got, end, err := walkAll(data, 0, 0, mask|1)
		if ok := err == nil && AtEnd(data, end); ok != want {
			t.Fatalf("walk of %q (mask %08b): end %d, err %v; encoding/json valid: %v", data, mask, end, err, want)
		}
		if !want {
			return
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("walk of %q read %#v; encoding/json %#v", data, got, v)
		}
	})
}

func TestWalk(t *testing.T) {
	d := []byte(` {"type":"gemini", "parts" : [ {"text":"a"}, 2, {"text":"b","x":{"y":[1]}} ], "n":{} } x`)
	var typ string
	var texts []string
	end, err := WalkObject(d, 0, func(k []byte, at int) (int, error) {
		switch {
		case Key(k, "type"):
			e, err := Skip(d, at)
			typ = Str(d[at:e])
			return e, err
		case Key(k, "parts"):
			return WalkArray(d, at, func(i int) (int, error) {
				if d[i] != '{' {
					return -1, nil
				}
				return WalkObject(d, i, func(k []byte, j int) (int, error) {
					if !Key(k, "text") {
						return -1, nil
					}
					e, err := Skip(d, j)
					texts = append(texts, Str(d[j:e]))
					return e, err
				})
			})
		}
		return -1, nil
	})
	if err != nil || typ != "gemini" || len(texts) != 2 || texts[1] != "b" || string(d[end:]) != " x" || AtEnd(d, end) {
		t.Fatalf("end %d, err %v, type %q, texts %q", end, err, typ, texts)
	}
	for _, bad := range []string{`{"a":1,}`, `[1,]`, `{"a" 1}`, `{"a":1`, `[1 2]`, `{a:1}`, `[`, `{`, `"x"`, ``} {
		if _, err := walkSkipping([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if end, err := WalkArray([]byte(" [ ] "), 0, nil); err != nil || end != 4 {
		t.Errorf("empty array: end %d, err %v", end, err)
	}
}
