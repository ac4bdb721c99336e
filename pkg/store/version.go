package store

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// LatestSchemaVersion is the number of the newest migration this build carries: a store whose
// SchemaVersion is lower is migrated at the writer's next start, a higher one was written by a
// newer observer.
func LatestSchemaVersion() int {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	latest := 0
	for _, name := range names {
		if v, err := strconv.Atoi(strings.SplitN(filepath.Base(name), "_", 2)[0]); err == nil {
			latest = max(latest, v)
		}
	}
	return latest
}
