package scrub

import "net/url"

// URL returns what of a URL can be shown when the whole of it is a secret, as the webhook URLs of
// Slack and Discord are (their path is the token): its scheme and host, and "/…" when it had
// more ("https://hooks.slack.com/…"). A user or password, the path, the query and the fragment
// are dropped. Text that is not a URL with a host gives "[REDACTED:url]".
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "[REDACTED:url]"
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		out += "/…"
	}
	return out
}
