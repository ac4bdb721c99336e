package busserver

import (
	"fmt"
	"strings"

	"github.com/observerhq/observer/pkg/bus"
)

// reserveShare is the share of the free space JetStream lets its streams reserve when it sizes its
// own limit (nats-server's dynamic configuration takes 3/4 of what statfs calls available).
const reserveShare = 0.75

// reserveError is the start check's message when the stream's bound does not fit the free space.
func reserveError(dir, key string, maxBytes, free int64) error {
	can := int64(float64(free) * reserveShare)
	return fmt.Errorf("bus: %s is %s, but the disk holding %s has %s free, and the bus may reserve at most 3/4 of that (%s): "+
		"free space on that disk, or lower %s to %s or less (config.toml, or %s)",
		key, bus.HumanBytes(maxBytes), dir, bus.HumanBytes(free), bus.HumanBytes(can), key, bus.HumanBytes(can&^(1<<20-1)), envOfKey(key))
}

// CheckReserve fails, naming key (the setting, "[bus] max_bytes"), when a stream's bound maxBytes
// does not fit in what JetStream will let it reserve on dir's disk: a start would be refused. The
// bus checks it before it starts; doctor checks it for the next start.
func CheckReserve(dir, key string, maxBytes int64) error {
	if maxBytes <= 0 {
		return nil
	}
	free, err := bus.DiskFree(dir)
	if err != nil {
		return nil // nats-server decides
	}
	if float64(maxBytes) > float64(free)*reserveShare {
		return reserveError(dir, key, maxBytes, free)
	}
	return nil
}

// envOfKey turns "[bus] max_bytes" into OBSERVER_BUS_MAX_BYTES.
func envOfKey(key string) string {
	k := strings.NewReplacer("[", "", "]", "", " ", "_").Replace(key)
	return "OBSERVER_" + strings.ToUpper(k)
}
