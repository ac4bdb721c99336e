// Package query is the store's read model: the one place the CLI, the dashboard, the MCP server,
// the status line, the metrics endpoint and the budget checks read what the writer stored.
//
// It answers from a *sql.DB opened read-only on the store (store.OpenReadOnly, or a writer's
// ReadDB) and never writes. Its reads take one Filter (time range, project, client, member,
// session) where they can be filtered, and return typed rows whose JSON is what the CLI's
// --json, the dashboard's API and the MCP tools print.
//
// Totals: every dollar and token figure comes from Cost, whatever the grouping (session, day,
// hour, model, project, client, member): each model turn is counted once, by the accounting rules
// of store.TurnsSQL, read from the writer's rollups where they answer exactly and from the raw
// turns otherwise. Blocks (5-hour billing windows) sum the same turns. So the groups of a report
// always add up to its total, and two surfaces asked the same question print the same figure.
package query
