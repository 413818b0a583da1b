package commands

import (
	"os"
	"slices"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// runPlan is what a prove run reads before its jobs name more (the jobs
// file, stdin's file when it is one, every circuit file) and writes (its
// --out directory, which is out, and --results), for one check before
// anything is written.
func runPlan(c *cli.Context, out string) *ioplan.Plan {
	var p ioplan.Plan
	if j := c.String("jobs"); j != "-" {
		p.Read("--jobs "+j, j)
	} else if fi, err := os.Stdin.Stat(); err == nil && fi.Mode().IsRegular() {
		p.ReadOpen("--jobs - (stdin)", fi)
	}
	for _, dir := range c.StringSlice("circuit") {
		readCircuitDir(&p, dir)
	}
	for _, flag := range []string{"zkey", "wasm", "r1cs"} {
		for _, f := range c.StringSlice(flag) {
			p.Read("--"+flag+" "+f, f)
		}
	}
	writeOut(&p, out)
	p.Write("--results", c.String("results"))
	return &p
}

// readCircuitDir records a gnark circuit directory's files as inputs,
// each whether it is there or not: an output named circuit.pk there
// replaces the key, one named hash-to-field changes how its commitments
// hash.
func readCircuitDir(p *ioplan.Plan, dir string) {
	p.ReadDir("--circuit", dir, gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile, gnarksrc.HashFile, gnarksrc.PKDigestFile)
}

// writeOut records the engine's output directory out ("": a fresh
// temporary one, no clash possible) as --out.
func writeOut(p *ioplan.Plan, out string) {
	p.WriteIn("--out", out, func(path string) bool { return engine.InOutDir(out, path, outputSuffixes) })
}

// outputSuffixes end the names of the outputs every kind of circuit writes
// (each source spells its own: gnarksrc's and circomsrc's OutputSuffixes).
var outputSuffixes = func() []string {
	var out []string
	for _, s := range append(slices.Clone(gnarksrc.OutputSuffixes), circomsrc.OutputSuffixes...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}()
