package compress

import (
	"bytes"
	"errors"
	"fmt"
)

// The memory of decisions survives a proxy restart through MarshalMemory and UnmarshalMemory:
// without it, an output compressed before the restart would be sent as it came afterwards (it is
// no longer new), and the prefix the upstream cached with the compressed bytes would miss once
// per conversation.
//
// Format: the magic "obsmem1\n", then one record per output, oldest first: its 16-byte key and
// one byte, 1 when it was compressed.

var memoryMagic = []byte("obsmem1\n")

// MarshalMemory returns the remembered decisions, oldest first.
func (c *Compressor) MarshalMemory() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]byte, 0, len(memoryMagic)+17*len(c.order))
	out = append(out, memoryMagic...)
	for _, k := range c.order {
		flag := byte(0)
		if c.seen[k] {
			flag = 1
		}
		out = append(append(out, k[:]...), flag)
	}
	return out
}

// UnmarshalMemory adds the decisions data holds (from MarshalMemory) to what the compressor
// remembers; a decision it already holds stays as it is. Data that is not a memory is an error,
// and nothing of it is added.
func (c *Compressor) UnmarshalMemory(data []byte) error {
	rest, ok := bytes.CutPrefix(data, memoryMagic)
	if !ok || len(rest)%17 != 0 {
		return errors.New("compress: not a memory of decisions (or a truncated one)")
	}
	for i := 0; i < len(rest); i += 17 {
		if rest[i+16] > 1 {
			return fmt.Errorf("compress: memory record %d is damaged", i/17)
		}
	}
	for i := 0; i < len(rest); i += 17 {
		var k [16]byte
		copy(k[:], rest[i:i+16])
		c.remember(k, rest[i+16] == 1)
	}
	return nil
}
