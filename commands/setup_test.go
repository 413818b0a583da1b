package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/internal/peakrss"
	"github.com/zkpipe/zkpipe/mem"
)

// TestSetupRefusesWhatCannotFit runs `zkpipe setup` at sizes over zkpipe's
// 2^27 limit and at sizes whose setup needs more memory than this machine
// has: each is refused at once, with exit 2, the built-in and its size and
// the figure in the message, no circuit directory, and a child that never
// grew (peak RSS from rusage).
// Before the check, 2·10⁹ grew past 3 GB in a minute.
func TestSetupRefusesWhatCannotFit(t *testing.T) {
	bin := binary(t)
	limit := mem.ReadMachine().Limit
	// the first size (in steps of a quarter) whose setup the model says
	// needs more than this machine allows, when that is under 2^26: the
	// builtins have at least as many wires as constraints
	overMemory := 1 << 16
	for circuits.SetupMemory(overMemory, overMemory) <= limit {
		overMemory = overMemory * 5 / 4
	}
	cases := []struct {
		circuit string
		n       int
		want    string
	}{
		{"mulchain", 2000000000, "over zkpipe's limit of 2^27"},
		{"mulchain", 1<<27 + 1, "over zkpipe's limit of 2^27"},
		{"bits", 1 << 28, "over zkpipe's limit of 2^27"},
		{"commit", 1 << 40, "over zkpipe's limit of 2^27"},
	}
	for _, c := range []string{"mulchain", "bits", "commit"} {
		if 100000000 <= 1<<27 && circuits.SetupMemory(100000000, 100000000) > limit {
			cases = append(cases, struct {
				circuit string
				n       int
				want    string
			}{c, 100000000, "this machine allows " + mem.FormatBytes(limit)})
		}
		if overMemory < 1<<26 {
			cases = append(cases, struct {
				circuit string
				n       int
				want    string
			}{c, overMemory, "this machine allows " + mem.FormatBytes(limit)})
		}
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s-%d", c.circuit, c.n), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "c")
			// a backstop only: a setup that is not refused would run for
			// hours; the assertions are the exit code, message and memory
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "setup", "--builtin", c.circuit, "--constraints", fmt.Sprint(c.n), "--dir", out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			rss, err := peakrss.Run(cmd)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("setup -n %d: %v, want exit 2\n%s", c.n, err, stderr.String())
			}
			msg := stderr.String()
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, fmt.Sprintf("%s at %d constraints:", c.circuit, c.n)) {
				t.Fatalf("setup -n %d: %q, want it to name %q", c.n, msg, c.want)
			}
			if strings.Contains(msg, "this machine allows") && !strings.Contains(msg, "needs about") {
				t.Fatalf("setup -n %d: %q names no figure of what it needs", c.n, msg)
			}
			if rss > 256<<20 {
				t.Fatalf("setup -n %d: the refused setup reached %s of RSS", c.n, mem.FormatBytes(rss))
			}
			if _, err := exec.Command("test", "-e", out).Output(); err == nil {
				t.Fatalf("setup -n %d: refused, but %s exists", c.n, out)
			}
		})
	}
}

// TestSetupMemoryModelCoversASetup runs real setups and checks the model
// CheckSetup refuses by is not below what they took (peak RSS of the
// child): a refusal must never be for a setup that would have fitted by
// the model's own reckoning being too low.
func TestSetupMemoryModelCoversASetup(t *testing.T) {
	bin := binary(t)
	for _, c := range []struct {
		circuit string
		n       int
	}{{"bits", 1 << 14}, {"commit", 1 << 13}, {"mulchain", 1 << 14}} {
		b, err := circuits.Lookup(c.circuit)
		if err != nil {
			t.Fatal(err)
		}
		ccs, err := b.Compile(c.n)
		if err != nil {
			t.Fatal(err)
		}
		wires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
		model := circuits.SetupMemory(ccs.GetNbConstraints(), wires)
		cmd := exec.Command(bin, "setup", "--builtin", c.circuit, "--constraints", fmt.Sprint(c.n), "--dir", filepath.Join(t.TempDir(), "c"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		rss, err := peakrss.Run(cmd)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.circuit, err, out.String())
		}
		t.Logf("%s at %d: peak RSS %s, model %s", c.circuit, c.n, mem.FormatBytes(rss), mem.FormatBytes(model))
		if rss > model {
			t.Errorf("%s at %d: setup took %s, the model says %s", c.circuit, c.n, mem.FormatBytes(rss), mem.FormatBytes(model))
		}
	}
}

// TestSetupSaysItsKeysAreNotForProduction: setup's help and every setup's
// stderr say where its secret went and where a production key comes from.
func TestSetupSaysItsKeysAreNotForProduction(t *testing.T) {
	for _, want := range []string{"discarded, never stored", "not production", "ceremony"} {
		if !strings.Contains(setupCeremonyNote, want) {
			t.Fatalf("the note %q lacks %q", setupCeremonyNote, want)
		}
	}
	var help bytes.Buffer
	app := App()
	app.Writer = &help
	if err := app.Run([]string{"zkpipe", "setup", "--help"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(help.String(), "ceremony") {
		t.Errorf("setup --help does not mention the ceremony:\n%s", help.String())
	}
	var stderr bytes.Buffer
	app = App()
	app.ErrWriter = &stderr
	app.Writer = &bytes.Buffer{}
	dir := filepath.Join(t.TempDir(), "chain")
	if err := app.Run([]string{"zkpipe", "setup", "--builtin", "mulchain", "--constraints", "64", "--dir", dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "zkpipe setup: the keys it writes come from toxic waste") || !strings.Contains(stderr.String(), "ceremony") {
		t.Errorf("setup's stderr does not say its keys are not for production:\n%s", stderr.String())
	}
}

// setup --verbose says on stderr each phase's wall and CPU time, from the
// compile through keygen's products to the last file; without it, none.
func TestSetupVerboseSaysThePhases(t *testing.T) {
	for _, verbose := range []bool{true, false} {
		var stderr bytes.Buffer
		app := App()
		app.ErrWriter = &stderr
		app.Writer = &bytes.Buffer{}
		args := []string{"zkpipe", "setup", "--builtin", "bits", "--constraints", "256", "--dir", filepath.Join(t.TempDir(), "bits")}
		if verbose {
			args = append(args, "-v")
		}
		if err := app.Run(args); err != nil {
			t.Fatal(err)
		}
		for _, phase := range []string{"compile", "lagrange", "G1 Z", "G2 B", "write circuit.pk", "write circuit.r1cs"} {
			said := regexp.MustCompile(`zkpipe setup: ` + regexp.QuoteMeta(phase) + `[^\n]*? [0-9.]+[mµn]?s wall +[0-9.]+[mµn]?s cpu`).MatchString(stderr.String())
			if said != verbose {
				t.Errorf("verbose %v: phase %q said: %v\n%s", verbose, phase, said, stderr.String())
			}
		}
	}
}
