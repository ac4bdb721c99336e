package compress

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Detect names the kind of a tool result from the tool that produced it (the client's own tool name,
// e.g. "Read", "Bash", "read_file", "shell", "exec_command", "WebFetch", "Grep"; may be ""), the path
// it read when known (may be ""), and the content itself.
//
// The rules, first match wins:
//
//  1. The path's extension, unless the tool is a search tool (Grep, Glob, ...: their path is
//     where they searched, their output is a list of matches): .json and .geojson → json when the
//     content is valid JSON (a Read cut short by a line limit is not, and is sniffed instead);
//     .jsonl, .ndjson and .log → logs; .go .py .js .ts .tsx .jsx .java .c .h .cc .cpp .rs .rb .cs
//     .kt .swift .php .scala .sh and their kin → code; .html .htm .xhtml → html; .diff .patch →
//     diff; .md .txt .rst → text. Other extensions fall through to the content.
//  2. The content, with a shell header (Codex's "Exit code: ...\nOutput:\n") and line-number
//     prefixes (Claude Code's Read) set aside:
//     a. a valid JSON object or array → json;
//     b. a line "diff --git" among the first 50, a "--- " line followed within 3 lines by a
//     "+++ " line, or "*** Begin Patch" → diff;
//     c. "<!doctype html" or "<html" within the first 512 bytes, in any case → html;
//     d. ≥ 30% of the first 50 non-blank lines start like log lines: a timestamp (ISO date,
//     HH:MM:SS, "[" and a digit, a syslog date), a level (INFO, WARN, ERROR, DEBUG, TRACE, ...)
//     or a test runner's line (PASS, FAIL, ok, ---, ===, ✓, pytest's PASSED) → logs;
//     e. ≥ 20% of the non-blank lines among the first 200 start with a code keyword (package,
//     import, func, def, class, function, const, #include, public, private, ...) or close a
//     block → code;
//     f. a shell tool (Bash, shell, exec_command, run_command, run_shell_command, ...) with ≥ 20
//     lines of output → logs;
//     g. anything else → text.
//
// Rule e comes before f so that a file a shell printed (cat, sed -n) is read as code.
func Detect(tool, path, content string) Kind {
	_, body := splitShellHeader(content)
	text := sniffText(body)
	if path != "" && !searchTools[strings.ToLower(tool)] {
		if k, ok := kindByExt[extOf(path)]; ok {
			if k != KindJSON || isJSONDoc(text) {
				return k
			}
		}
	}
	switch {
	case isJSONDoc(text):
		return KindJSON
	case isDiff(text):
		return KindDiff
	case isHTML(text):
		return KindHTML
	}
	lines := firstLines(text, 200)
	if share(lines, 50, isLogLine) >= 0.3 {
		return KindLogs
	}
	if share(lines, 200, isCodeLine) >= 0.2 {
		return KindCode
	}
	if shellTools[strings.ToLower(tool)] && strings.Count(text, "\n") >= 19 {
		return KindLogs
	}
	return KindText
}

// kindByExt maps a lower-case file extension to a kind.
var kindByExt = map[string]Kind{
	".json": KindJSON, ".geojson": KindJSON,
	".jsonl": KindLogs, ".ndjson": KindLogs, ".log": KindLogs,
	".html": KindHTML, ".htm": KindHTML, ".xhtml": KindHTML,
	".diff": KindDiff, ".patch": KindDiff,
	".md": KindText, ".markdown": KindText, ".txt": KindText, ".rst": KindText,
	".go": KindCode, ".py": KindCode, ".pyi": KindCode, ".js": KindCode, ".mjs": KindCode, ".cjs": KindCode,
	".ts": KindCode, ".mts": KindCode, ".cts": KindCode, ".tsx": KindCode, ".jsx": KindCode,
	".java": KindCode, ".c": KindCode, ".h": KindCode, ".cc": KindCode, ".cpp": KindCode, ".cxx": KindCode,
	".hpp": KindCode, ".hh": KindCode, ".rs": KindCode, ".rb": KindCode, ".cs": KindCode, ".kt": KindCode,
	".kts": KindCode, ".swift": KindCode, ".php": KindCode, ".scala": KindCode, ".sh": KindCode,
	".bash": KindCode, ".zsh": KindCode,
}

// searchTools name tools whose path argument is where they searched, not what they return.
var searchTools = map[string]bool{
	"grep": true, "glob": true, "ls": true, "search": true, "find": true, "grep_search": true,
	"glob_search": true, "search_file_content": true, "list_directory": true, "file_search": true,
	"codebase_search": true, "find_files": true, "list_dir": true,
}

// shellTools name the tools of coding agents that run a shell command.
var shellTools = map[string]bool{
	"bash": true, "shell": true, "exec_command": true, "run_command": true, "run_shell_command": true,
	"local_shell": true, "shell_command": true, "run_terminal_cmd": true,
}

// extOf returns the lower-case extension of the last element of a slash- or backslash-separated
// path, with its dot, or "".
func extOf(path string) string {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 {
		return ""
	}
	return strings.ToLower(base[dot:])
}

// sniffText returns the content to sniff: with line-number prefixes, the text of the leading run
// of prefixed lines (what follows it is the client's, not the file's).
func sniffText(body string) string {
	d := parseDoc(body)
	if !d.prefixed {
		return body
	}
	texts := make([]string, 0, len(d.lines))
	for _, l := range d.lines {
		if l.prefix == "" {
			break
		}
		texts = append(texts, l.text)
	}
	return strings.Join(texts, "\n")
}

// isJSONDoc reports whether s is one JSON object or array.
func isJSONDoc(s string) bool {
	t := strings.TrimSpace(s)
	return t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t))
}

// isDiff reports whether s reads as a unified diff or an apply_patch patch.
func isDiff(s string) bool {
	lines := firstLines(s, 50)
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "*** Begin Patch"):
			return true
		case strings.HasPrefix(l, "--- "):
			for _, next := range lines[i+1 : min(i+4, len(lines))] {
				if strings.HasPrefix(next, "+++ ") {
					return true
				}
			}
		}
	}
	return false
}

// isHTML reports whether the first 512 bytes of s hold "<!doctype html" or "<html", in any case.
func isHTML(s string) bool {
	head := strings.ToLower(s[:min(len(s), 512)])
	return strings.Contains(head, "<!doctype html") || strings.Contains(head, "<html")
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) []string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return lines
}

// share returns the share of the first n non-blank lines of lines that match.
func share(lines []string, n int, match func(string) bool) float64 {
	total, hits := 0, 0
	for _, l := range lines {
		if total == n {
			break
		}
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		total++
		if match(t) {
			hits++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(hits) / float64(total)
}

// logLine matches the start of a trimmed log line: a timestamp, a level, a test runner's line.
var logLine = regexp.MustCompile(`^(?:` +
	`\[?\d{4}[-/]\d{2}[-/]\d{2}|\[?\d{2}:\d{2}:\d{2}|\[\s*\d|` +
	`(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d+ \d{2}:|` +
	`\[?(?:INFO|WARN|WARNING|ERROR|ERR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\b|(?:time|ts|level)=|` +
	`(?:PASS|FAIL|ok)\b|--- |=== |[✓✔✗✕×]|npm (?:ERR!|WARN|error|warn)|` +
	`(?:Compiling|Running|Finished|Downloading|Downloaded|Collecting) |test result:)`)

// isLogLine reports whether the trimmed line t reads as a log line: it starts like one (logLine)
// or carries a pytest verdict.
func isLogLine(t string) bool {
	if logLine.MatchString(t[:min(len(t), 64)]) {
		return true
	}
	for _, v := range []string{" PASSED", " FAILED", " SKIPPED", " XFAIL"} {
		if strings.Contains(t, v) {
			return true
		}
	}
	return false
}

// codeStarts begin the trimmed lines that read as code.
var codeStarts = []string{
	"package ", "import ", "from ", "func ", "def ", "async ", "class ", "function ", "const ", "let ",
	"var ", "type ", "#include", "#define", "public ", "private ", "protected ", "static ", "export ",
	"fn ", "pub ", "use ", "impl ", "struct ", "interface ", "return", "@",
}

// isCodeLine reports whether the trimmed line t starts with a code keyword or closes a block.
func isCodeLine(t string) bool {
	if t == "}" || t == "};" || t == "})" || t == "});" || t == ")" || t == "end" {
		return true
	}
	for _, k := range codeStarts {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	return false
}
