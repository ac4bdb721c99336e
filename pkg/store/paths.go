package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// The capture paths: the ways observer learns what a client did. A session is seen by a path when
// the store holds a row of the session that path wrote.
const (
	// PathProxy is the API traffic through observer-proxy: api_turns of origin ''.
	PathProxy = "proxy"
	// PathRecords is the client's own transcript or database, read by observer-watch or
	// `observerctl scan`: token_usage rows, or actions not from OTLP.
	PathRecords = "records"
	// PathHooks is the client's lifecycle hooks (`observerctl hook`): hook_events rows.
	PathHooks = "hooks"
	// PathOTLP is the client's own OpenTelemetry export to the OTLP receiver: session_events of
	// source 'otlp' (one per session it maps), or api_turns of origin 'otlp' (see PathBitsSQL).
	PathOTLP = "otlp"
)

// Paths are the capture paths in their fixed order, which SessionPaths and PathNames keep.
var Paths = []string{PathProxy, PathRecords, PathHooks, PathOTLP}

// PathBitsSQL is an integer SQL expression of the capture paths that saw the session in the
// columns client and session_id of the table or alias t: bit i (1 << i) is set when Paths[i] saw
// it. PathNames decodes it.
//
// Each test is an EXISTS on a session-id index (api_turns_session_ts, token_usage_session,
// actions_session, hook_events_session, session_events_session) that stops at the first row of
// the session it looks for, so a session a path saw mostly costs a row or two. CASE orders the
// tests so that the usual sessions need no more: records only, records and proxy, with or without
// OTLP. What is left to read row by row is bounded by what the session has of another path: the
// OTLP turns of a session OTLP saw and the proxy did not (to know there is no proxy turn among
// them), the OTLP actions of a session with no usage row, the session's few session events.
//
// OTLP is its session event: the receiver announces each session it maps with one session event
// (source 'otlp'), published with the session's first turn or action. Without one, the session's
// turns tell: turns none of which is the proxy's are OTLP's (a session-less OTLP turn the writer
// linked to a session later). A session with proxy turns and OTLP turns but no OTLP session event
// (pruned) is not counted as OTLP's: telling its turns apart would read every proxy turn of every
// session OTLP did not see, the commonest case. An action that the transcript reader and OTLP
// both report is one row with the source of the first to arrive: records counts every action but
// OTLP's, and needs only one (a session with usage rows is not looked at).
func PathBitsSQL(t string) string {
	k := fmt.Sprintf("session_id = %[1]s.session_id AND x.client = %[1]s.client", t)
	proxy := `EXISTS (SELECT 1 FROM api_turns x WHERE x.` + k + ` AND x.origin = '')`
	return `(CASE WHEN EXISTS (SELECT 1 FROM session_events x WHERE x.` + k + ` AND x.source = 'otlp') THEN 8 + ` + proxy + `
	       WHEN ` + proxy + ` THEN 1
	       WHEN EXISTS (SELECT 1 FROM api_turns x WHERE x.` + k + `) THEN 8
	       ELSE 0 END
	 + 2 * (CASE WHEN EXISTS (SELECT 1 FROM token_usage x WHERE x.` + k + `) THEN 1
	        ELSE EXISTS (SELECT 1 FROM actions x WHERE x.` + k + ` AND x.source != 'otlp') END)
	 + 4 * EXISTS (SELECT 1 FROM hook_events x WHERE x.` + k + `))`
}

// PathNames returns the names of the paths set in bits (PathBitsSQL), in the order of Paths; an
// empty slice, not nil, when none is.
func PathNames(bits int64) []string {
	out := []string{}
	for i, p := range Paths {
		if bits&(1<<i) != 0 {
			out = append(out, p)
		}
	}
	return out
}

// SessionKey names a session: sessions are keyed by client and session id.
type SessionKey struct {
	Client    string
	SessionID string
}

var sessionPathsSQL = `WITH k(client, session_id) AS MATERIALIZED (
	SELECT DISTINCT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
SELECT k.client, k.session_id, ` + PathBitsSQL("k") + ` FROM k`

// SessionPaths returns the capture paths that saw each of keys, in the order of Paths, in one
// query: a page of sessions costs one round trip. Every key is in the map, with an empty slice
// when no path's rows of it are stored (a session whose rows were pruned).
func SessionPaths(ctx context.Context, db *sql.DB, keys []SessionKey) (map[SessionKey][]string, error) {
	out := make(map[SessionKey][]string, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k.Client, k.SessionID}
		out[k] = []string{}
	}
	arg, err := json.Marshal(pairs)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, sessionPathsSQL, string(arg))
	if err != nil {
		return nil, fmt.Errorf("read the capture paths of %d session(s): %w", len(keys), err)
	}
	defer rows.Close()
	for rows.Next() {
		var k SessionKey
		var bits int64
		if err := rows.Scan(&k.Client, &k.SessionID, &bits); err != nil {
			return nil, err
		}
		out[k] = PathNames(bits)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the capture paths of %d session(s): %w", len(keys), err)
	}
	return out, nil
}
