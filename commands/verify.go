package commands

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
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
		}, verifyCircomFlags...),
		Action: func(c *cli.Context) error {
			switch {
			case c.String("vkey") != "" && c.String("circuit") != "":
				return fmt.Errorf("give --circuit (gnark) or --vkey (circom), not both")
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
			htf, err := gnarksrc.ReadHashToField(c.String("circuit"))
			if err != nil {
				return err
			}
			bad := 0
			for _, p := range c.Args().Slice() {
				pub := strings.TrimSuffix(p, ".proof") + ".public"
				if err := gnarksrc.VerifyFilesWith(vk, htf, p, pub); err != nil {
					fmt.Printf("%s: REJECTED: %v\n", p, err)
					bad++
					continue
				}
				fmt.Printf("%s: ok\n", p)
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d proofs rejected", bad, c.NArg())
			}
			return nil
		},
	}
}
