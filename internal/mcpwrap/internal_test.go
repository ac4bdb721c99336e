package mcpwrap

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	r := bufio.NewReaderSize(strings.NewReader("short\r\n"+long+"\n"+"ok\n"+long+long+long+"\nlast"), 16)
	type got struct {
		line    string
		tooLong bool
		err     error
	}
	var all []got
	for {
		line, tooLong, err := readLine(r, 50)
		all = append(all, got{string(line), tooLong, err})
		if err != nil {
			break
		}
	}
	want := []got{{"short\r", false, nil}, {"", true, nil}, {"ok", false, nil}, {"", true, nil}, {"last", false, io.EOF}}
	if len(all) != len(want) {
		t.Fatalf("readLine gave %+v, want %+v", all, want)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, all[i], want[i])
		}
	}
	// No limit: the whole line, however long.
	r = bufio.NewReaderSize(strings.NewReader(long+long+"\n"), 16)
	if line, tooLong, _ := readLine(r, 0); string(line) != long+long || tooLong {
		t.Errorf("unlimited readLine = %d bytes, tooLong %v", len(line), tooLong)
	}
}

func TestSetKey(t *testing.T) {
	for _, tc := range []struct{ in, key, val, want string }{
		{`{"z" : 1, "tools":[1,2], "a":{"b": 2}}`, "tools", `[3]`, `{"z":1,"tools":[3],"a":{"b": 2}}`},
		{`{"serverInfo":{"name":"x"}}`, "capabilities", `{}`, `{"serverInfo":{"name":"x"},"capabilities":{}}`},
		{`{}`, "tools", `{}`, `{"tools":{}}`},
		{`{"n":1.50e2}`, "x", `1`, `{"n":1.50e2,"x":1}`},
	} {
		got, err := setKey([]byte(tc.in), tc.key, []byte(tc.val))
		if err != nil || string(got) != tc.want {
			t.Errorf("setKey(%s, %s) = %s, %v; want %s", tc.in, tc.key, got, err, tc.want)
		}
	}
	if _, err := setKey([]byte(`[1]`), "a", []byte(`1`)); err == nil {
		t.Error("setKey on an array succeeded")
	}
}
