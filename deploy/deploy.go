// Package deploy holds the service definitions that run observer's components under the user's
// service manager: systemd user units (systemd/: observer.target and one observer-NAME.service per
// component, the bus first) and launchd agents (launchd/: dev.observer.NAME.plist).
//
// The files are templates usable as they are (ExecStart runs ~/.local/bin, ProgramArguments
// /usr/local/bin); `observerctl service install` renders them with the absolute paths of the
// installed binaries and the user's observer home, and writes them where the manager looks.
// They live here, beside their embed, because go:embed cannot reach a parent directory.
package deploy

import "embed"

// FS holds systemd/* and launchd/*.
//
//go:embed systemd/* launchd/*
var FS embed.FS
