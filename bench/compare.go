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
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
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
func Gnark(circ *stages.Circuit, witnesses []witness.Witness, files []string, n int) (Timing, error) {
	src := gnarkOf(circ)
	if src == nil {
		return Timing{}, fmt.Errorf("circuit %s is a %s circuit: gnark's prover takes gnark circuits", circ.Name, circ.Source.Kind())
	}
	t := Timing{N: n}
	pk, err := src.WholeProvingKey()
	if err != nil {
		return t, fmt.Errorf("gnark groth16.Prove: %w", err)
	}
	for i := range n {
		w := witnesses[i%len(witnesses)]
		runtime.GC()
		start, cpu0 := time.Now(), mem.ProcessCPU()
		proof, err := groth16.Prove(src.R1CS(), pk, w, src.ProverOptions()...)
		t.Wall += time.Since(start)
		t.CPU += mem.ProcessCPU() - cpu0
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
func ReadGnarkWitnesses(ctx context.Context, circ *stages.Circuit, files []string) ([]witness.Witness, error) {
	src, name := gnarkOf(circ), circ.Name
	if src == nil {
		return nil, fmt.Errorf("circuit %s is a %s circuit: its witnesses are no gnark witness files", name, circ.Source.Kind())
	}
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
func SnarkjsProve(ctx context.Context, snarkjs string, timeout time.Duration, zkey, wasm string, job Job, v stages.Verifier, dir string) (time.Duration, string, error) {
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
	if _, err := v.Check(ctx, blob.DirReader(""), stages.Outputs{Proof: proof, Public: public}); err != nil {
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

// GnarkSource resolves a job's circuit name (as the job gives it) to the
// loaded circuit's name and, for a gnark circuit, its source; nil for a
// circom one, which gnark does not prove.
type GnarkSource func(name string) *stages.Circuit

// GnarkStream proves the gnark jobs among the n that jobs feeds with
// gnark's own groth16.Prove, one after another, in the stream's order:
// each job's witness read from its file, or generated from its seed,
// before its proof is timed. It returns the timings per circuit and how
// many jobs it left to zkpipe alone (circom ones). Every proof is checked
// with groth16.Verify, outside the timing (Gnark). Run it after zkpipe's
// stream, which has named any job that does not prove.
func GnarkStream(ctx context.Context, jobs *Jobs, n int, resolve GnarkSource) (per map[string]Timing, skipped int, err error) {
	feed := jobs.Feed(ctx, n)
	defer feed.Close()
	lines := make(chan stream.Line, 1)
	readErr := make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		for range lines {
		}
		if rerr := <-readErr; err == nil && rerr != nil && ctx.Err() == nil {
			err = rerr
		}
	}()
	go func() { readErr <- stream.ReadWith(ctx, feed, lines, stream.ReadOptions{}) }()
	per = map[string]Timing{}
	for l := range lines {
		if l.Err != nil {
			return nil, 0, fmt.Errorf("%s: %w", jobs.Path, l.Err)
		}
		circ := resolve(l.Request.Circuit)
		name, src := circ.Name, gnarkOf(circ)
		if src == nil {
			skipped++
			continue
		}
		where := jobs.Where(l.Request.ID)
		var w witness.Witness
		switch req := l.Request; {
		case req.Witness != "":
			w, err = src.ReadWitness(ctx, req.Witness, name)
		case req.Generate != nil:
			w, err = src.Witness(req.Generate.Seed)
		default:
			err = fmt.Errorf("job %s gives no gnark witness (\"witness\" or \"generate\")", req.ID)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: gnark: %w", where, err)
		}
		one, err := Gnark(circ, []witness.Witness{w}, []string{where}, 1)
		if err != nil {
			return nil, 0, err
		}
		t := per[name]
		t.N, t.Wall, t.CPU = t.N+1, t.Wall+one.Wall, t.CPU+one.CPU
		per[name] = t
	}
	return per, skipped, nil
}

// gnarkOf is circ's gnark source, nil for another kind: bench compares
// with gnark's own prover, which takes the constraint system, the keys and
// the witnesses in gnark's types (bench is the one place outside the
// sources that knows them).
func gnarkOf(circ *stages.Circuit) *gnarksrc.Source {
	s, _ := circ.Source.(*gnarksrc.Source)
	return s
}

// BuiltinWitness is witness seed of circ, a built-in gnark circuit
// (gnarksrc.Source.Witness).
func BuiltinWitness(circ *stages.Circuit, seed int64) (witness.Witness, error) {
	s := gnarkOf(circ)
	if s == nil {
		return nil, fmt.Errorf("circuit %s is a %s circuit, not a built-in gnark one", circ.Name, circ.Source.Kind())
	}
	return s.Witness(seed)
}
