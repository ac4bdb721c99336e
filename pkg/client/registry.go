package client

import "github.com/observerhq/observer/pkg/event"

// The clients' names: the only place each is typed.
const (
	ClaudeCode    = "claude-code"
	Codex         = "codex"
	GeminiCLI     = "gemini-cli"
	QwenCode      = "qwen-code"
	Pi            = "pi"
	OpenCode      = "opencode"
	Kilo          = "kilo" // Kilo CLI
	Cline         = "cline"
	ClineVSCode   = "cline-vscode"
	RooCode       = "roo-code"
	KiloCode      = "kilo-code"
	Crush         = "crush"
	CopilotCLI    = "copilot-cli"
	CopilotVSCode = "copilot-vscode"
	Goose         = "goose"
	Cursor        = "cursor"
	Aider         = "aider"
	OpenClaw      = "openclaw"
	ContinueCLI   = "continue-cli"
	Amp           = "amp"
	Droid         = "droid"
	CursorAgent   = "cursor-agent"
	Antigravity   = "antigravity"
	GrokBuild     = "grok-build"
	ZCode         = "zcode"
	KimiCLI       = "kimi-cli"
	MistralVibe   = "mistral-vibe"
	Codebuff      = "codebuff"
	Hermes        = "hermes"
	Zed           = "zed"
	OpenHands     = "openhands"
	Gptme         = "gptme"
	Kiro          = "kiro"
	Windsurf      = "windsurf"
	Warp          = "warp"
	Devin         = "devin"
	Trae          = "trae"
	CortexCode    = "cortex-code"
	CopilotVS     = "copilot-vs"
	OpenClaude    = "openclaude"
	Auggie        = "auggie"
	IFlowCLI      = "iflow-cli"
	Qoder         = "qoder"
	DeepSeekTUI   = "deepseek-tui"
	Forge         = "forge"
)

// registry is every client, one entry each, in the order listings show them. A new client is an
// entry here and its reader (a package under pkg/transcript, opened by its line in
// internal/readers/registry.go).
//
// The proxy marks are those each client sent the fake API (internal/fakeapi) unless said
// otherwise.
var registry = []Client{
	{Name: ClaudeCode, Title: "Claude Code", Product: "Claude Code", Aliases: []string{"claude"},
		Where: "~/.claude/projects (and ~/.config/claude/projects), or every directory in CLAUDE_CONFIG_DIR",
		Bins:  []string{"claude"}, Proxy: "ANTHROPIC_BASE_URL=http://%s",
		// X-Claude-Code-Session-Id; User-Agent claude-cli/2.1.197 (external, sdk-cli).
		Marks: []Mark{{Header: "X-Claude-Code-Session-Id"}, {Prefix: "claude-cli"}, {Contains: "claude-code"}},
		// Its transcripts log streaming placeholders.
		Usage: event.ReliabilityUnreliable, MCPNames: []string{"claude-code"}},
	{Name: Codex, Title: "Codex", Product: "Codex",
		Where: "$CODEX_HOME (default ~/.codex) sessions and archived_sessions",
		Bins:  []string{"codex"},
		Proxy: `-c 'model_providers.observer={name="observer",base_url="http://%s/v1",env_key="OPENAI_API_KEY",wire_api="responses"}' -c model_provider=observer`,
		// originator codex_exec; User-Agent codex_exec/0.171.0 (...).
		Marks:    []Mark{{Header: "Originator", Prefix: "codex"}, {Prefix: "codex"}},
		MCPNames: []string{"codex"}}, // codex-mcp-client
	{Name: GeminiCLI, Title: "Gemini CLI", Product: "Gemini CLI", Aliases: []string{"gemini"},
		Where: "~/.gemini/tmp/*/chats (and ~/.cache/.gemini, macOS's sandbox), or $GEMINI_CLI_HOME/.gemini",
		Bins:  []string{"gemini"}, Proxy: "GOOGLE_GEMINI_BASE_URL=http://%s (with an API-key login)",
		// User-Agent GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal)
		// (GeminiCLI[-<surface>]/<version>/<model> ...), x-goog-api-client google-genai-sdk/...
		Marks: []Mark{{Prefix: "geminicli"}},
		Shell: []Tool{{"run_shell_command", "command"}}},
	{Name: QwenCode, Title: "Qwen Code", Product: "Qwen Code", Aliases: []string{"qwen"},
		Where: "~/.qwen (or $QWEN_HOME, and $QWEN_RUNTIME_DIR) projects/*/chats and tmp/*/chats",
		Bins:  []string{"qwen"}, Proxy: "OPENAI_BASE_URL=http://%s/v1 (OpenAI-compatible provider)",
		Marks: []Mark{{Prefix: "qwencode/"}}, // User-Agent QwenCode/0.24.4 (linux; x64)
		Shell: []Tool{{"run_shell_command", "command"}}},
	// Pi 0.73.1 sends only the OpenAI SDK's own marks (User-Agent OpenAI/JS 6.26.0, x-stainless-*):
	// the proxy names it unknown (the writer names such a turn pi when Pi's record of the same
	// response id links it to its session: see pkg/store/write.go).
	{Name: Pi, Title: "Pi", Product: "Pi",
		Where: "~/.pi/agent/sessions (or $PI_CODING_AGENT_DIR/sessions, and $PI_CODING_AGENT_SESSION_DIR)",
		Bins:  []string{"pi"}, Proxy: `a provider with "baseUrl": "http://%s/v1" in ~/.pi/agent/models.json`,
		Shell: []Tool{{"bash", "command"}}},
	{Name: OpenCode, Title: "OpenCode", Product: "OpenCode",
		Where: "its SQLite database $XDG_DATA_HOME/opencode/opencode.db ($XDG_DATA_HOME defaults to ~/.local/share), read read-only",
		Bins:  []string{"opencode"}, Proxy: `a provider with "options": {"baseURL": "http://%s/v1"} in opencode.json`,
		// User-Agent opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14, X-Session-Id ses_...
		Marks: []Mark{{Contains: "opencode"}},
		Shell: []Tool{{"bash", "command"}}},
	{Name: Kilo, Title: "Kilo CLI", Product: "Kilo", ForkOf: OpenCode,
		Where: "its SQLite database $XDG_DATA_HOME/kilo/kilo.db, read read-only",
		Bins:  []string{"kilo", "kilocode"}, Proxy: `a provider with "options": {"baseURL": "http://%s/v1"} in its config`,
		// User-Agent Kilo-Code/7.7.7 ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14, X-Title Kilo Code,
		// HTTP-Referer https://kilocode.ai, X-Session-Id ses_...
		Marks: []Mark{{Prefix: "kilo-code/"}, {Header: "X-Title", Value: "Kilo Code"}},
		Shell: []Tool{{"bash", "command"}}},
	{Name: Cline, Title: "Cline CLI", Product: "Cline",
		Where: "~/.cline/data/sessions (or $CLINE_SESSION_DATA_DIR, $CLINE_DATA_DIR/sessions, $CLINE_DIR/data/sessions)",
		Bins:  []string{"cline"}, Proxy: "cline auth -p openai-compatible -b http://%s/v1 ...",
		// User-Agent ai-sdk/openai-compatible/3.0.37 ai-sdk/provider-utils/5.0.30 runtime/bun/1.3.13
		// (Cline 3.0.65's OpenAI-compatible provider; the bare AI SDK agent, which other apps built
		// on the AI SDK may send too).
		Marks: []Mark{{Prefix: "ai-sdk/openai-compatible/"}},
		Shell: []Tool{{"run_commands", "commands"}, {"execute_command", "command"}}}, // execute_command: older versions
	{Name: ClineVSCode, Title: "Cline (VS Code)", Product: "Cline", Where: vscodeTasks},
	{Name: RooCode, Title: "Roo Code", Product: "Roo Code", Aliases: []string{"roo"}, Where: vscodeTasks},
	{Name: KiloCode, Title: "Kilo Code", Product: "Kilo Code", Where: vscodeTasks},
	{Name: Crush, Title: "Crush", Product: "Crush",
		Where: "the crush.db of every project its projects.json lists (in $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, " +
			"else ~/.local/share/crush; a project's database is <project>/.crush/crush.db by default), read read-only; " +
			"or the directories in $OBSERVER_CRUSH_DIRS",
		Bins: []string{"crush"}, Proxy: `a provider with "type": "openai-compat", "base_url": "http://%s/v1" in crush.json`,
		// User-Agent Charm-Crush/<version> (https://charm.land/crush): the agent's requests in
		// Crush's public source (internal/agent); not seen through the fake API (Crush cannot be
		// installed offline); no session id.
		Marks: []Mark{{Prefix: "charm-crush/"}}},
	// Copilot CLI 1.0.102 with a custom provider (BYOK; COPILOT_OFFLINE=1 runs it without a GitHub
	// sign-in) sends User-Agent OpenAI/JS 5.20.1 and Copilot's X-Interaction-Type and X-Initiator
	// headers, and no session: its records keep each call's response id, which links the turn.
	{Name: CopilotCLI, Title: "GitHub Copilot CLI", Product: "Copilot", Aliases: []string{"copilot"},
		Where: "~/.copilot/session-state (or $COPILOT_HOME)",
		Bins:  []string{"copilot"}, Proxy: "COPILOT_PROVIDER_BASE_URL=http://%s/v1 COPILOT_PROVIDER_API_KEY=... COPILOT_MODEL=... (a custom provider)",
		Marks: []Mark{{Header: "X-Interaction-Type"}}},
	{Name: CopilotVSCode, Title: "VS Code Copilot Chat", Product: "Copilot",
		Where: "each editor's User/workspaceStorage/*/chatSessions and globalStorage/emptyWindowChatSessions " +
			"(or the User directories in $OBSERVER_VSCODE_USER_DIRS)",
		Bins: []string{"code", "code-insiders", "codium"}},
	{Name: Goose, Title: "Goose", Product: "Goose",
		Where: "~/.local/share/goose/sessions (sessions.db, and older *.jsonl; $GOOSE_PATH_ROOT, $XDG_DATA_HOME)",
		Bins:  []string{"goose"}, Proxy: "its provider's host setting pointing at http://%s (not tested)"},
	{Name: Cursor, Title: "Cursor", Product: "Cursor",
		Where:    "~/.config/Cursor/User/globalStorage/state.vscdb (macOS: ~/Library/Application Support/Cursor/User), read read-only",
		Bins:     []string{"cursor"},
		MCPNames: []string{"cursor"}}, // cursor-vscode
	{Name: Aider, Title: "Aider", Product: "Aider",
		Where: ".aider.chat.history.md in every project observer already knows, in the directories of " +
			"$OBSERVER_AIDER_DIRS, and $AIDER_CHAT_HISTORY_FILE",
		Bins: []string{"aider"}, Proxy: "--openai-api-base http://%s/v1 (not tested)"},
	{Name: OpenClaw, Title: "OpenClaw", Product: "OpenClaw",
		Where: "each agent's openclaw-agent.sqlite under ~/.openclaw/agents (and older sessions/*.jsonl; " +
			"$OPENCLAW_STATE_DIR, $OPENCLAW_HOME, $OPENCLAW_AGENT_DIR, profiles ~/.openclaw-*), read read-only",
		Bins:  []string{"openclaw"},
		Proxy: `a provider with "baseUrl": "http://%s/v1" under models.providers in ~/.openclaw/openclaw.json`,
		Shell: []Tool{{"exec", "command"}}},
	// Continue's CLI 1.5.47 sends only the OpenAI SDK's marks (User-Agent ls/JS 5.23.2: the SDK's
	// class name as its bundle minified it, no mark to rely on) and no session: the proxy names
	// it unknown, and the writer names such a turn continue-cli when a message of its record
	// carries the same model and figures (see pkg/store/write.go).
	{Name: ContinueCLI, Title: "Continue CLI", Product: "Continue", Aliases: []string{"continue", "cn"},
		Where: "~/.continue/sessions (or $CONTINUE_GLOBAL_DIR/sessions)",
		Bins:  []string{"cn"}, Proxy: `a model with "apiBase: http://%s/v1" in ~/.continue/config.yaml`,
		Shell: []Tool{{"Bash", "command"}}},
	// Amp's traffic goes to Amp's own servers: no proxy recipe. Its CLI stopped keeping threads on
	// disk in 2026-03; the threads it wrote before are read.
	{Name: Amp, Title: "Amp", Product: "Amp",
		Where: "~/.local/share/amp/threads (or $XDG_DATA_HOME/amp/threads; the same on macOS), the threads Amp kept until 2026-03",
		Bins:  []string{"amp"}},
	// Droid 0.225.2 sends User-Agent factory-cli/0.225.2 and the OpenAI SDK's marks, and no
	// session: the writer joins its turns to the usage lines of Droid's log by model, time and
	// figures (see pkg/transcript/droid).
	{Name: Droid, Title: "Factory Droid", Product: "Droid", Aliases: []string{"factory"},
		Where: "~/.factory (or $FACTORY_HOME_OVERRIDE/.factory; the same on macOS): sessions/*/*.jsonl, and the usage in logs/droid-log*.log (or $FACTORY_LOG_FILE)",
		Bins:  []string{"droid"}, Proxy: `a custom model with "baseUrl": "http://%s/v1" in ~/.factory/settings.json`,
		Marks: []Mark{{Prefix: "factory-cli/"}},
		Shell: []Tool{{"Execute", "command"}}},
	// Cursor's agent (the editor's Agent pane and the cursor-agent CLI) talks to Cursor's servers:
	// no proxy recipe. By default only the CLI's conversations are read: the editor's are the
	// chats the cursor reader reads from state.vscdb (see pkg/transcript/cursoragent).
	{Name: CursorAgent, Title: "Cursor Agent (CLI)", Product: "Cursor", Aliases: []string{"cursor-cli"},
		Where: "~/.cursor/projects/*/agent-transcripts (or $CURSOR_DATA_DIR/projects; the same on macOS): cursor-agent's conversations, those with a chat under ~/.cursor/chats ($CURSOR_CONFIG_DIR/chats)",
		Bins:  []string{"cursor-agent"}},
	// Antigravity (IDE and CLI), Grok Build and ZCode talk to their makers' own endpoints with
	// their own sign-in: no proxy recipe.
	{Name: Antigravity, Title: "Antigravity", Product: "Antigravity", Aliases: []string{"agy"},
		Where: "~/.gemini/antigravity-cli, ~/.gemini/antigravity and ~/.gemini/antigravity-ide brain/*/.system_generated/logs/transcript.jsonl (the same on macOS; or the directories in $OBSERVER_ANTIGRAVITY_DIRS)",
		Bins:  []string{"antigravity", "agy"}},
	{Name: GrokBuild, Title: "Grok Build", Product: "Grok", Aliases: []string{"grok"},
		Where: "$GROK_HOME/sessions (default ~/.grok/sessions; the same on macOS): */<session>/updates.jsonl and its subagents",
		Bins:  []string{"grok"}},
	{Name: ZCode, Title: "ZCode", Product: "ZCode",
		Where: "its SQLite database ~/.zcode/cli/db/db.sqlite (the same on macOS; or the directories in $OBSERVER_ZCODE_DIRS), read read-only",
		Bins:  []string{"zcode"}},
	// Kimi CLI and Mistral Vibe: the marks are those their published source sends (User-Agent
	// KimiCLI/<version> on its kimi provider; Mistral-Vibe/<version>), not seen through the fake
	// API (neither is on npm); their base-URL settings are not tested.
	{Name: KimiCLI, Title: "Kimi CLI", Product: "Kimi", Aliases: []string{"kimi"},
		Where: "~/.kimi/sessions/<workdir hash>/<session>/wire.jsonl and its subagents (or $KIMI_SHARE_DIR/sessions; the same on macOS)",
		Bins:  []string{"kimi", "kimi-cli"}, Proxy: "KIMI_BASE_URL=http://%s/v1 (not tested)",
		Marks: []Mark{{Prefix: "kimicli/"}}},
	{Name: MistralVibe, Title: "Mistral Vibe", Product: "Mistral Vibe", Aliases: []string{"vibe"},
		Where: "~/.vibe/logs/session (or $VIBE_HOME/logs/session, or [session_logging] save_dir in its config.toml; the same on macOS)",
		Bins:  []string{"vibe", "vibe-acp"}, Proxy: `a provider with api_base = "http://%s/v1" in $VIBE_HOME/config.toml (not tested)`,
		Marks: []Mark{{Contains: "mistral-vibe/"}}},
	// Codebuff talks to its own servers: no proxy recipe.
	{Name: Codebuff, Title: "Codebuff", Product: "Codebuff", Aliases: []string{"manicode", "freebuff"},
		Where: "~/.config/manicode (-dev, -staging)/projects/*/chats/*/chat-messages.json (the same on macOS; or $CODEBUFF_DATA_DIR)",
		Bins:  []string{"codebuff", "freebuff"}},
	{Name: Hermes, Title: "Hermes Agent", Product: "Hermes", Aliases: []string{"hermes-agent"},
		Where: "its SQLite database ~/.hermes/state.db and profiles/*/state.db (or $HERMES_HOME; the same on macOS), read read-only",
		Bins:  []string{"hermes"}, Proxy: "a custom endpoint, model.base_url: http://%s/v1 in ~/.hermes/config.yaml (not tested)"},
	// Zed, OpenHands and gptme: base-URL settings from their published sources, not tested.
	{Name: Zed, Title: "Zed Agent", Product: "Zed",
		Where: "its SQLite database ~/.local/share/zed/threads/threads.db ($XDG_DATA_HOME/zed, $FLATPAK_XDG_DATA_HOME/zed; macOS ~/Library/Application Support/Zed/threads), read read-only",
		Bins:  []string{"zed", "zeditor"}, Proxy: `a provider's "api_url": "http://%s" under language_models in Zed's settings.json (not tested; not Zed's hosted models)`},
	{Name: OpenHands, Title: "OpenHands CLI", Product: "OpenHands",
		Where: "~/.openhands/conversations (or $OPENHANDS_CONVERSATIONS_DIR, $OPENHANDS_PERSISTENCE_DIR/conversations; the same on macOS): each conversation's events/ and base_state.json",
		Bins:  []string{"openhands"}, Proxy: "LLM_BASE_URL=http://%s/v1 with --override-with-envs (not tested)"},
	{Name: Gptme, Title: "gptme", Product: "gptme",
		Where: "~/.local/share/gptme/logs/*/conversation.jsonl (or $GPTME_LOGS_HOME, $XDG_DATA_HOME/gptme/logs; macOS ~/Library/Application Support/gptme/logs)",
		Bins:  []string{"gptme"}, Proxy: "OPENAI_BASE_URL=http://%s/v1 with a local/<model> model (not tested)"},
	// Kiro, Windsurf, Warp, Devin, Cortex Code, Visual Studio's Copilot and Auggie talk to their
	// makers' services: no proxy recipe.
	{Name: Kiro, Title: "Kiro", Product: "Kiro", Aliases: []string{"kiro-cli", "kiro-ide", "amazon-q"},
		Where: "~/.kiro (or $KIRO_HOME; the same on macOS) sessions/cli and sessions/<workspace>/<id>/messages.jsonl, and the CLI's database " +
			"$XDG_DATA_HOME/kiro-cli/data.sqlite3 (default ~/.local/share; macOS ~/Library/Application Support/kiro-cli; amazon-q beside it), read read-only",
		Bins: []string{"kiro-cli", "kiro", "q"}},
	{Name: Windsurf, Title: "Windsurf", Product: "Windsurf",
		Where: "~/.windsurf/transcripts (the same on macOS; or the directories in $OBSERVER_WINDSURF_DIRS): the transcripts of its " +
			"post_cascade_response_with_transcript hook, written only when that hook is configured; its Cascade store is encrypted and not read",
		Bins: []string{"windsurf"}},
	{Name: Warp, Title: "Warp", Product: "Warp",
		Where: "its SQLite database ~/.local/state/warp-terminal/warp.sqlite ($XDG_STATE_HOME; macOS ~/Library/Group Containers/2BBY89MBSN.dev.warp/" +
			"Library/Application Support/dev.warp.Warp-Stable; or the directories in $OBSERVER_WARP_DIRS), read read-only",
		Bins: []string{"warp-terminal", "warp"}},
	{Name: Devin, Title: "Devin CLI", Product: "Devin",
		Where: "its SQLite database ~/.local/share/devin/cli/sessions.db ($XDG_DATA_HOME; macOS ~/Library/Application Support/devin/cli; " +
			"or the directories in $OBSERVER_DEVIN_DIRS), read read-only",
		Bins: []string{"devin"}},
	// TRAE CLI 2.0 keeps Codex's rollout format; trae-agent writes trajectories where it runs.
	{Name: Trae, Title: "Trae (TRAE CLI, trae-agent)", Product: "Trae", Aliases: []string{"traex", "trae-agent"},
		Where: "~/.trae/cli sessions and archived_sessions (the same on macOS), and trae-agent's trajectories in the directories of $OBSERVER_TRAE_DIRS",
		Bins:  []string{"traex", "traecli", "trae-cli"}, Proxy: "trae-agent: its provider's base_url: http://%s/v1 in trae_config.yaml (not tested)"},
	{Name: CortexCode, Title: "Cortex Code", Product: "Snowflake Cortex Code", Aliases: []string{"cortex", "coco"},
		Where: "~/.snowflake/cortex/conversations (or $SNOWFLAKE_HOME/cortex/conversations; the same on macOS)",
		Bins:  []string{"cortex"}},
	{Name: CopilotVS, Title: "GitHub Copilot (Visual Studio)", Product: "Copilot",
		Where: `<temp>\VSGitHubCopilotLogs\traces on Windows (%TMP%, %TEMP%, %LOCALAPPDATA%\Temp); elsewhere only the directories in $OBSERVER_COPILOT_VS_DIRS`,
		Bins:  []string{"devenv"}},
	// OpenClaude (Claude Code's fork for OpenAI-compatible models) keeps Claude Code's transcripts
	// under its own directory, and the same streaming placeholders.
	{Name: OpenClaude, Title: "OpenClaude", Product: "OpenClaude",
		Where: "~/.openclaude/projects (or $OPENCLAUDE_CONFIG_DIR/projects; the same on macOS)",
		Bins:  []string{"openclaude"}, Proxy: "CLAUDE_CODE_USE_OPENAI=1 OPENAI_BASE_URL=http://%s/v1 (not tested)",
		Usage: event.ReliabilityUnreliable},
	{Name: Auggie, Title: "Auggie", Product: "Augment Code", Aliases: []string{"augment"},
		Where: "~/.augment/sessions (the same on macOS), or sessions/ of each directory in $OBSERVER_AUGGIE_DIRS (Auggie's --augment-cache-dir)",
		Bins:  []string{"auggie"}},
	// iFlow CLI shut down on 2026-04-17: its sessions are history.
	{Name: IFlowCLI, Title: "iFlow CLI", Product: "iFlow", Aliases: []string{"iflow"},
		Where: "~/.iflow/projects/<cwd>/session-*.jsonl (the same on macOS; or the directories in $OBSERVER_IFLOW_DIRS)",
		Bins:  []string{"iflow"}, Proxy: `a "baseUrl": "http://%s/v1" in ~/.iflow/settings.json (not tested)`},
	{Name: Qoder, Title: "Qoder CLI", Product: "Qoder", Aliases: []string{"qodercli", "qoder-cli"},
		Where: "~/.qoder/projects and ~/.qoder-cn/projects (or $QODER_CONFIG_DIR/projects, or the directories in $OBSERVER_QODER_DIRS; the same on macOS)",
		Bins:  []string{"qodercli"}},
	{Name: DeepSeekTUI, Title: "DeepSeek TUI (CodeWhale)", Product: "DeepSeek TUI", Aliases: []string{"codewhale", "deepseek"},
		Where: "~/.codewhale/sessions and ~/.deepseek/sessions (or $CODEWHALE_HOME/sessions; the same on macOS)",
		Bins:  []string{"deepseek-tui", "codewhale", "codewhale-tui", "deepseek"}, Proxy: "DEEPSEEK_BASE_URL=http://%s/v1 (not tested)"},
	// Forge's command is forge, as Foundry's is: doctor does not take a forge on PATH for it.
	{Name: Forge, Title: "Forge", Product: "ForgeCode", Aliases: []string{"forgecode"},
		Where: "its SQLite database .forge.db in $FORGE_CONFIG, else ~/forge, else ~/.forge (the same on macOS), read read-only",
		Proxy: "its provider's base URL pointing at http://%s/v1 (not tested)"},
}

// vscodeTasks is where the Cline, Roo Code and Kilo Code VS Code extensions' tasks are read.
const vscodeTasks = "the extension's tasks under each editor's User/globalStorage (Code, Code - Insiders, VSCodium, " +
	"Cursor, Windsurf), or under the directories in $OBSERVER_VSCODE_GLOBALSTORAGE"
