package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// verifyCircomFlags and verifyCircom check snarkjs proofs: `zkpipe verify
// --vkey verification_key.json PROOF.json PUBLIC.json…` (cmd_verify.go
// dispatches on --vkey).
var verifyCircomFlags = []cli.Flag{
	&cli.StringFlag{Name: "vkey", Usage: "snarkjs verification_key.json (circom proofs)", EnvVars: env("vkey")},
}

// verifyCircom checks PROOF.json PUBLIC.json pairs against the key in
// --vkey; either order of a pair is accepted (public.json is the array).
func verifyCircom(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 || len(args)%2 != 0 {
		return fmt.Errorf("want pairs of PROOF.json PUBLIC.json, got %d file(s)", len(args))
	}
	vk, err := circomsrc.ReadVerifyingKey(c.String("vkey"))
	if err != nil {
		return err
	}
	bad := 0
	for i := 0; i < len(args); i += 2 {
		proof, public := args[i], args[i+1]
		if err := circomsrc.VerifyFiles(c.Context, vk, proof, public); err != nil {
			fmt.Printf("%s: REJECTED: %s\n", proof, flagNames(err.Error()))
			bad++
			continue
		}
		fmt.Printf("%s: ok\n", proof)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d proofs rejected", bad, len(args)/2)
	}
	return nil
}
