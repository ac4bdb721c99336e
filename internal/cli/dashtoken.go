package cli

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/atomicfile"
	"github.com/observerhq/observer/pkg/config"
)

func dashCommand() *cli.Command {
	return &cli.Command{
		Name:  "dash",
		Usage: "dashboard helpers",
		Subcommands: []*cli.Command{{
			Name:  "token",
			Usage: "make a random access token for the dashboard (256 bits)",
			Description: `Prints a new token made from 32 random bytes (base64url, 43 characters). The dashboard needs a token
once it listens beyond loopback ([dash] addr); then open it once as http://HOST:PORT/?token=TOKEN.
With --set the token is written into config.toml as [dash] token (the rest of the file keeps its
bytes; mode 0600); restart the dashboard to use it: observerctl restart dash.

Exit codes: 0 printed (and set); 1 config.toml could not be written, or the file then would not load.`,
			Flags: []cli.Flag{&cli.BoolFlag{Name: "set", Usage: "also write it into config.toml as [dash] token"}},
			Action: func(c *cli.Context) error {
				tok := newToken()
				if !c.Bool("set") {
					fmt.Fprintln(c.App.Writer, tok)
					return nil
				}
				home, err := homeDir(c)
				if err != nil {
					return err
				}
				if err := config.EnsureDir(home); err != nil {
					return err
				}
				path := config.Path(home)
				data, err := os.ReadFile(path)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("read %s: %w", path, err)
				}
				out, err := config.SetKey(data, "dash", "token", tok)
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				if _, err := config.Parse(home, out); err != nil {
					return fmt.Errorf("not written: %w", err)
				}
				if err := atomicfile.Write(path, out, 0o600); err != nil {
					return err
				}
				fmt.Fprintln(c.App.Writer, tok)
				fmt.Fprintf(c.App.ErrWriter, "written to %s as [dash] token; run `observerctl restart dash` to use it\n", path)
				return nil
			},
		}},
	}
}

// newToken returns 256 random bits, base64url without padding.
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
