// observer-dash: the page. Plain script, no build step; talks only to this origin's /api.
// State lives in the URL (tab, window, project, client, member and the tab's own keys), so every
// view is a deep link and the back button works.
(function () {
  "use strict";

  const TABS = [
    ["overview", "Overview"], ["team", "Team"], ["cost", "Cost"], ["sessions", "Sessions"], ["actions", "Actions"], ["live", "Live"],
    ["tools", "Tools"], ["compression", "Compression"], ["analysis", "Analysis"],
    ["discovery", "Discovery"], ["patterns", "Patterns"], ["memory", "Memory"], ["settings", "Settings"],
  ];
  const WINDOWS = ["1h", "24h", "7d", "30d", "90d", "all"];
  const DEFAULT_WINDOW = "all";
  const ACTION_TYPES = ["read_file", "write_file", "edit_file", "run_command", "search_text", "search_files", "web_search",
    "web_fetch", "mcp_call", "spawn_subagent", "todo_update", "ask_user", "task_complete", "user_prompt", "api_error",
    "turn_aborted", "context_compacted", "system_prompt", "unknown"];
  // URL keys beyond the filters, per tab; switching tabs drops the others.
  const TAB_KEYS = { analysis: ["heat"], sessions: ["session", "sclient", "page", "sort", "sview"], actions: ["type", "failed", "session", "tool"], team: ["by"],
    search: ["q", "kind", "newest"] };
  // Views reached otherwise than by a tab: search, from the header's search box.
  const HIDDEN_TABS = ["search"];
  // Team mode: the tabs whose figures the member filter applies to (their endpoints take member;
  // the others refuse it). The Team tab and the member filter show only on a store with members.
  const MEMBER_TABS = ["overview", "team", "cost", "sessions", "actions", "search"];
  let team = [];

  const HELP = {
    cost: ["Cost", "US dollars at list prices (pkg/pricing), each model turn counted once: from observer-proxy when it saw the turn, else from the client's transcript. The same figure as `observerctl cost --json` for the window."],
    tokens: ["Tokens", "Input + output + cache read + cache write tokens of the window's model turns. Reasoning tokens are inside output."],
    input: ["Input", "Prompt tokens billed at the input price, net of cache reads and writes."],
    output: ["Output", "Generated tokens, reasoning included."],
    cache_read: ["Cache read", "Prompt tokens served from the provider's prompt cache, billed at the cache-read price."],
    cache_write: ["Cache write", "Prompt tokens written to the prompt cache (5-minute and 1-hour writes), billed at the cache-write prices."],
    buckets: ["Cost by billing bucket", "Each day's recorded dollars shared among input, output, cache read and cache write in the proportions of its tokens at each model's list price. The stack always adds up to the recorded cost."],
    turns: ["Turns", "Model requests: proxy turns plus transcript messages the proxy did not see."],
    sessions: ["Sessions", "Client sessions seen in the window (their last event falls in it)."],
    api_turns: ["API turns", "Requests observer-proxy forwarded to a model API in the window (exact usage)."],
    token_rows: ["Token rows", "Usage records read from transcripts in the window, one per model message."],
    actions: ["Actions", "What the agents did or were told: tool calls with their results, prompts, errors."],
    failures: ["Failures", "Actions whose result reported an error."],
    activity: ["Actions vs failures", "Actions and failed actions per hour (windows up to 48 h) or per local day."],
    reliability: ["Reliability", "accurate: every turn measured by observer-proxy; approximate: from transcripts; unreliable: from transcripts whose client logs streaming placeholders (Claude Code); mixed: both; unknown price: the price table lacks the model, its dollars are 0."],
    models: ["Top models", "Models by cost in the window."],
    clients: ["Activity per client", "Sessions, actions, failures, turns and cost of each AI client in the window."],
    timeline: ["Timeline", "The session's actions and model turns in time order, a page at a time from the server. Click a tool call to see its result."],
    conversation: ["Conversation", "What was said and done in the session, in order, as the client's records hold it: the prompts, the assistant's replies, its thinking (folded; where the client records it), each tool call with its result (long outputs folded, failures in red), and compaction summaries, where a new epoch starts. A subagent's messages are grouped under the call that started it. Beside the first block of each model turn: its tokens and cost (observer-proxy's figures where it saw the turn, else the transcript's). Each message's # is a link to it. The page shown by default when the session has messages; Timeline lists the actions and turns instead. `observerctl export --session ID` writes it as Markdown or HTML."],
    search: ["Search", "Looks through every stored conversation (prompts, replies, thinking, the commands and paths of tool calls, compaction summaries), the tool outputs and the session titles, within the page's window, project and client. Words must all be there, in any order (case and accents do not matter); a word ending in * matches every word starting so; \"a quoted phrase\"; OR between alternatives; NOT before what must not be there. Best match first (BM25), or newest. Each match links to its message in the conversation. The writer indexes new messages within seconds. `observerctl search` does the same in a terminal."],
    mix: ["Action mix", "Actions per type and hour or day; the eight commonest types keep their colour, the rest are summed as other."],
    tools: ["Tools per client", "Calls of each raw tool name per client: failures, calls whose result was never seen, success rate among the calls with a result, mean duration where the client reports one."],
    compression: ["Compression", "What observer-proxy's request compression ([compression] enabled = true) saved: one row per decision (a tool output compressed, messages dropped, tool descriptions trimmed), bytes before and after, tokens estimated as bytes / 4, dollars at the model's input price."],
    live: ["Live", "Events as they are published on the bus, newest first; nothing is replayed. The store has the history."],
    change: ["vs prior period", "The window's cost against the period of the same length just before it (a 7-day window against the 7 days before). All time has no prior period."],
    per_turn: ["$ / turn", "The window's cost divided by its model turns."],
    burn: ["Burn rate", "The window's cost divided by its active hours: local clock hours with at least one model turn. Idle hours do not dilute it."],
    cache_savings: ["Cache savings", "What the cache-read tokens would have cost at each model's input price, minus what they cost at its cache-read price (current list prices, pkg/pricing)."],
    cache_hit: ["Cache hit rate", "Cache-read tokens / (input + cache-read + cache-write tokens): the share of the prompt served from the cache."],
    expensive: ["Most expensive sessions", "The window's ten costliest sessions. Why: the billing bucket with the largest share of the session's cost (input, output, cache reads, cache writes) and that share."],
    heatmap: ["Weekday × hour heatmap", "Model turns (or cost) per local weekday and hour of day over the window; the darker the cell, the busier. Hover a cell for both figures."],
    cheaper: ["Cheaper model", "A session's use of a Claude or GPT model priced above its family's small model (claude-haiku-4-5, gpt-5-mini), with at most 10 tool calls in the session and at most 800 output tokens per turn: light work. Would cost: the same tokens at the small model's list prices; Saving: cost minus that. An estimate: the small model might have needed more turns."],
    stale_rereads: ["Stale re-reads", "A session reading a file again after it changed. Reads observer-watch classified live count as stale when the file changed since the session last saw it (by a command, the user or another process). History carries no classification: any later read of the same file in the same session counts as an unclassified re-read, whether or not the file changed. Subagents belong to their parent's session."],
    unclassified_rereads: ["Unclassified re-reads", "Second and later reads of the same file in the same session (parent and subagents together) that were not classified live, so whether the file changed in between is unknown."],
    cross_agent: ["Re-read across agents", "Files read by more than one agent of the same session (the parent and its subagents, or several subagents), where one re-reads what another already read."],
    repeated_commands: ["Repeated commands", "A shell command run again, identical, in the same session with no edit or write of any file by the session (or its subagents) since its previous run: its result could not have changed because of the agent."],
    shared_files: ["Files shared by clients", "A project's file read, edited or written by more than one AI client, listed when touched in the window; its clients and actions count all time."],
    score: ["Session score", "100 × (1 − error rate) × (1 − redundancy), rounded: 100 is a session with no failed action and no repeated work. Error rate: failed actions over actions whose result is known. Redundancy: stale and unclassified re-reads plus repeated commands, over reads plus commands. Exploration (shown, not scored): reads, searches and web lookups over all actions. Kept by the writer's analysis; `observerctl score` lists them."],
    analysis_window: ["Sessions in the window", "Findings are a session's: a session counts when it acted in the window, with all its findings. The writer analyses sessions a few seconds after their actions arrive."],
    patterns: ["Patterns", "Habits found in each project's sessions, kept by the writer's analysis (recomputed at most once a minute while a project's sessions change). Support: how many times (or sessions) the pattern was seen, at least 2. Ratio: the support ratio given under each kind. Confidence: the ratio halved for every 14 days since the pattern was last seen, so dropped habits fade. Listed when last seen in the window."],
    p_command_pair: ["Command pairs", "Command B run right after command A in a session, commands compared by program and subcommand (\"go test\", \"git status\"). Confidence: times B followed A / times A was followed by any command."],
    p_co_edit: ["Files edited together", "Two files edited or written in the same session. Support: sessions editing both; confidence: that / sessions editing the less edited of the two."],
    p_edit_then_test: ["Edit then test", "Per project, a run of edits whose next command is a test command (go test, pytest, npm test, cargo test, jest, vitest, make test, ...). Support: such edit runs; confidence: that / edit runs followed by any command."],
    p_hot_file: ["Hot files", "Files read or edited in the most sessions. Support: sessions touching the file; confidence: that / the project's sessions that touched any file."],
    settings: ["config.toml", "The configuration file beside the store (<home>/config.toml). Save checks it with the same loader the components use (unknown keys and bad values are refused, the file is left as it was), then replaces it atomically with mode 0600 and keeps the previous content as config.toml.bak. Saving needs the page's CSRF token. Price overrides apply within seconds; other settings when the components restart."],
    pricing: ["Pricing", "Dollars come from list prices in USD per million tokens (pkg/pricing). Overrides are config.toml's [pricing.models.\"<model>\"] tables: one replaces a built-in price at all times, or prices a model the table lacks. Save override writes that model's table into config.toml (same checks and CSRF token as the editor); the proxy, the watcher and the writer follow it within seconds, and the writer reprices the stored turns of that model."],
    window: ["Window", "The period shown: the last hour, day, week, ... up to now, or all time. Days count as calendar days, as `observerctl cost --since 7d` does."],
    paths: ["Capture paths", "Which of observer's capture paths saw the session (all time). proxy: its API traffic went through observer-proxy (exact usage). records: the client's transcript or database, read by observer-watch or `observerctl scan`. hooks: the client's lifecycle hooks called `observerctl hook`. otlp: the client's own OpenTelemetry export reached observer's OTLP receiver. Records without proxy: the client is not pointed at the proxy; `observerctl doctor` lists the recent sessions' paths and says how to add the missing ones."],
    team: ["Team", "On a team hub's store, each member's share of the window: the sessions, actions and model turns that came from the member's machines (the member the hub received them from), their tokens and cost, each turn counted once as on the Cost tab. Click a member to see its figures on every tab. Events without a member (the hub's own) are in no row."],
    failure_rate: ["Failure rate", "Failed actions / actions."],
    compare: ["Compare by", "Each member's figures per project, client or model. A session counts under its project, its client and its main model; a turn and an action under their own."],
    member: ["Member", "Shows one team member's figures on the Overview, Team, Cost, Sessions and Actions tabs. The other tabs are not filtered by member."],
    summaries: ["Summaries", "An account of each ended epoch of a session (a new epoch starts at each compaction), written by the writer's session memory once the epoch ends: the session compacted again, went idle or ended. extractive: built from the stored records alone (the goal from the first prompt, the files read and changed, the commands and their outcomes, the failures and how they ended, the epoch's tokens and cost, each turn once), the same every time. model: a language model's account, when [memory] model is set in config.toml, with what its call cost. An active session's current epoch has none yet. `observerctl summary` prints them."],
    memory: ["Memory", "What a project's sessions have taught, learned by the writer from all the project's sessions, whatever their client: the test and build commands that succeed, the commands that always fail, the files that change together, where the changes land. Support: the sessions that confirm it; against: the sessions that went against it. Confidence: support / (support + against + 1), halved for every 14 days since it was last seen, so what stops being true fades. Evidence: the actions it rests on (the newest few); click a session to open it. Listed when last seen in the window; the client filter applies to the last sessions only. `observerctl memory` lists, forgets and exports them."],
    alerts: ["Budget and limit alerts", "Raised by the writer when spending reaches 80% and 100% of a [budget] limit in config.toml (daily, monthly, or a project's monthly limit), once per period and threshold, and when a plan usage limit window reaches [limits] warn_at (80% by default) or the provider rejects requests in it, once per window and threshold. The banner shows the last 7 days' alerts not dismissed in this browser; `observerctl budget` and `observerctl limits` show every budget's and window's state."],
    limits: ["Plan limits", "The provider's own figures of each window of a subscription's usage limit (5-hour, weekly, per-model weekly): Anthropic's anthropic-ratelimit-unified-* headers on Claude Pro/Max traffic through observer-proxy, OpenAI's x-codex-* headers and Codex's own records on a ChatGPT plan. Used: the share of the window used; the colour is the provider's status (allowed, allowed_warning, rejected). Resets: when the window starts again, in local time. Forecast: at the burn rate of the window so far (share used since its start), when the limit is reached, or not before the reset. A window whose reset has passed says so until the provider gives a new figure. API-key traffic carries none of these: then the Overview notes the token-based 5-hour blocks instead, observer's estimate (`observerctl blocks`), never the provider's figure. `observerctl limits` shows the same."],
    limit_history: ["Plan usage history", "Each window's used share as the provider gave it over the page's window: a figure holds from when it was first seen until it changed; a reset drops to the next window's figure."],
  };

  const $ = (sel) => document.querySelector(sel);
  const nf = new Intl.NumberFormat("en-US");
  const usd2 = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const usd4 = new Intl.NumberFormat("en-US", { minimumFractionDigits: 4, maximumFractionDigits: 4 });

  // ---- state and URL ----

  function readState() {
    const p = new URLSearchParams(location.search);
    const s = {};
    for (const [k, v] of p) s[k] = v;
    s.tab = TABS.some((t) => t[0] === s.tab) || HIDDEN_TABS.includes(s.tab) ? s.tab : "overview";
    s.window = s.window || DEFAULT_WINDOW;
    return s;
  }
  let state = readState();

  function stateURL(s) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(s)) {
      if (v === "" || v == null || (k === "tab" && v === "overview") || (k === "window" && v === DEFAULT_WINDOW)) continue;
      p.set(k, v);
    }
    const q = p.toString();
    return location.pathname + (q ? "?" + q : "");
  }

  // go shows the view of state patched; hash ("#m123") goes with the URL (a message to scroll to).
  function go(patch, hash) {
    const next = Object.assign({}, state, patch);
    if (patch.tab && patch.tab !== state.tab) {
      for (const keys of Object.values(TAB_KEYS)) for (const k of keys) if (!(k in patch)) delete next[k];
    }
    state = next;
    history.pushState(null, "", stateURL(state) + (hash || ""));
    render();
  }
  // plainClick: a click the page handles itself (not one that opens a new tab or window).
  const plainClick = (e) => e.button === 0 && !e.ctrlKey && !e.metaKey && !e.shiftKey && !e.altKey;
  window.addEventListener("popstate", () => {
    const next = readState();
    if (stateURL(next) === stateURL(state)) return; // only the #fragment moved (a message's link): hashchange scrolls
    state = next;
    render();
  });

  // ---- DOM ----

  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid == null || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  // put and add skip null and false kids, as h does (replaceChildren would print "null").
  const kidsOf = (kids) => kids.flat(Infinity).filter((k) => k != null && k !== false);
  function put(el, ...kids) {
    if (swapping && !swapping.kept && el.id === "view") swapping.kept = keepView(el); // a live refresh's swap
    el.replaceChildren(...kidsOf(kids));
  }
  function add(el, ...kids) { el.append(...kidsOf(kids)); }

  function showBanner(msg) { const b = $("#banner"); b.textContent = msg; b.hidden = false; }
  function hideBanner() { $("#banner").hidden = true; }

  // ---- formatting ----

  const fmtInt = (n) => nf.format(n || 0);
  function fmtUSD(x) {
    x = x || 0;
    return "$" + (x !== 0 && Math.abs(x) < 1 ? usd4 : usd2).format(x);
  }
  function fmtCompact(n) {
    n = n || 0;
    const a = Math.abs(n);
    if (a >= 1e9) return (n / 1e9).toFixed(2) + "B";
    if (a >= 1e6) return (n / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return (n / 1e3).toFixed(1) + "k";
    return fmtInt(n);
  }
  const pad = (n) => String(n).padStart(2, "0");
  function fmtTime(ms) {
    if (!ms) return "";
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  // fmtShort is a time in few characters, for a phone: "15:04" today, "Dec 1 15:04" this year, else "2025-08-10".
  function fmtShort(ms) {
    if (!ms) return "";
    const d = new Date(ms), now = new Date();
    const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    if (d.toDateString() === now.toDateString()) return hm;
    if (d.getFullYear() === now.getFullYear()) return `${MONTHS[d.getMonth()]} ${d.getDate()} ${hm}`;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  }
  function fmtDur(ms) {
    if (!ms) return "";
    if (ms < 1000) return ms + " ms";
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
    return (ms / 60000).toFixed(1) + " min";
  }
  const shortID = (id) => (id && id.length > 12 ? id.slice(0, 8) + "…" : id || "");
  const baseName = (p) => (p ? p.replace(/\/+$/, "").split("/").pop() || p : "—");
  const tokensOf = (t) => (t.input_tokens || 0) + (t.output_tokens || 0) + (t.cache_read_tokens || 0) + (t.cache_creation_tokens || 0);
  const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  // ---- API ----

  async function api(path, params) {
    const u = new URL(path, location.origin);
    for (const [k, v] of Object.entries(params || {})) if (v !== "" && v != null) u.searchParams.set(k, v);
    const r = await fetch(u, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    const tick = Number(r.headers.get("X-Observer-Changes") ?? NaN);
    if (Number.isFinite(tick)) readTick = Math.min(readTick, tick);
    let body;
    try { body = await r.json(); } catch (e) { body = { error: r.status + " " + r.statusText }; }
    if (!r.ok) throw new Error(body.error || "HTTP " + r.status);
    return body;
  }
  const filterParams = () => ({ window: state.window, project: state.project, client: state.client,
    member: MEMBER_TABS.includes(state.tab) ? state.member : "" });

  // ---- help drawer ----

  function helpBtn(key) {
    return h("button", { type: "button", class: "q", "aria-label": "What is " + HELP[key][0] + "?", onclick: () => openHelp(key) }, "?");
  }
  function openHelp(key) {
    const list = $("#help-list");
    if (!list.childElementCount) {
      for (const [k, [term, def]] of Object.entries(HELP)) list.append(h("dt", { id: "help-" + k }, term), h("dd", {}, def));
    }
    for (const dt of list.querySelectorAll("dt")) dt.classList.toggle("hl", dt.id === "help-" + key);
    $("#help").hidden = false;
    if (key) document.getElementById("help-" + key).scrollIntoView({ block: "nearest" });
  }
  function closeHelp() { $("#help").hidden = true; }
  $("#help-open").addEventListener("click", () => ($("#help").hidden ? openHelp("") : closeHelp()));
  $("#help-close").addEventListener("click", closeHelp);
  document.addEventListener("keydown", (e) => {
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName) || e.target.isContentEditable;
    if (e.key === "?" && !typing) { $("#help").hidden ? openHelp("") : closeHelp(); e.preventDefault(); }
    // "/" goes to the search box, as on most sites with one.
    if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); $("#q").focus(); $("#q").select(); }
    if (e.key === "Escape") { closeHelp(); if (e.target.id === "q") e.target.blur(); }
  });
  // The search box: Enter shows the results (the page's window, project and client apply).
  $("#search").addEventListener("submit", (e) => {
    e.preventDefault();
    const q = $("#q").value.trim();
    if (!q) return;
    $("#q").blur();
    go({ tab: "search", q });
  });

  // ---- charts (uPlot) ----

  // What a view set up beside its DOM (charts, streams), to undo when that DOM goes: each entry
  // {el, fn}. A full render runs them all; a live refresh runs those whose element left the page.
  let cleanup = [];
  function onGone(el, fn) { cleanup.push({ el, fn }); }

  // Axis labels are drawn on the canvas in this font; their sizes are measured with it.
  const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  const AXIS_LINE = 1.5; // uPlot's lineGap: a line of a label is 12 × 1.5 px high
  const measure = document.createElement("canvas").getContext("2d");
  function textWidth(s) {
    measure.font = AXIS_FONT;
    return Math.max(0, ...String(s).split("\n").map((l) => measure.measureText(l).width));
  }

  // decimalsOf is how many decimals show a step between ticks exactly (0.25 → 2, 0.005 → 3).
  function decimalsOf(step) {
    for (let d = 0; d < 8; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
    return 8;
  }
  // usdTicks: dollars on an axis, always with "$", with the decimals the step needs ($0.005,
  // $0.010, … $1.50, $1,200).
  function usdTicks(vals, step) {
    const f = new Intl.NumberFormat("en-US", { minimumFractionDigits: decimalsOf(step), maximumFractionDigits: decimalsOf(step) });
    return vals.map((v) => (v == null ? "" : (v < 0 ? "-$" : "$") + f.format(Math.abs(v))));
  }
  const countTicks = (vals) => vals.map((v) => (v == null ? "" : fmtInt(v)));

  // parseBucket reads the API's bucket labels: a local day "2026-12-01", a local hour
  // "2026-12-01T15" (cost over time) or "2026-12-01 15:00" (activity).
  function parseBucket(l) {
    const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::\d{2})?)?$/.exec(l || "");
    return m ? { y: +m[1], mo: +m[2], d: +m[3], h: m[4] == null ? null : +m[4] } : null;
  }
  const dayOf = (b) => MONTHS[b.mo - 1] + " " + b.d;
  // bucketText is a bucket in full, for the legend: "Dec 1 2026 15:00", "Dec 1 2026".
  function bucketText(l) {
    const b = parseBucket(l);
    return b ? dayOf(b) + " " + b.y + (b.h == null ? "" : " " + pad(b.h) + ":00") : l;
  }
  // tickLabels names the x ticks: hours as "15:00" with the day under the first tick and under
  // each tick on a new day; days as "Dec 1" with the year under the first and at a new year.
  function tickLabels(labels, idxs) {
    let prev = null;
    return idxs.map((i) => {
      if (!Number.isInteger(i) || labels[i] === undefined) return "";
      const b = parseBucket(labels[i]);
      if (!b) return labels[i];
      let s;
      if (b.h != null) s = pad(b.h) + ":00" + (!prev || prev.d !== b.d || prev.mo !== b.mo || prev.y !== b.y ? "\n" + dayOf(b) : "");
      else s = dayOf(b) + (!prev || prev.y !== b.y ? "\n" + b.y : "");
      prev = b;
      return s;
    });
  }

  // chart draws bars over an ordinal x axis: one evenly wide slot per bucket that has data,
  // however sparse the days are; labels name the slots. opts: fmt (the legend's values), usd
  // (dollars: "$" ticks) or counts (whole-number ticks), unit (the legend's x name).
  function chart(container, series, labels, ys, opts) {
    const el = h("div", { class: "chart", "data-unit": opts.usd ? "usd" : "count" });
    container.append(el);
    if (!labels.length) { el.append(h("p", { class: "muted" }, "Nothing in this window.")); return; }
    const width = () => Math.max(el.clientWidth || container.clientWidth || 320, 240);
    const fg = cssVar("--fg"), grid = cssVar("--line");
    const TICK = 5, GAP = 4;
    const axis = { stroke: fg, font: AXIS_FONT, gap: GAP, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, size: TICK } };
    const xs = labels.map((_, i) => i);
    const label = (v) => (Number.isInteger(v) && labels[v] !== undefined ? labels[v] : "");
    // Each axis is as wide (y) or as high (x) as its widest (tallest) label needs, plus the tick
    // and the gap, so that no label is cut at the edge of the chart.
    const ySize = (u, vals) => Math.ceil(TICK + GAP + Math.max(24, ...(vals || []).map(textWidth)) + 4);
    const xSize = (u, vals) => Math.ceil(TICK + GAP + 12 * AXIS_LINE * Math.max(1, ...(vals || []).map((v) => String(v).split("\n").length)) + 2);
    const yTicks = opts.usd ? (u, vals, ai, space, step) => usdTicks(vals, step) : (u, vals) => countTicks(vals);
    const u = new uPlot({
      width: width(), height: 220,
      // Room on the right for the last x label, centred on the last slot.
      padding: [12, 18, 0, 4],
      scales: { x: { time: false, range: () => [-0.5, labels.length - 0.5] }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.05 : 1] } },
      axes: [
        Object.assign({ space: 56, size: xSize, incrs: [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 50, 60, 90, 120, 180, 365],
          values: (u, vals) => tickLabels(labels, vals) }, axis),
        Object.assign({ size: ySize, values: yTicks, incrs: opts.usd ? undefined : [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6] }, axis),
      ],
      series: [{ label: opts.unit || "bucket", value: (u, v) => (v == null ? "—" : bucketText(label(v))) }].concat(series.map((s) => ({
        label: s.label, stroke: s.color, fill: s.color, width: 1, points: { show: false },
        paths: uPlot.paths.bars({ size: [0.7, 48] }),
        value: (u, v, si, idx) => (idx == null ? "—" : opts.fmt(s.raw ? s.raw[idx] : v)),
      }))),
      legend: { live: true },
      cursor: { points: { show: false } },
    }, [xs].concat(ys), el);
    el.uplot = u; // for the browser tests: the axes' labels as drawn
    const ro = new ResizeObserver(() => u.setSize({ width: width(), height: 220 }));
    ro.observe(el);
    onGone(el, () => { ro.disconnect(); u.destroy(); });
  }

  // stackedChart draws each bucket as the running sum, tallest first, so the bars read as a
  // stack; the legend shows each bucket's own value.
  function stackedChart(container, points, buckets, fmt, unit) {
    stacked(container, points.map((p) => p.day), buckets.map((b) => ({ label: b.label, color: b.color, raw: points.map((p) => p[b.key] || 0) })), fmt, unit || "day");
  }

  // stacked draws series (each {label, color, raw}) as a stack over the labels.
  function stacked(container, labels, series, fmt, unit) {
    let run = labels.map(() => 0);
    const layers = series.map((s) => {
      run = run.map((v, i) => v + s.raw[i]);
      return Object.assign({}, s, { sum: run.slice() });
    });
    layers.reverse();
    chart(container, layers, labels, layers.map((l) => l.sum), { fmt, unit, usd: fmt === fmtUSD });
  }

  const PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d"];

  // ---- common pieces ----

  function card(label, value, opts) {
    opts = opts || {};
    return h("div", { class: "card", "data-metric": opts.metric },
      h("div", { class: "label" }, label, opts.help ? helpBtn(opts.help) : null),
      h("div", { class: "value", "data-value": opts.raw != null ? String(opts.raw) : null, title: opts.title }, value),
      opts.sub ? h("div", { class: "sub" }, opts.sub) : null);
  }

  function panel(title, helpKey, ...kids) {
    return h("section", { class: "panel" }, h("h2", {}, title, helpKey ? helpBtn(helpKey) : null), kids);
  }

  // table draws rows under cols: {label, get, num, cls, title}; a column with wide: true is left
  // out on a phone (app.css: .opt), one with key: true (cost) stays in view there, pinned to the
  // right edge of the table's own scroller when the row is still too wide.
  function table(cols, rows, opts) {
    opts = opts || {};
    if (!rows.length) return h("p", { class: "muted" }, opts.empty || "Nothing in this window.");
    const cls = (c, extra) => [c.num ? "num" : "", c.wide ? "opt" : "", c.key ? "key" : "", extra || ""].join(" ").trim() || null;
    return h("div", { class: "table-wrap" }, h("table", { "data-table": opts.name },
      h("thead", {}, h("tr", {}, cols.map((c) => h("th", { class: cls(c) }, c.label)))),
      h("tbody", {}, rows.map((r) => h("tr", { class: opts.onrow ? "click" : null, onclick: opts.onrow ? () => opts.onrow(r) : null, tabindex: opts.onrow ? "0" : null, onkeydown: opts.onrow ? (e) => { if (e.key === "Enter") opts.onrow(r); } : null },
        cols.map((c) => h("td", { class: cls(c, c.cls), title: c.title ? c.title(r) : null }, c.get(r))))))));
  }

  // breakable lets a long identifier (a model name) wrap after its separators, and nowhere else:
  // "claude-sonnet-4-5-" / "20250929", never one character per line.
  function breakable(text) {
    return text.split(/(?<=[-/._:@])/).flatMap((part, i) => (i ? [h("wbr"), part] : [part]));
  }

  function noStore() {
    return h("div", { class: "empty", "data-empty": "no-store" },
      h("p", {}, "No data yet."),
      h("p", {}, "Start observer with ", h("code", {}, "observerctl up"), " or ingest your history with ", h("code", {}, "observerctl scan"), "."));
  }

  function emptyWindow() {
    return h("div", { class: "empty", "data-empty": "window" }, "Nothing in this window. ",
      state.window !== "all" ? h("a", { href: stateURL(Object.assign({}, state, { window: "all" })), onclick: (e) => { e.preventDefault(); go({ window: "all" }); } }, "Show all time") : null);
  }

  // PATHS are the capture paths, in the API's order, with what each chip's tooltip says.
  const PATHS = {
    proxy: "API traffic through observer-proxy",
    records: "the client's transcript or database (observer-watch, observerctl scan)",
    hooks: "the client's lifecycle hooks",
    otlp: "the client's own OpenTelemetry export",
  };
  function pathChips(paths) {
    paths = paths || [];
    return h("span", { class: "paths", "data-paths": paths.join(" ") },
      paths.length ? paths.map((p) => h("span", { class: "pill path-" + p, "data-path": p, title: PATHS[p] || p }, p)) : h("span", { class: "muted" }, "none"));
  }

  function relPill(rel) {
    return h("span", { class: "pill " + rel.replace(/\s+/g, "-"), title: "reliability" }, rel);
  }

  const BUCKETS = () => [
    { key: "input_usd", label: "input", color: cssVar("--c-input") },
    { key: "output_usd", label: "output", color: cssVar("--c-output") },
    { key: "cache_read_usd", label: "cache read", color: cssVar("--c-cache-read") },
    { key: "cache_write_usd", label: "cache write", color: cssVar("--c-cache-write") },
  ];

  function costCards(d, extra) {
    return h("div", { class: "cards" },
      card("Cost", fmtUSD(d.total.cost_usd), { raw: d.total.cost_usd, metric: "cost", help: "cost", title: String(d.total.cost_usd) }),
      card("Tokens", fmtCompact(tokensOf(d.total)), { raw: tokensOf(d.total), metric: "tokens", help: "tokens", title: fmtInt(tokensOf(d.total)) }),
      card("Input", fmtInt(d.total.input_tokens), { raw: d.total.input_tokens, metric: "input_tokens", help: "input", sub: fmtUSD(d.buckets.input_usd) }),
      card("Output", fmtInt(d.total.output_tokens), { raw: d.total.output_tokens, metric: "output_tokens", help: "output", sub: fmtUSD(d.buckets.output_usd) }),
      card("Cache read", fmtInt(d.total.cache_read_tokens), { raw: d.total.cache_read_tokens, metric: "cache_read_tokens", help: "cache_read", sub: fmtUSD(d.buckets.cache_read_usd) }),
      card("Cache write", fmtInt(d.total.cache_creation_tokens), { raw: d.total.cache_creation_tokens, metric: "cache_creation_tokens", help: "cache_write", sub: fmtUSD(d.buckets.cache_write_usd) }),
      card("Turns", fmtInt(d.total.turns), { raw: d.total.turns, metric: "turns", help: "turns", sub: fmtInt(d.total.proxy_turns) + " via proxy" }),
      extra);
  }

  // modelTable lists models with their reliability; compact keeps one tokens column (half-width panels).
  // On a phone the reliability moves under the model's name and the token columns go (the
  // compact table keeps its one Tokens column).
  function modelTable(models, name, compact) {
    const max = Math.max(...models.map((m) => m.cost_usd), 0) || 1;
    const tokens = compact ? [{ label: "Tokens", num: true, get: (m) => fmtCompact(tokensOf(m)), title: (m) => fmtInt(tokensOf(m)) }] : [
      { label: "Input", num: true, wide: true, get: (m) => fmtInt(m.input_tokens) },
      { label: "Output", num: true, wide: true, get: (m) => fmtInt(m.output_tokens) },
      { label: "Cache read", num: true, wide: true, get: (m) => fmtInt(m.cache_read_tokens) },
      { label: "Cache write", num: true, wide: true, get: (m) => fmtInt(m.cache_creation_tokens) },
    ];
    return table([
      { label: "Model", get: (m) => [h("span", { class: "model" }, breakable(m.model || "(none)")), h("div", { class: "narrow-only" }, relPill(m.reliability))], cls: "mono name", title: (m) => m.model },
      { label: "Reliability", wide: true, get: (m) => relPill(m.reliability) },
      { label: "Turns", num: true, get: (m) => fmtInt(m.turns) },
      tokens,
      { label: "Cost", num: true, key: true, get: (m) => fmtUSD(m.cost_usd), title: (m) => `input ${fmtUSD(m.input_usd)} · output ${fmtUSD(m.output_usd)} · cache read ${fmtUSD(m.cache_read_usd)} · cache write ${fmtUSD(m.cache_write_usd)}` },
      compact ? null : { label: "", wide: true, get: (m) => h("div", { class: "bar", "data-w": m.cost_usd / max }) },
    ].flat().filter(Boolean), models, { name });
  }

  // Bars get their width after insertion (style attributes are forbidden by the page's CSP).
  function sizeBars(root) {
    for (const b of root.querySelectorAll(".bar[data-w]")) b.style.width = Math.round(Number(b.dataset.w) * 120) + "px";
  }

  // ---- views ----

  const VIEWS = {};

  // Budget alerts of the last 7 days not dismissed in this browser, above the Overview: read with
  // the Overview's figures (so that a live refresh does not make the banner blink), shown unless
  // dismissed. A failure to read them only leaves the banner out.
  const DISMISSED = "observer.dismissed-alerts";
  const loadAlerts = () => api("/api/alerts", { days: 7 }).catch(() => null);
  function alertBanner(d) {
    if (!d) return null;
    let gone;
    try { gone = new Set(JSON.parse(localStorage.getItem(DISMISSED) || "[]")); } catch (e) { gone = new Set(); }
    const open = d.alerts.filter((a) => !gone.has(a.id));
    if (!open.length) return null;
    const box = h("div", { class: "banner", role: "alert", "data-alerts": open.length },
      open.slice(0, 5).map((a) => h("div", {}, a.message)), helpBtn("alerts"), " ",
      h("button", { type: "button", onclick: () => { localStorage.setItem(DISMISSED, JSON.stringify([...gone, ...open.map((a) => a.id)].slice(-500))); box.remove(); } }, "Dismiss"));
    return box;
  }

  // ---- plan limits ----
  //
  // The providers' own figures of each plan usage window (/api/limits), read with the Overview's
  // figures: one gauge per window, and the history of each window's used share. Without any figure
  // (API-key users) only a one-line note, with observer's estimated blocks where a client has one.
  const loadLimits = () => api("/api/limits", { since: state.window, member: state.member }).catch(() => null);
  const PROVIDERS = { anthropic: "Anthropic", openai: "OpenAI", google: "Google", github: "GitHub" };
  const providerName = (p) => PROVIDERS[p] || (p ? p[0].toUpperCase() + p.slice(1) : "?");
  // windowName says a window as people do: 5h "5-hour", 7d "weekly", 7d_opus "weekly (opus)".
  function windowName(w) {
    const [, n, unit, rest] = /^(\d+)([mhd])(?:_(.*))?$/.exec(w || "") || [];
    if (!n) return w || "window";
    const base = { "1d": "daily", "7d": "weekly", "30d": "monthly" }[n + unit] || n + "-" + { m: "minute", h: "hour", d: "day" }[unit];
    return rest ? `${base} (${rest.replace(/_/g, " ")})` : base;
  }
  const limitLabel = (l) => providerName(l.provider) + " · " + windowName(l.window) + (l.member ? " · " + l.member : "");
  const limitKey = (l) => [l.provider, l.window, l.member || ""].join("/");
  // until says a duration as query.Until does: "2 h 13 min", "45 min", "3 d 4 h", "<1 min".
  function until(ms) {
    const m = Math.floor(ms / 60000);
    if (m < 1) return "<1 min";
    if (m < 60) return m + " min";
    if (m < 48 * 60) return m % 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m / 60} h`;
    const d = Math.floor(m / 1440), hr = Math.floor((m % 1440) / 60);
    return hr ? `${d} d ${hr} h` : `${d} d`;
  }
  const fmtPct = (p) => (Math.round((p || 0) * 10) / 10) + "%";
  function limitStatus(l) {
    if (l.status === "rejected" || l.used_percent >= 100) return "rejected";
    if (l.status === "allowed_warning") return "warning";
    return l.status === "allowed" || !l.status ? "allowed" : l.status;
  }
  // gaugeText is what a gauge says at now: its reset (or that it has passed) and its forecast.
  function gaugeText(l, now) {
    const at = l.resets_at ? Date.parse(l.resets_at) : 0;
    if (l.reset || (at && at <= now)) return { reset: true, resets: "reset since; no figure yet", forecast: "" };
    const resets = at ? `resets ${fmtShort(at)} · in ${until(at - now)}` : "reset time not given";
    const f = l.forecast;
    let forecast = "";
    if (f && f.reached_at) forecast = "at this rate the limit is reached at " + fmtShort(Date.parse(f.reached_at));
    else if (f && f.text === "limit reached") forecast = "limit reached";
    else if (f) forecast = "at this rate: " + f.text;
    return { reset: false, resets, forecast };
  }
  function gauge(l) {
    const t = gaugeText(l, Date.now());
    const st = limitStatus(l);
    const el = h("div", { class: "card gauge", "data-limit": limitKey(l), "data-status": t.reset ? "reset" : st },
      h("div", { class: "label" }, limitLabel(l)),
      h("div", { class: "value", "data-value": t.reset ? null : String(l.used_percent), title: `seen ${fmtTime(Date.parse(l.seen_at))} (${l.source})` },
        t.reset ? "—" : [fmtPct(l.used_percent), " ", h("span", { class: "pill st-" + st }, st)]),
      h("div", { class: "meter" }, h("div", { class: "fill st-" + st, "data-w": t.reset ? 0 : Math.min(100, l.used_percent) / 100 })),
      h("div", { class: "sub", "data-resets": "" }, t.resets),
      h("div", { class: "sub", "data-forecast": "" }, t.forecast || null),
      l.burn_percent_per_hour > 0 && !t.reset ? h("div", { class: "sub" }, fmtPct(l.burn_percent_per_hour) + " an hour so far") : null);
    return el;
  }
  // limitsSection builds the gauges and the history panel (el); draw() draws the chart and sizes
  // the meters once el is on the page.
  function limitsSection(d) {
    const none = { el: null, draw: () => {} };
    if (!d || !d.store) return none;
    if (!d.limits.length) {
      const est = d.estimated && d.estimated.blocks.length ? d.estimated.blocks.map((b) =>
        `${b.client} ${fmtCompact(b.tokens.total_tokens)} tokens, ${fmtUSD(b.cost_usd)}, ends ${fmtShort(Date.parse(b.end))}`).join("; ") : "";
      return { el: h("p", { class: "muted limits-note", "data-limits": "none" }, "No plan limit figures yet",
        est ? [" (estimated blocks: ", h("span", { "data-estimated": "" }, est), ")"] : null, ". ", helpBtn("limits")), draw: () => {} };
    }
    const gauges = h("div", { class: "cards gauges" }, d.limits.map(gauge));
    const hist = panel("Plan usage over " + (state.window === "all" ? "all time" : "the last " + state.window), "limit_history");
    const el = h("div", { class: "limits", "data-limits": d.limits.length },
      h("h2", {}, "Plan limits", helpBtn("limits")), gauges, h("div", { class: "grid" }, hist));
    return {
      el,
      draw: () => {
        for (const f of el.querySelectorAll(".fill[data-w]")) f.style.width = (Number(f.dataset.w) * 100).toFixed(1) + "%";
        limitChart(hist, d.history, d.limits.map(limitKey));
        // The countdowns run on between refreshes; a reset that passes shows.
        const tick = setInterval(() => {
          const now = Date.now();
          for (const l of d.limits) {
            const g = el.querySelector(`[data-limit="${CSS.escape(limitKey(l))}"]`);
            if (!g) continue;
            const t = gaugeText(l, now);
            if (t.reset && g.dataset.status !== "reset") { g.replaceWith(gauge(Object.assign({}, l, { reset: true }))); continue; }
            g.querySelector("[data-resets]").textContent = t.resets;
            g.querySelector("[data-forecast]").textContent = t.forecast;
          }
        }, 30000);
        onGone(el, () => clearInterval(tick));
      },
    };
  }

  // limitChart draws each window's used share over time as a step line: a figure holds from its
  // first_seen to its seen_at, and on to the next figure; past a reset before the next figure, the
  // line drops at the reset to that figure.
  // The series are in order (the gauges' keys), then any other window of the history.
  function limitChart(container, points, order) {
    const el = h("div", { class: "chart", "data-unit": "percent", "data-chart": "limits" });
    container.append(el);
    if (!points.length) { el.append(h("p", { class: "muted" }, "No figure in this window.")); return; }
    const byKey = {};
    for (const p of points) (byKey[limitKey(p)] ||= []).push(p);
    const keys = order.filter((k) => byKey[k]).concat(Object.keys(byKey).filter((k) => !order.includes(k)));
    // Each series' (x, y) pairs, in seconds.
    const pairs = keys.map((k) => {
      const ps = byKey[k], out = [];
      ps.forEach((p, i) => {
        const first = Date.parse(p.first_seen) / 1000, seen = Date.parse(p.seen_at) / 1000;
        out.push([first, p.used_percent]);
        if (seen > first) out.push([seen, p.used_percent]);
        const next = ps[i + 1], reset = p.resets_at ? Date.parse(p.resets_at) / 1000 : 0;
        if (next && reset > seen && reset < Date.parse(next.first_seen) / 1000) out.push([reset, next.used_percent]);
      });
      return out;
    });
    const xs = [...new Set(pairs.flat().map((q) => q[0]))].sort((a, b) => a - b);
    const idx = new Map(xs.map((x, i) => [x, i]));
    const ys = pairs.map((ps) => {
      const y = xs.map(() => null);
      for (const [x, v] of ps) y[idx.get(x)] = v;
      return y;
    });
    const top = Math.max(100, ...points.map((p) => p.used_percent));
    const span = xs[xs.length - 1] - xs[0];
    const fg = cssVar("--fg"), grid = cssVar("--line");
    const TICK = 5, GAP = 4;
    const axis = { stroke: fg, font: AXIS_FONT, gap: GAP, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, size: TICK } };
    const width = () => Math.max(el.clientWidth || container.clientWidth || 320, 240);
    // x labels as the other charts have them: "15:00" with the day under the first and at a new
    // day; "Dec 1" (the year under the first) when the ticks are days apart.
    const xValues = (u, splits, ai, space, incr) => {
      let prev = null;
      return splits.map((v) => {
        const d = new Date(v * 1000);
        const b = { y: d.getFullYear(), mo: d.getMonth() + 1, d: d.getDate() };
        let s;
        if (incr < 86400) s = `${pad(d.getHours())}:${pad(d.getMinutes())}` + (!prev || prev.d !== b.d || prev.mo !== b.mo ? "\n" + dayOf(b) : "");
        else s = dayOf(b) + (!prev || prev.y !== b.y ? "\n" + b.y : "");
        prev = b;
        return s;
      });
    };
    const u = new uPlot({
      width: width(), height: 220,
      padding: [12, 24, 0, 4],
      scales: {
        x: { time: true, range: (u, min, max) => (max - min < 1800 ? [min - 900, max + 900] : [min, max]) },
        y: { range: () => [0, top] },
      },
      axes: [
        Object.assign({ space: 64, incrs: [600, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400],
          size: (u, vals) => Math.ceil(TICK + GAP + 12 * AXIS_LINE * Math.max(1, ...(vals || []).map((v) => String(v).split("\n").length)) + 2),
          values: xValues }, axis),
        Object.assign({ size: (u, vals) => Math.ceil(TICK + GAP + Math.max(24, ...(vals || []).map(textWidth)) + 4),
          incrs: [10, 20, 25, 50, 100], values: (u, vals) => vals.map((v) => (v == null ? "" : v + "%")) }, axis),
      ],
      series: [{ label: "time", value: (u, v) => (v == null ? "—" : fmtTime(v * 1000)) }].concat(keys.map((k, i) => ({
        label: limitLabel(byKey[k][0]), stroke: PALETTE[i % PALETTE.length], width: 2, spanGaps: true,
        paths: uPlot.paths.stepped({ align: 1 }),
        points: { show: pairs[i].length <= 2 || span === 0 },
        value: (u, v) => (v == null ? "—" : fmtPct(v)),
      }))),
      legend: { live: true },
      cursor: { points: { show: false } },
    }, [xs].concat(ys), el);
    el.uplot = u;
    const ro = new ResizeObserver(() => u.setSize({ width: width(), height: 220 }));
    ro.observe(el);
    onGone(el, () => { ro.disconnect(); u.destroy(); });
  }

  VIEWS.overview = async (view, live) => {
    const [d, alerts, lim] = await Promise.all([api("/api/overview", filterParams()), loadAlerts(), loadLimits()]);
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const c = d.counts;
    const limits = limitsSection(lim);
    put(view,
      alertBanner(alerts),
      limits.el,
      h("div", { class: "cards" },
        card("Sessions", fmtInt(c.sessions), { raw: c.sessions, metric: "sessions", help: "sessions" }),
        card("API turns", fmtInt(c.api_turns), { raw: c.api_turns, metric: "api_turns", help: "api_turns" }),
        card("Token rows", fmtInt(c.token_rows), { raw: c.token_rows, metric: "token_rows", help: "token_rows" }),
        card("Actions", fmtInt(c.actions), { raw: c.actions, metric: "actions", help: "actions" }),
        card("Failures", fmtInt(c.failures), { raw: c.failures, metric: "failures", help: "failures", sub: c.actions ? (100 * c.failures / c.actions).toFixed(1) + "%" : "" })),
      costCards(d));
    limits.draw();
    if (!c.sessions && !c.actions && !d.total.turns) return add(view, emptyWindow());
    const charts = h("div", { class: "grid" });
    const costPanel = panel("Cost over time by billing bucket", "buckets");
    const actPanel = panel("Actions vs failures per " + d.activity_unit, "activity");
    charts.append(costPanel, actPanel);
    add(view, charts,
      h("div", { class: "grid" },
        panel("Top models", "models", modelTable(d.top_models, "top-models", true),
          d.models_in_total > d.top_models.length ? h("p", { class: "muted" }, `${d.models_in_total - d.top_models.length} more on the Cost tab.`) : null),
        panel("Activity per client", "clients", table([
          { label: "Client", get: (r) => r.client || "(none)" },
          { label: "Sessions", num: true, get: (r) => fmtInt(r.sessions) },
          { label: "Actions", num: true, get: (r) => fmtInt(r.actions) },
          { label: "Failures", num: true, wide: true, get: (r) => fmtInt(r.failures) },
          { label: "Turns", num: true, wide: true, get: (r) => fmtInt(r.turns) },
          { label: "Tokens", num: true, wide: true, get: (r) => fmtCompact(r.tokens) },
          { label: "Cost", num: true, key: true, get: (r) => fmtUSD(r.cost_usd) },
        ], d.clients, { name: "clients" }))));
    stackedChart(costPanel, d.cost_over_time, BUCKETS(), fmtUSD, d.activity_unit);
    chart(actPanel, [
      { label: "actions", color: cssVar("--c-actions") },
      { label: "failures", color: cssVar("--c-failures") },
    ], d.activity.map((p) => p.label), [d.activity.map((p) => p.actions), d.activity.map((p) => p.failures)], { fmt: fmtInt, unit: d.activity_unit });
    sizeBars(view);
  };

  VIEWS.cost = async (view, live) => {
    const [d, pv] = await Promise.all([api("/api/cost", filterParams()), api("/api/plans", filterParams())]);
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    put(view, costCards(d), planPanel(pv));
    if (!d.total.turns) return add(view, emptyWindow());
    const over = panel("Cost per day by billing bucket", "buckets");
    const group = (title, rows, name) => panel(title, null, table([
      { label: name === "projects" ? "Project" : "Client", cls: "wrap", get: (r) => (name === "projects" ? [h("div", {}, baseName(r.key)), h("div", { class: "mono muted" }, r.key)] : r.key || "(none)") },
      { label: "Turns", num: true, get: (r) => fmtInt(r.turns) },
      { label: "Tokens", num: true, get: (r) => fmtCompact(tokensOf(r)) },
      { label: "Cost", num: true, key: true, get: (r) => fmtUSD(r.cost_usd) },
    ], rows, { name }));
    add(view,
      h("div", { class: "grid" }, panel("Per model", "reliability", modelTable(d.models, "models"),
        h("dl", { class: "legend" }, Object.entries(d.legend).map(([k, v]) => [h("dt", {}, relPill(k)), h("dd", {}, v)])))),
      h("div", { class: "grid" }, over),
      h("div", { class: "grid" }, group("Per project", d.projects, "projects"), group("Per client", d.clients, "cost-clients")));
    stackedChart(over, d.days, BUCKETS(), fmtUSD);
    sizeBars(view);
  };

  // planPanel sets each month's API-equivalent dollars, per provider, beside the plan config.toml's
  // [plans] gives it (/api/plans); nothing without [plans].
  function planPanel(pv) {
    if (!pv || !pv.plans_set || !pv.report.rows.length) return null;
    const ratio = (r) => (r >= 1 ? r.toFixed(1) : r.toFixed(2)) + "x";
    return h("div", { class: "grid" }, panel("Plan value", null,
      h("p", { class: "muted" }, "What each month's turns would have cost at API prices, against the monthly plan you pay (whole months the window touches)."),
      table([
        { label: "Month", get: (r) => r.month },
        { label: "Provider", get: (r) => r.provider },
        { label: "Turns", num: true, wide: true, get: (r) => fmtInt(r.turns) },
        { label: "API-equivalent", num: true, get: (r) => fmtUSD(r.api_usd) },
        { label: "Plan", get: (r) => (r.plan_usd ? r.plan || "(unnamed)" : h("span", { class: "muted" }, "no plan")) },
        { label: "Plan $/month", num: true, wide: true, get: (r) => (r.plan_usd ? fmtUSD(r.plan_usd) : "-") },
        { label: "Value", num: true, key: true, get: (r) => (r.plan_usd ? h("span", { "data-ratio": String(r.ratio) }, ratio(r.ratio)) : "-") },
      ], pv.report.rows, { name: "plans" })));
  }

  VIEWS.sessions = async (view, live, soft) => {
    if (state.session) return sessionDetail(view, live, soft);
    const page = Number(state.page || 1);
    const d = await api("/api/sessions", Object.assign(filterParams(), { page, sort: state.sort || "", limit: 50 }));
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const pages = Math.max(1, Math.ceil(d.total / d.limit));
    put(view,
      h("div", { class: "toolbar" },
        h("label", {}, "Sort ", h("select", { id: "s-sort", onchange: (e) => go({ sort: e.target.value === "last_seen" ? "" : e.target.value, page: "" }) },
          h("option", { value: "last_seen", selected: d.sort === "last_seen" }, "latest first"),
          h("option", { value: "cost", selected: d.sort === "cost" }, "cost"))),
        h("span", { class: "muted" }, `${fmtInt(d.total)} sessions seen in the window · tokens and cost are the window's`)),
      d.total ? table([
        // On a phone: the session with its client and project under it, when, and cost.
        { label: "Session", cls: "session", title: (s) => s.session_id, get: (s) => [
          s.title ? h("div", { class: "ellipsis" }, s.title) : null,
          h("div", { class: "mono" + (s.title ? " muted" : "") }, shortID(s.session_id)),
          h("div", { class: "narrow-only muted ellipsis" }, s.client + " · " + baseName(s.project))] },
        { label: "Client", wide: true, get: (s) => s.client },
        { label: "Project", wide: true, get: (s) => baseName(s.project), title: (s) => s.project },
        { label: "Last seen", get: (s) => [h("span", { class: "wide-only" }, fmtTime(s.last_seen)), h("span", { class: "narrow-only" }, fmtShort(s.last_seen))] },
        { label: "State", wide: true, get: (s) => s.state },
        { label: ["Seen by", helpBtn("paths")], wide: true, get: (s) => pathChips(s.paths) },
        { label: "Actions", num: true, wide: true, get: (s) => fmtInt(s.actions) },
        { label: "Failures", num: true, wide: true, get: (s) => (s.failures ? h("span", { class: "bad" }, fmtInt(s.failures)) : "0") },
        { label: "Turns", num: true, wide: true, get: (s) => fmtInt(s.turns) },
        { label: "Tokens", num: true, wide: true, get: (s) => fmtCompact(s.tokens) },
        { label: "Cost", num: true, key: true, get: (s) => fmtUSD(s.cost_usd) },
      ], d.sessions, { name: "sessions", onrow: (s) => go({ session: s.session_id, sclient: s.client }) }) : emptyWindow(),
      h("div", { class: "pager" },
        h("button", { type: "button", disabled: page <= 1, onclick: () => go({ page: page > 2 ? String(page - 1) : "" }) }, "‹ Newer"),
        h("span", { class: "muted" }, `page ${page} of ${pages}`),
        h("button", { type: "button", disabled: page >= pages, onclick: () => go({ page: String(page + 1) }) }, "Older ›")));
  };

  // The session's conversation and timeline on screen, kept across live refreshes of the same
  // session: their items (and which are open) stay, new ones are appended once the last page is
  // loaded.
  let kept = null, convKept = null;
  const CONV_PAGE = 100;

  async function sessionDetail(view, live, soft) {
    const id = state.session, client = state.sclient || "";
    const base = "/api/sessions/" + encodeURIComponent(id);
    const d = await api(base, { client });
    if (!live()) return;
    const s = d.session;
    const same = (k) => soft && k && k.id === s.session_id && k.client === s.client && k.box.isConnected;

    // The conversation: its first page decides the view shown by default.
    let c = same(convKept) ? convKept : null;
    if (c) {
      if (!c.next) {
        const p = await c.page(c.last);
        if (!live()) return;
        convAppend(c, p);
      }
    } else {
      c = newConversation(s, base);
      const p = await c.page("");
      if (!live()) return;
      convAppend(c, p);
    }
    convKept = c;
    const hashed = /^#m\d+$/.test(location.hash);
    const mode = state.sview === "timeline" && !hashed ? "timeline" : state.sview === "conversation" || hashed || c.count ? "conversation" : "timeline";

    // The timeline, read when shown.
    const page = (cursor) => api(base + "/timeline", { client: s.client, cursor, limit: 100 });
    let t = same(kept) ? kept : null;
    // append adds a page's steps; next is where the following page starts ("" at the end), last
    // the cursor after the last step shown (where new steps start).
    const append = (p) => {
      if (p.items.length) t.tl.querySelector("li.none")?.remove();
      for (const it of p.items) t.tl.append(timelineItem(it));
      if (p.items.length) t.last = p.items[p.items.length - 1].cursor;
      t.next = p.next_cursor;
      t.more.hidden = !t.next;
    };
    const loadTimeline = async () => {
      t.loaded = true;
      const p = await page("");
      append(p);
      if (!p.items.length) t.tl.append(h("li", { class: "muted none" }, "No steps recorded."));
    };
    if (t) {
      // Steps stored since: only once every page is loaded (else "Load more" brings them).
      if (t.loaded && !t.next) {
        const p = await page(t.last);
        if (!live()) return;
        append(p);
      }
    } else {
      const tl = h("ol", { class: "timeline", "data-timeline": "" });
      t = { id: s.session_id, client: s.client, tl, box: tl, more: h("button", { type: "button", hidden: true }, "Load more"), next: "", last: "", loaded: false };
      if (mode === "timeline") {
        await loadTimeline();
        if (!live()) return;
      }
    }
    kept = t;
    t.more.onclick = async () => {
      t.more.disabled = true;
      try {
        const p = await page(t.next);
        if (live()) append(p);
      } catch (e) { showBanner(e.message); }
      t.more.disabled = false;
    };

    // Conversation | Timeline: switched in place, the URL remembering the choice.
    const convPane = h("div", { class: "pane", "data-pane": "conversation", hidden: mode !== "conversation" }, c.box, c.more);
    const tlPane = h("div", { class: "pane", "data-pane": "timeline", hidden: mode !== "timeline" }, t.tl, t.more);
    const switchTo = async (m) => {
      state = Object.assign({}, state, { sview: m });
      history.replaceState(null, "", stateURL(state));
      for (const b of seg.querySelectorAll("button")) b.setAttribute("aria-selected", String(b.dataset.sview === m));
      convPane.hidden = m !== "conversation";
      tlPane.hidden = m !== "timeline";
      if (m === "timeline" && !t.loaded) {
        try { await loadTimeline(); } catch (e) { showBanner(e.message); }
      }
    };
    const seg = h("div", { class: "seg", role: "tablist", "aria-label": "Show the session as" },
      [["conversation", "Conversation"], ["timeline", "Timeline"]].map(([m, label]) =>
        h("button", { type: "button", role: "tab", "data-sview": m, "aria-selected": String(mode === m), onclick: () => switchTo(m) }, label)));

    put(view,
      h("p", {}, h("a", { href: stateURL(Object.assign({}, state, { session: "", sclient: "", sview: "" })), onclick: (e) => { e.preventDefault(); go({ session: "", sclient: "", sview: "" }); } }, "‹ All sessions")),
      s.title ? h("h2", { class: "session-title" }, s.title) : null,
      h("h2", { class: "mono" + (s.title ? " muted" : ""), "data-session": s.session_id }, s.session_id),
      h("p", { class: "muted wrap-any" }, `${s.client} · ${s.project || "no project"} · ${s.state} · ${fmtTime(s.first_seen)} → ${fmtTime(s.last_seen)}`,
        s.parent_session_id ? [" · parent ", h("a", { href: "#", onclick: (e) => { e.preventDefault(); go({ session: s.parent_session_id, sclient: s.client }); } }, shortID(s.parent_session_id))] : null),
      h("p", { class: "muted", "data-session-paths": "" }, "Seen by ", pathChips(s.paths), " ", helpBtn("paths")),
      h("div", { class: "cards" },
        card("Cost", fmtUSD(d.total.cost_usd), { raw: d.total.cost_usd, metric: "cost", help: "cost" }),
        card("Tokens", fmtCompact(tokensOf(d.total)), { raw: tokensOf(d.total), metric: "tokens", help: "tokens" }),
        card("Turns", fmtInt(d.total.turns), { raw: d.total.turns, metric: "turns", help: "turns" }),
        card("Actions", fmtInt(s.actions), { raw: s.actions, metric: "actions", help: "actions" }),
        card("Failures", fmtInt(s.failures), { raw: s.failures, metric: "failures", help: "failures" }),
        card("Subagents", fmtInt(d.subagents)),
        d.analysis ? card("Score", String(d.analysis.score), { raw: d.analysis.score, metric: "score", help: "score",
          sub: `errors ${(100 * d.analysis.error_rate).toFixed(0)}% · redundancy ${(100 * d.analysis.redundancy).toFixed(0)}% · exploration ${(100 * d.analysis.exploration).toFixed(0)}%` }) : null),
      c.count ? h("p", { class: "muted" }, h("a", { href: "#conversation", "data-jump": "conversation" }, "↓ Conversation"), " · ", fmtInt(c.count) + (c.next ? "+" : "") + " messages") : null,
      summariesPanel(s, d.summaries),
      h("div", { class: "grid" },
        panel("Actions by type", "actions", table([
          { label: "Type", get: (r) => r.name },
          { label: "Count", num: true, get: (r) => fmtInt(r.count) },
          { label: "Failed", num: true, get: (r) => (r.failures ? h("span", { class: "bad" }, fmtInt(r.failures)) : "0") },
        ], d.action_types, { name: "action-types", empty: "No actions." })),
        panel("Tools", null, table([
          { label: "Tool", get: (r) => r.name || "(none)", cls: "mono" },
          { label: "Calls", num: true, get: (r) => fmtInt(r.count) },
          { label: "Failed", num: true, get: (r) => (r.failures ? h("span", { class: "bad" }, fmtInt(r.failures)) : "0") },
        ], d.tools.filter((t) => t.name), { name: "session-tools", empty: "No tool calls." })),
        panel("Tokens per model", "reliability", modelTable(d.models, "session-models", true))),
      d.child_sessions.length ? panel("Child sessions", null, table([
        { label: "Session", get: (c) => shortID(c.session_id), cls: "mono" },
        { label: "First seen", get: (c) => fmtTime(c.first_seen) },
      ], d.child_sessions, { name: "child-sessions", onrow: (c) => go({ session: c.session_id, sclient: c.client }) })) : null,
      h("section", { class: "panel", id: "conversation", "data-session-view": "" },
        h("div", { class: "pane-head" }, seg, helpBtn(mode === "timeline" ? "timeline" : "conversation")), convPane, tlPane));
    sizeBars(view);
    if (!soft) await toMessage(c, live);
  }

  // ---- conversation ----

  const ROLE_LABEL = { user: "User", assistant: "Assistant", thinking: "Thinking", tool_call: "Tool call", summary: "Compaction summary" };

  // newConversation is a session's conversation on screen: its list, its "More" button (pressed
  // by itself when it scrolls into view), where the next page starts and the open subagent group.
  function newConversation(s, base) {
    const c = { id: s.session_id, client: s.client, box: h("ol", { class: "conv", "data-conversation": "" }),
      more: h("button", { type: "button", class: "more", hidden: true, "data-more": "" }, "More messages"),
      next: "", last: "", count: 0, group: null, loading: false };
    c.page = (after) => api(base + "/conversation", { client: s.client, after, limit: CONV_PAGE });
    c.loadMore = async () => {
      if (c.loading || !c.next) return;
      c.loading = true;
      c.more.disabled = true;
      try { convAppend(c, await c.page(c.next)); } catch (e) { showBanner(e.message); }
      c.loading = false;
      c.more.disabled = false;
    };
    c.more.onclick = c.loadMore;
    const io = new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) c.loadMore(); }, { rootMargin: "300px" });
    io.observe(c.more);
    onGone(c.box, () => io.disconnect());
    return c;
  }

  // convAppend adds a page of messages: a subagent's run of messages goes into one folded group
  // at its place, continued across pages.
  function convAppend(c, p) {
    if (p.items.length) c.box.querySelector(":scope > li.none")?.remove();
    for (const it of p.items) {
      const el = convItem(it);
      const agent = it.agent_id || (it.sidechain ? "sidechain" : "");
      if (agent) {
        if (!c.group || c.group.agent !== agent || c.box.lastElementChild !== c.group.li) {
          const label = h("span", {}), list = h("ol", { class: "conv" });
          const li = h("li", { class: "subagent", "data-agent": agent },
            h("details", { "data-key": "sub-" + it.id }, h("summary", {}, label), list));
          c.group = { agent, li, label, list, n: 0 };
          c.box.append(li);
        }
        c.group.list.append(el);
        c.group.n++;
        c.group.label.textContent = (agent === "sidechain" ? "Subagent" : "Subagent " + agent) + " · " + fmtInt(c.group.n) + (c.group.n === 1 ? " message" : " messages");
      } else {
        c.box.append(el);
      }
      c.count++;
    }
    if (p.items.length) c.last = p.items[p.items.length - 1].cursor;
    c.next = p.next_cursor;
    c.more.hidden = !c.next;
    if (!c.count && !c.box.childElementCount) c.box.append(h("li", { class: "muted none" }, "No conversation recorded for this session: its client's records hold none, or they were stored before observer kept conversations. The Timeline lists its actions."));
  }

  // usageTag is a model turn's tokens and cost, beside its first message.
  function usageTag(u) {
    const src = u.proxy ? "observer-proxy" : "transcript" + (u.reliability ? ", " + u.reliability : "");
    return h("span", { class: "usage", "data-usage": "", "data-cost": String(u.cost_usd),
      title: `in ${fmtInt(u.input_tokens)} · out ${fmtInt(u.output_tokens)} · cache read ${fmtInt(u.cache_read_tokens)} · cache write ${fmtInt(u.cache_creation_tokens)} (${src})` },
      fmtCompact(tokensOf(u)) + " tok · " + fmtUSD(u.cost_usd));
  }

  // toolOutput is a tool call's result: open when short, folded when long.
  function toolOutput(it) {
    if (!it.output) return it.output_size ? h("div", { class: "muted kv" }, fmtInt(it.output_size) + " bytes of output, not stored") : null;
    const lines = it.output.replace(/\n$/, "").split("\n").length;
    const short = it.output.length <= 600 && lines <= 12 && !it.output_truncated;
    const label = "output · " + fmtInt(Math.max(it.output_size || 0, it.output.length)) + " bytes" + (lines > 1 ? " · " + fmtInt(lines) + " lines" : "") +
      (it.output_truncated ? " · the first " + fmtInt(it.output.length) + " characters" : "");
    return h("details", { class: "output", open: short, "data-key": "out-" + it.id, "data-part": "output" }, h("summary", {}, label), h("pre", {}, it.output));
  }

  // convItem is one message: a link anchor (#m<id>), who, when, the model and the turn's figures,
  // then its text (set as text, never as markup).
  function convItem(it) {
    const failed = it.success === false;
    const who = it.role === "tool_call" ? (it.tool || "tool") : ROLE_LABEL[it.role] || it.role;
    const head = h("div", { class: "cm-head" },
      h("a", { class: "anchor", href: "#m" + it.id, title: "Link to this message", "aria-label": "Link to this message" }, "#"),
      h("span", { class: "who" + (it.role === "tool_call" ? " mono" : "") }, who),
      it.role === "tool_call" && it.type ? h("span", { class: "muted" }, it.type) : null,
      failed ? h("span", { class: "bad" }, "failed") : null,
      h("span", { class: "muted t", title: fmtTime(it.t) }, fmtTime(it.t).slice(11)),
      it.model && it.usage ? h("span", { class: "muted model" }, it.model) : null,
      it.duration_ms ? h("span", { class: "muted" }, fmtDur(it.duration_ms)) : null,
      it.usage ? usageTag(it.usage) : null);
    const cut = it.text_truncated ? h("div", { class: "muted kv" }, "… cut here: `observerctl export --session " + state.session + "` has it whole") : null;
    let body;
    switch (it.role) {
      case "thinking":
        body = h("details", { class: "thinking", "data-key": "think-" + it.id },
          h("summary", {}, "thinking · " + fmtInt(it.text.length) + " characters"), h("div", { class: "text" }, it.text), cut);
        break;
      case "tool_call":
        body = [it.text ? h("pre", { class: "call", "data-part": "input" }, it.text) : null, cut,
          failed && it.error ? h("pre", { class: "bad", "data-part": "error" }, it.error) : null, toolOutput(it)];
        break;
      case "summary":
        body = [h("div", { class: "epoch", "data-epoch-boundary": "" }, "Context compacted: a new epoch starts from this summary"),
          h("details", { "data-key": "sum-" + it.id }, h("summary", {}, "summary · " + fmtInt(it.text.length) + " characters"), h("div", { class: "text" }, it.text), cut)];
        break;
      default:
        body = [h("div", { class: "text" }, it.text), cut];
    }
    return h("li", { class: "cm role-" + it.role + (failed ? " failed" : ""), id: "m" + it.id, "data-role": it.role, "data-id": String(it.id) }, head, body);
  }

  // toMessage scrolls to the message the URL's #m<id> names (reading more pages until it is
  // there), opens what folds it and highlights it.
  async function toMessage(c, live) {
    const m = /^#m(\d+)$/.exec(location.hash);
    if (!m || !c) return;
    const find = () => c.box.querySelector("#m" + m[1]);
    for (let i = 0; !find() && c.next && i < 100; i++) {
      await c.loadMore();
      if (!live()) return;
    }
    const el = find();
    if (!el) return showBanner("Message " + m[1] + " is not in this session's conversation.");
    for (let p = el.parentElement; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    el.querySelector(":scope > details.thinking, :scope > details:not(.output)")?.setAttribute("open", "");
    for (const o of document.querySelectorAll(".cm.hl")) o.classList.remove("hl");
    el.classList.add("hl");
    el.scrollIntoView({ block: "center" });
  }
  window.addEventListener("hashchange", () => {
    if (state.tab === "sessions" && state.session && convKept && convKept.box.isConnected) toMessage(convKept, () => true);
  });

  // ---- search ----

  const KINDS = [["prompt", "prompts"], ["reply", "replies"], ["thinking", "thinking"], ["command", "commands"], ["summary", "summaries"], ["output", "outputs"], ["title", "titles"]];
  const KIND_LABEL = { prompt: "prompt", reply: "reply", thinking: "thinking", command: "command", summary: "summary", output: "output", title: "title" };
  const utf8 = new TextEncoder(), fromUTF8 = new TextDecoder();

  // highlighted is a snippet with its matched words in <mark>: the ranges are byte offsets into
  // the snippet's UTF-8; every piece is set as text.
  function highlighted(text, ranges) {
    const b = utf8.encode(text), out = [];
    let at = 0;
    for (const [from, to] of (ranges || []).slice().sort((x, y) => x[0] - y[0])) {
      if (from < at || to > b.length || from >= to) continue;
      if (from > at) out.push(fromUTF8.decode(b.subarray(at, from)));
      out.push(h("mark", {}, fromUTF8.decode(b.subarray(from, to))));
      at = to;
    }
    if (at < b.length) out.push(fromUTF8.decode(b.subarray(at)));
    return out;
  }

  // A session's page from a search result, at the message (hash) when there is one.
  function resultLink(s, hash, kids, cls) {
    const patch = { tab: "sessions", session: s.session_id, sclient: s.client };
    const href = stateURL({ window: state.window, project: state.project, client: state.client, member: state.member, ...patch }) + (hash || "");
    return h("a", { href, class: cls, onclick: (e) => { if (!plainClick(e)) return; e.preventDefault(); go(patch, hash); } }, kids);
  }

  VIEWS.search = async (view, live) => {
    const text = (state.q || "").trim();
    if (!text) {
      return put(view, h("div", { class: "empty", "data-empty": "search" }, "Type what to look for in the search box (press /), then Enter. ", helpBtn("search")));
    }
    const kinds = (state.kind || "").split(",").filter((k) => KIND_LABEL[k]);
    const d = await api("/api/search", Object.assign(filterParams(), { q: text, kind: kinds.join(","), newest: state.newest ? "1" : "" }));
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const chip = (k, label) => {
      const on = k ? kinds.includes(k) : !kinds.length;
      const next = !k ? [] : on ? kinds.filter((x) => x !== k) : kinds.concat([k]);
      return h("button", { type: "button", class: "chip" + (on ? " on" : ""), "aria-pressed": String(on), "data-kind": k || "all",
        onclick: () => go({ kind: KINDS.map((x) => x[0]).filter((x) => next.includes(x)).join(",") }) }, label);
    };
    const order = (newest, label) => h("button", { type: "button", role: "tab", "data-order": newest ? "newest" : "best", "aria-selected": String(!!d.newest === newest),
      onclick: () => go({ newest: newest ? "1" : "" }) }, label);
    const scope = [state.window === "all" ? "all time" : "the last " + state.window, state.project ? baseName(state.project) : "all projects",
      state.client || "all clients", state.member ? "member " + state.member : null].filter(Boolean).join(" · ");
    put(view,
      h("div", { class: "toolbar" },
        h("span", { class: "chips", role: "group", "aria-label": "Kinds of text" }, chip("", "all"), KINDS.map(([k, label]) => chip(k, label))),
        h("span", { class: "seg", role: "tablist", "aria-label": "Order" }, order(false, "best first"), order(true, "newest first")),
        helpBtn("search")),
      h("p", { class: "muted", "data-search-summary": "" }, `${fmtInt(d.sessions.length)} ${d.sessions.length === 1 ? "session" : "sessions"} matching “${d.query}” in ${scope}`,
        d.capped ? " (more matched than were looked at: a rarer word or a filter finds the rest)" : ""),
      d.sessions.length ? h("ol", { class: "results", "data-results": "" }, d.sessions.map((s) => h("li", { class: "result panel", "data-session": s.session_id, "data-client": s.client },
        h("div", { class: "result-head" }, resultLink(s, "", s.title || shortID(s.session_id), "result-title" + (s.title ? "" : " mono")),
          h("div", { class: "muted wrap-any" }, `${s.client} · ${baseName(s.project)} · ${fmtShort(s.last_hit)} · ${fmtInt(s.hits)} ${s.hits === 1 ? "match" : "matches"}`)),
        h("ul", { class: "matches" }, s.matches.map((m) => h("li", { class: "match", "data-kind": m.kind, "data-message": m.message_id ? String(m.message_id) : null },
          h("span", { class: "pill kind-" + m.kind }, KIND_LABEL[m.kind] || m.kind), " ",
          resultLink(s, m.message_id ? "#m" + m.message_id : "", highlighted(m.snippet, m.highlights), "snippet"),
          h("span", { class: "muted t" }, " " + fmtShort(m.t))))))))
        : h("div", { class: "empty", "data-empty": "search" }, "Nothing matches in " + scope + ". Fewer words, a word ending in *, another kind or a wider window may find it."));
  };

  // ---- session memory ----

  const ENDED_BY = { compaction: "compacted", idle: "went idle", finalized: "session ended" };
  const SOURCES = {
    extractive: "Built from the stored records alone: the same every time.",
    model: "Written by the language model of [memory] model.",
  };

  // summaryItem is one epoch's account: which epoch, whose words, what ended it, when, its
  // figures, then the text; withSession names the session first (the Memory tab).
  function summaryItem(m, withSession) {
    const range = (m.first_ts ? fmtTime(m.first_ts) + " → " : "") + fmtTime(m.last_ts);
    const figures = [ENDED_BY[m.ended_by] || m.ended_by, range, fmtInt(m.actions) + (m.actions === 1 ? " action" : " actions"),
      m.epoch_turns ? fmtUSD(m.epoch_cost_usd) + " in " + fmtInt(m.epoch_turns) + (m.epoch_turns === 1 ? " turn" : " turns") : null,
      m.source === "model" ? "summary cost " + fmtUSD(m.cost_usd) : null].filter(Boolean).join(" · ");
    return h("article", { class: "summary", "data-summary": "", "data-epoch": String(m.epoch), "data-source": m.source },
      h("div", { class: "summary-head" },
        withSession ? [sessLink(m), h("span", { class: "muted" }, " " + m.client + " · ")] : null,
        h("strong", {}, "Epoch " + m.epoch), " ",
        h("span", { class: "pill src-" + m.source, title: SOURCES[m.source] || m.source }, m.source === "model" && m.model ? "model · " + m.model : m.source), " ",
        h("span", { class: "muted" }, figures)),
      h("pre", { class: "summary-text" }, m.text));
  }

  // summariesPanel shows a session's summaries, newest epoch first, and says when the current
  // epoch is still going (its summary comes when it ends).
  function summariesPanel(s, list) {
    const ended = s.state === "idle" || s.state === "finalized";
    const going = !ended && !list.some((m) => m.epoch === s.epoch);
    return h("div", { class: "grid" }, panel("Summaries", "summaries",
      going ? h("p", { class: "muted", "data-summary-pending": String(s.epoch) }, `Epoch ${s.epoch} is in progress: its summary is written when it ends (a compaction, the session going idle or ending).`) : null,
      list.map((m) => summaryItem(m, false)),
      !list.length && !going ? h("p", { class: "muted" }, "No summary yet: the writer summarizes an epoch shortly after it ends.") : null));
  }

  const OBSERVATION_KINDS = { test_command: "test command", build_command: "build command", failing_command: "failing command", co_change: "changed together", change_area: "where changes land" };

  // evidenceList is the actions an observation rests on, each linked to its session.
  function evidenceList(o) {
    return h("details", { class: "evidence", "data-key": "ev-" + o.id },
      h("summary", {}, "evidence: " + fmtInt(o.evidence.length) + (o.evidence.length === 1 ? " action" : " actions")),
      h("ul", {}, o.evidence.map((e) => h("li", { "data-evidence": e.event_id },
        sessLink({ session_id: e.session_id, client: e.client }), " ",
        e.found ? [h("span", { class: "muted" }, e.client + " · " + fmtTime(e.ts) + " · " + e.type + " "), h("span", { class: "target mono wrap-any" }, e.target),
          e.success === false ? h("span", { class: "bad" }, " failed") : e.success ? h("span", { class: "ok" }, " ok") : null]
          : h("span", { class: "muted" }, "no longer in the store")))));
  }

  // The Memory tab: what a project's sessions taught (all projects' strongest without one), and
  // its last sessions' summaries. The project selector is the project filter's, listing the
  // projects with observations.
  VIEWS.memory = async (view, live) => {
    const d = await api("/api/memory", filterParams());
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const projects = d.projects.slice();
    if (state.project && !projects.some((p) => p.project === state.project)) projects.push({ project: state.project, observations: 0 });
    const sel = h("select", { id: "m-project", onchange: (e) => go({ project: e.target.value }) },
      h("option", { value: "" }, "all projects"),
      projects.map((p) => h("option", { value: p.project, title: p.project, selected: state.project === p.project }, baseName(p.project) + " (" + fmtInt(p.observations) + ")")));
    put(view, h("div", { class: "toolbar" }, h("label", {}, "Project ", sel),
      h("span", { class: "muted" }, state.project ? "What this project's sessions taught, strongest first. " : "The strongest observations of every project. ", helpBtn("memory"))));
    if (!d.memory) {
      return add(view, h("div", { class: "empty", "data-empty": "memory" }, "This store has no session memory yet: the writer adds it when it next starts (observerctl up)."));
    }
    const obs = d.observations.length ? table([
      { label: "Observation", cls: "wrap", get: (o) => [h("div", {}, o.text),
        h("div", { class: "narrow-only muted" }, (OBSERVATION_KINDS[o.kind] || o.kind) + (state.project ? "" : " · " + baseName(o.project))), evidenceList(o)] },
      { label: "Kind", wide: true, get: (o) => OBSERVATION_KINDS[o.kind] || o.kind },
      state.project ? null : { label: "Project", wide: true, get: (o) => baseName(o.project), title: (o) => o.project },
      { label: "Support", num: true, get: (o) => fmtInt(o.support) },
      { label: "Against", num: true, wide: true, get: (o) => (o.contradictions ? h("span", { class: "bad" }, fmtInt(o.contradictions)) : "0") },
      { label: "Confidence", num: true, get: (o) => (100 * o.confidence).toFixed(0) + "%" },
      { label: "Last seen", wide: true, get: (o) => fmtTime(o.last_seen) },
    ].filter(Boolean), d.observations, { name: "observations" })
      : h("div", { class: "empty", "data-empty": "memory" }, state.project ? "Nothing learned about this project in this window yet. " : "Nothing learned in this window yet. ",
        "Observations come from sessions that ended: a command that passes or always fails, files changed together, in at least two sessions for most kinds.");
    add(view,
      h("div", { class: "grid" }, panel("Observations", "memory", obs,
        d.total_observations > d.observations.length ? h("p", { class: "muted" }, `${fmtInt(d.total_observations - d.observations.length)} weaker ones not shown.`) : null)),
      h("div", { class: "grid" }, panel("Last sessions" + (state.client ? " of " + state.client : ""), "summaries",
        d.summaries.length ? d.summaries.map((m) => summaryItem(m, true)) : h("p", { class: "muted" }, "No session summarized in this window yet."))));
  };

  function timelineItem(it) {
    const t = h("span", { class: "t" }, fmtTime(it.t).slice(11));
    if (it.kind === "usage") {
      return h("li", { class: "usage", "data-kind": "usage" }, t, `${it.model || "model"} turn: in ${fmtInt(it.input_tokens)} · out ${fmtInt(it.output_tokens)} · cache read ${fmtInt(it.cache_read_tokens)} · cache write ${fmtInt(it.cache_creation_tokens)} · ${fmtUSD(it.cost_usd)}`);
    }
    const failed = it.success === false;
    const head = [t, h("strong", { class: failed ? "bad" : null }, it.type), " ", it.tool ? h("span", { class: "mono muted" }, it.tool) : null, " ",
      h("span", {}, (it.target || "").slice(0, 200)), failed ? h("span", { class: "bad" }, " failed") : null];
    const expandable = it.tool || it.output || it.error;
    if (!expandable) return h("li", { "data-kind": "action" }, head);
    return h("li", { "data-kind": "action" }, h("details", {},
      h("summary", {}, head),
      h("div", { class: "kv" }, [it.tool_use_id ? "id " + it.tool_use_id : null, it.duration_ms ? fmtDur(it.duration_ms) : null,
        it.output_size ? fmtInt(it.output_size) + " bytes out" : null, it.agent_id ? "subagent " + it.agent_id : null,
        it.freshness ? "read: " + it.freshness : null, it.model].filter(Boolean).join(" · ")),
      it.target && (it.target.length > 200 || it.target_truncated) ? h("pre", { "data-part": "target" }, it.target + (it.target_truncated ? "\n…" : "")) : null,
      it.error ? h("pre", { class: "bad", "data-part": "error" }, it.error) : null,
      it.output ? h("pre", { "data-part": "output" }, it.output + (it.output_truncated ? "\n… (truncated)" : "")) : h("div", { class: "kv" }, "no output stored")));
  }

  // The Actions list on screen, kept across live refreshes: the older pages loaded stay.
  let actionsKept = null;

  VIEWS.actions = async (view, live, soft) => {
    const params = () => Object.assign(filterParams(), { type: state.type || "", failed: state.failed || "", session: state.session || "", tool: state.tool || "", limit: 100 });
    const key = JSON.stringify(params());
    const d = await api("/api/actions", params());
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const prev = soft && actionsKept && actionsKept.key === key ? actionsKept : null;
    if (prev && prev.items.length > d.items.length && d.items.length) {
      // Keep the older pages: the kept items older than the new first page's last one.
      const last = d.items[d.items.length - 1];
      const older = prev.items.filter((a) => a.t < last.t || (a.t === last.t && a.id < last.id));
      d.items = d.items.concat(older);
      d.next_cursor = prev.cursor;
    }
    const cols = [
      { label: "Time", get: (a) => fmtTime(a.t) },
      { label: "Client", get: (a) => a.client },
      { label: "Session", get: (a) => h("a", { href: "#", onclick: (e) => { e.preventDefault(); go({ tab: "sessions", session: a.session_id, sclient: a.client }); } }, shortID(a.session_id)), cls: "mono" },
      { label: "Type", get: (a) => a.type },
      { label: "Tool", get: (a) => a.tool, cls: "mono" },
      { label: "Target", get: (a) => (a.target || "").slice(0, 160), cls: "wrap mono", title: (a) => a.target },
      { label: "Result", get: (a) => (a.success === false ? h("span", { class: "bad", title: a.error }, "failed") : a.success ? h("span", { class: "ok" }, "ok") : "") },
      { label: "Duration", num: true, get: (a) => fmtDur(a.duration_ms) },
    ];
    const typeSel = h("select", { id: "a-type", onchange: (e) => go({ type: e.target.value }) },
      h("option", { value: "" }, "all types"), ACTION_TYPES.map((t) => h("option", { value: t, selected: state.type === t }, t)));
    const failed = h("input", { type: "checkbox", id: "a-failed", checked: state.failed === "1", onchange: (e) => go({ failed: e.target.checked ? "1" : "" }) });
    const tool = h("input", { type: "search", id: "a-tool", placeholder: "tool (exact)", value: state.tool || "", size: 12, onchange: (e) => go({ tool: e.target.value.trim() }) });
    const sess = h("input", { type: "search", id: "a-session", placeholder: "session id", value: state.session || "", size: 14, onchange: (e) => go({ session: e.target.value.trim() }) });
    const body = h("div", {});
    const more = h("button", { type: "button", hidden: !d.next_cursor }, "Older ›");
    put(view, h("div", { class: "toolbar" }, h("label", {}, "Type ", typeSel), h("label", {}, failed, " failed only"), tool, sess), body, h("div", { class: "pager" }, more));
    let items = d.items, cursor = d.next_cursor;
    const draw = () => {
      body.replaceChildren(items.length ? table(cols, items, { name: "actions" }) : emptyWindow());
      actionsKept = { key, items, cursor };
    };
    draw();
    more.addEventListener("click", async () => {
      more.disabled = true;
      try {
        const next = await api("/api/actions", Object.assign(params(), { cursor }));
        if (!live()) return;
        items = items.concat(next.items);
        cursor = next.next_cursor;
        draw();
        more.hidden = !cursor;
      } catch (e) { showBanner(e.message); }
      more.disabled = false;
    });
  };

  VIEWS.tools = async (view, live) => {
    const d = await api("/api/tools", filterParams());
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    if (!d.labels.length) return put(view, emptyWindow());
    const mix = panel("Action mix per " + d.unit, "mix");
    put(view,
      h("div", { class: "grid" }, mix),
      panel("Tools per client", "tools", table([
        { label: "Client", get: (r) => r.client },
        { label: "Tool", get: (r) => r.tool, cls: "mono wrap" },
        { label: "Calls", num: true, get: (r) => fmtInt(r.calls) },
        { label: "Failed", num: true, get: (r) => (r.failures ? h("span", { class: "bad" }, fmtInt(r.failures)) : "0") },
        { label: "No result", num: true, get: (r) => fmtInt(r.unknown) },
        { label: "Success", num: true, get: (r) => (r.calls > r.unknown ? (100 * r.success_rate).toFixed(1) + "%" : "—") },
        { label: "Avg duration", num: true, get: (r) => fmtDur(Math.round(r.avg_duration_ms)) },
      ], d.tools, { name: "tools", empty: "No tool calls in this window." })));
    stacked(mix, d.labels, d.mix.map((m, i) => ({ label: m.type, color: PALETTE[i % PALETTE.length], raw: m.counts })), fmtInt, d.unit);
  };

  VIEWS.compression = async (view, live) => {
    const d = await api("/api/compression", filterParams());
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const t = d.total;
    put(view,
      h("div", { class: "cards" },
        card("Compression decisions", fmtInt(t.events), { raw: t.events, metric: "compressions", help: "compression" }),
        card("Bytes saved", fmtCompact(t.bytes_before - t.bytes_after), { raw: t.bytes_before - t.bytes_after, help: "compression", sub: t.events ? (100 * t.saved_ratio).toFixed(1) + "% of " + fmtCompact(t.bytes_before) : "" }),
        card("Tokens saved", fmtCompact(t.tokens_before - t.tokens_after), { raw: t.tokens_before - t.tokens_after, metric: "compression_tokens", help: "compression", sub: "estimated: bytes / 4" }),
        card("Saved", fmtUSD(t.saved_usd), { raw: t.saved_usd, metric: "compression_usd", help: "compression", sub: "at each model's input price" })),
      t.events ? [
        panel("Savings by mechanism and model", "compression", table([
          { label: "Mechanism", get: (r) => r.mechanism },
          { label: "Model", get: (r) => r.model || "(none)", cls: "mono" },
          { label: "Requests", num: true, get: (r) => fmtInt(r.events) },
          { label: "Bytes before", num: true, get: (r) => fmtInt(r.bytes_before) },
          { label: "Bytes after", num: true, get: (r) => fmtInt(r.bytes_after) },
          { label: "Saved", num: true, get: (r) => (100 * r.saved_ratio).toFixed(1) + "%" },
          { label: "Tokens saved", num: true, get: (r) => fmtInt(r.tokens_before - r.tokens_after) },
          { label: "USD saved", num: true, get: (r) => fmtUSD(r.saved_usd) },
        ], d.groups, { name: "compression" })),
        panel("Latest", null, table([
          { label: "Time", get: (e) => fmtTime(e.t) },
          { label: "Client", get: (e) => e.client },
          { label: "Mechanism", get: (e) => e.mechanism },
          { label: "Mode", get: (e) => e.mode },
          { label: "Model", get: (e) => e.model, cls: "mono" },
          { label: "Bytes", num: true, get: (e) => fmtInt(e.bytes_before) + " → " + fmtInt(e.bytes_after) },
          { label: "Stash", get: (e) => e.stash_id || "", cls: "mono" },
        ], d.recent, { name: "compression-recent" })),
      ] : h("div", { class: "empty", "data-empty": "compression" }, "No compressed requests in this window. observer-proxy records one each time it rewrites a request to spend fewer tokens."));
  };

  VIEWS.live = async (view, live) => {
    const dot = h("span", { class: "dot" });
    const stat = h("span", { id: "live-status" }, "connecting…");
    const count = h("span", { class: "muted", id: "live-count" }, "0 events");
    const list = h("ol", { class: "live-list", id: "live-list" });
    let paused = false, n = 0;
    const pause = h("button", { type: "button", onclick: () => { paused = !paused; pause.textContent = paused ? "Resume" : "Pause"; } }, "Pause");
    const clear = h("button", { type: "button", onclick: () => { list.replaceChildren(); } }, "Clear");
    put(view, panel("Live", "live",
      h("div", { class: "toolbar" }, dot, stat, count, pause, clear,
        h("span", { class: "muted" }, state.client || state.project ? "filtered by the client and project above" : "all events")),
      list));
    const u = new URL("/api/live", location.origin);
    if (state.client) u.searchParams.set("client", state.client);
    if (state.project) u.searchParams.set("project", state.project);
    const es = new EventSource(u);
    onGone(list, () => es.close());
    const setStatus = (ok, text) => { dot.className = "dot " + (ok ? "on" : "off"); stat.textContent = text; };
    const onStatus = (e) => {
      const s = JSON.parse(e.data);
      setStatus(s.bus_connected, s.bus_connected ? "following the bus" : "bus not reachable; waiting");
    };
    es.addEventListener("hello", onStatus);
    es.addEventListener("status", onStatus);
    es.addEventListener("dropped", (e) => list.prepend(h("li", { class: "muted" }, `… ${JSON.parse(e.data).dropped} events skipped (the page fell behind)`)));
    es.addEventListener("error", () => setStatus(false, "disconnected; retrying"));
    es.addEventListener("message", (e) => {
      const ev = JSON.parse(e.data);
      n++;
      count.textContent = fmtInt(n) + (n === 1 ? " event" : " events");
      if (paused) return;
      const time = new Date(ev.time);
      list.prepend(h("li", { class: ev.failed ? "failed" : null, "data-id": ev.id, title: ev.summary },
        `${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}  ${ev.kind.padEnd(11)}  ${(ev.client || "-").padEnd(12)}  ${shortID(ev.session_id || "-").padEnd(9)}  ${ev.summary}`));
      while (list.childElementCount > 500) list.lastElementChild.remove();
    });
    if (!live()) es.close();
  };

  const pct = (x) => (x == null ? "—" : (x > 0 ? "+" : "") + x.toFixed(1) + "%");
  // A session in a list: its title when it has one (the id on hover), else its short id.
  const sessLink = (r) => h("a", { href: stateURL({ tab: "sessions", window: state.window, session: r.session_id, sclient: r.client }), onclick: (e) => { e.preventDefault(); go({ tab: "sessions", session: r.session_id, sclient: r.client }); }, class: r.title ? "sess-title" : "mono", title: r.session_id }, r.title || shortID(r.session_id));
  const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

  // heatmap draws weekday × hour cells whose opacity is the share of the busiest cell.
  function heatmap(grid, metric) {
    const max = Math.max(...grid.flat().map((c) => c[metric]), 0) || 1;
    const fmt = metric === "cost_usd" ? fmtUSD : fmtInt;
    return h("div", { class: "table-wrap" }, h("table", { class: "heatmap", "data-table": "heatmap" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), Array.from({ length: 24 }, (_, i) => h("th", { class: "num" }, String(i))))),
      h("tbody", {}, grid.map((row, d) => h("tr", {}, h("th", {}, WEEKDAYS[d]),
        row.map((c, hr) => h("td", { class: "cell", "data-heat": c[metric] / max, title: `${WEEKDAYS[d]} ${pad(hr)}:00 · ${fmtInt(c.turns)} turns · ${fmtUSD(c.cost_usd)}` })))))));
  }
  function sizeHeat(root) {
    for (const c of root.querySelectorAll("[data-heat]")) c.style.opacity = String(0.08 + 0.92 * Number(c.dataset.heat));
  }

  VIEWS.analysis = async (view, live) => {
    const d = await api("/api/analysis", filterParams());
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const t = d.total;
    put(view, h("div", { class: "cards" },
      card("Cost", fmtUSD(t.cost_usd), { raw: t.cost_usd, metric: "cost", help: "cost", title: String(t.cost_usd) }),
      card("vs prior period", d.prior ? pct(d.change_pct) : "—", { raw: d.change_pct, metric: "change", help: "change", sub: d.prior ? "prior " + fmtUSD(d.prior.cost_usd) : "no prior period for all time" }),
      card("$ / turn", fmtUSD(d.per_turn_usd), { raw: d.per_turn_usd, metric: "per_turn", help: "per_turn", sub: fmtInt(t.turns) + " turns" }),
      card("Burn rate", fmtUSD(d.burn_per_active_hour_usd) + "/h", { raw: d.burn_per_active_hour_usd, metric: "burn", help: "burn", sub: fmtInt(d.active_hours) + " active hours" }),
      card("Cache savings", fmtUSD(d.cache_savings_usd), { raw: d.cache_savings_usd, metric: "cache_savings", help: "cache_savings" }),
      card("Cache hit rate", (100 * d.cache_hit_rate).toFixed(1) + "%", { raw: d.cache_hit_rate, metric: "cache_hit", help: "cache_hit" })));
    if (!t.turns) return add(view, emptyWindow());
    const metric = state.heat === "cost" ? "cost_usd" : "turns";
    add(view,
      h("div", { class: "grid" }, panel("Most expensive sessions", "expensive", table([
        { label: "Session", get: sessLink },
        { label: "Client", get: (r) => r.client },
        { label: "Turns", num: true, get: (r) => fmtInt(r.turns) },
        { label: "Cost", num: true, get: (r) => fmtUSD(r.cost_usd), title: (r) => `input ${fmtUSD(r.input_usd)} · output ${fmtUSD(r.output_usd)} · cache read ${fmtUSD(r.cache_read_usd)} · cache write ${fmtUSD(r.cache_write_usd)}` },
        { label: "Why", get: (r) => r.reason },
      ], d.top_sessions, { name: "expensive" }))),
      h("div", { class: "grid" }, panel("When: " + (metric === "turns" ? "turns" : "cost") + " by weekday and local hour", "heatmap",
        h("div", { class: "toolbar" }, h("label", {}, "Show ", h("select", { id: "heat-metric", onchange: (e) => go({ heat: e.target.value === "turns" ? "" : e.target.value }) },
          h("option", { value: "turns", selected: metric === "turns" }, "turns"), h("option", { value: "cost", selected: metric === "cost_usd" }, "cost")))),
        heatmap(d.heatmap, metric))),
      h("div", { class: "grid" }, panel("Could have used a cheaper model", "cheaper",
        h("p", { class: "muted" }, "Rule: " + d.cheaper_rule + "."),
        table([
          { label: "Session", get: sessLink },
          { label: "Model", get: (r) => r.model, cls: "mono" },
          { label: "Turns", num: true, get: (r) => fmtInt(r.turns) },
          { label: "Tool calls", num: true, get: (r) => fmtInt(r.tool_calls) },
          { label: "Output/turn", num: true, get: (r) => fmtInt(Math.round(r.output_per_turn)) },
          { label: "Cost", num: true, get: (r) => fmtUSD(r.cost_usd) },
          { label: "With", get: (r) => r.cheaper_model, cls: "mono" },
          { label: "Would cost", num: true, get: (r) => fmtUSD(r.cheaper_cost_usd) },
          { label: "Saving", num: true, get: (r) => fmtUSD(r.saving_usd) },
        ], d.cheaper, { name: "cheaper", empty: "No session in this window matches the rule." }))));
    sizeHeat(view);
  };

  VIEWS.discovery = async (view, live) => {
    const d = await api("/api/discovery", filterParams());
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const t = d.totals;
    put(view, h("div", { class: "cards" },
      card("Sessions", fmtInt(t.sessions), { raw: t.sessions, metric: "analysis_sessions", help: "analysis_window",
        sub: d.pending_sessions ? fmtInt(d.pending_sessions) + " being analysed" : "" }),
      card("Stale re-reads", fmtInt(t.stale_rereads), { raw: t.stale_rereads, metric: "stale_rereads", help: "stale_rereads" }),
      card("Unclassified re-reads", fmtInt(t.unclassified_rereads), { raw: t.unclassified_rereads, metric: "unclassified_rereads", help: "unclassified_rereads" }),
      card("Files re-read across agents", fmtInt(t.cross_agent_files), { raw: t.cross_agent_files, metric: "cross_agent", help: "cross_agent" }),
      card("Repeated commands", fmtInt(t.repeated_commands), { raw: t.repeated_commands, metric: "repeated_commands", help: "repeated_commands" }),
      card("Files shared by clients", fmtInt(t.shared_files), { raw: t.shared_files, metric: "shared_files", help: "shared_files" })),
      h("div", { class: "grid" }, panel("Re-reads", "stale_rereads", table([
        { label: "Session", get: sessLink },
        { label: "Client", get: (r) => r.client },
        { label: "File", get: (r) => r.target, cls: "mono wrap", title: (r) => r.project },
        { label: "Reads", num: true, get: (r) => fmtInt(r.reads) },
        { label: "Stale", num: true, get: (r) => (r.stale ? h("span", { class: "bad" }, fmtInt(r.stale)) : "0") },
        { label: "Unclassified", num: true, get: (r) => fmtInt(r.unclassified) },
        { label: "Agents", num: true, get: (r) => fmtInt(r.agents) },
        { label: "Finding", get: (r) => r.label },
      ], d.rereads, { name: "rereads", empty: "No file was read twice by a session in this window." }))),
      h("div", { class: "grid" }, panel("Repeated commands", "repeated_commands", table([
        { label: "Session", get: sessLink },
        { label: "Client", get: (r) => r.client },
        { label: "Command", get: (r) => r.command, cls: "mono wrap" },
        { label: "Runs", num: true, get: (r) => fmtInt(r.runs) },
        { label: "Repeats", num: true, get: (r) => fmtInt(r.repeats) },
      ], d.repeats, { name: "repeats", empty: "No command was run again with nothing edited in between." }))),
      h("div", { class: "grid" }, panel("Files touched by several clients", "shared_files", table([
        { label: "Project", get: (r) => baseName(r.project), title: (r) => r.project },
        { label: "File", get: (r) => r.target, cls: "mono wrap" },
        { label: "Clients", get: (r) => r.clients.join(", ") },
        { label: "Actions", num: true, get: (r) => fmtInt(r.actions) },
        { label: "Last", get: (r) => fmtTime(r.last_ts) },
      ], d.shared_files, { name: "shared", empty: "No file in this window was touched by more than one client." }))));
  };

  const PATTERN_KINDS = { command_pair: "Command pairs", co_edit: "Files edited together", edit_then_test: "Edit then test", hot_file: "Hot files" };

  VIEWS.patterns = async (view, live) => {
    const d = await api("/api/patterns", filterParams());
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    put(view, h("p", { class: "muted", "data-source": d.source }, d.pending_projects
      ? "Patterns of " + fmtInt(d.pending_projects) + " project(s) are being recomputed by the writer."
      : "Patterns kept by the writer's analysis; confidence fades when a pattern stops being seen.", helpBtn("patterns")));
    if (!d.patterns.length) return add(view, h("div", { class: "empty", "data-empty": "patterns" }, "No pattern seen twice in this window."));
    const kinds = [...new Set(d.patterns.map((p) => p.kind))];
    for (const k of kinds) {
      add(view, h("div", { class: "grid" }, panel(PATTERN_KINDS[k] || k, PATTERN_KINDS[k] ? "p_" + k : "patterns", table([
        { label: "Pattern", get: (p) => p.key, cls: "mono wrap" },
        { label: "Project", get: (p) => baseName(p.project), title: (p) => p.project },
        { label: "Support", num: true, get: (p) => fmtInt(p.support) },
        { label: "Ratio", num: true, get: (p) => (100 * p.ratio).toFixed(0) + "%" },
        { label: "Confidence", num: true, get: (p) => (100 * p.confidence).toFixed(0) + "%" },
        { label: "Detail", get: (p) => p.detail, cls: "wrap" },
        { label: "Last seen", get: (p) => fmtTime(p.last_seen) },
      ], d.patterns.filter((p) => p.kind === k), { name: "patterns-" + k }))));
    }
  };

  // The Team tab: members side by side, and each member per project, client or model.
  VIEWS.team = async (view, live) => {
    const by = ["project", "client", "model"].includes(state.by) ? state.by : "";
    const d = await api("/api/members", Object.assign(filterParams(), { by }));
    if (!live()) return;
    if (!d.store) return put(view, noStore());
    const sum = (k) => d.members.reduce((a, m) => a + (m[k] || 0), 0);
    const rate = (r) => (r.actions ? (100 * r.failures / r.actions).toFixed(1) + "%" : "—");
    const acts = sum("actions"), fails = sum("failures");
    put(view, h("div", { class: "cards" },
      card("Members", fmtInt(d.members.length), { raw: d.members.length, metric: "members", help: "team" }),
      card("Sessions", fmtInt(sum("sessions")), { raw: sum("sessions"), metric: "sessions", help: "sessions" }),
      card("Actions", fmtInt(acts), { raw: acts, metric: "actions", help: "actions" }),
      card("Failures", fmtInt(fails), { raw: fails, metric: "failures", help: "failure_rate", sub: acts ? (100 * fails / acts).toFixed(1) + "%" : "" }),
      card("Tokens", fmtCompact(sum("tokens")), { raw: sum("tokens"), metric: "tokens", help: "tokens", title: fmtInt(sum("tokens")) }),
      card("Cost", fmtUSD(sum("cost_usd")), { raw: sum("cost_usd"), metric: "cost", help: "cost", title: String(sum("cost_usd")) })));
    if (!d.members.length) {
      return add(view, h("div", { class: "empty", "data-empty": "team" }, "No team member in this window. ",
        "Members appear on a team hub's store, which holds the events of its members' machines.",
        state.window !== "all" ? [" ", h("a", { href: stateURL(Object.assign({}, state, { window: "all" })), onclick: (e) => { e.preventDefault(); go({ window: "all" }); } }, "Show all time")] : null));
    }
    const max = Math.max(...d.members.map((m) => m.cost_usd), 0) || 1;
    const failed = (r) => (r.failures ? h("span", { class: "bad" }, fmtInt(r.failures)) : "0");
    add(view, h("div", { class: "grid" }, panel("Members", "team", table([
      { label: "Member", cls: "member", title: (m) => "Show " + m.member + "'s figures on every tab", get: (m) => [
        h("div", {}, h("strong", {}, m.member)),
        m.hosts.length ? h("div", { class: "muted narrow-only" }, m.hosts.join(", ")) : null] },
      { label: "Hosts", wide: true, get: (m) => m.hosts.join(", ") || "—" },
      { label: "OS user", wide: true, get: (m) => m.os_user || "—" },
      { label: "Sessions", num: true, get: (m) => fmtInt(m.sessions) },
      { label: "Actions", num: true, get: (m) => fmtInt(m.actions) },
      { label: "Failures", num: true, wide: true, get: failed },
      { label: ["Failure rate", helpBtn("failure_rate")], num: true, get: rate },
      { label: "Turns", num: true, wide: true, get: (m) => fmtInt(m.turns) },
      { label: "Tokens", num: true, get: (m) => fmtCompact(m.tokens), title: (m) => fmtInt(m.tokens) },
      { label: "Cost", num: true, key: true, get: (m) => fmtUSD(m.cost_usd), title: (m) => `input ${fmtUSD(m.input_usd)} · output ${fmtUSD(m.output_usd)} · cache read ${fmtUSD(m.cache_read_usd)} · cache write ${fmtUSD(m.cache_write_usd)}` },
      { label: "", wide: true, get: (m) => h("div", { class: "bar", "data-w": m.cost_usd / max }) },
      { label: "Last seen", wide: true, get: (m) => fmtTime(m.last_seen) },
    ], d.members, { name: "members", onrow: (m) => go({ tab: "overview", member: m.member }) }))));
    const bySel = h("select", { id: "team-by", onchange: (e) => go({ by: e.target.value }) },
      [["", "nothing"], ["project", "project"], ["client", "client"], ["model", "model"]].map(([v, l]) => h("option", { value: v, selected: by === v }, l)));
    const compare = panel(by ? "Members × " + by : "Compare members", "compare", h("div", { class: "toolbar" }, h("label", {}, "Compare by ", bySel)));
    add(view, h("div", { class: "grid" }, compare));
    if (!by) return sizeBars(view);
    const rmax = Math.max(...d.rows.map((r) => r.cost_usd), 0) || 1;
    const keyCell = (r) => (by === "project" ? (r.key ? [h("div", {}, baseName(r.key)), h("div", { class: "mono muted" }, r.key)] : "(none)")
      : by === "model" ? h("span", { class: "model" }, breakable(r.key || "(none)")) : r.key || "(none)");
    add(compare, table([
      { label: "Member", get: (r) => r.member },
      { label: by === "project" ? "Project" : by === "client" ? "Client" : "Model", cls: by === "model" ? "mono name" : "wrap", get: keyCell, title: (r) => r.key },
      { label: "Sessions", num: true, get: (r) => fmtInt(r.sessions) },
      { label: "Actions", num: true, get: (r) => fmtInt(r.actions) },
      { label: "Failures", num: true, wide: true, get: failed },
      { label: "Failure rate", num: true, wide: true, get: rate },
      { label: "Turns", num: true, wide: true, get: (r) => fmtInt(r.turns) },
      { label: "Tokens", num: true, get: (r) => fmtCompact(r.tokens), title: (r) => fmtInt(r.tokens) },
      { label: "Cost", num: true, key: true, get: (r) => fmtUSD(r.cost_usd) },
      { label: "", wide: true, get: (r) => h("div", { class: "bar", "data-w": r.cost_usd / rmax }) },
    ], d.rows, { name: "member-compare" }));
    sizeBars(view);
  };

  const priceCols = [
    { label: "Model", get: (p) => p.model, cls: "mono" },
    { label: "Input", num: true, get: (p) => "$" + p.input },
    { label: "Output", num: true, get: (p) => "$" + p.output },
    { label: "Cache read", num: true, get: (p) => "$" + p.cache_read },
    { label: "Cache write 5m", num: true, get: (p) => "$" + p.cache_write_5m },
    { label: "Cache write 1h", num: true, get: (p) => "$" + p.cache_write_1h },
  ];

  VIEWS.settings = async (view, live) => {
    const d = await api("/api/settings");
    if (!live()) return;
    const text = h("textarea", { id: "config-text", class: "config", spellcheck: "false", rows: "24", "aria-label": "config.toml" });
    text.value = d.content;
    const msg = h("p", { id: "settings-msg", class: "msg", role: "status" });
    const save = h("button", { type: "button", id: "settings-save" }, "Save");
    // send POSTs a change (the whole text, or one price override) and reports in out.
    const send = async (req, btn, out) => {
      btn.disabled = true;
      out.className = "msg";
      out.textContent = "Saving…";
      try {
        const r = await fetch("/api/settings", {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content },
          body: JSON.stringify(req),
        });
        let body;
        try { body = await r.json(); } catch (e) { body = { error: r.status + " " + r.statusText }; }
        if (!r.ok) throw new Error(body.error || "HTTP " + r.status);
        out.className = "msg ok";
        out.textContent = body.message + (body.backup ? " The previous file is kept as " + body.backup + "." : "");
        return true;
      } catch (e) {
        out.className = "msg bad";
        out.textContent = "Not saved: " + e.message;
        return false;
      } finally {
        btn.disabled = false;
      }
    };
    save.addEventListener("click", () => send({ content: text.value }, save, msg));
    // One model's override: saved into its [pricing.models."<model>"] table, then the tab reloads.
    const omsg = h("p", { id: "override-msg", class: "msg", role: "status" });
    const model = h("input", { id: "override-model", type: "text", placeholder: "model id", "aria-label": "Model", spellcheck: "false" });
    const nums = [["input", "Input"], ["output", "Output"], ["cache_read", "Cache read"], ["cache_write_5m", "Cache write 5m"], ["cache_write_1h", "Cache write 1h"]];
    const inputs = nums.map(([k, label]) => h("input", { id: "override-" + k, type: "number", min: "0", step: "any", value: "0", "aria-label": label, size: "6" }));
    const override = async (btn, remove) => {
      const o = { model: model.value };
      if (remove) o.remove = true;
      else o.price = Object.fromEntries(nums.map(([k], i) => [k, Number(inputs[i].value) || 0]));
      if (!(await send({ override: o }, btn, omsg)) || !live()) return;
      const done = omsg.textContent;
      await VIEWS.settings(view, live);
      const m = $("#override-msg");
      if (m) { m.className = "msg ok"; m.textContent = done; }
    };
    const setBtn = h("button", { type: "button", id: "override-save", onclick: () => override(setBtn, false) }, "Save override");
    const rmBtn = h("button", { type: "button", id: "override-remove", onclick: () => override(rmBtn, true) }, "Remove override");
    // A row of the overrides table fills the form.
    const pick = (p) => { model.value = p.model; nums.forEach(([k], i) => { inputs[i].value = p[k] || 0; }); };
    const pr = d.pricing;
    const overrideCols = priceCols.concat([
      { label: "Built-in", get: (p) => p.replaces ? "$" + p.replaces.input + " / $" + p.replaces.output : "not priced" },
      { label: "Source", get: (p) => p.source },
    ]);
    put(view,
      h("div", { class: "grid" }, panel("config.toml", "settings",
        h("p", { class: "muted" }, h("code", { class: "mono" }, d.path), d.exists ? " · mode " + d.mode : " · does not exist yet: saving creates it"),
        text,
        h("div", { class: "toolbar" }, save, h("button", { type: "button", onclick: () => { text.value = d.content; msg.textContent = ""; } }, "Revert")),
        msg)),
      h("div", { class: "grid" }, panel("Where prices come from", "pricing",
        h("p", { id: "price-source" },
          "In force: config.toml's overrides (" + fmtInt(pr.overrides.length) + "), then ",
          pr.database ? ["LiteLLM's price database dated ", h("strong", {}, pr.database.date), " (" + fmtInt(pr.database.models) + " models, ", h("code", { class: "mono" }, pr.database.path), "), then "]
            : "no price database (observerctl prices update imports LiteLLM's), then ",
          "the built-in table dated ", h("strong", {}, pr.builtin_date), "."),
        table([
          { label: "Model", get: (u) => u.model },
          { label: "Turns", get: (u) => fmtInt(u.turns), num: true },
          { label: "Stored at $0", get: (u) => fmtInt(u.unpriced_turns), num: true },
          { label: "Price", get: (u) => u.priced_now ? "priced now: the writer reprices these turns" : "unknown: add an override or update the price database" },
        ], pr.unpriced, { name: "price-unpriced", empty: "Every model seen has a price." }))),
      h("div", { class: "grid" }, panel("Pricing overrides", "pricing",
        h("p", { class: "muted" }, pr.note),
        pr.error ? h("p", { class: "msg bad" }, pr.error) : null,
        table(overrideCols, pr.overrides, { name: "price-overrides", onrow: pick, empty: "No overrides: every model is priced from the built-in table." }),
        h("div", { class: "toolbar" }, model, nums.map(([, label], i) => h("label", {}, label, inputs[i])), setBtn, rmBtn),
        omsg)),
      h("div", { class: "grid" }, panel("Built-in list prices (USD per million tokens)", "pricing",
        h("details", {}, h("summary", {}, fmtInt(pr.builtin.length) + " models"), table(priceCols, pr.builtin, { name: "price-builtin" })))));
  };


  // ---- chrome: tabs, filters, status ----

  function renderTabs() {
    const nav = $("#tabs");
    // The Team tab only on a store with members (or when a link names it).
    const shown = TABS.filter(([key]) => key !== "team" || team.length || state.tab === "team");
    nav.replaceChildren(...shown.map(([key, label, soon]) => h("a", {
      href: stateURL(Object.assign({}, state, { tab: key })), "data-tab": key, class: soon ? "soon" : null,
      "aria-current": state.tab === key ? "page" : null,
      onclick: (e) => { e.preventDefault(); go({ tab: key }); },
    }, label)));
  }

  let filtersLoaded = null;
  async function loadFilters() {
    // The members of all time: a store without any (a single user's) shows no Team tab.
    const [f, m] = await Promise.all([api("/api/filters"), api("/api/members", { window: "all" }).catch(() => null)]);
    const proj = $("#f-project"), cl = $("#f-client");
    for (const p of f.projects) proj.append(h("option", { value: p.path, title: p.path }, p.name + " — " + p.path));
    for (const c of f.clients) cl.append(h("option", { value: c }, c));
    team = m ? m.members.map((r) => r.member).sort() : [];
    for (const name of team) $("#f-member").append(h("option", { value: name }, name));
    if (team.length) renderTabs();
  }
  function ensureOption(sel, value, label) {
    if (value && ![...sel.options].some((o) => o.value === value)) sel.append(h("option", { value }, label || value));
    sel.value = value || "";
  }
  function syncFilters() {
    const w = $("#f-window");
    if (!w.options.length) for (const v of WINDOWS) w.append(h("option", { value: v }, v === "all" ? "all time" : "last " + v));
    ensureOption(w, state.window);
    ensureOption($("#f-project"), state.project || "");
    ensureOption($("#f-client"), state.client || "");
    const member = $("#f-member"), on = MEMBER_TABS.includes(state.tab);
    ensureOption(member, state.member || "");
    $("#f-member-label").hidden = !team.length && !state.member;
    member.disabled = !on;
    $("#f-member-label").title = on ? "" : "This tab is not filtered by member";
  }
  for (const [id, key] of [["#f-window", "window"], ["#f-project", "project"], ["#f-client", "client"], ["#f-member", "member"]]) {
    $(id).addEventListener("change", (e) => go({ [key]: e.target.value, page: "" }));
  }

  async function pollStatus() {
    try {
      const s = await api("/api/status");
      $("#status").textContent = (s.disk_full ? "⚠ " + s.disk_full + ": new turns are not recorded · " : "") +
        (s.store ? "store ready" : "no store yet") + " · " + (s.bus_connected ? "live bus connected" : "live bus not connected");
      $("#status").classList.toggle("bad", !!s.disk_full);
    } catch (e) {
      $("#status").textContent = "dashboard unreachable";
    }
  }

  // ---- render ----

  let seq = 0;
  async function render() {
    const mine = ++seq;
    const live = () => mine === seq;
    for (const c of cleanup) c.fn();
    cleanup = [];
    renderTabs();
    syncFilters();
    if (state.tab === "search") $("#q").value = state.q || "";
    hideBanner();
    follow();
    readTick = Infinity;
    const view = $("#view");
    view.removeAttribute("data-ready");
    put(view, h("p", { class: "muted" }, "Loading…"));
    try {
      await VIEWS[state.tab](view, live, false);
    } catch (e) {
      if (!live()) return;
      put(view, );
      showBanner(e.message);
    }
    if (!live()) return;
    view.setAttribute("data-ready", state.tab);
    updated();
    settled();
  }

  // ---- keeping the view on screen current ----
  //
  // The page follows the store through /api/changes (see live.go): a "changed" tick after each of
  // the writer's commits, naming the kinds of events, the clients, projects and sessions it held
  // (or "the analysis changed"). The view on screen re-reads its data when a tick concerns it
  // (FOLLOWS, and the client, project or session it is filtered by), at most once per
  // REFRESH_EVERY: ticks in between are folded into one refresh. The ticks come after the commit,
  // never before, so the refresh reads what the events stored. While the page is hidden the
  // stream is closed; when it shows again, the stream's hello says whether anything changed
  // meanwhile (its tick number). The Live tab has its own stream and Settings never refreshes by
  // itself (its editor is the user's).
  //
  // A refresh keeps what the user set up: it fetches before it replaces anything (no "Loading…"),
  // then puts back the page's and each table's scroll position, the open <details>, the focus;
  // the session timeline and the loaded pages of Actions are kept and extended. It waits while
  // the user is typing into a field of the view.
  const EVENTS = ["action", "token_usage", "api_turn", "compression", "session", "hook", "mcp_call"];
  const FOLLOWS = {
    overview: EVENTS.concat(["alert", "limit"]),
    team: EVENTS,
    cost: ["token_usage", "api_turn"],
    sessions: EVENTS.concat(["message"]),
    actions: ["action"],
    tools: ["action"],
    compression: ["compression"],
    analysis: ["token_usage", "api_turn", "analysis"],
    discovery: ["action", "analysis"],
    patterns: ["analysis"],
    memory: ["analysis"],
  };
  const REFRESH_EVERY = 500;
  let changes = null;    // the EventSource of /api/changes while the page follows the store
  // Tick numbers: every API answer says the last tick sent before it was read (its data has every
  // change up to it); readTick is the lowest of the answers a render or refresh used, viewTick
  // that of the view on screen, serverTick the last the stream's hello or status announced. A
  // hello or status ahead of the view means ticks were missed (the page was hidden, the stream
  // reconnected, or a commit fell between the view's reads and the stream's hello).
  let readTick = Infinity, viewTick = null, serverTick = -1;
  let due = false;        // a tick concerned the view and no refresh has read it yet
  let timer = 0, lastRefresh = 0, refreshing = false, refreshes = 0, waiting = false;

  function follow() {
    const on = !document.hidden && !!FOLLOWS[state.tab];
    if (on && !changes) {
      changes = new EventSource("/api/changes");
      const onHello = (e) => {
        serverTick = JSON.parse(e.data).changes;
        if (viewTick != null && serverTick > viewTick) schedule();
      };
      changes.addEventListener("hello", onHello);
      changes.addEventListener("status", onHello);
      changes.addEventListener("dropped", () => schedule());
      changes.addEventListener("changed", (e) => {
        const t = JSON.parse(e.data);
        newFilterValues(t);
        if (concerns(t)) schedule();
        else if (viewTick != null && t.seq === viewTick + 1) viewTick = t.seq; // still current
      });
    } else if (!on && changes) {
      changes.close(); // hidden: at its return, the hello says what was missed
      changes = null;
    }
  }
  document.addEventListener("visibilitychange", () => { follow(); if (!document.hidden && due) schedule(); });

  // concerns says whether a tick changed what the view on screen shows.
  function concerns(t) {
    const follows = FOLLOWS[state.tab];
    // The writer's analysis note covers session memory too: a session's detail shows its score
    // and the summaries of its ended epochs.
    const analysis = !!follows && (follows.includes("analysis") || (state.tab === "sessions" && !!state.session));
    if (!follows || !((t.kinds || []).some((k) => follows.includes(k)) || (t.analysis && analysis))) return false;
    if (t.many) return true;
    // A plan limit is the account's, whatever the project or client filter: the Overview's gauges.
    if (state.tab === "overview" && (t.kinds || []).includes("limit")) return true;
    // An empty list says nothing about the filter (a change of the analysis, an event without a project).
    const other = (list, v) => !!v && !!list && list.length > 0 && !list.includes(v);
    if (other(t.clients, state.client) || other(t.projects, state.project)) return false;
    if ((state.tab === "sessions" || state.tab === "actions") && other(t.sessions, state.session)) return false;
    return true;
  }

  // newFilterValues adds the clients and projects a tick brings to the filters' lists.
  function newFilterValues(t) {
    const add = (sel, value, label) => { if (value && ![...sel.options].some((o) => o.value === value)) sel.append(h("option", { value, title: value }, label)); };
    for (const c of t.clients || []) add($("#f-client"), c, c);
    for (const p of t.projects || []) add($("#f-project"), p, baseName(p) + " — " + p);
  }

  function schedule() {
    if (!FOLLOWS[state.tab]) return;
    due = true;
    if (document.hidden || timer) return;
    timer = setTimeout(() => { timer = 0; refreshNow(); }, Math.max(0, lastRefresh + REFRESH_EVERY - Date.now()));
  }

  // settled runs after a render or a refresh: the view is as of its reads' tick, and a tick that
  // came meanwhile gets its refresh.
  function settled() {
    if (readTick !== Infinity) viewTick = readTick;
    if (due || serverTick > viewTick) schedule();
  }

  function typing(view) {
    const a = document.activeElement;
    if (!a || !view.contains(a)) return false;
    return a.tagName === "TEXTAREA" || (a.tagName === "INPUT" && /^(text|search|number|)$/.test(a.type) && a.value !== a.defaultValue);
  }

  function refreshNow() {
    const view = $("#view");
    if (!due || document.hidden || !FOLLOWS[state.tab]) return;
    if (refreshing || view.getAttribute("data-ready") !== state.tab) return; // settled() comes back
    if (typing(view)) {
      // Again when the field loses the focus, or in a second (the field may go without a focusout).
      if (!waiting) {
        waiting = true;
        const again = () => { if (waiting) { waiting = false; schedule(); } };
        view.addEventListener("focusout", () => setTimeout(again, 0), { once: true });
        setTimeout(again, 1000);
      }
      return;
    }
    due = false;
    refresh(view);
  }

  // swapping is the refresh in progress: put() notes the view's state (keepView) just before it
  // replaces the view, so that a scroll made while the data was being read is kept too.
  let swapping = null;

  async function refresh(view) {
    const mine = ++seq;
    const live = () => mine === seq;
    refreshing = true;
    lastRefresh = Date.now();
    readTick = Infinity;
    const swap = (swapping = { kept: null });
    try {
      await VIEWS[state.tab](view, live, true);
      if (live() && swap.kept) {
        restoreView(view, swap.kept);
        const b = $("#banner");
        if (!b.hidden && b.textContent.startsWith("Live update failed")) hideBanner();
      }
    } catch (e) {
      if (live()) showBanner("Live update failed: " + e.message + " (retrying at the next change)");
    } finally {
      if (swapping === swap) swapping = null;
      refreshing = false;
      // Charts and streams whose element the refresh replaced.
      cleanup = cleanup.filter((c) => c.el.isConnected || (c.fn(), false));
    }
    if (!live()) return;
    view.setAttribute("data-refreshes", String(++refreshes));
    updated();
    settled();
  }

  // keepView notes what a refresh must not lose: scroll positions (the page's and each table's,
  // by table name), the open <details> (by data-key, else by position), the focused element.
  function keepView(view) {
    const keyOf = (el, i) => el.dataset.key || el.querySelector("[data-table]")?.dataset.table || "#" + i;
    const a = document.activeElement;
    return {
      x: window.scrollX, y: window.scrollY,
      wraps: new Map([...view.querySelectorAll(".table-wrap")].map((w, i) => [keyOf(w, i), [w.scrollLeft, w.scrollTop]])),
      open: new Set([...view.querySelectorAll("details")].map((d, i) => (d.open ? keyOf(d, i) : null)).filter(Boolean)),
      focus: a && a !== document.body && view.contains(a) && a.id ? a.id : "",
      keyOf,
    };
  }
  function restoreView(view, k) {
    view.querySelectorAll(".table-wrap").forEach((w, i) => {
      const p = k.wraps.get(k.keyOf(w, i));
      if (p) { w.scrollLeft = p[0]; w.scrollTop = p[1]; }
    });
    view.querySelectorAll("details").forEach((d, i) => { if (k.open.has(k.keyOf(d, i))) d.open = true; });
    if (k.focus && document.activeElement !== document.getElementById(k.focus)) document.getElementById(k.focus)?.focus({ preventScroll: true });
    if (window.scrollX !== k.x || window.scrollY !== k.y) window.scrollTo(k.x, k.y);
  }

  // updated shows in the footer when the figures were read.
  function updated() {
    const d = new Date();
    $("#updated").textContent = FOLLOWS[state.tab] ? ` · updated ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` : "";
  }

  filtersLoaded = loadFilters().then(syncFilters).catch((e) => showBanner("filters: " + e.message));
  render();
  pollStatus();
  setInterval(pollStatus, 5000);
})();
