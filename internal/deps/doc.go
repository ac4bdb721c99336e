// Package deps holds, in its test, observer's rules on which package may depend on which, read
// from `go list -deps` with the build's tags (see deps_test.go for each rule and its reason):
//
//   - pkg never imports internal: pkg/... is the shared contract, internal/... what is not.
//   - Only the store, the read model and the writer side import database/sql (and the transcript
//     readers, which open the clients' own databases, never observer's).
//   - observer-dash and observer-mcp never depend on the bus host (nats-server, package busserver,
//     the supervisor), the writer side or the transcript readers: they read the store and talk to
//     the bus as clients.
//   - The read model never writes: neither it nor anything observer-dash or observer-mcp links
//     opens the store for writing (store.OpenWriter).
//
// A rule that cannot hold yet lists today's exceptions beside it, each with its reason. The test
// also fails on an exception that no longer occurs, so the lists only shrink. The package has no
// code of its own.
package deps
