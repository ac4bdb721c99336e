package dash

import (
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// bucketLabel is a store.LocalBucketSQL value's label and the Unix time of its local start. On a day the
// offset changes, LocalBucketSQL gives the day two starts; both get the same label, and callers add
// buckets by label.
func bucketLabel(ms int64, unit string) (string, int64) {
	if unit == "hour" {
		t := time.UnixMilli(ms).In(time.Local)
		return t.Format("2006-01-02 15:04"), t.Unix()
	}
	t := time.UnixMilli(ms + 12*store.HourMs).In(time.Local)
	y, m, d := t.Date()
	return t.Format("2006-01-02"), time.Date(y, m, d, 0, 0, 0, 0, time.Local).Unix()
}
