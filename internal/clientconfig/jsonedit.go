package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/observerhq/observer/pkg/jsonscan"
)

// jsonDoc edits JSON text in place: a change replaces, inserts or removes the bytes of one member,
// and every other byte of the file stays as it was (key order, spacing, numbers, escapes).
type jsonDoc struct {
	data []byte
	unit string // one level of indentation, detected from the file
	nl   string // the file's line break: \n, or \r\n
}

func newJSONDoc(data []byte) (*jsonDoc, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	if !jsonscan.Valid(data) {
		_, err := decodeJSON(data)
		if err == nil {
			err = jsonscan.ErrSyntax
		}
		return nil, err
	}
	d := &jsonDoc{data: data, unit: "  ", nl: lineBreak(data)}
	root, err := d.root()
	if err != nil {
		return nil, err
	}
	if ms, err := d.members(root); err == nil && len(ms) > 0 && d.multiline(root) {
		if ind := d.lineIndent(ms[0].keyStart); ind != "" {
			d.unit = ind
		}
	}
	return d, nil
}

// span is a byte range [start, end) of the text.
type span struct{ start, end int }

// jmember is one member of an object: where its key and value lie.
type jmember struct {
	name                               string
	keyStart, keyEnd, valStart, valEnd int
}

func (d *jsonDoc) bytes() []byte { return d.data }

func (d *jsonDoc) tree() (any, error) { return decodeJSON(d.data) }

// root returns the span of the top-level value, which must be an object.
func (d *jsonDoc) root() (span, error) {
	s := skipWS(d.data, 0)
	if s >= len(d.data) || d.data[s] != '{' {
		return span{}, errors.New("the top-level value is not an object")
	}
	e, err := jsonscan.Skip(d.data, s)
	if err != nil {
		return span{}, err
	}
	return span{s, e}, nil
}

// members lists the members of the object at obj, with offsets into d.data.
func (d *jsonDoc) members(obj span) ([]jmember, error) {
	base := d.data
	off := func(b []byte) int { return cap(base) - cap(b) }
	var out []jmember
	var bad error
	err := jsonscan.Members(base[obj.start:obj.end], func(k, v []byte) bool {
		name, ok := jsonscan.String(k)
		if !ok {
			bad = jsonscan.ErrSyntax
			return false
		}
		ks, vs := off(k), off(v)
		out = append(out, jmember{name: name, keyStart: ks, keyEnd: ks + len(k), valStart: vs, valEnd: vs + len(v)})
		return true
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// find returns the member named name; the last one wins, as in every JSON decoder we know of.
func find(ms []jmember, name string) (jmember, int, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].name == name {
			return ms[i], i, true
		}
	}
	return jmember{}, -1, false
}

// locate walks path and returns the object holding its last key, that object's members and the
// index of the member (-1 when the last key is absent). depth is how many keys of path exist.
func (d *jsonDoc) locate(path []string) (obj span, ms []jmember, idx, depth int, err error) {
	obj, err = d.root()
	if err != nil {
		return
	}
	for i, key := range path {
		if ms, err = d.members(obj); err != nil {
			return
		}
		m, j, ok := find(ms, key)
		if !ok {
			return obj, ms, -1, i, nil
		}
		if i == len(path)-1 {
			return obj, ms, j, i + 1, nil
		}
		if d.data[m.valStart] != '{' {
			return obj, ms, -1, i, fmt.Errorf("%s is not an object", DisplayPath(path[:i+1]))
		}
		obj = span{m.valStart, m.valEnd}
	}
	return obj, nil, -1, 0, errors.New("empty key path")
}

// raw returns the text of the value at path.
func (d *jsonDoc) raw(path []string) ([]byte, bool) {
	_, ms, idx, _, err := d.locate(path)
	if err != nil || idx < 0 {
		return nil, false
	}
	return bytes.Clone(d.data[ms[idx].valStart:ms[idx].valEnd]), true
}

// set writes v at path, creating the objects on the way; it returns how many of them it created.
func (d *jsonDoc) set(path []string, v any) (int, error) {
	obj, ms, idx, depth, err := d.locate(path)
	if err != nil {
		return 0, err
	}
	if idx >= 0 {
		m := ms[idx]
		old := d.data[m.valStart:m.valEnd]
		st := d.style(obj, ms)
		st.indent = d.lineIndent(m.keyStart)
		if st.multi && !bytes.Contains(old, []byte("\n")) {
			switch v.(type) {
			case Object, InlineTable:
			default:
				st.multi, st.inlineSpaces = false, true
			}
		}
		d.splice(m.valStart, m.valEnd, renderJSON(v, st))
		return 0, nil
	}
	for j := len(path) - 1; j > depth; j-- {
		v = Object{{path[j], v}}
	}
	d.insert(obj, ms, path[depth], v)
	return len(path) - 1 - depth, nil
}

// setRaw writes the JSON text raw at path as it is.
func (d *jsonDoc) setRaw(path []string, raw []byte) error {
	if !jsonscan.Valid(raw) {
		return fmt.Errorf("saved value of %s is not JSON", DisplayPath(path))
	}
	_, err := d.set(path, json.RawMessage(raw))
	return err
}

// del removes the member at path with the separator before it (or after it, for a first member),
// so that removing a member set() appended gives back the text from before.
func (d *jsonDoc) del(path []string) error {
	obj, ms, idx, _, err := d.locate(path)
	if err != nil || idx < 0 {
		return err
	}
	switch {
	case len(ms) == 1:
		d.splice(obj.start+1, obj.end-1, nil)
	case idx > 0:
		d.splice(ms[idx-1].valEnd, ms[idx].valEnd, nil)
	default:
		d.splice(ms[0].keyStart, ms[1].keyStart, nil)
	}
	return nil
}

// array returns the span of the list at path and the spans of its elements.
func (d *jsonDoc) array(path []string) (span, []span, error) {
	_, ms, idx, _, err := d.locate(path)
	if err != nil {
		return span{}, nil, err
	}
	if idx < 0 {
		return span{}, nil, fmt.Errorf("%s does not exist", DisplayPath(path))
	}
	m := ms[idx]
	if d.data[m.valStart] != '[' {
		return span{}, nil, fmt.Errorf("%s is not a list", DisplayPath(path))
	}
	arr := span{m.valStart, m.valEnd}
	base := d.data
	var els []span
	err = jsonscan.Elements(base[arr.start:arr.end], func(v []byte) bool {
		s := cap(base) - cap(v)
		els = append(els, span{s, s + len(v)})
		return true
	})
	return arr, els, err
}

// appendElem adds v at the end of the list at path, written like the elements before it: on
// lines of its own when they are, and with their separator and spacing.
func (d *jsonDoc) appendElem(path []string, v any) error {
	arr, els, err := d.array(path)
	if err != nil {
		return err
	}
	st := d.arrayStyle(arr, els)
	if len(els) == 0 {
		if !st.multi {
			d.splice(arr.start+1, arr.end-1, renderJSON(v, st))
			return nil
		}
		base := d.lineIndent(arr.start)
		st.indent = base + d.unit
		d.splice(arr.start+1, arr.end-1, concat([]byte(d.nl+st.indent), renderJSON(v, st), []byte(d.nl+base)))
		return nil
	}
	last := els[len(els)-1]
	st.indent = d.lineIndent(last.start)
	sep := []byte(",")
	switch {
	case bytes.IndexByte(d.data[arr.start:els[0].start], '\n') >= 0:
		// One element a line.
		sep = []byte("," + d.nl + st.indent)
	case len(els) > 1:
		sep = bytes.Clone(d.data[els[len(els)-2].end:last.start])
	case !st.compact:
		sep = []byte(", ")
	}
	d.splice(last.end, last.end, concat(sep, renderJSON(v, st)))
	return nil
}

// arrayStyle reads how the elements of the list at arr are written. A new element is written on
// several lines when the list's last element is (or, after a plain value, when the list puts its
// elements on lines of their own; in an empty list, when the file is written on several lines), on
// one line otherwise, with the key separator of the file or of its sibling.
func (d *jsonDoc) arrayStyle(arr span, els []span) jsonStyle {
	root, _ := d.root()
	st := jsonStyle{unit: d.unit, colon: ": ", nl: d.nl}
	if rms, err := d.members(root); err == nil && len(rms) > 0 {
		st.colon = string(d.data[rms[0].keyEnd:rms[0].valStart])
	}
	if len(els) == 0 {
		st.multi = d.multiline(root)
	} else {
		last := els[len(els)-1]
		switch d.data[last.start] {
		case '{', '[':
			st.multi = d.multiline(last)
		default:
			// After a plain value: several lines when the list puts its elements on lines of their own.
			st.multi = bytes.IndexByte(d.data[arr.start:els[0].start], '\n') >= 0
		}
		if d.data[last.start] == '{' {
			if ms, err := d.members(last); err == nil && len(ms) > 0 {
				st.colon = string(d.data[ms[0].keyEnd:ms[0].valStart])
				st.pad = !st.multi && ms[0].keyStart > last.start+1
			}
		}
	}
	if !st.multi && st.colon == ":" {
		st.compact = true
	}
	return st
}

// delElem removes element i of the list at path with the separator before it (or after it, for a
// first element), so that removing an element appendElem added gives back the text from before.
func (d *jsonDoc) delElem(path []string, i int) error {
	arr, els, err := d.array(path)
	if err != nil {
		return err
	}
	switch {
	case i < 0 || i >= len(els):
		return fmt.Errorf("%s has no element %d", DisplayPath(path), i)
	case len(els) == 1:
		d.splice(arr.start+1, arr.end-1, nil)
	case i > 0:
		d.splice(els[i-1].end, els[i].end, nil)
	default:
		d.splice(els[0].start, els[1].start, nil)
	}
	return nil
}

// insert appends member key: v to the object at obj, in the object's own style.
func (d *jsonDoc) insert(obj span, ms []jmember, key string, v any) {
	st := d.style(obj, ms)
	keyText := renderJSON(key, st)
	if len(ms) == 0 {
		if !st.multi {
			d.splice(obj.start+1, obj.end-1, concat(keyText, []byte(st.colon), renderJSON(v, st)))
			return
		}
		base := d.lineIndent(obj.start)
		st.indent = base + d.unit
		text := concat([]byte(d.nl+st.indent), keyText, []byte(st.colon), renderJSON(v, st), []byte(d.nl+base))
		d.splice(obj.start+1, obj.end-1, text)
		return
	}
	last := ms[len(ms)-1]
	sep := []byte(",")
	if st.multi {
		st.indent = d.lineIndent(last.keyStart)
		sep = []byte("," + d.nl + st.indent)
	} else if len(ms) > 1 {
		sep = bytes.Clone(d.data[ms[0].valEnd:ms[1].keyStart])
	} else if !st.compact {
		sep = []byte(", ")
	}
	d.splice(last.valEnd, last.valEnd, concat(sep, keyText, []byte(st.colon), renderJSON(v, st)))
}

// style reads how the object at obj is written: on several lines or one, and its key separator.
func (d *jsonDoc) style(obj span, ms []jmember) jsonStyle {
	st := jsonStyle{unit: d.unit, colon: ": ", nl: d.nl}
	root, _ := d.root()
	switch {
	case len(ms) > 0:
		st.multi = d.multiline(obj)
		st.colon = string(d.data[ms[0].keyEnd:ms[0].valStart])
	case obj == root:
		// An empty file or a bare {}: write it the way the clients do, two spaces.
		st.multi = true
	default:
		st.multi = d.multiline(root)
		if rms, err := d.members(root); err == nil && len(rms) > 0 {
			st.colon = string(d.data[rms[0].keyEnd:rms[0].valStart])
		}
	}
	if !st.multi && st.colon == ":" {
		st.compact = true
	}
	return st
}

func (d *jsonDoc) multiline(s span) bool {
	return bytes.IndexByte(d.data[s.start:s.end], '\n') >= 0
}

// lineIndent returns the spaces and tabs that begin the line holding pos.
func (d *jsonDoc) lineIndent(pos int) string {
	ls := bytes.LastIndexByte(d.data[:pos], '\n') + 1
	e := ls
	for e < len(d.data) && (d.data[e] == ' ' || d.data[e] == '\t') {
		e++
	}
	return string(d.data[ls:e])
}

func (d *jsonDoc) splice(start, end int, text []byte) {
	out := make([]byte, 0, len(d.data)-(end-start)+len(text))
	out = append(out, d.data[:start]...)
	out = append(out, text...)
	d.data = append(out, d.data[end:]...)
}

// lineBreak returns the text's line break: \r\n when it uses those, else \n.
func lineBreak(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func skipWS(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t') {
		i++
	}
	return i
}

// jsonStyle is how a value is written: JSON.stringify(v, null, 2) when multi (the clients' own
// style), on one line otherwise.
type jsonStyle struct {
	multi        bool
	indent, unit string // the current line's indentation, and one level
	colon        string // between a key and its value
	compact      bool   // one line without spaces: {"a":1,"b":[2,3]}
	inlineSpaces bool   // one line with spaces: ["a", "b"]
	pad          bool   // one line, a space inside an object's braces: { "a": 1 }
	nl           string // line break
}

// renderJSON writes v (see Member for the types) in style st. Strings are escaped the way
// JavaScript's JSON.stringify escapes them (no HTML escapes), as the clients write them.
func renderJSON(v any, st jsonStyle) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, st)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any, st jsonStyle) {
	switch v := v.(type) {
	case json.RawMessage:
		b.Write(v)
	case string:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		enc.Encode(v) // a string always encodes
		b.Truncate(b.Len() - 1)
	case bool:
		fmt.Fprint(b, v)
	case []string:
		items := make([]any, len(v))
		for i, s := range v {
			items[i] = s
		}
		writeJSONList(b, '[', ']', items, st)
	case []any:
		writeJSONList(b, '[', ']', v, st)
	case InlineTable:
		writeJSON(b, Object(v), st)
	case Object:
		items := make([]any, len(v))
		for i, m := range v {
			items[i] = m
		}
		writeJSONList(b, '{', '}', items, st)
	case Member:
		writeJSON(b, v.Key, st)
		switch {
		case st.colon != "":
			b.WriteString(st.colon)
		case st.compact:
			b.WriteString(":")
		default:
			b.WriteString(": ")
		}
		writeJSON(b, v.Value, st)
	default:
		panic(fmt.Sprintf("clientconfig: cannot write %T as JSON", v))
	}
}

func writeJSONList(b *bytes.Buffer, open, close byte, items []any, st jsonStyle) {
	b.WriteByte(open)
	if len(items) == 0 {
		b.WriteByte(close)
		return
	}
	pad := st.pad && !st.multi && open == '{'
	if pad {
		b.WriteByte(' ')
	}
	inner := st
	inner.indent = st.indent + st.unit
	for i, it := range items {
		switch {
		case st.multi:
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(st.nl + inner.indent)
		case i > 0 && st.compact:
			b.WriteByte(',')
		case i > 0:
			b.WriteString(", ")
		}
		writeJSON(b, it, inner)
	}
	switch {
	case st.multi:
		b.WriteString(st.nl + st.indent)
	case pad:
		b.WriteByte(' ')
	}
	b.WriteByte(close)
}
