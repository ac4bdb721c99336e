package transcript

import (
	"encoding/json"
	"strings"
	"testing"
)

type memoState struct {
	Target Memo   `json:"target,omitempty"`
	Empty  Memo   `json:"empty,omitempty"`
	Title  Memo   `json:"title"`
	ID     string `json:"id"`
}

// TestMemo_JSON: a state's memo is written as a reference that holds none of its text, read back
// whole in the process that wrote it, read as "" from a reference this process never made (another
// process's), and read as the text itself from a state written before memos.
func TestMemo_JSON(t *testing.T) {
	st := memoState{Target: "PGPASSWORD=hunter2 psql -h db", ID: "toolu_1"}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "psql") || strings.Contains(string(b), `"empty"`) {
		t.Errorf("state %s", b)
	}
	var back memoState
	if err := json.Unmarshal(b, &back); err != nil || back != st {
		t.Errorf("read back %+v (%v), want %+v", back, err, st)
	}
	if again, _ := json.Marshal(st); string(again) != string(b) {
		t.Errorf("the same text has another reference: %s, %s", b, again)
	}

	var other memoState
	if err := json.Unmarshal([]byte(`{"target":{"memo":"bm90LW1hZGUtaGVyZQ"},"title":"","id":"x"}`), &other); err != nil || other.Target != "" {
		t.Errorf("another process's memo read as %+v (%v)", other, err)
	}
	var old memoState
	if err := json.Unmarshal([]byte(`{"target":"go test ./...","title":null,"id":"x"}`), &old); err != nil || old.Target != "go test ./..." {
		t.Errorf("a state written before memos read as %+v (%v)", old, err)
	}
}

// TestMemo_Bounded: the process keeps at most memoBytes of memo text, forgetting the least
// recently used first.
func TestMemo_Bounded(t *testing.T) {
	big := strings.Repeat("x", memoBytes/4)
	first, _ := json.Marshal(Memo(big + "first"))
	for i := range 8 {
		json.Marshal(Memo(big + string(rune('a'+i))))
	}
	var m Memo
	if err := json.Unmarshal(first, &m); err != nil || m != "" {
		t.Errorf("the oldest memo is still kept (%d bytes)", len(m))
	}
	memos.Lock()
	defer memos.Unlock()
	if memos.bytes > memoBytes {
		t.Errorf("%d bytes kept, over %d", memos.bytes, memoBytes)
	}
}

func TestTextHash(t *testing.T) {
	if TextHash("a title") != TextHash("a title") || TextHash("a title") == TextHash("another") ||
		strings.Contains(TextHash("a title"), "title") {
		t.Error("TextHash")
	}
}
