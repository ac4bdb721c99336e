//go:build !linux

package daemon

import "time"

// parentCheck is how often WatchParent looks at the parent pid: without Pdeathsig, the look is
// how a child notices its supervisor's death.
const parentCheck = 500 * time.Millisecond
