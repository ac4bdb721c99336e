package compress

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// outline runs the code compressor on src without Content's size checks.
func outline(src string) string {
	d := parseDoc(src)
	return d.with(compressCode(d.lines))
}

var codeMarker = regexp.MustCompile(`^[ \t]*… (\d+) lines$`)

// checkOutline checks that out is made of in's lines, in order, and markers; that it keeps every
// line of kept and none of dropped.
func checkOutline(tb testing.TB, in, out string, kept, dropped []string) {
	tb.Helper()
	inLines := strings.Split(in, "\n")
	j := 0
	for _, l := range strings.Split(out, "\n") {
		if codeMarker.MatchString(l) {
			continue
		}
		for j < len(inLines) && inLines[j] != l {
			j++
		}
		if j == len(inLines) {
			tb.Fatalf("output line %q is not an input line in order; output:\n%s", l, out)
		}
		j++
	}
	outLines := "\n" + out + "\n"
	for _, k := range kept {
		if !strings.Contains(outLines, "\n"+k+"\n") {
			tb.Errorf("lost %q; output:\n%s", k, out)
		}
	}
	for _, d := range dropped {
		if strings.Contains(outLines, "\n"+d+"\n") {
			tb.Errorf("kept %q; output:\n%s", d, out)
		}
	}
}

func TestContent_CodeFiles(t *testing.T) {
	for _, tc := range []struct {
		name          string
		src           string
		kept, dropped []string
	}{
		{"Go", sampleGo, sampleGoKept, sampleGoDropped},
		{"Python", samplePython, samplePythonKept, samplePythonDropped},
		{"TypeScript", sampleTS, sampleTSKept, sampleTSDropped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := Content(KindCode, tc.src)
			if !ok {
				t.Fatalf("not compressed:\n%s", outline(tc.src))
			}
			checkOutline(t, tc.src, out, tc.kept, tc.dropped)
			if !strings.Contains(out, "… ") {
				t.Error("no body elided")
			}
			t.Logf("%s: %d → %d bytes", tc.name, len(tc.src), len(out))
		})
	}
}

func TestContent_CodeOutline(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"JavaClass", `package com.example;

import java.util.List;

/**
 * Greeter greets.
 * It is immutable.
 */
public class Greeter {
    private final String name;

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append(name);
        return sb.toString();
    }

    public static void main(String[] args) {
        for (String a : args) {
            System.out.println(a);
        }
    }
}
`, `package com.example;

import java.util.List;

/**
 * Greeter greets.
 */
public class Greeter {
    private final String name;

    @Override
    public String toString() {
        … 3 lines
    }

    public static void main(String[] args) {
        … 3 lines
    }
}
`},
		{"RustImplWithLifetimes", `use std::fmt;

pub struct Parser<'a> {
    input: &'a str,
}

impl<'a> Parser<'a> {
    /// new makes a parser.
    /// It trims the input.
    pub fn new(input: &'a str) -> Self {
        let trimmed = input.trim();
        Parser { input: trimmed }
    }

    fn peek(&self) -> Option<char>
    where
        Self: Sized,
    {
        let c = '{';
        self.input.chars().next().filter(|x| *x != c)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses() {
        let p = Parser::new(" x ");
        assert_eq!(p.input, "x");
    }
}
`, `use std::fmt;

pub struct Parser<'a> {
    input: &'a str,
}

impl<'a> Parser<'a> {
    /// new makes a parser.
    pub fn new(input: &'a str) -> Self {
        … 2 lines
    }

    fn peek(&self) -> Option<char>
    where
        Self: Sized,
    {
        … 2 lines
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses() {
        … 2 lines
    }
}
`},
		{"CBraceOnItsOwnLine", `#include <stdio.h>
#include <stdlib.h>

struct node {
    int value;
    struct node *next;
};

static struct node *node_new(int value)
{
    struct node *n = malloc(sizeof *n);
    n->value = value;
    return n;
}
`, `#include <stdio.h>
#include <stdlib.h>

struct node {
    int value;
    struct node *next;
};

static struct node *node_new(int value)
{
    … 3 lines
}
`},
		{"GoBracesInStringsAndComments", "package p\n\nfunc f() string {\n\ts := \"}\"\n\t// }\n\tr := `\n}\n`\n\treturn s + r + '}'\n}\n\nfunc g() {}\n\nvar table = map[string]int{\n\t\"a\": 1,\n\t\"b\": 2,\n}\n",
			"package p\n\nfunc f() string {\n\t… 6 lines\n}\n\nfunc g() {}\n\nvar table = map[string]int{\n\t\"a\": 1,\n\t\"b\": 2,\n}\n"},
		{"JSObjectWithMethods", `export default {
  name: "todo",
  data() {
    return { items: [], filter: "all" };
  },
  methods: {
    add(title) {
      this.items.push({ title, done: false });
      this.save();
    },
  },
};
`, `export default {
  name: "todo",
  data() {
    return { items: [], filter: "all" };
  },
  methods: {
    add(title) {
      … 2 lines
    },
  },
};
`},
		{"Ruby", `require "json"

module Billing
  class Invoice
    def initialize(project)
      @project = project
      @lines = []
    end

    def total
      @lines.sum { |l| l[:amount] }
    end
  end
end
`, `require "json"

module Billing
  class Invoice
    def initialize(project)
      … 2 lines
    end

    def total
      @lines.sum { |l| l[:amount] }
    end
  end
end
`},
		{"Truncated", "func main() {\n\tx := 1\n\ty := 2\n\tif x < y {\n", "func main() {\n\t… 3 lines\n"},
		{"Shell", "#!/bin/sh\n# build.sh builds everything.\n# Run it from the root.\nset -e\n\nbuild() {\n  go build ./...\n  go vet ./...\n}\n\nbuild\n",
			"#!/bin/sh\n# build.sh builds everything.\nset -e\n\nbuild() {\n  … 2 lines\n}\n\nbuild\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outline(tc.in); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A file read with Claude Code's Read tool keeps the numbers of the lines it keeps, so that a
// model can still point at them.
func TestContent_CodeReadPrefixes(t *testing.T) {
	in := withReadPrefixes(sampleGo, "→")
	out, ok := Content(KindCode, in)
	if !ok {
		t.Fatal("not compressed")
	}
	src := strings.Split(sampleGo, "\n")
	markers := 0
	for _, l := range strings.Split(out, "\n") {
		if codeMarker.MatchString(l) {
			markers++
			continue
		}
		num, text, ok := strings.Cut(l, "→")
		n, err := strconv.Atoi(strings.TrimSpace(num))
		if !ok || err != nil {
			t.Fatalf("line without its number: %q", l)
		}
		if src[n-1] != text {
			t.Errorf("line %d is %q, the file's is %q", n, text, src[n-1])
		}
	}
	if markers != 5 {
		t.Errorf("%d bodies elided, want 5:\n%s", markers, out)
	}
}
