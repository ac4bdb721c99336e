package proxy

import (
	"encoding/base64"
	"net/http"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// credentials are the exact credentials a request carried for the upstream. The proxy forwards
// them untouched and keeps them only until the request's turn is recorded, to take them out of
// what it records: an upstream can echo a key in its error, in any format (a gateway's own keys, a
// Gemini key that does not start with AIza), which package scrub cannot know.
type credentials []string

// minCredential is the length under which a value is not taken out of text: a key that short
// ("sk-test", a placeholder) guards nothing, and replacing it everywhere would garble the message.
const minCredential = 8

// credentialMark replaces a forwarded credential, in package scrub's form.
const credentialMark = "[REDACTED:api-key]"

// forwardedCredentials returns the credentials of a request: its x-api-key, api-key and
// x-goog-api-key headers, the credential of its Authorization header (after the scheme, and the
// password of a Basic one), and its key= query parameter (where Gemini clients may put theirs).
func forwardedCredentials(r *http.Request) credentials {
	var c credentials
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minCredential {
			c = append(c, v)
		}
	}
	for _, h := range []string{"X-Api-Key", "Api-Key", "X-Goog-Api-Key"} {
		for _, v := range r.Header.Values(h) {
			add(v)
		}
	}
	for _, v := range r.Header.Values("Authorization") {
		v = strings.TrimSpace(v)
		scheme, cred, ok := strings.Cut(v, " ")
		if !ok {
			add(v) // a bare token (Linear's keys, some gateways')
			continue
		}
		cred = strings.TrimSpace(cred)
		add(cred)
		if strings.EqualFold(scheme, "Basic") {
			if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
				if _, pw, ok := strings.Cut(string(dec), ":"); ok {
					add(pw)
				}
			}
		}
	}
	for _, v := range r.URL.Query()["key"] {
		add(v)
	}
	// The longest first, so that a credential holding another is replaced whole.
	sort.Slice(c, func(i, j int) bool { return len(c[i]) > len(c[j]) })
	return c
}

// redact returns s with every credential replaced by credentialMark.
func (c credentials) redact(s string) string {
	for _, v := range c {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, credentialMark)
		}
	}
	return s
}

// redactTurn takes the credentials out of the text an api_turn keeps (before scrubError, so that
// package scrub does not take part of a credential first and leave the rest) and out of the
// originals of the request's compression decisions.
func (c credentials) redactTurn(t *event.APITurn, tc *turnCtx) {
	if len(c) == 0 {
		return
	}
	for _, f := range []*string{&t.ErrorClass, &t.ErrorMessage, &t.Model, &t.MessageID, &t.RequestID, &t.StopReason, &t.Endpoint} {
		*f = c.redact(*f)
	}
	if tc.compressed != nil {
		for i := range tc.compressed.Decisions {
			d := &tc.compressed.Decisions[i]
			d.Original = c.redact(d.Original)
		}
	}
}
