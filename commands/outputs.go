package commands

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// runInputs are the files a prove run reads before its jobs name more:
// the jobs file (stdin's file when it is one), every circuit file.
func runInputs(c *cli.Context) *engine.Files {
	var in engine.Files
	if p := c.String("jobs"); p != "-" {
		in.Add("--jobs "+p, p)
	} else if fi, err := os.Stdin.Stat(); err == nil && fi.Mode().IsRegular() {
		in.AddInfo("--jobs - (stdin)", fi)
	}
	for _, dir := range c.StringSlice("circuit") {
		for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
			p := filepath.Join(dir, f)
			in.Add("the --circuit file "+p, p)
		}
	}
	for _, flag := range []string{"zkey", "wasm", "r1cs"} {
		for _, p := range c.StringSlice(flag) {
			in.Add("--"+flag+" "+p, p)
		}
	}
	return &in
}

// checkOutputs refuses, before anything is written, outputs that are
// inputs: the results file (unless "-") must be none of in and no file the
// engine writes in out, and no input may be a file the engine writes in
// out (none when out is "": a fresh temporary one). Identity is os.SameFile's (symlinks, hard links, ./a and a).
func checkOutputs(in *engine.Files, out, resultsFlag, results string) error {
	if results != "" && results != "-" {
		if name, ok := in.Find(results); ok {
			return fmt.Errorf("%s %s is %s: refusing to overwrite an input (%w)", resultsFlag, results, name, engine.ErrInputClash)
		}
		if out != "" && engine.InOutDir(out, results) {
			return fmt.Errorf("%s %s is a file zkpipe writes in --out %s: give it another name (%w)", resultsFlag, results, out, engine.ErrInputClash)
		}
	}
	if name, ok := in.FindIn(func(p string) bool { return out != "" && engine.InOutDir(out, p) }); ok {
		return fmt.Errorf("%s is a file zkpipe writes in --out %s: refusing to overwrite an input (%w)", name, out, engine.ErrInputClash)
	}
	return nil
}
