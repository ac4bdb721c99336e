package fakeapi

import (
	"encoding/json"
	"slices"
	"strings"
)

// finalText is the text of a final answer: for a request that asks for JSON output matching a
// schema, a value of that schema (Claude Code's session-title request asks for {"title": ...});
// otherwise TextAfterTool once the conversation holds a tool result, else TextNoTools.
func finalText(schema json.RawMessage, afterTool bool) string {
	if len(schema) > 0 {
		var s any
		if json.Unmarshal(schema, &s) == nil {
			b, err := json.Marshal(schemaExample(s, "value", 0))
			if err == nil {
				return string(b)
			}
		}
	}
	if afterTool {
		return TextAfterTool
	}
	return TextNoTools
}

// schemaExample builds a small value that satisfies a JSON schema: objects get every required
// property, strings a short sentence, numbers their minimum or 1, arrays none (types in any case:
// Gemini writes STRING). It follows enum and const, the first of anyOf/oneOf, and the first of a
// list of types; it does not resolve $ref.
func schemaExample(schema any, name string, depth int) any {
	s, ok := schema.(map[string]any)
	if !ok || depth > 8 {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return schemaExample(alts[0], name, depth+1)
		}
	}
	typ, _ := s["type"].(string)
	if list, ok := s["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
		if slices.Contains(list, any("string")) {
			typ = "string"
		}
	}
	// Gemini's OpenAPI-style schemas write the types in capitals (OBJECT, STRING, INTEGER).
	typ = strings.ToLower(typ)
	if typ == "" {
		if _, ok := s["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if k, ok := r.(string); ok {
				out[k] = schemaExample(props[k], k, depth+1)
			}
		}
		return out
	case "array":
		return []any{}
	case "string":
		return "Fake " + name + " from the observer fake API"
	case "integer", "number":
		// 1 rather than 0: Gemini CLI's model router rejects a complexity score below 1 without
		// saying so in its schema.
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return false
	}
	return nil
}
