package clientconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Object is a JSON object or a TOML table whose members keep the order they are written in.
type Object []Member

// InlineTable is an Object that TOML writes on its key's line, as an inline table (key = { ... }),
// where an Object set at a path of its own becomes a [table]; JSON writes it as any object.
type InlineTable Object

// Member is one key of an Object. Value is a string, a bool, a []string, an Object, an
// InlineTable, or a json.RawMessage (JSON text written as it is).
type Member struct {
	Key   string
	Value any
}

// Get returns the value of key, if the object has it.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	return renderJSON(o, jsonStyle{}), nil
}

// normalize turns a value into the plain form comparisons use: maps, []any, strings, bools and
// json.Number for every number, whichever format or Go type it came from.
func normalize(v any) any {
	switch v := v.(type) {
	case nil:
		return nil
	case Object:
		m := make(map[string]any, len(v))
		for _, mem := range v {
			m[mem.Key] = normalize(mem.Value)
		}
		return m
	case InlineTable:
		return normalize(Object(v))
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = normalize(x)
		}
		return m
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case json.RawMessage:
		x, err := decodeJSON(v)
		if err != nil {
			return string(v)
		}
		return x
	case string, bool, json.Number:
		return v
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case int:
		return json.Number(strconv.Itoa(v))
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	default:
		// TOML dates and times: compared by their text.
		return fmt.Sprint(v)
	}
}

// equal reports whether two values are the same once normalized.
func equal(a, b any) bool { return reflect.DeepEqual(normalize(a), normalize(b)) }

// decodeJSON decodes JSON text keeping numbers exact.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: more than one value")
	}
	return v, nil
}

// toJSON is the JSON form of a value, for the manifest.
func toJSON(v any) json.RawMessage {
	b, err := json.Marshal(normalize(v))
	if err != nil {
		// normalize returns only JSON-encodable values.
		panic(err)
	}
	return b
}

// lookup walks path through nested maps.
func lookup(tree any, path []string) (any, bool) {
	cur := tree
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// DisplayPath writes a key path the way people read it: mcpServers.github.command, with segments
// that are not plain words quoted (projects["/home/me/app"].mcpServers).
func DisplayPath(path []string) string {
	var b strings.Builder
	for i, k := range path {
		if bareKey(k) {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
			continue
		}
		b.WriteString("[" + strconv.Quote(k) + "]")
	}
	return b.String()
}

// bareKey reports whether k needs no quotes as a TOML key (letters, digits, - and _).
func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
