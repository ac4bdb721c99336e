package devin

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// Poll reads the message nodes added since the watermark and commits the watermark only after a
// successful pass.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := sqliteread.Pass(ctx, p.src.Path, func() state { return p.st }, p.read)
	if err != nil {
		return nil, err
	}
	evs := p.events(got)
	p.st = work
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// pass is what one pass read.
type pass struct {
	sessions map[string]sessionRow
	nodes    []nodeRow            // the rows past the watermark, in row_id order
	links    map[nodeKey]nodeLink // parent links of every node of the touched sessions
	roots    map[nodeKey]rootKind // the kind of every parentless node of those sessions
	touched  []string             // sessions with new nodes, in order of first appearance
	inPass   map[string]struct{}  // the same, as a set
	first    map[string]int64     // created_at of each touched session's first node read
	owners   map[nodeKey]owner    // ownerOf's memo
}

type sessionRow struct {
	id, title, cwd, model string
	created               int64
}

type nodeKey struct {
	session string
	node    int64
}

type nodeLink struct {
	parent    int64
	hasParent bool
}

type nodeRow struct {
	row, node, parent, created int64
	hasParent                  bool
	session                    string
	msg                        []byte
}

// rootKind is what a parentless node starts: the main conversation, a subagent or a summarizer.
type rootKind int

const (
	rootMain rootKind = iota
	rootSubagent
	rootSummarizer
)

// Markers of the system prompts that start a subagent's and a summarizer's trees.
const (
	subagentMarker   = "You are a subagent of Devin"
	summarizerMarker = "You are a Summarizer"
)

func kindOf(msg []byte) rootKind {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Role != "system" {
		return rootMain
	}
	text := contentText(m.Content)
	switch {
	case strings.Contains(text, subagentMarker):
		return rootSubagent
	case strings.Contains(text, summarizerMarker):
		return rootSummarizer
	}
	return rootMain
}

// read reads the sessions, the nodes past the watermark and the parent links of the sessions
// they belong to, in one read transaction.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state) (*pass, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	scols, err := sqliteread.Columns(ctx, tx, "sessions")
	if err != nil {
		return nil, err
	}
	ncols, err := sqliteread.Columns(ctx, tx, "message_nodes")
	if err != nil {
		return nil, err
	}
	if len(scols) == 0 || len(ncols) == 0 {
		return nil, fmt.Errorf("no sessions or message_nodes table: not a Devin CLI database, or not migrated yet")
	}
	r := &pass{sessions: map[string]sessionRow{}, links: map[nodeKey]nodeLink{}, roots: map[nodeKey]rootKind{}, inPass: map[string]struct{}{},
		first: map[string]int64{}}
	q, err := tx.QueryContext(ctx, `SELECT n.row_id, COALESCE(n.session_id, ''), CAST(COALESCE(n.node_id, 0) AS INTEGER),
	  n.parent_node_id, n.chat_message, CAST(COALESCE(n.created_at, 0) AS INTEGER)
	FROM message_nodes n WHERE n.row_id > ? ORDER BY n.row_id`, st.Row)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var n nodeRow
		var parent sql.NullInt64
		var msg sql.RawBytes
		if err := q.Scan(&n.row, &n.session, &n.node, &parent, &msg, &n.created); err != nil {
			q.Close()
			return nil, err
		}
		n.parent, n.hasParent = parent.Int64, parent.Valid
		n.msg = append([]byte(nil), msg...)
		r.nodes = append(r.nodes, n)
		if _, ok := r.inPass[n.session]; !ok {
			r.inPass[n.session] = struct{}{}
			r.touched = append(r.touched, n.session)
			r.first[n.session] = n.created
		}
		k := nodeKey{n.session, n.node}
		r.links[k] = nodeLink{parent: n.parent, hasParent: n.hasParent}
		if !n.hasParent {
			r.roots[k] = kindOf(n.msg)
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	if len(r.nodes) == 0 {
		return r, tx.Commit()
	}
	if st.Row > 0 {
		// The parent links of the earlier nodes of the sessions this pass touches (their roots'
		// messages only, to tell a subagent's tree).
		q, err = tx.QueryContext(ctx, `SELECT COALESCE(session_id, ''), CAST(COALESCE(node_id, 0) AS INTEGER), parent_node_id,
		  CASE WHEN parent_node_id IS NULL THEN chat_message END
		FROM message_nodes WHERE row_id <= ? AND session_id IN (SELECT DISTINCT session_id FROM message_nodes WHERE row_id > ?)`,
			st.Row, st.Row)
		if err != nil {
			return nil, err
		}
		for q.Next() {
			var k nodeKey
			var parent sql.NullInt64
			var msg sql.RawBytes
			if err := q.Scan(&k.session, &k.node, &parent, &msg); err != nil {
				q.Close()
				return nil, err
			}
			r.links[k] = nodeLink{parent: parent.Int64, hasParent: parent.Valid}
			if !parent.Valid {
				r.roots[k] = kindOf(msg)
			}
		}
		if err := sqliteread.CloseRows(q); err != nil {
			return nil, err
		}
	}
	q, err = tx.QueryContext(ctx, `SELECT COALESCE(id, ''), `+sqliteread.Opt(scols, "title", "COALESCE(title, '')", "''")+`,
	  `+sqliteread.Opt(scols, "working_directory", "COALESCE(working_directory, '')", "''")+`,
	  `+sqliteread.Opt(scols, "model", "COALESCE(model, '')", "''")+`,
	  `+sqliteread.Col(scols, "created_at", "INTEGER", "0")+` FROM sessions`)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var s sessionRow
		if err := q.Scan(&s.id, &s.title, &s.cwd, &s.model, &s.created); err != nil {
			q.Close()
			return nil, err
		}
		if _, ok := r.inPass[s.id]; ok {
			r.sessions[s.id] = s
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	st.Row = r.nodes[len(r.nodes)-1].row
	return r, tx.Commit()
}
