package bus

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// tricky holds what JSON encoders are known to differ on: HTML characters, the line and paragraph
// separators, control characters, quotes and backslashes, characters beyond the BMP, and bytes
// that are not UTF-8 (encoding/json writes U+FFFD for them).
const tricky = "a<b>&c \u2028\u2029 \x00\x01\x1f\x7f \"q\" \\ é 𝄞 \xff\xfe\xc3 end"

// filled is an event of kind k with every field of its envelope and payload set (strings to
// tricky, numbers, booleans, times with nanoseconds in a zone, one element in each slice).
func filled(t testing.TB, k event.Kind, s string) event.Event {
	t.Helper()
	ev := event.Event{}
	fill(reflect.ValueOf(&ev).Elem(), s)
	ev.Kind, ev.V = k, event.SchemaVersion
	// The payload named by the kind, and no other.
	v := reflect.ValueOf(&ev).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Type.Kind() == reflect.Pointer && strings.Split(f.Tag.Get("json"), ",")[0] != string(k) {
			v.Field(i).SetZero()
		}
	}
	ev.ID += "id" // what Validate needs of empty strings
	switch {
	case ev.Message != nil:
		ev.Message.Role, ev.Message.Text = event.RoleAssistant, ev.Message.Text+"text"
	case ev.Limit != nil:
		ev.Limit.UsedPercent, ev.Limit.Provider, ev.Limit.Window = 42.5, ev.Limit.Provider+"p", ev.Limit.Window+"5h"
	}
	if ev.Payload() == nil {
		t.Fatalf("no payload field for kind %q", k)
	}
	if err := ev.Validate(); err != nil {
		t.Fatalf("filled %s event: %v", k, err)
	}
	return ev
}

func fill(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(9)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.125)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), s)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), s)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, s)
		fill(e, s)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.FixedZone("X", 5400))))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s)
			}
		}
	}
}

// The bus writes every event as event.Marshal (encoding/json) does, byte for byte (the stream's
// de-duplication hashes the bytes), and reads back the event event.Decode reads: for every kind,
// with every field set, strings encoders are known to differ on, and every field left empty.
func TestCodec_SameJSONAndEventsAsEncodingJSON(t *testing.T) {
	for _, k := range event.Kinds {
		for _, s := range []string{tricky, "plain text", ""} {
			ev := filled(t, k, s)
			want, err := event.Marshal(&ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalEvent(&ev)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s event (%q): the bus writes\n%s\nencoding/json writes\n%s", k, s, got, want)
			}
			checkDecode(t, want)
		}
	}
	ev := filled(t, event.KindAction, "")
	ev.ID = ""
	if _, err := marshalEvent(&ev); err == nil {
		t.Error("an event without an id was encoded; want event.Marshal's validation")
	}
}

// checkDecode fails the test unless DecodeEvent and event.Decode agree on data: the same event,
// the same error.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	want, werr := event.Decode(data)
	got, gerr := DecodeEvent(data)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("decoding %q: the bus says %v, event.Decode says %v", data, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoding %q: the bus reads\n%+v\nevent.Decode reads\n%+v", data, got, want)
	}
}

// Whatever comes off the bus, DecodeEvent reads what event.Decode reads, or fails as it does:
// malformed JSON, wrong types, unknown fields, duplicate keys, keys in another case, escapes.
func FuzzDecodeEvent_AgreesWithEventDecode(f *testing.F) {
	for _, k := range event.Kinds {
		ev := filled(f, k, tricky)
		data, _ := event.Marshal(&ev)
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"id":"x","kind":"action","v":1,"time":"2026-01-01T00:00:00Z","action":{"type":"read_file"}}`,
		`{"ID":"x","KIND":"action","V":1,"Time":"2026-01-01T00:00:00Z","Action":{"Type":"read_file"}}`,
		`{"id":"x","id":"y","kind":"session","v":1,"time":"2026-01-01T00:00:00Z","session":{"state":"idle"},"extra":[1,{"a":null}]}`,
		`{"id":"x","kind":"action","v":"1","time":"2026-01-01T00:00:00Z","action":{}}`,
		`{"id":"\ud83d\ude00\u0041\ud800","kind":"message","v":1,"time":"2026-01-01T00:00:00.5+01:00","message":{"role":"user","text":"\u00e9"}}`,
		`{"id":"x","kind":"limit","v":1,"time":"2026-01-01T00:00:00Z","limit":{"provider":"p","window":"5h","used_percent":1e400}}`,
		`{"id":"x"} trailing`, `{"id":"x",}`, "{\"id\":\"a\x00b\"}", `{"time":"not a time"}`, `{"v":-1}`, `{"v":1.5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}
