package daemon

import (
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
)

// ProfileVariable is the environment variable that asks component (observer-proxy, observer-watch,
// observer-dash) for a CPU profile of its whole run: OBSERVER_PROXY_CPUPROFILE,
// OBSERVER_WATCH_CPUPROFILE, OBSERVER_DASH_CPUPROFILE.
func ProfileVariable(component string) string {
	return "OBSERVER_" + strings.ToUpper(strings.TrimPrefix(component, "observer-")) + "_CPUPROFILE"
}

// StartCPUProfile starts a CPU profile of the whole run when component's ProfileVariable names a
// file (off by default). The returned stop writes it; call it on shutdown, after the component's
// own work has stopped.
func StartCPUProfile(component string, logger *slog.Logger) (stop func()) {
	variable := ProfileVariable(component)
	path := os.Getenv(variable)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		logger.Warn(variable+": no CPU profile", "err", err)
		return func() {}
	}
	logger.Info("writing a CPU profile on shutdown", "path", path)
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
