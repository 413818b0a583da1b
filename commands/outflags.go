package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// proofsOut is the --out of a command that writes proofs to ./out when
// none is given (prove, results): it says so once on stderr, so that a run
// without --out does not fill the working directory unseen.
func proofsOut(c *cli.Context) string {
	out := c.String("out")
	if !c.IsSet("out") {
		fmt.Fprintf(logOut(c), "zkpipe: writing proofs to ./%s (no --out given)\n", out)
	}
	return out
}
