package compress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// jnode is a JSON value with its object keys in document order.
type jnode struct {
	kind  byte // '{', '[', '"', 'n' (number), 'b' (bool), '0' (null)
	keys  []string
	elems []jnode // object values (beside keys) or array items
	str   string  // a string's value, a number's text
}

func parseOrdered(tb testing.TB, s string) jnode {
	tb.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var read func() jnode
	read = func() jnode {
		tok, err := dec.Token()
		if err != nil {
			tb.Fatalf("parse %.80q: %v", s, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			n := jnode{kind: byte(v)}
			for dec.More() {
				if v == '{' {
					k, err := dec.Token()
					if err != nil {
						tb.Fatal(err)
					}
					n.keys = append(n.keys, k.(string))
				}
				n.elems = append(n.elems, read())
			}
			if _, err := dec.Token(); err != nil {
				tb.Fatal(err)
			}
			return n
		case string:
			return jnode{kind: '"', str: v}
		case json.Number:
			return jnode{kind: 'n', str: v.String()}
		case bool:
			return jnode{kind: 'b', str: fmt.Sprint(v)}
		default:
			return jnode{kind: '0'}
		}
	}
	n := read()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		tb.Fatalf("trailing data after the JSON value: %v", err)
	}
	return n
}

// checkJSONShape checks that out is what compressJSON promises for in: every object with every
// key in order, arrays of up to 3 items whole, longer ones cut to 2 items and a count, scalars
// kept but for long strings, which keep their head and size.
func checkJSONShape(tb testing.TB, path string, in, out jnode, depth int) {
	tb.Helper()
	if depth > jsonMaxDepth && (in.kind == '{' || in.kind == '[') {
		want := "<object>"
		if in.kind == '[' {
			want = fmt.Sprintf("<array %d>", len(in.elems))
		}
		if out.kind != '"' || out.str != want {
			tb.Fatalf("%s: nested too deep, got kind %c %q, want %q", path, out.kind, out.str, want)
		}
		return
	}
	if in.kind != out.kind {
		tb.Fatalf("%s: kind %c became %c", path, in.kind, out.kind)
	}
	switch in.kind {
	case '{':
		if strings.Join(in.keys, "\x00") != strings.Join(out.keys, "\x00") {
			tb.Fatalf("%s: keys %q became %q", path, in.keys, out.keys)
		}
		for i := range in.elems {
			checkJSONShape(tb, path+"."+in.keys[i], in.elems[i], out.elems[i], depth+1)
		}
	case '[':
		n := len(in.elems)
		if n <= jsonMaxItems {
			if len(out.elems) != n {
				tb.Fatalf("%s: %d items became %d", path, n, len(out.elems))
			}
		} else {
			if len(out.elems) != jsonKeepItems+1 {
				tb.Fatalf("%s: %d items became %d, want %d", path, n, len(out.elems), jsonKeepItems+1)
			}
			if want := fmt.Sprintf("… %d more items", n-jsonKeepItems); out.elems[jsonKeepItems].str != want {
				tb.Fatalf("%s: last item %q, want %q", path, out.elems[jsonKeepItems].str, want)
			}
			n = jsonKeepItems
		}
		for i := range n {
			checkJSONShape(tb, fmt.Sprintf("%s[%d]", path, i), in.elems[i], out.elems[i], depth+1)
		}
	case '"':
		if in.str == out.str {
			return
		}
		marker := fmt.Sprintf("…<string %dB>", len(in.str))
		head, ok := strings.CutSuffix(out.str, marker)
		if len(in.str) <= jsonShortStr || !ok || !strings.HasPrefix(in.str, head) || len(head) > jsonStrHead {
			tb.Fatalf("%s: string %q became %q", path, in.str, out.str)
		}
	default:
		if in.str != out.str {
			tb.Fatalf("%s: %q became %q", path, in.str, out.str)
		}
	}
}

func TestContent_JSONListing(t *testing.T) {
	in := sampleJSON()
	out, ok := Content(KindJSON, in)
	if !ok {
		t.Fatal("a 55 KB listing was not compressed")
	}
	if !json.Valid([]byte(out)) {
		t.Fatalf("output is not JSON: %.300s", out)
	}
	checkJSONShape(t, "$", parseOrdered(t, in), parseOrdered(t, out), 1)
	for _, want := range []string{
		`"total_count":40`, `"… 38 more items"`, `"id":2000000,"number":1000,`, `"state":"open","locked":false,`,
		`"labels":[{"id":90,"name":"bug","color":"d73a4a","default":false}]`, `"assignee":null`,
		`"body":"Steps: start…<string 288B>"`, `"+1":0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%.600s", want, out)
		}
	}
	if strings.Contains(out, "\n  ") {
		t.Error("output is indented")
	}
	t.Logf("listing: %d → %d bytes", len(in), len(out))
}

func TestContent_JSONRules(t *testing.T) {
	long := strings.Repeat("x", 40)
	deep := strings.Repeat(`{"a":`, 32) + `[1,2]` + strings.Repeat("}", 32) // the array is at depth 33
	for _, tc := range []struct {
		name, in, want string
	}{
		{"ShortArrayKept", `[1, 2, 3]`, `[1,2,3]`},
		{"LongArrayCut", `[1, 2, 3, 4]`, `[1,2,"… 2 more items"]`},
		{"NestedArrays", `[[1,2,3,4,5],[6],[7],[8]]`, `[[1,2,"… 3 more items"],[6],"… 2 more items"]`},
		{"EmptyContainers", ` { "a" : [ ] , "b" : { } } `, `{"a":[],"b":{}}`},
		{"KeyOrderKept", `{"zeta": 1, "alpha": 2, "mid": {"y": 1, "x": 2}}`, `{"zeta":1,"alpha":2,"mid":{"y":1,"x":2}}`},
		{"DuplicateKeysKept", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{"ScalarsAsWritten", `[1.50e3, -0, true, false, null]`, `[1.50e3,-0,"… 3 more items"]`},
		{"ScalarsAsWrittenShort", `{"n": 1.50e3, "t": true, "z": null}`, `{"n":1.50e3,"t":true,"z":null}`},
		{"ShortStringKept", `{"id": "cus_9s6XKzkNRiz8i3", "esc": "a\"b\u00e9"}`, `{"id":"cus_9s6XKzkNRiz8i3","esc":"a\"b\u00e9"}`},
		{"LongString", `{"s": "` + long + `"}`, `{"s":"xxxxxxxxxxxx…<string 40B>"}`},
		{"LongStringRuneCut", `"` + strings.Repeat("é", 20) + `"`, `"éééééé…<string 40B>"`},
		{"LongStringEscapes", `"line one\nline two\tand <b>three</b>"`, `"line one\nlin…<string 34B>"`},
		{"MarkerNotLonger", `"seventeen bytes!!"`, `"seventeen bytes!!"`},
		{"KeysWithEscapesExact", `{"a\u0062": "` + long + `"}`, `{"a\u0062":"xxxxxxxxxxxx…<string 40B>"}`},
		{"TooDeep", deep, strings.Repeat(`{"a":`, 32) + `"<array 2>"` + strings.Repeat("}", 32)},
		{"TooDeepObject", strings.Repeat("[", 32) + `{"a":[1]}` + strings.Repeat("]", 32), strings.Repeat("[", 32) + `"<object>"` + strings.Repeat("]", 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := compressJSON(tc.in)
			if !ok || got != tc.want {
				t.Fatalf("compressJSON(%s)\n = %s, %v\nwant %s", tc.in, got, ok, tc.want)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("not JSON: %s", got)
			}
			checkJSONShape(t, "$", parseOrdered(t, tc.in), parseOrdered(t, got), 1)
		})
	}
}

func TestContent_JSONInvalid(t *testing.T) {
	for _, in := range []string{``, `   `, `{"a":1,}`, `[1,2`, `{"a":1} {"b":2}`, "\"\xff", `{"a" 1}`, strings.Repeat("[", 20000) + strings.Repeat("]", 20000)} {
		if got, ok := compressJSON(in); ok {
			t.Errorf("compressJSON(%.40q) = %.40q, true; want false", in, got)
		}
	}
	in := `{"items": [` + strings.Repeat(`{"id": 1, "name": "widget"}, `, 40) + `{"id": 2}` // unterminated
	if out, ok := Content(KindJSON, in); ok || out != in {
		t.Errorf("Content of invalid JSON = %.60q, %v; want the input, false", out, ok)
	}
}

// A JSON file read by Claude Code's Read tool: the numbers go, the JSON is compressed, and the
// reminder the client appended after the file stays.
func TestContent_JSONReadPrefixes(t *testing.T) {
	for _, sep := range []string{"\t", "→"} {
		reminder := "\n\n<system-reminder>\nWhenever you read a file, consider whether it is malware.\n</system-reminder>\n"
		in := withReadPrefixes(sampleJSON(), sep) + reminder
		out, ok := Content(KindJSON, in)
		if !ok {
			t.Fatalf("sep %q: not compressed", sep)
		}
		doc, ok := strings.CutSuffix(out, reminder)
		if !ok {
			t.Fatalf("sep %q: reminder lost: %q", sep, out[max(0, len(out)-200):])
		}
		if !json.Valid([]byte(doc)) {
			t.Fatalf("sep %q: not JSON: %.200q", sep, doc)
		}
		checkJSONShape(t, "$", parseOrdered(t, sampleJSON()), parseOrdered(t, doc), 1)
		if bytes.Contains([]byte(doc), []byte("     1"+sep)) {
			t.Errorf("sep %q: prefix left in %.100q", sep, doc)
		}
	}
}
