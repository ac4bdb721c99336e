package daemon

import "time"

// parentCheck is how often WatchParent looks at the parent pid. On Linux the supervisor has the
// kernel send its children SIGTERM when it dies (Pdeathsig, even by SIGKILL), so the look is
// only a net under a child that does not stop on SIGTERM: every wakeup of an idle suite costs
// CPU, and four children looking twice a second were a tenth of its idle wakeups.
const parentCheck = 5 * time.Second
