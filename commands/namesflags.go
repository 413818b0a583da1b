package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// The naming rule (README, "Flag and variable names"): a flag name means one
// thing in every command that has it, and so does each short alias and each
// environment variable. Where a command needs something else it gets its
// own name; an old spelling that meant something else stays as a hidden
// flag that still works, says on stderr what replaced it, and is not shown in
// help. TestFlagNamesHaveOneMeaning walks every command to hold this.

// flagMeanings are the names several commands define, each with the one
// thing it means: every such flag's usage starts with its meaning.
var flagMeanings = map[string]string{
	"circuit":       "gnark circuit directory",
	"builtin":       "built-in circuit",
	"constraints":   "about how many constraints",
	"curve":         "the circuit's curve",
	"verbose":       "say on stderr how long each phase took",
	"proofs":        "how many proofs",
	"out":           "directory for proofs",
	"results":       "JSON Lines of results",
	"jobs":          "JSON Lines of jobs",
	"cache":         "zkpipe's cache directory",
	"zkey":          "circom circuit: snarkjs Groth16 proving key",
	"r1cs":          "circom constraint system",
	"hash-to-field": "how commitments hash to their challenge",
	"wasm":          "circom witness calculator",
	"vkey":          "snarkjs verification_key.json",
	"device":        "compute backend: auto, cpu or cuda",
	"cuda-lib":      "path of libzkpipe_cuda.so",
	"cuda-device":   "GPUs for --device cuda",
}

// deprecatedPrefix starts the usage of an old spelling's hidden flag.
const deprecatedPrefix = "deprecated spelling of --"

// oldString is the hidden flag of old, an earlier spelling of --now;
// envVars are kept only where they never meant anything else.
func oldString(old, now string, envVars ...string) cli.Flag {
	return &cli.StringFlag{Name: old, Hidden: true, EnvVars: envVars, Usage: deprecatedPrefix + now}
}

// oldInt is oldString for an int flag.
func oldInt(old, now string, envVars ...string) cli.Flag {
	return &cli.IntFlag{Name: old, Hidden: true, EnvVars: envVars, Usage: deprecatedPrefix + now}
}

// spelling is the name of the flag to read for --now: now itself, or old,
// its deprecated spelling, when only that was given (said on stderr).
func spelling(c *cli.Context, now, old string) (string, error) {
	if !c.IsSet(old) {
		return now, nil
	}
	if c.IsSet(now) {
		return "", fmt.Errorf("--%s and --%s: give one (--%s is the deprecated spelling of --%s)", now, old, old, now)
	}
	dash := "--"
	if len(old) == 1 {
		dash = "-"
	}
	fmt.Fprintf(logOut(c), "zkpipe: %s: %s%s is deprecated, use --%s\n", strings.TrimPrefix(c.Command.HelpName, c.App.Name+" "), dash, old, now)
	return old, nil
}
