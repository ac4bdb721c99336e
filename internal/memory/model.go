package memory

// Language-model summaries ([memory] model), off by default.
//
// A ModelClient is offered each extractive summary the memory loop saves (Memory.Model). Before
// anything leaves the machine it checks, in this order, and stops at the first that says no:
//
//  1. a model is configured (with none, ModelFromConfig builds nothing and no request is made);
//  2. the epoch grew enough since its last model call: MinNewBytes bytes of new records
//     (targets, errors and tool output sizes of its actions) and MinNewText bytes of new
//     extractive text (words of Summary.Text not in the text of the last call). The figures of
//     the last call are kept per session epoch in memory_model_state;
//  3. the daily cap: what today's (local day) api_turns of client "observer" cost, plus the calls
//     made but not stored yet (memory_model_calls), plus this call's worst case (the request's
//     bytes/2 as input tokens and MaxOutputTokens as output, at the model's price) must stay
//     within DailyCapUSD. A model without a known price is never called: the cap could not hold.
//
// The request holds the extractive summary and the epoch's prompts, scrubbed with scrub.String as
// a whole (Prompt returns it as sent, for a dry run). It goes straight to the provider's upstream
// the proxy forwards to (not through the proxy, which would count it twice), with the API key
// from the environment. The answer is stored as the epoch's session_summaries row of source
// 'model' (its model and cost set). Every call the upstream answered, with an error too, is
// published as an api_turn of client "observer", with no session (the turn is not the agent's),
// the summarized session's project, and the provider's usage priced as the proxy prices a turn, so
// that its cost shows as any other. A failed call is tried again only after failureBackoff, and
// only when the epoch is offered again (it got more records).
//
// Both tables are created when the path is first used (store.EnsureModelTables), on the writer's
// connection: they are the model path's own bookkeeping and exist only where it was turned on.

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/scrub"
	"github.com/observerhq/observer/pkg/store"
)

// Providers a ModelClient calls.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// ModelTurnClient is the client of the api_turn events the model calls are recorded as.
const ModelTurnClient = "observer"

// modelTurnSource is the component named in those events: the writer runs the memory loop.
const modelTurnSource = "observer-writer"

// Endpoints, as recorded in the api_turn.
const (
	anthropicEndpoint = "/v1/messages"
	openAIEndpoint    = "/v1/chat/completions"
)

// failureBackoff is how long no call is tried after one failed (an upstream error, no key, no
// price), so that a wrong setting gives a warning per few minutes, not one per summary.
const failureBackoff = 5 * time.Minute

// Bounds of what a request carries and what an answer may be.
const (
	promptClip     = 1200 // bytes of one prompt
	promptsHead    = 6    // with more than promptsHead+promptsTail prompts, the first ones...
	promptsTail    = 6    // ...and the last ones are sent
	maxAnswerBytes = 8000 // of the model's text, stored
	maxResponse    = 4 << 20
)

// Pricer prices one request (a *prices.Follower and a *pricing.Table are ones).
type Pricer interface {
	Quote(model string, tok event.Tokens, at time.Time) (usd float64, approximate, known bool)
}

// ModelClient writes language-model summaries of session epochs: the ModelSummarizer of
// [memory] model. Build it with ModelFromConfig, then set DB, Prices and Publish. Its methods are
// safe for concurrent use.
type ModelClient struct {
	Provider  string // ProviderAnthropic or ProviderOpenAI
	Model     string
	Upstream  string // base URL the endpoint is joined to: [proxy] anthropic_upstream or openai_upstream
	APIKeyEnv string // the environment variable holding the API key

	MinNewBytes     int64
	MinNewText      int64
	DailyCapUSD     float64
	MaxOutputTokens int64

	// DB is the writer's connection: the gate state, the calls and the 'model' summaries are
	// written there. Read, when set, is where the epoch's records are read (nil: DB).
	DB, Read *sql.DB
	// Prices prices the calls, the worst case before and the usage after.
	Prices Pricer
	// Publish sends the api_turn of each call (the writer's bus client). Nil: not published,
	// still counted against the cap.
	Publish func(ctx context.Context, ev *event.Event) error
	// HTTP makes the calls; nil is a client with a two-minute timeout.
	HTTP   *http.Client
	Logger *slog.Logger
	Now    func() time.Time

	mu       sync.Mutex
	ready    bool      // the tables exist
	backoff  time.Time // no call before then
	capNoted string    // the day the cap was last reported
}

// ModelFromConfig returns the summarizer [memory] asks for, with its upstream from [proxy], or nil
// when [memory] model is empty: then nothing is built and nothing is ever sent.
func ModelFromConfig(cfg config.Config) *ModelClient {
	m := cfg.Memory
	if strings.TrimSpace(m.Model) == "" {
		return nil
	}
	c := &ModelClient{Provider: m.Provider, Model: strings.TrimSpace(m.Model), APIKeyEnv: m.APIKeyEnv,
		MinNewBytes: m.MinNewBytes, MinNewText: m.MinNewText, DailyCapUSD: m.DailyCapUSD, MaxOutputTokens: m.MaxOutputTokens}
	if c.Provider == "" {
		c.Provider = ProviderAnthropic
	}
	c.Upstream = cfg.Proxy.AnthropicUpstream
	if c.Provider == ProviderOpenAI {
		c.Upstream = cfg.Proxy.OpenAIUpstream
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = DefaultKeyEnv(c.Provider)
	}
	return c
}

// DefaultKeyEnv is the variable the provider's own tools read the API key from.
func DefaultKeyEnv(provider string) string {
	if provider == ProviderOpenAI {
		return "OPENAI_API_KEY"
	}
	return "ANTHROPIC_API_KEY"
}

func (c *ModelClient) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *ModelClient) read() *sql.DB {
	if c.Read != nil {
		return c.Read
	}
	return c.DB
}

func (c *ModelClient) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// ModelRequest is what Consider sends for one summary, the API key aside.
type ModelRequest struct {
	URL      string
	Provider string
	Model    string
	// System and User are the instructions and the message, scrubbed, as they are in Body.
	System, User string
	Body         []byte
}

// Prompt returns the prompt Consider would send for s, exactly as it goes into the request:
// the instructions, a blank line, then the message (the extractive facts and the epoch's prompts,
// scrubbed). It makes no call and writes nothing; only Read (or DB) is used, so a command can
// show it with a ModelClient{Read: db} even when no model is configured.
func (c *ModelClient) Prompt(ctx context.Context, s Summary) (string, error) {
	r, err := c.Request(ctx, s)
	if err != nil {
		return "", err
	}
	return r.System + "\n\n" + r.User, nil
}

// Request builds the request Consider would send for s.
func (c *ModelClient) Request(ctx context.Context, s Summary) (ModelRequest, error) {
	user, err := c.message(ctx, s)
	if err != nil {
		return ModelRequest{}, err
	}
	r := ModelRequest{Provider: c.Provider, Model: c.Model, System: systemPrompt, User: user}
	if r.Provider == "" {
		r.Provider = ProviderAnthropic
	}
	endpoint := anthropicEndpoint
	var body any
	switch r.Provider {
	case ProviderAnthropic:
		body = map[string]any{"model": c.Model, "max_tokens": c.maxOutput(), "system": r.System,
			"messages": []map[string]string{{"role": "user", "content": r.User}}}
	case ProviderOpenAI:
		endpoint = openAIEndpoint
		body = map[string]any{"model": c.Model, "max_completion_tokens": c.maxOutput(),
			"messages": []map[string]string{{"role": "system", "content": r.System}, {"role": "user", "content": r.User}}}
	default:
		return r, fmt.Errorf("[memory] provider %q: must be anthropic or openai", r.Provider)
	}
	if r.Body, err = json.Marshal(body); err != nil {
		return r, err
	}
	if c.Upstream != "" {
		if r.URL, err = url.JoinPath(c.Upstream, endpoint); err != nil {
			return r, fmt.Errorf("upstream %q: %w", c.Upstream, err)
		}
	}
	return r, nil
}

func (c *ModelClient) maxOutput() int64 {
	if c.MaxOutputTokens > 0 {
		return c.MaxOutputTokens
	}
	return 600
}

const systemPrompt = `You write a short account of one session of an AI coding agent, for the developer who will come back to this work. Use only the facts and prompts given: name files and commands as they appear there and never invent a result. In at most 8 lines of plain text, say what the user asked for, what the agent changed and ran, what failed and whether it was fixed, and where the work stood at the end.`

// message is the user message for s: its facts and prompts, scrubbed as a whole.
func (c *ModelClient) message(ctx context.Context, s Summary) (string, error) {
	prompts, total, err := c.prompts(ctx, s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s of %s", s.SessionID, s.Client)
	if s.Project != "" {
		fmt.Fprintf(&b, " in %s", s.Project)
	}
	fmt.Fprintf(&b, ", epoch %d, %s: %d actions", s.Epoch, s.EndedBy, s.Actions)
	if s.FirstTS > 0 && s.LastTS > 0 {
		fmt.Fprintf(&b, " from %s to %s", time.UnixMilli(s.FirstTS).UTC().Format("2006-01-02 15:04"),
			time.UnixMilli(s.LastTS).UTC().Format("2006-01-02 15:04 UTC"))
	}
	b.WriteString(".\n\nFacts extracted from its records:\n")
	b.WriteString(s.Text())
	if len(prompts) > 0 {
		b.WriteString("\nThe user's prompts, in order:\n")
		for i, p := range prompts {
			if total > len(prompts) && i == promptsHead {
				fmt.Fprintf(&b, "(%d more prompts)\n", total-len(prompts))
			}
			n := i + 1
			if total > len(prompts) && i >= promptsHead {
				n = total - len(prompts) + i + 1
			}
			fmt.Fprintf(&b, "%d. %s\n", n, p)
		}
	}
	return scrub.String(b.String()), nil
}

// prompts returns the main agent's prompts of s's epoch (the first and last ones when there are
// many, each clipped and on one line) and how many there are.
func (c *ModelClient) prompts(ctx context.Context, s Summary) ([]string, int, error) {
	if s.Actions == 0 {
		return nil, 0, nil
	}
	db := c.read()
	if db == nil {
		return nil, 0, errors.New("no store to read the epoch's prompts from")
	}
	rows, err := db.QueryContext(ctx, `SELECT target FROM actions WHERE client = ? AND session_id = ? AND ts >= ? AND ts <= ?
		AND type = 'user_prompt' AND agent_id = '' AND sidechain = 0 ORDER BY ts, id`, s.Client, s.SessionID, s.FirstTS, s.LastTS)
	if err != nil {
		return nil, 0, fmt.Errorf("epoch prompts: %w", err)
	}
	defer rows.Close()
	var all []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, 0, err
		}
		if _, ok := event.CleanTitle(t); !ok {
			continue
		}
		all = append(all, clip(strings.Join(strings.Fields(t), " "), promptClip))
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(all) > promptsHead+promptsTail {
		return append(all[:promptsHead:promptsHead], all[len(all)-promptsTail:]...), len(all), nil
	}
	return all, len(all), nil
}

// Consider asks the model for an account of s's epoch when the gates and the daily cap allow
// (see the file comment), and stores it. It returns nil when a gate or the cap says no; an error
// is a call that was due but failed (no key, no price, the upstream's error).
func (c *ModelClient) Consider(ctx context.Context, s Summary) error {
	if c == nil || strings.TrimSpace(c.Model) == "" || s.Actions == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now().Before(c.backoff) {
		return nil
	}
	if err := c.ensure(ctx); err != nil {
		return err
	}
	text := s.Text()
	raw, err := c.rawBytes(ctx, s)
	if err != nil {
		return err
	}
	var lastRaw int64
	var lastText string
	err = c.DB.QueryRowContext(ctx, `SELECT raw_bytes, text FROM memory_model_state WHERE client = ? AND session_id = ? AND epoch = ?`,
		s.Client, s.SessionID, s.Epoch).Scan(&lastRaw, &lastText)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("model gate state: %w", err)
	}
	newBytes, newText := raw-lastRaw, newWords(lastText, text)
	if newBytes < c.MinNewBytes || newText < c.MinNewText {
		c.logger().Debug("language-model summary not due", "session", s.SessionID, "epoch", s.Epoch,
			"new_bytes", newBytes, "min_new_bytes", c.MinNewBytes, "new_text", newText, "min_new_text", c.MinNewText)
		return nil
	}

	req, err := c.Request(ctx, s)
	if err != nil {
		return err
	}
	if ok, err := c.withinCap(ctx, req); !ok || err != nil {
		if err != nil {
			c.backoff = c.now().Add(failureBackoff)
		}
		return err
	}
	key := os.Getenv(c.APIKeyEnv)
	if key == "" {
		c.backoff = c.now().Add(failureBackoff)
		return fmt.Errorf("[memory] model %s: no API key in $%s; set it in the environment observer starts in ([memory] api_key_env names the variable)",
			c.Model, c.APIKeyEnv)
	}
	start := c.now()
	answer, turn, err := c.call(ctx, req, key)
	if turn != nil {
		c.record(ctx, s, turn, start)
	}
	if err != nil {
		c.backoff = c.now().Add(failureBackoff)
		return err
	}
	model := turn.Model
	if model == "" {
		model = c.Model
	}
	if err := c.save(ctx, s, answer, model, turn.CostUSD); err != nil {
		return err
	}
	if err := store.SaveModelState(ctx, c.DB, s.Client, s.SessionID, s.Epoch, raw, text, c.now().UnixMilli()); err != nil {
		return fmt.Errorf("model gate state: %w", err)
	}
	return nil
}

// ensure creates the model path's tables on the writer's connection.
func (c *ModelClient) ensure(ctx context.Context) error {
	if c.ready {
		return nil
	}
	if c.DB == nil {
		return errors.New("language-model summaries need the writer's store")
	}
	if err := store.EnsureModelTables(ctx, c.DB); err != nil {
		return fmt.Errorf("create the language-model summary tables: %w", err)
	}
	c.ready = true
	return nil
}

// rawBytes is the size of what the epoch's actions recorded: targets, errors and tool outputs.
func (c *ModelClient) rawBytes(ctx context.Context, s Summary) (int64, error) {
	var n int64
	err := c.read().QueryRowContext(ctx, `SELECT coalesce(sum(length(CAST(target AS BLOB)) + length(CAST(error AS BLOB)) + output_size), 0)
		FROM actions WHERE client = ? AND session_id = ? AND ts >= ? AND ts <= ?`, s.Client, s.SessionID, s.FirstTS, s.LastTS).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("epoch size: %w", err)
	}
	return n, nil
}

// newWords is how many bytes of words cur has beyond those of prev (a word seen k times more
// often counts k times).
func newWords(prev, cur string) int64 {
	seen := map[string]int{}
	for _, w := range strings.Fields(prev) {
		seen[w]++
	}
	var n int64
	for _, w := range strings.Fields(cur) {
		if seen[w] > 0 {
			seen[w]--
			continue
		}
		n += int64(len(w))
	}
	return n
}

// SpentToday is what the model calls cost since local midnight: the api_turns of client
// "observer", and the calls whose turn is not stored yet.
func (c *ModelClient) SpentToday(ctx context.Context) (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spentToday(ctx)
}

func (c *ModelClient) spentToday(ctx context.Context) (float64, error) {
	if err := c.ensure(ctx); err != nil {
		return 0, err
	}
	now := c.now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location()).UnixMilli()
	var spent float64
	err := c.DB.QueryRowContext(ctx, `SELECT
		coalesce((SELECT sum(cost_usd) FROM api_turns WHERE ts >= ?1 AND client = ?2), 0) +
		coalesce((SELECT sum(m.cost_usd) FROM memory_model_calls m WHERE m.ts >= ?1
			AND NOT EXISTS (SELECT 1 FROM api_turns a WHERE a.event_id = m.event_id)), 0)`, midnight, ModelTurnClient).Scan(&spent)
	if err != nil {
		return 0, fmt.Errorf("today's model spend: %w", err)
	}
	return spent, nil
}

// withinCap reports whether req's worst case fits in what is left of today's cap.
func (c *ModelClient) withinCap(ctx context.Context, req ModelRequest) (bool, error) {
	if c.DailyCapUSD <= 0 {
		return false, nil
	}
	if c.Prices == nil {
		return false, errors.New("language-model summaries need a price table")
	}
	worst := event.Tokens{Input: int64(len(req.Body)+1) / 2, Output: c.maxOutput()}
	est, _, known := c.Prices.Quote(c.Model, worst, time.Time{})
	if !known {
		return false, fmt.Errorf("[memory] model %q has no known price, so the daily cap cannot hold: add [pricing.models.%q] or pick a priced model",
			c.Model, c.Model)
	}
	spent, err := c.spentToday(ctx)
	if err != nil {
		return false, err
	}
	if spent >= c.DailyCapUSD || spent+est > c.DailyCapUSD {
		if day := c.now().Format(time.DateOnly); c.capNoted != day {
			c.capNoted = day
			c.logger().Info("language-model summaries paused: the daily cap is reached", "spent_usd", spent,
				"next_call_worst_usd", est, "daily_cap_usd", c.DailyCapUSD)
		}
		return false, nil
	}
	return true, nil
}

// call sends req. turn is the api_turn of any call that got an answer, errors included; nil
// when the upstream could not be reached.
func (c *ModelClient) call(ctx context.Context, req ModelRequest, key string) (string, *event.APITurn, error) {
	if req.URL == "" {
		return "", nil, errors.New("no upstream for the language model: set [proxy] " + req.Provider + "_upstream")
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return "", nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("User-Agent", "observer-memory")
	endpoint := anthropicEndpoint
	if req.Provider == ProviderAnthropic {
		hr.Header.Set("X-Api-Key", key)
		hr.Header.Set("Anthropic-Version", "2023-06-01")
	} else {
		endpoint = openAIEndpoint
		hr.Header.Set("Authorization", "Bearer "+key)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	start := c.now()
	resp, err := hc.Do(hr)
	if err != nil {
		// The URL as configured, not the error's own copy of it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", nil, fmt.Errorf("language-model call to %s failed: %w", req.URL, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	t := &event.APITurn{Provider: req.Provider, Endpoint: endpoint, Model: req.Model, Status: resp.StatusCode,
		LatencyMs: float64(c.now().Sub(start).Microseconds()) / 1000, BytesIn: int64(len(req.Body)), BytesOut: int64(len(body)),
		Messages: 1, Reliability: event.ReliabilityAccurate}
	t.RequestID = resp.Header.Get("Request-Id")
	if t.RequestID == "" {
		t.RequestID = resp.Header.Get("X-Request-Id")
	}
	if err != nil {
		t.ErrorClass, t.ErrorMessage = "upstream_read_error", scrub.String(err.Error())
		return "", t, fmt.Errorf("language-model answer from %s: %w", req.URL, err)
	}
	var answer string
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(body, &e)
		t.ErrorClass, t.ErrorMessage = e.Error.Type, scrub.String(clip(e.Error.Message, 2000))
		if t.ErrorClass == "" {
			if s, ok := e.Error.Code.(string); ok {
				t.ErrorClass = s
			} else {
				t.ErrorClass = fmt.Sprintf("http_%d", resp.StatusCode)
			}
		}
		return "", t, fmt.Errorf("language model %s answered %d: %s", req.Model, resp.StatusCode, cmp.Or(t.ErrorMessage, t.ErrorClass))
	}
	if req.Provider == ProviderAnthropic {
		answer, err = parseAnthropic(body, t)
	} else {
		answer, err = parseOpenAI(body, t)
	}
	c.price(t)
	if err != nil {
		t.ErrorClass, t.ErrorMessage = "bad_response", err.Error()
		return "", t, fmt.Errorf("language-model answer from %s: %w", req.URL, err)
	}
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return "", t, fmt.Errorf("language model %s gave no text (stop reason %q; raise [memory] max_output_tokens?)", t.Model, t.StopReason)
	}
	return clip(scrub.String(answer), maxAnswerBytes), t, nil
}

// price sets a turn's cost as the proxy does: accurate usage, its reliability lowered when the
// price is approximate or unknown.
func (c *ModelClient) price(t *event.APITurn) {
	if c.Prices == nil || t.Model == "" {
		t.Reliability = event.ReliabilityUnknown
		return
	}
	cost, approximate, known := c.Prices.Quote(t.Model, t.Tokens, time.Time{})
	t.CostUSD = cost
	switch {
	case !known:
		t.Reliability = event.ReliabilityUnknown
	case approximate:
		t.Reliability = event.ReliabilityApproximate
	}
}

func parseAnthropic(body []byte, t *event.APITurn) (string, error) {
	var r struct {
		ID         string `json:"id"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Usage *struct {
			Input         int64 `json:"input_tokens"`
			Output        int64 `json:"output_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
			Split         *struct {
				Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
			} `json:"cache_creation"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("not a Messages API response: %w", err)
	}
	t.MessageID, t.StopReason = r.ID, r.StopReason
	if r.Model != "" {
		t.Model = r.Model
	}
	if u := r.Usage; u != nil {
		// Anthropic's input_tokens already leaves out cache reads and writes.
		t.Input, t.Output, t.CacheRead, t.CacheCreation = u.Input, u.Output, u.CacheRead, u.CacheCreation
		if u.Split != nil {
			t.CacheCreation1h = min(u.Split.Ephemeral1h, u.CacheCreation)
		}
	}
	var b strings.Builder
	for _, block := range r.Content {
		if block.Type == "text" {
			b.WriteString(block.Text)
		}
	}
	return b.String(), nil
}

func parseOpenAI(body []byte, t *event.APITurn) (string, error) {
	var r struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
			PromptD    *struct {
				Cached int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionD *struct {
				Reasoning int64 `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("not a Chat Completions response: %w", err)
	}
	t.MessageID = r.ID
	if r.Model != "" {
		t.Model = r.Model
	}
	if u := r.Usage; u != nil {
		// OpenAI counts cached tokens inside the prompt: the api_turn's input is net of them.
		var cached int64
		if u.PromptD != nil {
			cached = u.PromptD.Cached
		}
		if u.CompletionD != nil {
			t.Reasoning = u.CompletionD.Reasoning
		}
		t.Input, t.CacheRead, t.Output = max(u.Prompt-cached, 0), cached, u.Completion
	}
	if len(r.Choices) == 0 {
		return "", nil
	}
	t.StopReason = r.Choices[0].FinishReason
	if p := r.Choices[0].Message.Content; p != nil {
		return *p, nil
	}
	return "", nil
}

// record counts the call against the cap and publishes its api_turn.
func (c *ModelClient) record(ctx context.Context, s Summary, t *event.APITurn, at time.Time) {
	ev := event.New(event.KindAPITurn, modelTurnSource)
	ev.ID, ev.Client, ev.Project = event.RandomID(), ModelTurnClient, s.Project
	ev.Time = at.UTC()
	ev.APITurn = t
	now := c.now()
	if err := store.RecordModelCall(ctx, c.DB, ev.ID, ev.Time.UnixMilli(), t.CostUSD); err != nil {
		c.logger().Warn("language-model call not counted against the daily cap", "err", err)
	}
	// Two days are enough for the cap of a local day wherever the clock's zone is.
	store.PruneModelCalls(ctx, c.DB, now.Add(-48*time.Hour).UnixMilli())
	if c.Publish == nil {
		return
	}
	if err := c.Publish(ctx, &ev); err != nil {
		c.logger().Warn("language-model call not published as an api_turn", "event", ev.ID, "err", err)
	}
}

// save stores the model's account of s's epoch as its 'model' summary; facts are the extractive
// summary it was written from.
func (c *ModelClient) save(ctx context.Context, s Summary, text, model string, cost float64) error {
	facts, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := store.SaveModelSummary(ctx, c.DB, store.SessionSummary{Client: s.Client, SessionID: s.SessionID,
		Epoch: s.Epoch, Project: s.Project, FirstTs: s.FirstTS, LastTs: s.LastTS, EndedBy: s.EndedBy, Actions: s.Actions,
		Text: text, Facts: string(facts), Model: model, CostUSD: cost, CreatedAt: c.now().UnixMilli()}); err != nil {
		return fmt.Errorf("store the model summary: %w", err)
	}
	return nil
}
