package proxycli

import (
	"log/slog"
	"os"
	"runtime/pprof"
)

// startCPUProfile starts a CPU profile of the whole run when OBSERVER_PROXY_CPUPROFILE names a
// file (off by default; see the package doc). The returned stop writes it; serve calls it on
// shutdown, after the server and the bus client have stopped.
func startCPUProfile(logger *slog.Logger) (stop func()) {
	path := os.Getenv("OBSERVER_PROXY_CPUPROFILE")
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
		logger.Warn("OBSERVER_PROXY_CPUPROFILE: no CPU profile", "err", err)
		return func() {}
	}
	logger.Info("writing a CPU profile on shutdown", "path", path)
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
