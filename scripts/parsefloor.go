//go:build ignore

// Command parsefloor is the parse-only floor of a cold scan, for the benchmarks: it decodes every
// line of every Claude Code and Codex transcript under $HOME (~/.claude/projects, ~/.codex/sessions)
// with encoding/json into a generic value, on two goroutines (the machine's cores), and does
// nothing else: no event, no store. A scan cannot be faster than reading its input this way
// unless it decodes less. It prints the files, lines and bytes it read as JSON.
//
//	go run scripts/parsefloor.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

func main() {
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var files []string
	for _, root := range []string{filepath.Join(home, ".claude", "projects"), filepath.Join(home, ".codex", "sessions")} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
				files = append(files, path)
			}
			return nil
		})
	}
	var lines, bytes, bad atomic.Int64
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for path := range jobs {
				f, err := os.Open(path)
				if err != nil {
					continue
				}
				r := bufio.NewReaderSize(f, 1<<20)
				for {
					line, err := r.ReadBytes('\n')
					if len(line) > 0 {
						bytes.Add(int64(len(line)))
						var v any
						if json.Unmarshal(line, &v) != nil {
							bad.Add(1)
						}
						lines.Add(1)
					}
					if err != nil {
						break
					}
				}
				f.Close()
			}
		}()
	}
	for _, f := range files {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	json.NewEncoder(os.Stdout).Encode(map[string]int64{"files": int64(len(files)), "lines": lines.Load(),
		"bytes": bytes.Load(), "malformed": bad.Load()})
}
