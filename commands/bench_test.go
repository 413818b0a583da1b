package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
