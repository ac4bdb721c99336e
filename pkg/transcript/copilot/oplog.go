package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// replayLog rebuilds the object a VS Code chat session log (<session id>.jsonl, VS Code's
// ObjectMutationLog) describes and returns it as JSON: the first entry {kind: 0, v} is the whole
// object, then {kind: 1, k, v} sets the value at path k, {kind: 2, k, v, i} truncates the array at
// k to i (when given) and appends v's items, {kind: 3, k} deletes the value at k. An entry that
// does not decode (a last line cut short), a kind this package does not know, or a path through
// something that is not there is an error, as it is for VS Code.
func replayLog(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root any
	entries := 0
	for {
		var e struct {
			Kind *int              `json:"kind"`
			K    []json.RawMessage `json:"k"`
			V    json.RawMessage   `json:"v"`
			I    *int              `json:"i"`
		}
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", entries+1, err)
		}
		entries++
		if e.Kind == nil {
			return nil, fmt.Errorf("entry %d has no kind", entries)
		}
		if *e.Kind != 0 && root == nil {
			return nil, errors.New("the log has no initial entry")
		}
		path, err := logPath(e.K)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", entries, err)
		}
		var v any
		if len(e.V) > 0 {
			if v, err = decodeValue(e.V); err != nil {
				return nil, fmt.Errorf("entry %d: %w", entries, err)
			}
		}
		switch *e.Kind {
		case 0:
			root = v
		case 1:
			if len(path) > 0 { // VS Code ignores a set of the root
				root, err = setAt(root, path, v, len(e.V) == 0)
			}
		case 2:
			root, err = pushAt(root, path, v, e.I)
		case 3:
			if len(path) > 0 {
				root, err = setAt(root, path, nil, true)
			}
		default:
			return nil, fmt.Errorf("entry %d has kind %d", entries, *e.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", entries, err)
		}
	}
	if entries == 0 {
		return nil, errors.New("the log is empty")
	}
	if _, ok := root.(map[string]any); !ok {
		return nil, errors.New("the log's object is not an object")
	}
	return json.Marshal(root)
}

func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// logPath reads a path: object keys (strings) and array indexes (numbers).
func logPath(k []json.RawMessage) ([]any, error) {
	out := make([]any, 0, len(k))
	for _, raw := range k {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out = append(out, s)
			continue
		}
		var n int
		if err := json.Unmarshal(raw, &n); err != nil || n < 0 || n > 1<<24 {
			return nil, fmt.Errorf("bad path element %s", raw)
		}
		out = append(out, n)
	}
	return out, nil
}

// setAt sets (or, with del, deletes) the value at path below node and returns node.
func setAt(node any, path []any, v any, del bool) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	switch n := node.(type) {
	case map[string]any:
		k := keyString(path[0])
		if len(path) == 1 {
			if del {
				delete(n, k)
			} else {
				n[k] = v
			}
			return n, nil
		}
		child, err := setAt(n[k], path[1:], v, del)
		if err != nil {
			return n, err
		}
		n[k] = child
		return n, nil
	case []any:
		i, ok := path[0].(int)
		if !ok {
			return n, fmt.Errorf("key %v into an array", path[0])
		}
		if len(path) == 1 {
			for len(n) <= i {
				n = append(n, nil)
			}
			n[i] = v
			return n, nil
		}
		if i >= len(n) {
			return n, fmt.Errorf("index %d past the array's end", i)
		}
		child, err := setAt(n[i], path[1:], v, del)
		if err != nil {
			return n, err
		}
		n[i] = child
		return n, nil
	}
	return node, fmt.Errorf("path through %T", node)
}

// pushAt truncates the array at path to i (when given) and appends v's items.
func pushAt(root any, path []any, v any, i *int) (any, error) {
	cur, err := getAt(root, path)
	if err != nil {
		return root, err
	}
	arr, _ := cur.([]any)
	if i != nil && *i >= 0 && *i < len(arr) {
		arr = arr[:*i]
	}
	if items, ok := v.([]any); ok {
		arr = append(arr, items...)
	}
	if arr == nil {
		arr = []any{}
	}
	if len(path) == 0 {
		return arr, nil
	}
	return setAt(root, path, arr, false)
}

// getAt returns the value at path, nil when its last step is missing.
func getAt(node any, path []any) (any, error) {
	for _, step := range path {
		switch n := node.(type) {
		case map[string]any:
			node = n[keyString(step)]
		case []any:
			i, ok := step.(int)
			if !ok {
				return nil, fmt.Errorf("key %v into an array", step)
			}
			if i >= len(n) {
				node = nil
			} else {
				node = n[i]
			}
		default:
			return nil, fmt.Errorf("path through %T", node)
		}
	}
	return node, nil
}

func keyString(k any) string {
	if i, ok := k.(int); ok {
		return strconv.Itoa(i)
	}
	s, _ := k.(string)
	return s
}
