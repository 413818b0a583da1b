package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/source/circomsrc"
)

// verifyCircomFlags and verifyCircom check snarkjs proofs; `zkpipe verify
// --vkey` can dispatch to them as verify-circom does.
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
		if circomsrc.IsPublicJSON(proof) {
			proof, public = public, proof
		}
		if err := circomsrc.VerifyFiles(vk, proof, public); err != nil {
			fmt.Printf("%s: REJECTED: %v\n", proof, err)
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

func init() {
	commands = append(commands, &cli.Command{
		Name:      "verify-circom",
		Usage:     "check snarkjs Groth16 proofs (proof.json, public.json) against a verification_key.json",
		UsageText: "zkpipe verify-circom --vkey verification_key.json OUT/ID.proof.json OUT/ID.public.json [PROOF PUBLIC…]",
		Flags:     verifyCircomFlags,
		Before: func(c *cli.Context) error {
			if c.String("vkey") == "" {
				return fmt.Errorf("--vkey is required")
			}
			return nil
		},
		Action: verifyCircom,
	})
}
