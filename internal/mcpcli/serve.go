package mcpcli

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// serve runs the stdio MCP server (package mcpserver).
func serve(c *cli.Context) error { return errors.New("not built yet") }
