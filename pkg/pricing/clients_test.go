package pricing_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/realclient"
	"github.com/observerhq/observer/pkg/pricing"
)

// TestDefault_PricesInstalledClientsDefaults reads the default models (and the router or small
// models they call on their own) out of the AI clients installed on this machine, the ones .ci/run
// installs, and fails when the built-in table cannot price one: a new user's first turns must
// never be "unknown price". A client that is not installed is skipped, saying so; under
// OBSERVER_REQUIRE_CLIENTS=1 (.ci/run) it fails instead.
//
// Where each client keeps its defaults, as of the versions in .ci/run:
//
//	claude-code  bin/claude.exe: the model catalog, every provider_ids.first_party id
//	codex        the platform binary's bundled models.json: the listed model of lowest priority
//	gemini-cli   bundle/*.js, packages/core/src/config/models.ts: DEFAULT_, LATEST_, BASE_,
//	             PREVIEW_ and LEGACY_ *_MODEL constants (the default, its router's flash-lite)
//	qwen-code    chunks/*.js, DEFAULT_MODELS.openai (Qwen OAuth's coder-model is the free OAuth
//	             tier's own name, not a model an API bills)
//	cline        @cline/shared's CLINE_DEFAULT_MODEL_ID and the built-in first-party providers'
//	             defaultModelId in @cline/llms
//	pi           dist/core/model-resolver.js, defaultModelPerProvider of the first-party providers
//	opencode     the binary's provider code and models.dev snapshot: the default it sorts first
//	             and the small model (titles) it picks for Anthropic, OpenAI and Google
//	kilo         as opencode, and its own default kilo-auto/free
func TestDefault_PricesInstalledClientsDefaults(t *testing.T) {
	tab := pricing.Default()
	for _, c := range []struct {
		name, pkg string
		find      func(testing.TB) string
		models    func(tb testing.TB, dir string) []string
	}{
		{"claude-code", "@anthropic-ai/claude-code", realclient.FindClaude, claudeDefaults},
		{"codex", "@openai/codex", realclient.FindCodex, codexDefaults},
		{"gemini-cli", "@google/gemini-cli", realclient.FindGemini, geminiDefaults},
		{"qwen-code", "@qwen-code/qwen-code", realclient.FindQwen, qwenDefaults},
		{"cline", "cline", realclient.FindCline, clineDefaults},
		{"pi", "@mariozechner/pi-coding-agent", realclient.FindPi, piDefaults},
		{"opencode", "opencode-ai", realclient.FindOpenCode, openCodeDefaults},
		{"kilo", "@kilocode/cli", realclient.FindKilo, kiloDefaults},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := packageDir(t, c.find(t), c.pkg)
			models := c.models(t, dir)
			if len(models) == 0 {
				t.Fatalf("no default model found in %s: the client changed where it keeps them; update this test", dir)
			}
			for _, m := range models {
				mt, ok := tab.Resolve(m)
				if !ok {
					t.Errorf("%s's default model %q has no price in the built-in table", c.name, m)
					continue
				}
				p, _, _ := tab.Lookup(m)
				if p.Input+p.Output == 0 && !strings.HasSuffix(m, "/free") {
					t.Errorf("%s's default model %q is priced $0 (key %s)", c.name, m, mt.Key)
				}
				t.Logf("%s: %s priced as %s (approximate %v)", c.name, m, mt.Key, mt.Approximate)
			}
		})
	}
}

// packageDir finds the npm package named pkg that holds bin (an npm bin link or the file it links
// to): the nearest folder above it whose package.json has that name.
func packageDir(tb testing.TB, bin, pkg string) string {
	tb.Helper()
	p, err := filepath.EvalSymlinks(bin)
	if err != nil {
		tb.Fatal(err)
	}
	for dir := filepath.Dir(p); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			continue
		}
		var meta struct{ Name, Version string }
		if json.Unmarshal(b, &meta) == nil && meta.Name == pkg {
			tb.Logf("%s %s in %s", meta.Name, meta.Version, dir)
			return dir
		}
	}
	tb.Fatalf("%s (%s) is not inside the npm package %s: read its defaults by hand", bin, p, pkg)
	return ""
}

// files lists the files under dir that match the glob patterns, in order.
func files(tb testing.TB, dir string, patterns ...string) []string {
	tb.Helper()
	var out []string
	for _, pat := range patterns {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		tb.Fatalf("none of %v under %s", patterns, dir)
	}
	return out
}

// firstWith reads the files in order and returns the first that contains marker.
func firstWith(tb testing.TB, paths []string, marker string) []byte {
	tb.Helper()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		if bytes.Contains(b, []byte(marker)) {
			return b
		}
	}
	tb.Fatalf("no file of %v holds %q: the client changed where it keeps its defaults; update this test", paths, marker)
	return nil
}

// uniq returns the strings of ss once each, in their first order.
func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func claudeDefaults(tb testing.TB, dir string) []string {
	b := firstWith(tb, files(tb, dir, "bin/claude.exe", "bin/claude", "cli.js"), `first_party:"claude-`)
	var models []string
	for _, m := range regexp.MustCompile(`first_party:"(claude-[a-z0-9.-]+)"`).FindAllSubmatch(b, -1) {
		models = append(models, string(m[1]))
	}
	return uniq(models)
}

func codexDefaults(tb testing.TB, dir string) []string {
	const marker = "{\n  \"models\": ["
	b := firstWith(tb, files(tb, dir, "node_modules/@openai/codex-*/vendor/*/bin/codex", "vendor/*/codex/codex",
		"vendor/*/bin/codex"), marker)
	var catalog struct {
		Models []struct {
			Slug       string `json:"slug"`
			Visibility string `json:"visibility"`
			Priority   int    `json:"priority"`
		} `json:"models"`
	}
	if err := json.NewDecoder(bytes.NewReader(b[bytes.Index(b, []byte(marker)):])).Decode(&catalog); err != nil {
		tb.Fatalf("codex's bundled models.json: %v", err)
	}
	def, best := "", 0
	for _, m := range catalog.Models {
		if m.Visibility == "list" && (def == "" || m.Priority < best) {
			def, best = m.Slug, m.Priority
		}
	}
	return uniq([]string{def})
}

func geminiDefaults(tb testing.TB, dir string) []string {
	b := firstWith(tb, files(tb, dir, "bundle/*.js"), "LATEST_GEMINI_FLASH_MODEL =")
	var models []string
	for _, m := range regexp.MustCompile(`var ((?:DEFAULT|LATEST|BASE|PREVIEW|LEGACY)_\w*MODEL) = "(gemini-[^"]+)"`).FindAllSubmatch(b, -1) {
		if !bytes.Contains(m[1], []byte("EMBEDDING")) {
			models = append(models, string(m[2]))
		}
	}
	return uniq(models)
}

func qwenDefaults(tb testing.TB, dir string) []string {
	b := firstWith(tb, files(tb, dir, "chunks/*.js", "*.js", "dist/*.js"), "var DEFAULT_MODELS = {")
	body := regexp.MustCompile(`var DEFAULT_MODELS = \{([^}]*)\}`).FindSubmatch(b)
	entry := regexp.MustCompile(`(?m)^\s*"?openai"?: *([A-Za-z_]\w*|"[^"]*")`).FindSubmatch(body[1])
	if entry == nil {
		tb.Fatalf("qwen's DEFAULT_MODELS has no openai entry: %s", body[1])
	}
	return []string{jsValue(tb, b, string(entry[1]))}
}

// jsValue is v itself when it is a string literal, else the string the bundle assigns to the
// variable v.
func jsValue(tb testing.TB, bundle []byte, v string) string {
	tb.Helper()
	if strings.HasPrefix(v, `"`) {
		return strings.Trim(v, `"`)
	}
	m := regexp.MustCompile(`var ` + regexp.QuoteMeta(v) + ` = "([^"]+)"`).FindSubmatch(bundle)
	if m == nil {
		tb.Fatalf("no string assigned to %s", v)
	}
	return string(m[1])
}

// clineProviders are the first-party providers of Cline's built-in list whose default must be
// priced; the rest are gateways and hosts with their own prices.
var clineProviders = []string{"anthropic", "openai-native", "deepseek", "xai", "openrouter"}

func clineDefaults(tb testing.TB, dir string) []string {
	d := firstWith(tb, files(tb, dir, "node_modules/@cline/shared/dist/providers/defaults.d.ts",
		"../@cline/shared/dist/providers/defaults.d.ts"), "CLINE_DEFAULT_MODEL_ID")
	m := regexp.MustCompile(`CLINE_DEFAULT_MODEL_ID = "([^"]+)"`).FindSubmatch(d)
	if m == nil {
		tb.Fatal("no CLINE_DEFAULT_MODEL_ID")
	}
	models := []string{string(m[1])}
	b := firstWith(tb, files(tb, dir, "node_modules/@cline/llms/dist/providers.js", "../@cline/llms/dist/providers.js"), "defaultModelId")
	found := map[string]bool{}
	// The built-in entries, not those generated "from models.dev".
	re := regexp.MustCompile(`\{id:"([^"]+)",name:"[^"]*",description:"([^"]*)"[^{}]{0,400}?defaultModelId:"([^"]+)"`)
	for _, e := range re.FindAllSubmatch(b, -1) {
		id := string(e[1])
		if slices.Contains(clineProviders, id) && !bytes.Contains(e[2], []byte("from models.dev")) && !found[id] {
			found[id] = true
			models = append(models, string(e[3]))
		}
	}
	for _, p := range clineProviders {
		if !found[p] {
			tb.Errorf("cline: no built-in default for provider %s", p)
		}
	}
	return uniq(models)
}

// piProviders are the providers of Pi's defaultModelPerProvider whose default must be priced:
// the model makers the table covers and the routes to them; the rest are hosts of open models
// at their own prices (groq, cerebras, fireworks, ...) and subscription plans.
var piProviders = []string{"anthropic", "openai", "azure-openai-responses", "openai-codex", "deepseek", "google",
	"google-vertex", "github-copilot", "openrouter", "vercel-ai-gateway", "xai", "zai", "mistral", "moonshotai",
	"amazon-bedrock", "opencode"}

func piDefaults(tb testing.TB, dir string) []string {
	b := firstWith(tb, files(tb, dir, "dist/core/model-resolver.js"), "defaultModelPerProvider")
	body := regexp.MustCompile(`defaultModelPerProvider = \{([^}]*)\}`).FindSubmatch(b)
	if body == nil {
		tb.Fatal("no defaultModelPerProvider object")
	}
	defaults := map[string]string{}
	for _, e := range regexp.MustCompile(`"?([\w-]+)"?: *"([^"]+)"`).FindAllSubmatch(body[1], -1) {
		defaults[string(e[1])] = string(e[2])
	}
	var models []string
	for _, p := range piProviders {
		if defaults[p] == "" {
			tb.Errorf("pi: no default for provider %s in %v", p, defaults)
		}
		models = append(models, defaults[p])
	}
	return uniq(models)
}

func openCodeDefaults(tb testing.TB, dir string) []string {
	b := firstWith(tb, files(tb, dir, "bin/opencode.exe", "bin/opencode", "node_modules/opencode-*/bin/opencode"),
		`"claude-sonnet-4","big-pickle"`)
	return openCodeChoices(tb, b)
}

func kiloDefaults(tb testing.TB, dir string) []string {
	b := firstWith(tb, files(tb, dir, "node_modules/@kilocode/cli-*/bin/kilo", "bin/kilo"), `"claude-sonnet-4","big-pickle"`)
	var models []string
	for _, m := range regexp.MustCompile(`="(kilo-auto/free)"`).FindAllSubmatch(b, 2) {
		models = append(models, string(m[1]))
	}
	if len(models) == 0 {
		tb.Error("kilo: its default kilo-auto/free is gone")
	}
	return uniq(append(models, openCodeChoices(tb, b)...))
}

// openCodeChoices works out, from an OpenCode (or Kilo) binary, the model OpenCode picks by
// default for the Anthropic, OpenAI and Google providers and the small model it titles sessions
// with, the way its Provider.defaultModel and getSmallModel do: the models of the provider's
// models.dev snapshot sorted by the index of the first priority word their id contains (highest
// first), then "latest" ids, then id descending; the small model is the newest (release date, then
// id) of the first small family the provider has.
func openCodeChoices(tb testing.TB, b []byte) []string {
	tb.Helper()
	m := regexp.MustCompile(`defaultModel:[\w$]+\}\)\}\)\),[\w$]+=\[([^\]]*)\],[\w$]+=\[([^\]]*)\]`).FindSubmatch(b)
	if m == nil {
		tb.Fatal("no default and small model priorities next to Provider.defaultModel")
	}
	words := func(list []byte) []string {
		var out []string
		for _, w := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(list, -1) {
			out = append(out, string(w[1]))
		}
		return out
	}
	priority, small := words(m[1]), words(m[2])
	var models []string
	for _, prov := range []string{"anthropic", "openai", "google"} {
		cat, err := openCodeCatalog(b, prov)
		if err != nil {
			tb.Errorf("%s: %v", prov, err)
			continue
		}
		rank := func(id string) int {
			for i, w := range priority {
				if strings.Contains(id, w) {
					return i
				}
			}
			return -1
		}
		def := slices.Clone(cat)
		slices.SortStableFunc(def, func(a, b catalogModel) int {
			if ra, rb := rank(a.id), rank(b.id); ra != rb {
				return rb - ra
			}
			if la, lb := strings.Contains(a.id, "latest"), strings.Contains(b.id, "latest"); la != lb {
				if la {
					return -1
				}
				return 1
			}
			return strings.Compare(b.id, a.id)
		})
		models = append(models, def[0].id)
		newest := slices.Clone(cat)
		slices.SortStableFunc(newest, func(a, b catalogModel) int {
			if c := strings.Compare(b.released, a.released); c != 0 {
				return c
			}
			return strings.Compare(b.id, a.id)
		})
	families:
		for _, f := range small {
			for _, c := range newest {
				if c.family == f {
					models = append(models, c.id)
					break families
				}
			}
		}
	}
	return uniq(models)
}

type catalogModel struct{ id, family, released string }

// openCodeCatalog reads the models of provider prov from the models.dev snapshot compiled into
// an OpenCode binary: prov:{id:"prov",...,models:{"id":{id:"id",...,family:"f",...,release_date:"d",...},...}}
// (a key that is a JavaScript name goes unquoted).
func openCodeCatalog(b []byte, prov string) ([]catalogModel, error) {
	i := bytes.Index(b, []byte(prov+`:{id:"`+prov+`",`))
	if i < 0 {
		if i = bytes.Index(b, []byte(`"`+prov+`":{id:"`+prov+`",`)); i < 0 {
			return nil, errors.New("no such provider in the models.dev snapshot")
		}
	}
	j := bytes.Index(b[i:], []byte("models:{"))
	if j < 0 {
		return nil, errors.New("provider without models")
	}
	start := i + j + len("models:")
	end := jsObjectEnd(b, start)
	if end < 0 {
		return nil, errors.New("models object does not end")
	}
	body := b[start+1 : end-1]
	key := regexp.MustCompile(`^(?:"([^"]+)"|([A-Za-z_$][\w$]*)):\{`)
	var out []catalogModel
	for k := 0; k < len(body); {
		m := key.FindSubmatch(body[k:])
		if m == nil {
			return nil, fmt.Errorf("unexpected %q", body[k:min(len(body), k+40)])
		}
		s := k + len(m[0]) - 1
		e := jsObjectEnd(body, s)
		if e < 0 {
			return nil, errors.New("model object does not end")
		}
		entry := body[s:e]
		c := catalogModel{id: string(m[1]) + string(m[2])}
		if f := regexp.MustCompile(`family:"([^"]*)"`).FindSubmatch(entry); f != nil {
			c.family = string(f[1])
		}
		if d := regexp.MustCompile(`release_date:"([^"]*)"`).FindSubmatch(entry); d != nil {
			c.released = string(d[1])
		}
		out = append(out, c)
		k = e
		if k < len(body) && body[k] == ',' {
			k++
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no models")
	}
	return out, nil
}

// jsObjectEnd returns the index just past the "}" that closes the JavaScript object literal
// starting at b[start] ("{"), skipping strings; -1 when it does not close.
func jsObjectEnd(b []byte, start int) int {
	depth, inString := 0, byte(0)
	for i := start; i < len(b); i++ {
		c := b[i]
		switch {
		case inString != 0:
			if c == '\\' {
				i++
			} else if c == inString {
				inString = 0
			}
		case c == '"' || c == '\'' || c == '`':
			inString = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
