package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "check proofs: gnark's with gnark's Groth16 verifier, circom's against a snarkjs verification key",
		UsageText: "zkpipe verify --circuit DIR OUT/ID.proof…  (each proof's public witness is OUT/ID.public)\n" +
			"zkpipe verify --vkey verification_key.json OUT/ID.proof.json OUT/ID.public.json…",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "circuit", Usage: "gnark circuit directory (its circuit.vk is used)", EnvVars: env("verify-circuit")},
			&cli.StringFlag{Name: "hash-to-field", EnvVars: env("verify-hash-to-field"),
				Usage: "how commitments hash to their challenge, for --circuit's proofs: default, sha256 or keccak256 (default: what the directory's hash-to-field file says; a proof made under another does not verify)"},
		}, verifyCircomFlags...),
		Action: func(c *cli.Context) error {
			switch {
			case c.String("vkey") != "" && c.String("circuit") != "":
				return fmt.Errorf("give --circuit (gnark) or --vkey (circom), not both")
			case c.String("vkey") != "" && c.IsSet("hash-to-field"):
				return usageErrorf(c, "--hash-to-field is for --circuit's proofs (a gnark circuit's commitments); circom's have none")
			case c.String("vkey") != "":
				return verifyCircom(c)
			case c.String("circuit") == "":
				return fmt.Errorf("give --circuit DIR (gnark proofs) or --vkey FILE (circom proofs)")
			}
			if c.NArg() == 0 {
				return fmt.Errorf("no proof files given")
			}
			vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(c.String("circuit"), gnarksrc.VKFile))
			if err != nil {
				return err
			}
			htf, from, err := verifyHashToField(c)
			if err != nil {
				return err
			}
			v := gnarksrc.NewVerifier(vk, htf, false)
			bad, htfBad := 0, 0
			for _, p := range c.Args().Slice() {
				// each proof's public witness beside it, named as the
				// circuit's outputs are (p.proof's p.public)
				if _, err := v.Check(c.Context, blob.DirReader(""), v.Beside(p)); err != nil {
					fmt.Printf("%s: REJECTED: %s\n", p, flagNames(err.Error()))
					bad++
					if errors.Is(err, gnarksrc.ErrHashToField) {
						htfBad++
					}
					continue
				}
				fmt.Printf("%s: ok\n", p)
			}
			switch {
			case htfBad > 0:
				return fmt.Errorf("%d of %d proofs rejected; the hash-to-field was %s, %s", bad, c.NArg(), htf, from)
			case bad > 0:
				return fmt.Errorf("%d of %d proofs rejected", bad, c.NArg())
			}
			return nil
		},
	}
}

// verifyHashToField is the hash-to-field verify checks --circuit's proofs
// with, and where it came from: --hash-to-field, else the directory's
// hash-to-field file (gnark's default without one).
func verifyHashToField(c *cli.Context) (gnarksrc.HashToField, string, error) {
	if c.IsSet("hash-to-field") {
		h, err := gnarksrc.ParseHashToField(c.String("hash-to-field"))
		if err != nil {
			return "", "", usageErrorf(c, "--hash-to-field: %v", err)
		}
		return h, "from --hash-to-field", nil
	}
	dir := c.String("circuit")
	h, err := gnarksrc.ReadHashToField(dir)
	if err != nil {
		return "", "", err
	}
	file := filepath.Join(dir, gnarksrc.HashFile)
	if _, err := os.Stat(file); err != nil {
		return h, "gnark's default (" + dir + " has no " + gnarksrc.HashFile + " file)", nil
	}
	return h, "from " + file, nil
}
