package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
)

// Timing is one prover's figures over n proofs.
type Timing struct {
	N         int
	Wall, CPU time.Duration
}

// Rate is proofs per second.
func (t Timing) Rate() float64 { return float64(t.N) / t.Wall.Seconds() }

// Gnark proves n proofs with gnark's own groth16.Prove, one after another,
// cycling over the witnesses (a witness and the file it came from, for
// errors). The first proof is checked with groth16.Verify.
func Gnark(src *gnarksrc.Source, witnesses []witness.Witness, files []string, n int) (Timing, error) {
	t := Timing{N: n}
	for i := range n {
		w := witnesses[i%len(witnesses)]
		runtime.GC()
		start, cpu0 := time.Now(), stages.ProcessCPU()
		proof, err := groth16.Prove(src.R1CS(), src.ProvingKey(), w, src.ProverOptions()...)
		t.Wall += time.Since(start)
		t.CPU += stages.ProcessCPU() - cpu0
		if err != nil {
			return t, fmt.Errorf("gnark groth16.Prove of %s: %w", files[i%len(files)], err)
		}
		if i == 0 {
			pub, err := w.Public()
			if err != nil {
				return t, err
			}
			if err := groth16.Verify(proof, src.VerifyingKey(), pub, src.HashToField().VerifierOption()); err != nil {
				return t, fmt.Errorf("gnark's own proof of %s does not verify: %w", files[0], err)
			}
		}
	}
	return t, nil
}

// ReadGnarkWitnesses reads each file as a full witness of circuit name,
// checked against it; the first that does not fit is named.
func ReadGnarkWitnesses(ctx context.Context, src *gnarksrc.Source, name string, files []string) ([]witness.Witness, error) {
	ws := make([]witness.Witness, len(files))
	for i, f := range files {
		w, err := src.ReadWitness(ctx, f, name)
		if err != nil {
			return nil, fmt.Errorf("--witness: %w", err)
		}
		ws[i] = w
	}
	return ws, nil
}

// SnarkjsProve proves job once with snarkjs (groth16 prove for a .wtns,
// groth16 fullprove for an input file with wasm), within timeout, into dir,
// and checks its proof against vk. It returns the wall time of the prove
// and the command that ran, for the report.
func SnarkjsProve(ctx context.Context, snarkjs string, timeout time.Duration, zkey, wasm string, job Job, vk *circomsrc.VerifyingKey, dir string) (time.Duration, string, error) {
	proof, public := filepath.Join(dir, "snarkjs.proof.json"), filepath.Join(dir, "snarkjs.public.json")
	var args []string
	switch {
	case job.Request.Wtns != "":
		args = []string{"groth16", "prove", zkey, job.File, proof, public}
	case wasm != "":
		args = []string{"groth16", "fullprove", job.File, wasm, zkey, proof, public}
	default:
		return 0, "", errors.New("snarkjs: an input job needs --wasm")
	}
	what := "snarkjs " + strings.Join(args[:2], " ")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, snarkjs, args...)
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if ctx.Err() == context.DeadlineExceeded {
		return 0, what, fmt.Errorf("%s of %s: still running after --snarkjs-timeout %s", what, job.File, timeout)
	}
	if err != nil {
		return 0, what, fmt.Errorf("%s of %s: %w\n%s", what, job.File, err, tail(out))
	}
	if err := circomsrc.VerifyFiles(ctx, vk, proof, public); err != nil {
		return 0, what, fmt.Errorf("%s's proof of %s does not verify: %w", what, job.File, err)
	}
	return wall, what, nil
}

// SnarkjsVerify checks a proof zkpipe wrote with snarkjs groth16 verify
// against the zkey's verification key (exported into dir once).
func SnarkjsVerify(ctx context.Context, snarkjs string, timeout time.Duration, zkey, dir, proof, public string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vkey := filepath.Join(dir, "snarkjs.vkey.json")
	if _, err := os.Stat(vkey); err != nil {
		if out, err := exec.CommandContext(ctx, snarkjs, "zkey", "export", "verificationkey", zkey, vkey).CombinedOutput(); err != nil {
			return fmt.Errorf("snarkjs zkey export verificationkey %s: %w\n%s", zkey, err, tail(out))
		}
	}
	out, err := exec.CommandContext(ctx, snarkjs, "groth16", "verify", vkey, public, proof).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		return fmt.Errorf("snarkjs groth16 verify rejects zkpipe's %s: %v\n%s", proof, err, tail(out))
	}
	return nil
}

// tail is the end of a command's output, enough to say why it failed.
func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
