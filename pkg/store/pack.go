package store

import (
	"database/sql"
	"fmt"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/observerhq/observer/pkg/event"
)

// Packed text. The two largest columns of the store, tool outputs (action_outputs.output) and
// the conversations' text (messages.text), are kept compressed: a text of at least packMin bytes
// is stored as a BLOB holding a zstd frame when that is smaller, any other as TEXT, as before
// migration 0020 (whose rows stay as they were). The SQL function unpack(x) gives a column's text
// back whichever way it is stored; every query that reads either column reads it through unpack,
// and so do the two full-text indexes, whose content tables are views over unpack (migration
// 0020). The function exists on the connections this package opens (DriverName): a store read
// with another SQLite program shows the packed rows as BLOBs, and its full-text snippets fail with
// "no such function: unpack".
//
// On the 300 MB benchmark history the outputs went from 32.2 to 13.0 MB and the messages' text
// from 17.2 to 9.2 MB, for 0.4 s of the writer's CPU (zstd's fastest level, per row, no
// dictionary: a row is read alone).

// DriverName is the database/sql driver of observer's store: go-sqlite3 with unpack registered.
const DriverName = "sqlite3_observer"

// packMin is the shortest text worth compressing: below it zstd's frame costs more than it saves.
const packMin = 128

func init() {
	sql.Register(DriverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		return c.RegisterFunc("unpack", unpackSQL, true)
	}})
}

var (
	zOnce sync.Once
	zEnc  *zstd.Encoder
	zDec  *zstd.Decoder
)

func coders() (*zstd.Encoder, *zstd.Decoder) {
	zOnce.Do(func() {
		var err error
		zEnc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(2),
			zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
		if err != nil {
			panic(err) // only for invalid options
		}
		zDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(2), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			panic(err)
		}
	})
	return zEnc, zDec
}

// Pack is what the store keeps for text s: s itself, or a zstd frame ([]byte, a BLOB) when s is
// long enough and the frame smaller.
func Pack(s string) any {
	if len(s) < packMin {
		return s
	}
	enc, _ := coders()
	// EncodeAll only reads its input: the string's bytes are not copied first.
	b := enc.EncodeAll(unsafe.Slice(unsafe.StringData(s), len(s)), make([]byte, 0, len(s)/2))
	if len(b) >= len(s) {
		return s
	}
	return b
}

// Unpack is the text of a stored value: a TEXT as it is, a packed BLOB decompressed.
func Unpack(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case []byte:
		_, dec := coders()
		b, err := dec.DecodeAll(x, nil)
		if err != nil {
			return "", fmt.Errorf("unpack stored text: %w", err)
		}
		return unsafe.String(unsafe.SliceData(b), len(b)), nil // b is this call's own: no copy
	default:
		return fmt.Sprint(x), nil
	}
}

// unpacked is SQL for the text of column col: unpack(col) for a packed row, the column itself for
// any other, which spares the call into Go (and the text's copies there and back) for every row
// stored as it was (most messages are shorter than packMin).
func unpacked(col string) string {
	return "CASE WHEN typeof(" + col + ") = 'blob' THEN unpack(" + col + ") ELSE " + col + " END"
}

// unpackSQL is the SQL function unpack(x): NULL stays NULL.
func unpackSQL(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	return Unpack(v)
}

// packChunk is how many events the packing goroutine hands over at a time.
const packChunk = 64

// packer compresses a batch's texts (a message's text, an action's output) on a goroutine of its
// own while the writer inserts the batch's rows: on the writer's critical path the compression
// would add its whole time to a bulk load's.
type packer struct {
	vals  []any
	ready chan int // how many events are packed, in chunks, in order
	have  int
}

// startPack starts packing evs' texts; get(i) gives event i's.
func startPack(evs []event.Event) *packer {
	p := &packer{vals: make([]any, len(evs))}
	need := false
	for i := range evs {
		if t := textOf(&evs[i]); len(t) >= packMin {
			need = true
			break
		}
	}
	if !need {
		for i := range evs {
			p.vals[i] = textOf(&evs[i])
		}
		p.have = len(evs)
		return p
	}
	chunks := (len(evs) + packChunk - 1) / packChunk
	p.ready = make(chan int, chunks)
	go func() {
		for c := range chunks {
			end := min(len(evs), (c+1)*packChunk)
			for i := c * packChunk; i < end; i++ {
				p.vals[i] = Pack(textOf(&evs[i]))
			}
			p.ready <- end
		}
	}()
	return p
}

// get is event i's text as stored, waiting for the goroutine to have packed it.
func (p *packer) get(i int) any {
	for p.have <= i {
		p.have = <-p.ready
	}
	return p.vals[i]
}

// textOf is the text of e that the store packs: a message's text, an action's output.
func textOf(e *event.Event) string {
	switch {
	case e.Kind == event.KindMessage && e.Message != nil:
		return e.Message.Text
	case e.Kind == event.KindAction && e.Action != nil:
		return e.Action.Output
	}
	return ""
}
