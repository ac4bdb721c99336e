package readers

import (
	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/amp"
	"github.com/observerhq/observer/pkg/transcript/antigravity"
	"github.com/observerhq/observer/pkg/transcript/auggie"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/cline"
	"github.com/observerhq/observer/pkg/transcript/codebuff"
	"github.com/observerhq/observer/pkg/transcript/codex"
	"github.com/observerhq/observer/pkg/transcript/continuecli"
	"github.com/observerhq/observer/pkg/transcript/copilot"
	"github.com/observerhq/observer/pkg/transcript/cortex"
	"github.com/observerhq/observer/pkg/transcript/crush"
	"github.com/observerhq/observer/pkg/transcript/cursor"
	"github.com/observerhq/observer/pkg/transcript/cursoragent"
	"github.com/observerhq/observer/pkg/transcript/deepseektui"
	"github.com/observerhq/observer/pkg/transcript/devin"
	"github.com/observerhq/observer/pkg/transcript/droid"
	"github.com/observerhq/observer/pkg/transcript/forge"
	"github.com/observerhq/observer/pkg/transcript/gemini"
	"github.com/observerhq/observer/pkg/transcript/goose"
	"github.com/observerhq/observer/pkg/transcript/gptme"
	"github.com/observerhq/observer/pkg/transcript/grokbuild"
	"github.com/observerhq/observer/pkg/transcript/hermes"
	"github.com/observerhq/observer/pkg/transcript/iflow"
	"github.com/observerhq/observer/pkg/transcript/kimi"
	"github.com/observerhq/observer/pkg/transcript/kiro"
	"github.com/observerhq/observer/pkg/transcript/mistralvibe"
	"github.com/observerhq/observer/pkg/transcript/openclaude"
	"github.com/observerhq/observer/pkg/transcript/openclaw"
	"github.com/observerhq/observer/pkg/transcript/opencode"
	"github.com/observerhq/observer/pkg/transcript/openhands"
	"github.com/observerhq/observer/pkg/transcript/pi"
	"github.com/observerhq/observer/pkg/transcript/qoder"
	"github.com/observerhq/observer/pkg/transcript/trae"
	"github.com/observerhq/observer/pkg/transcript/vscopilot"
	"github.com/observerhq/observer/pkg/transcript/warp"
	"github.com/observerhq/observer/pkg/transcript/windsurf"
	"github.com/observerhq/observer/pkg/transcript/zcode"
	"github.com/observerhq/observer/pkg/transcript/zed"
)

// registry opens each client's reader on its default locations, by the client's name: one line
// per client of pkg/client's registry, which says everything else about it.
var registry = map[string]func() transcript.Adapter{
	client.ClaudeCode:    func() transcript.Adapter { return claudecode.New(claudecode.DefaultRoots()) },
	client.Codex:         func() transcript.Adapter { return codex.New(codex.DefaultHome()) },
	client.GeminiCLI:     func() transcript.Adapter { return gemini.New(gemini.DefaultRoots()) },
	client.QwenCode:      func() transcript.Adapter { return gemini.NewQwen(gemini.DefaultQwenRoots()) },
	client.Pi:            func() transcript.Adapter { return pi.New(pi.DefaultRoots()) },
	client.OpenCode:      func() transcript.Adapter { return opencode.New(opencode.DefaultDirs()) },
	client.Kilo:          func() transcript.Adapter { return opencode.NewKilo(opencode.DefaultKiloDirs()) },
	client.Cline:         func() transcript.Adapter { return cline.New(cline.DefaultRoots()) },
	client.ClineVSCode:   func() transcript.Adapter { return cline.NewVSCode(client.ClineVSCode, cline.DefaultGlobalStorage()) },
	client.RooCode:       func() transcript.Adapter { return cline.NewVSCode(client.RooCode, cline.DefaultGlobalStorage()) },
	client.KiloCode:      func() transcript.Adapter { return cline.NewVSCode(client.KiloCode, cline.DefaultGlobalStorage()) },
	client.Crush:         func() transcript.Adapter { return crush.New(crush.DefaultDirs()) },
	client.CopilotCLI:    func() transcript.Adapter { return copilot.New(copilot.DefaultRoots()) },
	client.CopilotVSCode: func() transcript.Adapter { return copilot.NewVSCode(copilot.DefaultVSCodeUserDirs()) },
	client.Goose:         func() transcript.Adapter { return goose.New(goose.DefaultRoots()) },
	client.Cursor:        func() transcript.Adapter { return cursor.New(cursor.DefaultDirs()) },
	client.Aider:         func() transcript.Adapter { return aiderAdapter() },
	client.OpenClaw:      func() transcript.Adapter { return openclaw.NewDefault() },
	client.ContinueCLI:   func() transcript.Adapter { return continuecli.New(continuecli.DefaultRoots()) },
	client.Amp:           func() transcript.Adapter { return amp.New(amp.DefaultRoots()) },
	client.Droid:         func() transcript.Adapter { return droid.NewDefault() },
	client.CursorAgent:   func() transcript.Adapter { return cursoragent.Default() },
	client.Antigravity:   func() transcript.Adapter { return antigravity.New(antigravity.DefaultRoots()) },
	client.GrokBuild:     func() transcript.Adapter { return grokbuild.New(grokbuild.DefaultRoots()) },
	client.ZCode:         func() transcript.Adapter { return zcode.New(zcode.DefaultRoots()) },
	client.KimiCLI:       func() transcript.Adapter { return kimi.New(kimi.DefaultRoots()) },
	client.MistralVibe:   func() transcript.Adapter { return mistralvibe.New(mistralvibe.DefaultRoots()) },
	client.Codebuff:      func() transcript.Adapter { return codebuff.New(codebuff.DefaultRoots()) },
	client.Hermes:        func() transcript.Adapter { return hermes.New(hermes.DefaultRoots()) },
	client.Zed:           func() transcript.Adapter { return zed.New(zed.DefaultRoots()) },
	client.OpenHands:     func() transcript.Adapter { return openhands.New(openhands.DefaultRoots()) },
	client.Gptme:         func() transcript.Adapter { return gptme.New(gptme.DefaultRoots()) },
	client.Kiro:          func() transcript.Adapter { return kiro.New(kiro.DefaultRoots()) },
	client.Windsurf:      func() transcript.Adapter { return windsurf.New(windsurf.DefaultRoots()) },
	client.Warp:          func() transcript.Adapter { return warp.New(warp.DefaultRoots()) },
	client.Devin:         func() transcript.Adapter { return devin.New(devin.DefaultRoots()) },
	client.Trae:          func() transcript.Adapter { return trae.New(trae.DefaultRoots()) },
	client.CortexCode:    func() transcript.Adapter { return cortex.New(cortex.DefaultRoots()) },
	client.CopilotVS:     func() transcript.Adapter { return vscopilot.New(vscopilot.DefaultRoots()) },
	client.OpenClaude:    func() transcript.Adapter { return openclaude.New(openclaude.DefaultRoots()) },
	client.Auggie:        func() transcript.Adapter { return auggie.New(auggie.DefaultRoots()) },
	client.IFlowCLI:      func() transcript.Adapter { return iflow.New(iflow.DefaultRoots()) },
	client.Qoder:         func() transcript.Adapter { return qoder.New(qoder.DefaultRoots()) },
	client.DeepSeekTUI:   func() transcript.Adapter { return deepseektui.New(deepseektui.DefaultRoots()) },
	client.Forge:         func() transcript.Adapter { return forge.New(forge.DefaultRoots()) },
}
