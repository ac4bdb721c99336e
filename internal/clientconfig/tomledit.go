package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc edits TOML text line by line: go-toml's parser finds where each table header and each
// key = value statement lies, and a change replaces, inserts or removes those lines or one value's
// bytes. Comments, blank lines and every other table stay byte for byte (re-marshalling with
// go-toml would drop the comments).
//
// It edits top-level keys, tables written as [a.b] headers, and the keys directly inside them; a
// table written inline (a = { ... }) or through dotted keys is refused with errNotTable rather than
// guessed at.
type tomlDoc struct {
	data []byte
}

// errNotTable reports a TOML table written in a form tomlDoc does not edit.
var errNotTable = errors.New("is not written as a [table] of its own, the only form observerctl edits: rewrite it as one and run again")

func newTOMLDoc(data []byte) (*tomlDoc, error) {
	d := &tomlDoc{data: data}
	if _, err := d.tree(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *tomlDoc) bytes() []byte { return d.data }

func (d *tomlDoc) tree() (any, error) {
	var m map[string]any
	if err := toml.Unmarshal(d.data, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("line %d column %d: %v", row, col, de)
		}
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// texpr is one top-level expression: a table header or a key = value line.
type texpr struct {
	header     bool     // [table] or [[array table]]
	array      bool     // [[array table]]
	key        []string // the header's path, or the statement's (dotted) key
	table      []string // for a statement: the header it sits under
	start, end int      // whole lines, end past the newline
	valStart   int      // for a statement: its value's bytes
	valEnd     int
}

// scan lists the document's expressions with their positions.
func (d *tomlDoc) scan() ([]texpr, error) {
	var p unstable.Parser
	p.Reset(d.data)
	var out []texpr
	var table []string
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			key, first, last := keyOf(n.Key())
			table = key
			out = append(out, texpr{header: true, array: n.Kind == unstable.ArrayTable, key: key,
				start: d.lineStart(first), end: d.lineEnd(last)})
		case unstable.KeyValue:
			key, _, last := keyOf(n.Key())
			valEnd := int(n.Raw.Offset + n.Raw.Length)
			valStart := skipTOMLSpace(d.data, last)
			if valStart < len(d.data) && d.data[valStart] == '=' {
				valStart = skipTOMLSpace(d.data, valStart+1)
			}
			out = append(out, texpr{key: key, table: table, start: d.lineStart(int(n.Raw.Offset)),
				end: d.lineEnd(valEnd), valStart: valStart, valEnd: valEnd})
		}
	}
	return out, p.Error()
}

// keyOf decodes a (dotted) key and returns where its first part starts and its last part ends.
func keyOf(it unstable.Iterator) (key []string, first, last int) {
	first = -1
	for it.Next() {
		k := it.Node()
		key = append(key, string(k.Data))
		if first < 0 {
			first = int(k.Raw.Offset)
		}
		last = int(k.Raw.Offset + k.Raw.Length)
	}
	return key, first, last
}

func (d *tomlDoc) lineStart(pos int) int { return bytes.LastIndexByte(d.data[:pos], '\n') + 1 }

func (d *tomlDoc) lineEnd(pos int) int {
	if i := bytes.IndexByte(d.data[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(d.data)
}

func skipTOMLSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// region is a table header with the statements under it: from the header's line to the end of its
// last statement's line (comments and blank lines after that belong to what follows).
type region struct {
	header texpr
	stmts  []texpr
}

func (r region) span() span {
	if len(r.stmts) == 0 {
		return span{r.header.start, r.header.end}
	}
	return span{r.header.start, r.stmts[len(r.stmts)-1].end}
}

// regions groups the expressions under their headers; statements before the first header are not
// in any region.
func regions(exprs []texpr) []region {
	var out []region
	for _, e := range exprs {
		switch {
		case e.header:
			out = append(out, region{header: e})
		case len(out) > 0:
			out[len(out)-1].stmts = append(out[len(out)-1].stmts, e)
		}
	}
	return out
}

// tableRegion finds the [path] header (not an array table). The empty path is the root table: the
// statements before the first header, in a region whose header is empty and sits where a new
// top-level key belongs (after the last top-level statement, else before the first header and the
// comments right above it, else at the end).
func (d *tomlDoc) tableRegion(path []string) (region, bool, error) {
	exprs, err := d.scan()
	if err != nil {
		return region{}, false, err
	}
	if len(path) == 0 {
		return d.rootRegion(exprs), true, nil
	}
	for _, r := range regions(exprs) {
		if !r.header.array && slices.Equal(r.header.key, path) {
			return r, true, nil
		}
	}
	return region{}, false, nil
}

func (d *tomlDoc) rootRegion(exprs []texpr) region {
	var r region
	for _, e := range exprs {
		if e.header {
			if len(r.stmts) == 0 {
				at := e.start
				for at > 0 {
					prev := d.lineStart(at - 1)
					if !bytes.HasPrefix(bytes.TrimLeft(d.data[prev:at], " \t"), []byte("#")) {
						break
					}
					at = prev
				}
				r.header = texpr{start: at, end: at}
			}
			return r
		}
		r.stmts = append(r.stmts, e)
	}
	if len(r.stmts) == 0 {
		r.header = texpr{start: len(d.data), end: len(d.data)}
	}
	return r
}

// isTable reports whether the value at path is a table (in the parsed document).
func (d *tomlDoc) isTable(path []string) bool {
	t, err := d.tree()
	if err != nil {
		return false
	}
	v, ok := lookup(t, path)
	_, isMap := v.(map[string]any)
	return ok && isMap
}

// raw returns the text of the value of the key at path, directly inside its table's header (or
// at the top level).
func (d *tomlDoc) raw(path []string) ([]byte, bool) {
	if len(path) == 0 {
		return nil, false
	}
	r, ok, err := d.tableRegion(path[:len(path)-1])
	if err != nil || !ok {
		return nil, false
	}
	for _, s := range r.stmts {
		if slices.Equal(s.key, path[len(path)-1:]) {
			return bytes.Clone(d.data[s.valStart:s.valEnd]), true
		}
	}
	return nil, false
}

// set writes v at path: an Object becomes a new [path] table appended to the file (the table must
// not exist yet); any other value becomes the key path[-1] of the existing [path[:-1]] table.
// TOML's parent tables are implicit, so it never reports created parents.
func (d *tomlDoc) set(path []string, v any) (int, error) {
	if obj, ok := v.(Object); ok {
		return 0, d.addTable(path, obj)
	}
	text, err := renderTOML(v)
	if err != nil {
		return 0, err
	}
	return 0, d.setKey(path, text)
}

func (d *tomlDoc) setRaw(path []string, raw []byte) error { return d.setKey(path, raw) }

// errNoTOMLLists reports a list edit in TOML, which no installer needs (Codex's hooks are written
// to its hooks.json).
var errNoTOMLLists = errors.New("observerctl does not add to or remove from TOML lists")

func (d *tomlDoc) appendElem([]string, any) error { return errNoTOMLLists }

func (d *tomlDoc) delElem([]string, int) error { return errNoTOMLLists }

func (d *tomlDoc) addTable(path []string, obj Object) error {
	t, err := d.tree()
	if err != nil {
		return err
	}
	if _, exists := lookup(t, path); exists {
		return fmt.Errorf("%s already exists", DisplayPath(path))
	}
	nl := lineBreak(d.data)
	var b bytes.Buffer
	b.WriteString("[" + tomlKeyPath(path) + "]" + nl)
	for _, m := range obj {
		text, err := renderTOML(m.Value)
		if err != nil {
			return err
		}
		b.WriteString(tomlKeyPath([]string{m.Key}) + " = ")
		b.Write(text)
		b.WriteString(nl)
	}
	out := bytes.Clone(d.data)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	if len(bytes.TrimSpace(out)) > 0 && !bytes.HasSuffix(out, []byte("\n"+nl)) {
		out = append(out, nl...)
	}
	out = append(out, b.Bytes()...)
	if _, err := (&tomlDoc{data: out}).tree(); err != nil {
		// Only a parent written inline (mcp_servers = { ... }) makes an appended table invalid.
		return fmt.Errorf("%s %w", DisplayPath(path[:len(path)-1]), errNotTable)
	}
	d.data = out
	return nil
}

// setKey replaces the value of key path[-1] in the [path[:-1]] table, or adds the key after the
// table's last statement.
func (d *tomlDoc) setKey(path []string, text []byte) error {
	table, key := path[:len(path)-1], path[len(path)-1]
	r, ok, err := d.tableRegion(table)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s %w", DisplayPath(table), errNotTable)
	}
	for _, s := range r.stmts {
		if slices.Equal(s.key, []string{key}) {
			d.splice(s.valStart, s.valEnd, text)
			return nil
		}
	}
	at := r.span().end
	nl := lineBreak(d.data)
	line := []byte(tomlKeyPath([]string{key}) + " = " + string(text) + nl)
	if at > 0 && d.data[at-1] != '\n' {
		line = append([]byte(nl), line...)
	}
	d.splice(at, at, line)
	return nil
}

// del removes the table at path (its header, its statements and its sub-tables, with the blank
// line addTable put before it) or the key at path.
func (d *tomlDoc) del(path []string) error {
	if d.isTable(path) {
		err := d.delTable(path)
		if errors.Is(err, errNotTable) {
			// Written inline ("k" = { ... }) or through dotted keys ("k".a = 1) in a table above it.
			if n, serr := d.delStatements(path); serr != nil || n > 0 {
				return serr
			}
		}
		return err
	}
	table, key := path[:len(path)-1], path[len(path)-1]
	r, ok, err := d.tableRegion(table)
	if err != nil || !ok {
		return err
	}
	for _, s := range r.stmts {
		if slices.Equal(s.key, []string{key}) {
			d.splice(s.start, s.end, nil)
			return nil
		}
	}
	return nil
}

// delStatements removes the key = value lines, under a [table] header (not an array table's) or
// at the top level, whose full key path starts with path, and returns how many it removed.
func (d *tomlDoc) delStatements(path []string) (int, error) {
	exprs, err := d.scan()
	if err != nil {
		return 0, err
	}
	var spans []span
	array := false
	for _, e := range exprs {
		if e.header {
			array = e.array
			continue
		}
		full := append(slices.Clone(e.table), e.key...)
		if !array && len(full) >= len(path) && slices.Equal(full[:len(path)], path) {
			spans = append(spans, span{e.start, e.end})
		}
	}
	for i := len(spans) - 1; i >= 0; i-- {
		d.splice(spans[i].start, spans[i].end, nil)
	}
	return len(spans), nil
}

func (d *tomlDoc) delTable(path []string) error {
	exprs, err := d.scan()
	if err != nil {
		return err
	}
	var spans []span
	found := false
	for _, r := range regions(exprs) {
		if len(r.header.key) >= len(path) && slices.Equal(r.header.key[:len(path)], path) {
			spans = append(spans, r.span())
			found = found || !r.header.array && len(r.header.key) == len(path)
		}
	}
	if !found {
		return fmt.Errorf("%s %w", DisplayPath(path), errNotTable)
	}
	for i := len(spans) - 1; i >= 0; i-- {
		s := spans[i]
		// Take the blank line before the table too, when there is one.
		switch {
		case bytes.HasSuffix(d.data[:s.start], []byte("\r\n\r\n")):
			s.start -= 2
		case bytes.HasSuffix(d.data[:s.start], []byte("\n\n")):
			s.start--
		case s.start == 1 && d.data[0] == '\n':
			s.start = 0
		case s.start == 2 && string(d.data[:2]) == "\r\n":
			s.start = 0
		}
		d.splice(s.start, s.end, nil)
	}
	return nil
}

func (d *tomlDoc) splice(start, end int, text []byte) {
	out := make([]byte, 0, len(d.data)-(end-start)+len(text))
	out = append(out, d.data[:start]...)
	out = append(out, text...)
	d.data = append(out, d.data[end:]...)
}

// tomlKeyPath writes a dotted key, quoting the parts that are not bare keys.
func tomlKeyPath(path []string) string {
	parts := make([]string, len(path))
	for i, k := range path {
		if bareKey(k) {
			parts[i] = k
		} else {
			parts[i] = tomlString(k)
		}
	}
	return strings.Join(parts, ".")
}

// renderTOML writes a value on one line: strings as basic strings, string lists as arrays,
// objects (and InlineTables) as inline tables.
func renderTOML(v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return []byte(tomlString(v)), nil
	case bool:
		return []byte(fmt.Sprint(v)), nil
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = tomlString(s)
		}
		return []byte("[" + strings.Join(parts, ", ") + "]"), nil
	case Object:
		if len(v) == 0 {
			return []byte("{}"), nil
		}
		parts := make([]string, len(v))
		for i, m := range v {
			t, err := renderTOML(m.Value)
			if err != nil {
				return nil, err
			}
			parts[i] = tomlKeyPath([]string{m.Key}) + " = " + string(t)
		}
		return []byte("{ " + strings.Join(parts, ", ") + " }"), nil
	case InlineTable:
		return renderTOML(Object(v))
	}
	return nil, fmt.Errorf("clientconfig: cannot write %T as TOML", v)
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
