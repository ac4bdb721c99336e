package transcript

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// A pretty-printed document read through DocumentLine is one line holding the same JSON.
func TestDocumentLine(t *testing.T) {
	doc := "{\n  \"a\": \"x\\ny\",\r\n  \"b\": [\n    1,\n    2\n  ]\n}"
	out, err := io.ReadAll(DocumentLine(strings.NewReader(doc)))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Fatalf("not one line: %q", s)
	}
	var got, want any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(doc), &want)
	if g, w := mustMarshal(t, got), mustMarshal(t, want); g != w {
		t.Errorf("document changed: %s, want %s", g, w)
	}
}

func mustMarshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
