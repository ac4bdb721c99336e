package store

import (
	"database/sql"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	sqlite3 "github.com/mattn/go-sqlite3"
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
	b := enc.EncodeAll([]byte(s), make([]byte, 0, len(s)/2))
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
		return string(b), nil
	default:
		return fmt.Sprint(x), nil
	}
}

// unpackSQL is the SQL function unpack(x): NULL stays NULL.
func unpackSQL(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	return Unpack(v)
}
