package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LastGoodPath is the copy of config.toml as it last loaded without an error. The commands that
// must keep working while the file is broken (the hook, the supervisor's children and the control
// commands) fall back on it.
func (c Config) LastGoodPath() string { return filepath.Join(c.RunDir(), "config.last-good.toml") }

// remember keeps data, a config.toml that loaded, as the last good copy. It writes only when the
// copy differs, so the hook's many loads cost a read; a failure to write is not the caller's
// problem (the fallback is then the defaults).
func remember(cfg Config, data []byte) {
	path := cfg.LastGoodPath()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return
	}
	if err := EnsureDir(cfg.RunDir()); err != nil {
		return
	}
	tmp, err := os.CreateTemp(cfg.RunDir(), ".config.last-good-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
	}
}

// ErrFallback marks the warning LoadOrLastGood returns when config.toml did not load and another
// configuration stands in for it.
var ErrFallback = errors.New("config.toml not applied")

// LoadOrLastGood is Load for what must keep working while config.toml is broken. When the file
// does not load, it returns the configuration of the last good copy of it (LastGoodPath), else the
// defaults with the environment's valid overrides, together with a warning (wrapping
// ErrFallback) that says what was wrong and what is used instead. err is reserved for a home
// that cannot be used at all.
func LoadOrLastGood(home string) (cfg Config, warning error, err error) {
	cfg, lerr := Load(home)
	if lerr == nil {
		return cfg, nil, nil
	}
	if err := EnsureDir(home); err != nil {
		return cfg, nil, err
	}
	cfg = Default()
	cfg.Home = home
	if data, rerr := os.ReadFile(cfg.LastGoodPath()); rerr == nil {
		if good, perr := Parse(home, data); perr == nil {
			return good, fmt.Errorf("%w: %v\nusing the last configuration that loaded (%s) until it is fixed", ErrFallback, lerr, good.LastGoodPath()), nil
		}
	}
	ApplyEnv(&cfg, os.LookupEnv) // each valid override applies; the bad ones were in lerr
	cfg.Warnings = UnknownEnv(os.Environ(), cfg.Memory.APIKeyEnv)
	return cfg, fmt.Errorf("%w: %v\nusing the defaults until it is fixed", ErrFallback, lerr), nil
}

// Supervised reports whether this process is a component `observerctl up` started (it sets
// OBSERVER_SUPERVISOR_PID). Such a component runs on LoadOrLastGood: a config.toml broken while
// the suite runs must not keep a crashed or restarted component down.
func Supervised() bool { return os.Getenv("OBSERVER_SUPERVISOR_PID") != "" }
