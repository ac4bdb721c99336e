package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// geminiAction is the part of a Gemini API path after the model: models/{model}:{action}.
type geminiAction string

const (
	geminiGenerate     geminiAction = "generateContent"
	geminiStream       geminiAction = "streamGenerateContent"
	geminiCountTokens  geminiAction = "countTokens"
	geminiPathPrefix                = "/models/"
	geminiDefaultModel              = "gemini-2.5-pro"
)

// geminiRoute splits a Gemini API path, /v1beta/models/{model}:{action} or /v1/..., into its model
// and action; ok is false for any other path.
func geminiRoute(path string) (model string, action geminiAction, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1beta"+geminiPathPrefix)
	if !found {
		rest, found = strings.CutPrefix(path, "/v1"+geminiPathPrefix)
	}
	if !found {
		return "", "", false
	}
	model, act, found := strings.Cut(rest, ":")
	if !found || model == "" || strings.Contains(model, "/") {
		return "", "", false
	}
	switch a := geminiAction(act); a {
	case geminiGenerate, geminiStream, geminiCountTokens:
		return model, a, true
	}
	return "", "", false
}

type geminiPart struct {
	Text             string          `json:"text"`
	FunctionCall     json.RawMessage `json:"functionCall"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
}

type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

func (q *geminiRequest) functionTools() []fnTool {
	var out []fnTool
	for _, t := range q.Tools {
		for _, f := range t.FunctionDeclarations {
			if f.Name == "" {
				continue
			}
			params := f.ParametersJSONSchema
			if len(params) == 0 {
				params = f.Parameters
			}
			out = append(out, fnTool{Name: f.Name, Parameters: params})
		}
	}
	return out
}

// hasToolResult reports whether any content holds a functionResponse part.
func (q *geminiRequest) hasToolResult() bool {
	for _, c := range q.Contents {
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 && string(p.FunctionResponse) != "null" {
				return true
			}
		}
	}
	return false
}

// jsonSchema returns the schema a JSON answer must follow, if the request asks for JSON output
// (Gemini CLI's model router and its next-speaker check do).
func (q *geminiRequest) jsonSchema() json.RawMessage {
	g := q.GenerationConfig
	switch {
	case g.ResponseMimeType != "application/json":
		return nil
	case len(g.ResponseJSONSchema) > 0:
		return g.ResponseJSONSchema
	case len(g.ResponseSchema) > 0:
		return g.ResponseSchema
	}
	return json.RawMessage(`{"type":"object"}`)
}

// geminiUsage is the usageMetadata of a final Gemini response, and the record of it. Gemini's
// promptTokenCount includes the cached tokens and its candidatesTokenCount excludes the thinking
// tokens, which come apart as thoughtsTokenCount.
func (s *Server) geminiUsage() (obj, map[string]int64) {
	u := s.cfg.Usage
	prompt := u.Input + u.CacheRead
	candidates := max(u.Output-u.Reasoning, 0)
	total := prompt + candidates + u.Reasoning
	usage := obj{
		"promptTokenCount":        prompt,
		"cachedContentTokenCount": u.CacheRead,
		"candidatesTokenCount":    candidates,
		"thoughtsTokenCount":      u.Reasoning,
		"totalTokenCount":         total,
		"promptTokensDetails":     []obj{{"modality": "TEXT", "tokenCount": prompt}},
	}
	rec := map[string]int64{
		"promptTokenCount":        prompt,
		"cachedContentTokenCount": u.CacheRead,
		"candidatesTokenCount":    candidates,
		"thoughtsTokenCount":      u.Reasoning,
		"totalTokenCount":         total,
	}
	return usage, rec
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, rec *Request, model string, action geminiAction) {
	var q geminiRequest
	if !readJSON(w, r, ProviderGoogle, &q) {
		return
	}
	rec.Model = s.model(model, geminiDefaultModel)
	if action == geminiCountTokens {
		rec.Action = ActionInfo
		total := s.cfg.Usage.Input + s.cfg.Usage.CacheRead
		rec.Usage = map[string]int64{"totalTokens": total}
		writeJSON(w, http.StatusOK, obj{"totalTokens": total,
			"promptTokensDetails": []obj{{"modality": "TEXT", "tokenCount": total}}})
		return
	}
	sse := r.URL.Query().Get("alt") == "sse"
	rec.Stream = action == geminiStream
	rec.ToolResult = q.hasToolResult()
	rec.ResponseID = s.nextID("gemresp_fake_")

	// parts are the answer's parts; a stream sends chunks, one part each.
	var parts, chunks []obj
	if name, args, ok := pickFunctionTool(q.functionTools(), s.command()); ok && !rec.ToolResult {
		rec.Action, rec.Tool = ActionToolCall, name
		var a obj
		json.Unmarshal([]byte(args), &a)
		parts = []obj{{"text": TextBeforeTool}, {"functionCall": obj{"name": name, "args": a}}}
		chunks = parts
	} else {
		rec.Action = ActionFinalText
		text := finalText(q.jsonSchema(), rec.ToolResult)
		parts = []obj{{"text": text}}
		for _, t := range splitText(text) {
			chunks = append(chunks, obj{"text": t})
		}
	}
	usage, recUsage := s.geminiUsage()
	rec.Usage = recUsage
	prompt := s.cfg.Usage.Input + s.cfg.Usage.CacheRead
	response := func(parts []obj, final bool) obj {
		cand := obj{"content": obj{"role": "model", "parts": parts}, "index": 0}
		u := obj{"promptTokenCount": prompt, "totalTokenCount": prompt}
		if final {
			cand["finishReason"] = "STOP"
			u = usage
		}
		return obj{"candidates": []obj{cand}, "usageMetadata": u, "modelVersion": rec.Model, "responseId": rec.ResponseID}
	}
	if !s.wait(r) {
		return
	}
	w.Header().Set("X-Request-Id", s.nextID("req_fake_"))
	if action == geminiGenerate {
		writeJSON(w, http.StatusOK, response(parts, true))
		return
	}
	// A stream sends one chunk per part; only the last carries finishReason and the whole usage,
	// the others the prompt count alone, as the real API does.
	if sse {
		startSSE(w)
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("["))
	}
	for i, p := range chunks {
		chunk := response([]obj{p}, i == len(chunks)-1)
		b, err := json.Marshal(chunk)
		if err != nil {
			panic(err) // only maps and slices built here are marshaled
		}
		switch {
		case sse: // the real API ends its events with CRLF pairs
			fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		case i > 0:
			fmt.Fprintf(w, ",\r\n%s", b)
		default:
			w.Write(b)
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	if !sse {
		w.Write([]byte("]"))
	}
}

// geminiError answers in the Gemini API's error shape.
func geminiError(w http.ResponseWriter, status int, msg string) {
	code := map[int]string{http.StatusBadRequest: "INVALID_ARGUMENT", http.StatusNotFound: "NOT_FOUND"}[status]
	if code == "" {
		code = "UNKNOWN"
	}
	writeJSON(w, status, obj{"error": obj{"code": status, "message": msg, "status": code}})
}

func (s *Server) geminiModels(w http.ResponseWriter) {
	var models []obj
	for _, id := range []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"} {
		models = append(models, obj{"name": "models/" + id, "displayName": id + " (fake)",
			"supportedGenerationMethods": []string{"generateContent", "countTokens"}})
	}
	writeJSON(w, http.StatusOK, obj{"models": models})
}
