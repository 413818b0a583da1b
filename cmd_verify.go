package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

func init() {
	commands = append(commands, &cli.Command{
		Name:      "verify",
		Usage:     "check proofs with gnark's own Groth16 verifier",
		UsageText: "zkpipe verify --circuit DIR OUT/ID.proof…  (each proof's public witness is OUT/ID.public)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "circuit", Usage: "gnark circuit directory (its circuit.vk is used)", Required: true, EnvVars: env("verify-circuit")},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return fmt.Errorf("no proof files given")
			}
			vk, err := gnarksrc.ReadVerifyingKey(filepath.Join(c.String("circuit"), gnarksrc.VKFile))
			if err != nil {
				return err
			}
			bad := 0
			for _, p := range c.Args().Slice() {
				pub := strings.TrimSuffix(p, ".proof") + ".public"
				if err := gnarksrc.VerifyFiles(vk, p, pub); err != nil {
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
	})
}
