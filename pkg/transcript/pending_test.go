package transcript_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
)

// call is a pending call as the readers keep them: an id and what the result needs.
type call struct {
	ID string `json:"id"`
	T  int64  `json:"t,omitempty"`
}

func (c call) PendingID() string { return c.ID }

func ids(l transcript.Pending[call]) []string {
	var out []string
	for _, c := range l {
		out = append(out, fmt.Sprintf("%s@%d", c.ID, c.T))
	}
	return out
}

func TestPendingRepeatedID(t *testing.T) {
	start := func() transcript.Pending[call] { return transcript.Pending[call]{{"a", 1}, {"b", 2}, {"c", 3}} }
	cases := []struct {
		name string
		add  func(l *transcript.Pending[call], c call)
		want []string
	}{
		{"AddKeepsTheFirst", func(l *transcript.Pending[call], c call) { l.Add(c, 8) }, []string{"a@1", "b@2", "c@3"}},
		{"ReplaceInPlace", func(l *transcript.Pending[call], c call) { l.Replace(c, 8) }, []string{"a@1", "b@9", "c@3"}},
		{"RenewMovesToTheEnd", func(l *transcript.Pending[call], c call) { l.Renew(c, 8) }, []string{"a@1", "c@3", "b@9"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := start()
			c.add(&l, call{"b", 9})
			if got := ids(l); !reflect.DeepEqual(got, c.want) {
				t.Errorf("after a repeated id: %v, want %v", got, c.want)
			}
			c.add(&l, call{"d", 4})
			if got, want := ids(l), append(c.want, "d@4"); !reflect.DeepEqual(got, want) {
				t.Errorf("after a new id: %v, want %v", got, want)
			}
		})
	}
}

func TestPendingBound(t *testing.T) {
	for name, add := range map[string]func(l *transcript.Pending[call], c call){
		"Add":     func(l *transcript.Pending[call], c call) { l.Add(c, 3) },
		"Replace": func(l *transcript.Pending[call], c call) { l.Replace(c, 3) },
		"Renew":   func(l *transcript.Pending[call], c call) { l.Renew(c, 3) },
	} {
		t.Run(name, func(t *testing.T) {
			var l transcript.Pending[call]
			for i := 1; i <= 5; i++ {
				add(&l, call{fmt.Sprint("c", i), int64(i)})
			}
			if got, want := ids(l), []string{"c3@3", "c4@4", "c5@5"}; !reflect.DeepEqual(got, want) {
				t.Errorf("kept %v, want the last three %v", got, want)
			}
		})
	}
}

func TestPendingTake(t *testing.T) {
	l := transcript.Pending[call]{{"a", 1}, {"b", 2}, {"c", 3}}
	c, ok := l.Take("b")
	if !ok || c != (call{"b", 2}) {
		t.Fatalf("Take(b) = %v, %v", c, ok)
	}
	if got, want := ids(l), []string{"a@1", "c@3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after Take: %v, want %v", got, want)
	}
	if c, ok := l.Take("b"); ok || c != (call{}) {
		t.Errorf("Take(b) again = %v, %v: a call has one result", c, ok)
	}
	var empty transcript.Pending[call]
	if _, ok := empty.Take("a"); ok {
		t.Error("Take on an empty list found a call")
	}
}

// The list is saved in parsers' states: it must read and write them as the plain slice did.
func TestPendingJSON(t *testing.T) {
	type oldState struct {
		Pending []call `json:"pending,omitempty"`
	}
	type newState struct {
		Pending transcript.Pending[call] `json:"pending,omitempty"`
	}
	for _, calls := range [][]call{nil, {}, {{"a", 1}}, {{"a", 1}, {"b", 0}}} {
		old, err := json.Marshal(oldState{calls})
		if err != nil {
			t.Fatal(err)
		}
		now, err := json.Marshal(newState{calls})
		if err != nil {
			t.Fatal(err)
		}
		if string(now) != string(old) {
			t.Errorf("%v marshals as %s, the plain slice as %s", calls, now, old)
		}
		var back newState
		if err := json.Unmarshal(old, &back); err != nil {
			t.Fatalf("reading %s: %v", old, err)
		}
		if len(calls) > 0 && !reflect.DeepEqual([]call(back.Pending), calls) {
			t.Errorf("%s reads back as %v", old, back.Pending)
		}
	}
	// A bare list marshals as a JSON array too, and nil as null, as a nil slice does.
	if b, _ := json.Marshal(transcript.Pending[call]{{"a", 1}}); string(b) != `[{"id":"a","t":1}]` {
		t.Errorf("list marshals as %s", b)
	}
	if b, _ := json.Marshal(transcript.Pending[call](nil)); string(b) != "null" {
		t.Errorf("nil list marshals as %s", b)
	}
}
