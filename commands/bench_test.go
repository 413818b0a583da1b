package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/bench"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// bench -n out of range is refused with a clear error before anything is
// loaded (−1 panicked, 0 printed NaN, a huge -n grew memory without bound).
func TestBenchRefusesProofCountsOutOfRange(t *testing.T) {
	for _, n := range []string{"-1", "0", "100001", "1099511627776"} {
		err := App().Run([]string{"zkpipe", "bench", "--circuit", "no-such-dir", "-n", n, "--skip-gnark"})
		if err == nil || !strings.Contains(err.Error(), "--proofs (-n) "+n+": want 1 to 100000") {
			t.Errorf("bench -n %s: %v", n, err)
		}
	}
	if err := App().Run([]string{"zkpipe", "bench", "--circuit", "no-such-dir", "--serial-cpu", "-2"}); err == nil || !strings.Contains(err.Error(), "--serial-cpu -2") {
		t.Errorf("bench --serial-cpu -2: %v", err)
	}
}

// What a bench keeps on disk does not grow with -n: 70 proofs reuse 64
// witnesses, and every proof is verified by gnark (bench checks).
func TestBenchWitnessesBounded(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 50)
	out := filepath.Join(root, "out")
	if err := App().Run([]string{"zkpipe", "bench", "--device", "cpu", "--circuit", chain, "-n", "70", "--skip-gnark", "--out", out, "--mem-status", "0"}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(out, "witnesses"))
	if err != nil || len(entries) != benchWitnesses {
		t.Errorf("%d witness files (%v), want %d", len(entries), err, benchWitnesses)
	}
}

// bench's --circuit, made repeatable for --jobs, still reads one value as
// the string flag it was: a directory with a comma in its name is one
// directory, and the command line's --circuit replaces
// $ZKPIPE_BENCH_CIRCUIT's rather than adding to it.
func TestBenchCircuitIsOneValue(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain,1", "mulchain", 30)
	run := func(args ...string) error {
		return App().Run(append([]string{"zkpipe", "bench", "--device", "cpu", "-n", "1", "--skip-gnark", "--mem-status", "0"}, args...))
	}
	if err := run("--circuit", chain); err != nil {
		t.Errorf("--circuit %s: %v", chain, err)
	}
	t.Setenv("ZKPIPE_BENCH_CIRCUIT", filepath.Join(root, "absent"))
	if err := run("--circuit", chain); err != nil {
		t.Errorf("--circuit %s over the variable's: %v", chain, err)
	}
	if err := run(); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("the variable alone: %v, want its directory read", err)
	}
	t.Setenv("ZKPIPE_BENCH_CIRCUIT", chain)
	if err := run(); err != nil {
		t.Errorf("$ZKPIPE_BENCH_CIRCUIT=%s: %v", chain, err)
	}
}

// bench --builtin sets the built-in up in memory and benches it as
// --circuit would: the setup's line, the stream's, every proof verified by
// gnark, and no key file written anywhere under --out. On BN254 with
// --skip-gnark and -v (the setup's phases on stderr), and on BLS12-381
// with gnark's comparison (which proves with the in-memory key before the
// stream), of one proof (--gnark-proofs) beside the stream's two.
func TestBenchBuiltinInMemory(t *testing.T) {
	for _, tc := range []struct {
		curve, builtin, constraints string
		skipGnark, verbose          bool
	}{{"bn254", "mulchain", "4096", true, true}, {"bls12-381", "commit", "512", false, false}} {
		t.Run(tc.curve, func(t *testing.T) {
			root := t.TempDir()
			out, results := filepath.Join(root, "out"), filepath.Join(root, "results.jsonl")
			args := []string{"--builtin", tc.builtin, "--constraints", tc.constraints, "--curve", tc.curve, "-n", "2", "--out", out, "--results", results}
			if tc.skipGnark {
				args = append(args, "--skip-gnark")
			}
			if tc.verbose {
				args = append(args, "-v")
			}
			if !tc.skipGnark {
				args = append(args, "--gnark-proofs", "1")
			}
			code, log := benchBin(t, nil, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, log)
			}
			for _, want := range []string{
				"setup: " + tc.builtin + " on " + tc.curve + " in memory, no key files: ",
				"throwaway test keys",
				"zkpipe bench --builtin: its keys come from toxic waste",
				"bench: " + tc.builtin + ", ",
				"zkpipe stream:       2 proofs in ",
				"all verified by gnark",
			} {
				if !strings.Contains(log, want) {
					t.Errorf("no %q in the output:\n%s", want, log)
				}
			}
			if got := strings.Contains(log, "zkpipe bench --builtin: compile "); got != tc.verbose {
				t.Errorf("the setup's phases said: %v, with -v %v:\n%s", got, tc.verbose, log)
			}
			if got := strings.Contains(log, "gnark groth16.Prove: 1 proofs"); got == tc.skipGnark {
				t.Errorf("gnark's comparison of one proof ran: %v, with --skip-gnark %v:\n%s", got, tc.skipGnark, log)
			}
			if got := strings.Contains(log, "ratio zkpipe/gnark:"); got == tc.skipGnark {
				t.Errorf("the ratio said: %v, with --skip-gnark %v:\n%s", got, tc.skipGnark, log)
			}
			b, err := os.ReadFile(results)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != 2 || strings.Contains(string(b), `"error"`) {
				t.Errorf("%d result lines, want 2 without an error:\n%s", len(lines), b)
			}
			proofs, _ := filepath.Glob(filepath.Join(out, "*.proof"))
			if len(proofs) != 2 {
				t.Errorf("%d proofs under --out, want 2", len(proofs))
			}
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				for _, f := range []string{gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.R1CSFile} {
					if err == nil && d.Name() == f {
						t.Errorf("bench --builtin wrote %s", p)
					}
				}
				return nil
			})
		})
	}
}

// --builtin is its own circuit: with --circuit, --zkey, --jobs or a
// witness flag it is a usage error (exit 2) naming the clash, and so are
// --constraints or --curve without it, an unknown built-in or curve.
func TestBenchBuiltinUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--builtin", "mulchain", "--circuit", "dir"}, "give no --circuit, --zkey or --jobs with it"},
		{[]string{"--builtin", "mulchain", "--zkey", "c.zkey"}, "give no --circuit, --zkey or --jobs with it"},
		{[]string{"--builtin", "mulchain", "--jobs", "jobs.jsonl"}, "give no --circuit, --zkey or --jobs with it"},
		{[]string{"--builtin", "mulchain", "--witness", "w"}, "bench makes the built-in's witnesses"},
		{[]string{"--circuit", "dir", "--constraints", "64"}, "--constraints, --curve and --verbose are a --builtin's"},
		{[]string{"--circuit", "dir", "--curve", "bls12-381"}, "--constraints, --curve and --verbose are a --builtin's"},
		{[]string{"--circuit", "dir", "-v"}, "--constraints, --curve and --verbose are a --builtin's"},
		{[]string{"--builtin", "no-such"}, "--builtin: "},
		{[]string{"--builtin", "mulchain", "--curve", "secp256k1"}, "--curve: "},
	} {
		err := App().Run(append([]string{"zkpipe", "bench", "--device", "cpu", "--skip-gnark"}, tc.args...))
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench %v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

// --gnark-proofs sizes the comparison of one gnark circuit: with
// --skip-gnark, --zkey or --jobs it is a usage error, and out of 1 to
// MaxProofs an error naming the flag, before anything is set up.
func TestBenchGnarkProofsFlag(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--builtin", "mulchain", "--skip-gnark", "--gnark-proofs", "2"}, true, "--gnark-proofs sizes gnark's comparison"},
		{[]string{"--zkey", "c.zkey", "--wtns", "w.wtns", "--gnark-proofs", "2"}, true, "without --skip-gnark, --zkey or --jobs"},
		{[]string{"--jobs", "jobs.jsonl", "--circuit", "dir", "--gnark-proofs", "2"}, true, "without --skip-gnark, --zkey or --jobs"},
		{[]string{"--builtin", "mulchain", "--gnark-proofs", "0"}, false, "--gnark-proofs 0: want 1 to "},
		{[]string{"--builtin", "mulchain", "--gnark-proofs", fmt.Sprint(bench.MaxProofs + 1)}, false, fmt.Sprintf("--gnark-proofs %d: want 1 to %d", bench.MaxProofs+1, bench.MaxProofs)},
	} {
		err := App().Run(append([]string{"zkpipe", "bench", "--device", "cpu"}, tc.args...))
		var u *UsageError
		if err == nil || errors.As(err, &u) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench %v: %v, want an error (usage: %v) saying %q", tc.args, err, tc.usage, tc.want)
		}
	}
}

// A size over zkpipe's 2^27 limit is refused before anything is
// compiled or a GPU opened: exit 2 (as setup refuses it) and the limit in
// the message, before the keys' note.
func TestBenchBuiltinRefusesTooLarge(t *testing.T) {
	code, log := benchBin(t, nil, "--builtin", "mulchain", "--constraints", "200000000", "-n", "1", "--skip-gnark")
	if code != 2 || !strings.Contains(log, "over zkpipe's limit of 2^27") || !strings.Contains(log, "mulchain at 200000000 constraints") {
		t.Errorf("exit %d, want 2 and the limit named:\n%s", code, log)
	}
	if strings.Contains(log, "toxic waste") || strings.Contains(log, "setup: mulchain") || strings.Contains(log, "zkpipe stream") {
		t.Errorf("the refused setup went on:\n%s", log)
	}
}
