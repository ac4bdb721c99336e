package mcpcli

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func wrapCommand() *cli.Command {
	return &cli.Command{
		Name:      "wrap",
		Usage:     "run a stdio MCP server behind a transparent proxy that records its tool calls",
		ArgsUsage: "-- CMD [ARGS...]",
		Action:    func(c *cli.Context) error { return errors.New("not built yet") },
	}
}
