package config

import (
	"bytes"
	"fmt"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// SetKey returns data, the text of a config.toml, with [section] key set to value. Everything else
// keeps its bytes: a key already set has its line replaced, a new key goes right under the
// section's header (which is added at the end when missing). A key set as part of a dotted key
// or an inline table is refused rather than rewritten.
func SetKey(data []byte, section, key string, value any) ([]byte, error) {
	val, err := toml.Marshal(map[string]any{key: value})
	if err != nil {
		return nil, err
	}
	line := bytes.TrimSpace(val)
	var p unstable.Parser
	p.Reset(data)
	var table []string
	header := -1 // offset just past the [section] header's line
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(e.Key())
			if len(table) == 1 && table[0] == section && e.Kind == unstable.Table {
				it := e.Key()
				it.Next()
				header = lineEnd(data, int(it.Node().Raw.Offset))
			}
		case unstable.KeyValue:
			parts := append(append([]string{}, table...), keyParts(e.Key())...)
			if len(parts) < 2 || parts[0] != section || parts[1] != key {
				continue
			}
			if len(parts) != 2 || len(table) != 1 {
				return nil, fmt.Errorf("[%s] %s is written as a dotted key; set it by hand", section, key)
			}
			it := e.Key()
			it.Next()
			start := lineStart(data, int(it.Node().Raw.Offset))
			end := lineEnd(data, int(e.Value().Raw.Offset)+len(p.Raw(e.Value().Raw)))
			out := append(append(append([]byte{}, data[:start]...), line...), '\n')
			return append(out, data[end:]...), nil
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("config.toml does not parse: %w", err)
	}
	if header >= 0 {
		out := append([]byte{}, data[:header]...)
		if header == 0 || out[header-1] != '\n' {
			out = append(out, '\n') // the header is the last line, without its newline
		}
		out = append(append(out, line...), '\n')
		return append(out, data[header:]...), nil
	}
	out := append([]byte{}, data...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(append(out, fmt.Sprintf("\n[%s]\n", section)...), append(line, '\n')...), nil
}

func lineStart(data []byte, pos int) int { return bytes.LastIndexByte(data[:pos], '\n') + 1 }

// lineEnd is the offset just past the newline that ends pos's line (or the end of data).
func lineEnd(data []byte, pos int) int {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(data)
}
