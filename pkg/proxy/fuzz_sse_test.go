package proxy

import (
	"reflect"
	"strings"
	"testing"
)

// feedSSE runs a stream through the splitter into a turnUsage, written in pieces cut at cuts.
func feedSSE(provider string, stream []byte, cuts ...int) turnUsage {
	var u turnUsage
	s := &sseSplitter{onEvent: func(data []byte) bool { return u.streamEvent(provider, data) }}
	prev := 0
	for _, c := range cuts {
		if c > prev && c < len(stream) {
			s.write(stream[prev:c])
			prev = c
		}
	}
	s.write(stream[prev:])
	s.flush()
	return u
}

// FuzzSSEUsage: whatever bytes a model API streams, reading its usage never panics, never gives a
// negative token count, and gives the same turn however the bytes are cut into reads.
func FuzzSSEUsage(f *testing.F) {
	anthropic := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":5,\"cache_creation_input_tokens\":3,\"cache_creation\":{\"ephemeral_5m_input_tokens\":1,\"ephemeral_1h_input_tokens\":2},\"output_tokens\":1}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":42}}\r\n\r\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	errStream := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	chat := "data: {\"id\":\"c1\",\"model\":\"gpt-5\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":4},\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\ndata: [DONE]\n\n"
	responses := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\",\"model\":\"gpt-5.2-codex\",\"status\":\"in_progress\"}}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"model\":\"gpt-5.2-codex\",\"status\":\"completed\",\"usage\":{\"input_tokens\":30,\"input_tokens_details\":{\"cached_tokens\":10},\"output_tokens\":9,\"output_tokens_details\":{\"reasoning_tokens\":3}}}}\n\n"
	for _, s := range []string{anthropic, errStream, chat, responses, geminiSSE(), "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":-5,\"input_tokens\":\"x\"}}\n\n",
		"data: {\"usage\":{\"prompt_tokens\":-1,\"completion_tokens\":1e30}}\n\n", "data:\ndata:\n\n", ":comment\n\n", "data: {" + strings.Repeat("[", 200) + "\n\n"} {
		f.Add([]byte(s), uint16(7), uint16(90), uint8(0))
		f.Add([]byte(s), uint16(1), uint16(2), uint8(1))
		f.Add([]byte(s), uint16(5), uint16(400), uint8(2))
	}
	f.Fuzz(func(t *testing.T, stream []byte, a, b uint16, which uint8) {
		provider := []string{Anthropic, OpenAI, Google}[which%3]
		whole := feedSSE(provider, stream)
		cut := feedSSE(provider, stream, int(a)%(len(stream)+1), int(a)%(len(stream)+1)+int(b)%(len(stream)+1))
		if !reflect.DeepEqual(whole, cut) {
			t.Fatalf("the same stream read in other pieces gave another turn:\n%+v\n%+v", whole, cut)
		}
		for name, v := range map[string]int64{"input": whole.Input, "output": whole.Output, "cache_read": whole.CacheRead,
			"cache_creation": whole.CacheCreation, "cache_creation_1h": whole.CacheCreation1h, "reasoning": whole.Reasoning} {
			if v < 0 {
				t.Fatalf("%s = %d from %q", name, v, stream)
			}
		}
	})
}
