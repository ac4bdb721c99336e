package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/mattn/go-sqlite3"

	"github.com/observerhq/observer/pkg/store"
)

// Every connection the store opens keeps the statements it compiled: a query run again (the
// session memory's cost of an epoch, once per epoch) is not compiled again. SQLite consults a
// connection's authorizer only while it compiles a statement, so the authorizer's calls count the
// compilations.
func TestStore_ConnectionsReuseTheStatementsTheyCompiled(t *testing.T) {
	ctx := context.Background()
	w := newWriter(t)
	rdb, err := w.ReadDB()
	if err != nil {
		t.Fatal(err)
	}
	r := openReader(t, w.Path())
	query := fmt.Sprintf(`SELECT count(*) FROM (`+store.TurnsSQL+`)`, "api_turns.session_id = :session", "t.session_id = :session")
	for name, db := range map[string]*sql.DB{"writer": w.DB, "writer's read connection": rdb, "reader": r.DB} {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		compiled := 0
		if err := conn.Raw(func(dc any) error {
			dc.(*sqlite3.SQLiteConn).RegisterAuthorizer(func(op int, _, _, _ string) int {
				if op == sqlite3.SQLITE_SELECT {
					compiled++
				}
				return sqlite3.SQLITE_OK
			})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var after []int
		for range 3 {
			var n int
			if err := conn.QueryRowContext(ctx, query, sql.Named("session", "s1"), sql.Named("window", store.JoinWindowMs)).Scan(&n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			after = append(after, compiled)
		}
		conn.Raw(func(dc any) error {
			dc.(*sqlite3.SQLiteConn).RegisterAuthorizer(nil)
			return nil
		})
		conn.Close()
		if after[0] == 0 {
			t.Fatalf("%s: the authorizer saw no compilation", name)
		}
		if after[2] != after[0] {
			t.Errorf("%s: the query was compiled again when run again (SELECTs authorized after each run: %v)", name, after)
		}
	}
}
