package cli

import (
	"fmt"
	"os/exec"

	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/pkg/config"
)

// clientInfo is what doctor tells about one AI client: the commands that run it and how its API
// traffic reaches observer-proxy.
type clientInfo struct {
	bins  []string
	proxy string // how to point it at the proxy; %s is the proxy's address
}

// clientInfos is keyed by the client name the readers and the proxy record.
var clientInfos = map[string]clientInfo{
	"claude-code": {[]string{"claude"}, "ANTHROPIC_BASE_URL=http://%s"},
	"codex":       {[]string{"codex"}, `-c 'model_providers.observer={name="observer",base_url="http://%s/v1",env_key="OPENAI_API_KEY",wire_api="responses"}' -c model_provider=observer`},
	"gemini-cli":  {[]string{"gemini"}, "GOOGLE_GEMINI_BASE_URL=http://%s (with an API-key login)"},
	"qwen-code":   {[]string{"qwen"}, "OPENAI_BASE_URL=http://%s/v1 (OpenAI-compatible provider)"},
	"pi":          {[]string{"pi"}, `a provider with "baseUrl": "http://%s/v1" in ~/.pi/agent/models.json`},
	"opencode":    {[]string{"opencode"}, `a provider with "options": {"baseURL": "http://%s/v1"} in opencode.json`},
	"kilo":        {[]string{"kilo", "kilocode"}, `a provider with "options": {"baseURL": "http://%s/v1"} in its config`},
	"cline":       {[]string{"cline"}, "cline auth -p openai-compatible -b http://%s/v1 ..."},
	"crush":       {[]string{"crush"}, `a provider with "type": "openai-compat", "base_url": "http://%s/v1" in crush.json`},
}

// doctorClients reports, for each client observer reads, whether it is installed and whether its
// records are where the reader looks (so observer-watch and `observerctl scan` capture them), and
// how to meter its API traffic through the proxy. A client installed without records is a warning
// (a custom data directory, or not used yet); one neither installed nor recorded is skipped.
func doctorClients(cfg config.Config, add func(name, status, detail, fix string)) {
	for _, ad := range readers.All() {
		name := ad.Client()
		info := clientInfos[name]
		bin := ""
		for _, b := range info.bins {
			if p, err := exec.LookPath(b); err == nil {
				bin = p
				break
			}
		}
		srcs, err := ad.Discover()
		proxy := ""
		if info.proxy != "" {
			proxy = "; meter its API calls: " + fmt.Sprintf(info.proxy, cfg.Proxy.Addr)
		}
		check := "client:" + name
		switch {
		case err != nil:
			add(check, checkWarn, fmt.Sprintf("its records cannot be listed: %v", err), "check the directory's permissions")
		case len(srcs) > 0:
			where := "installed at " + bin
			if bin == "" {
				where = "not on PATH"
			}
			add(check, checkOK, fmt.Sprintf("%d record file(s) read by observer-watch and `observerctl scan` (%s)%s", len(srcs), where, proxy), "")
		case bin != "":
			add(check, checkWarn, fmt.Sprintf("installed at %s, but no records where observer looks", bin),
				"run it once; if it keeps its data elsewhere, see the README's client table for the variable that points observer there"+proxy)
		}
	}
}
