package commands

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/consensys/gnark/backend/witness"
	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/bench"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func benchCommand() *cli.Command {
	flags := engineFlags(
		&cli.StringFlag{Name: "circuit", Usage: "gnark circuit directory: one made by zkpipe setup, or a user's (circuit.r1cs/pk/vk as gnark writes them) with --witness", EnvVars: env("bench-circuit")},
		&cli.StringSliceFlag{Name: "witness", Usage: "a user's gnark circuit: its full binary witnesses (witness.MarshalBinary), as files, directories of files or globs (repeatable); cycled to -n proofs", EnvVars: env("bench-witness")},
		&cli.StringFlag{Name: "zkey", Usage: "circom circuit: snarkjs Groth16 proving key, benched with --wtns or --input", EnvVars: env("bench-zkey"), Category: "circom"},
		&cli.StringSliceFlag{Name: "wtns", Usage: "circom witnesses (.wtns) of the --zkey: files, directories or globs (repeatable)", EnvVars: env("bench-wtns"), Category: "circom"},
		&cli.StringSliceFlag{Name: "input", Usage: "circom input files (JSON objects of the circuit's inputs) for --wasm: files, directories or globs (repeatable)", EnvVars: env("bench-input"), Category: "circom"},
		&cli.StringFlag{Name: "wasm", Usage: "circom witness calculator of the --zkey, for --input", EnvVars: env("bench-wasm"), Category: "circom"},
		&cli.DurationFlag{Name: "snarkjs-timeout", Value: 10 * time.Minute, Usage: "bound on each snarkjs call of the circom comparison", EnvVars: env("bench-snarkjs-timeout"), Category: "circom"},
		&cli.IntFlag{Name: "proofs", Aliases: []string{"n"}, Value: 8, Usage: fmt.Sprintf("how many proofs in each run (1 to %d; at most %d distinct witnesses are reused in turn)", bench.MaxProofs, bench.MaxWitnesses), EnvVars: env("bench-proofs")},
		&cli.BoolFlag{Name: "skip-gnark", Usage: "time zkpipe only (no gnark or snarkjs comparison)", EnvVars: env("skip-gnark")},
		&cli.StringFlag{Name: "out", Usage: "directory for proofs (default: a fresh temporary one)", EnvVars: env("bench-out")},
		&cli.StringFlag{Name: "results", Usage: "JSON Lines of results: also write zkpipe's result lines to this file (for zkpipe timeline)", EnvVars: env("bench-results")},
		&cli.StringFlag{Name: "cpuprofile", Usage: "write CPU profiles (pprof) of gnark's proofs to FILE.gnark and of zkpipe's stream to FILE.zkpipe", EnvVars: env("bench-cpuprofile")},
		&cli.IntFlag{Name: "serial-cpu", Usage: "then prove this many of the same witnesses one at a time and print each stage's CPU ms per proof", EnvVars: env("bench-serial-cpu")},
	)
	return &cli.Command{
		Name:   "bench",
		Usage:  "prove the same proofs with gnark's groth16.Prove (circom: snarkjs, once) and with zkpipe's stream; compare proofs/s",
		Flags:  flags,
		Action: runBench,
	}
}

// benchWitnesses is how many distinct witnesses a bench makes or takes.
const benchWitnesses = bench.MaxWitnesses

// benchConfig is a bench's flags, parsed.
type benchConfig struct {
	n, serial                int
	circuit, zkey, wasm      string
	witness, wtns, input     []string
	skipGnark                bool
	out, results, cpuprofile string
	snarkjsTimeout           time.Duration

	// the files --witness, --wtns and --input name, collected
	witnessFiles, wtnsFiles, inputFiles []string
}

func benchFlags(c *cli.Context) (benchConfig, error) {
	cfg := benchConfig{
		n: c.Int("proofs"), serial: c.Int("serial-cpu"),
		circuit: c.String("circuit"), zkey: c.String("zkey"), wasm: c.String("wasm"),
		witness: c.StringSlice("witness"), wtns: c.StringSlice("wtns"), input: c.StringSlice("input"),
		skipGnark: c.Bool("skip-gnark"), out: c.String("out"), results: c.String("results"), cpuprofile: c.String("cpuprofile"),
		snarkjsTimeout: c.Duration("snarkjs-timeout"),
	}
	switch {
	case cfg.n < 1 || cfg.n > bench.MaxProofs:
		return cfg, fmt.Errorf("--proofs (-n) %d: want 1 to %d", cfg.n, bench.MaxProofs)
	case cfg.serial < 0 || cfg.serial > bench.MaxProofs:
		return cfg, fmt.Errorf("--serial-cpu %d: want 0 (none) to %d", cfg.serial, bench.MaxProofs)
	case cfg.snarkjsTimeout <= 0:
		return cfg, fmt.Errorf("--snarkjs-timeout %s: want a positive duration", cfg.snarkjsTimeout)
	case (cfg.circuit == "") == (cfg.zkey == ""):
		return cfg, usageErrorf(c, "give --circuit DIR (gnark) or --zkey FILE (circom), one of them")
	case cfg.circuit != "" && (len(cfg.wtns) > 0 || len(cfg.input) > 0 || cfg.wasm != ""):
		return cfg, usageErrorf(c, "--wtns, --input and --wasm are for a circom --zkey; a gnark --circuit takes --witness")
	case cfg.zkey != "" && len(cfg.witness) > 0:
		return cfg, usageErrorf(c, "--witness is for a gnark --circuit; a circom --zkey takes --wtns FILE or --input FILE with --wasm")
	case cfg.zkey != "" && len(cfg.wtns) == 0 && len(cfg.input) == 0:
		return cfg, usageErrorf(c, "no witnesses for --zkey %s: give --wtns FILE (repeatable) or --input FILE with --wasm", cfg.zkey)
	case len(cfg.input) > 0 && cfg.wasm == "":
		return cfg, usageErrorf(c, "--input needs the circuit's witness calculator: give --wasm")
	case cfg.serial > 0 && cfg.zkey != "":
		return cfg, usageErrorf(c, "--serial-cpu is for gnark circuits")
	}
	return cfg, nil
}

func runBench(c *cli.Context) error {
	cfg, err := benchFlags(c)
	if err != nil {
		return err
	}
	var in engine.Files
	if cfg.circuit != "" {
		for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
			p := filepath.Join(cfg.circuit, f)
			in.Add("the --circuit file "+p, p)
		}
	}
	for _, f := range [][2]string{{"zkey", cfg.zkey}, {"wasm", cfg.wasm}} {
		if f[1] != "" {
			in.Add("--"+f[0]+" "+f[1], f[1])
		}
	}
	// the witness files are collected first, so that an output that is one
	// of them (inside a --witness directory, or matched by a glob) is refused
	for _, f := range []struct {
		flag     string
		patterns []string
		files    *[]string
	}{{"witness", cfg.witness, &cfg.witnessFiles}, {"wtns", cfg.wtns, &cfg.wtnsFiles}, {"input", cfg.input, &cfg.inputFiles}} {
		if len(f.patterns) == 0 {
			continue
		}
		files, skipped, err := bench.Collect(f.flag, f.patterns)
		if err != nil {
			return err
		}
		if skipped > 0 {
			fmt.Printf("bench: using the first %d of %d --%s files\n", len(files), len(files)+skipped, f.flag)
		}
		for _, p := range files {
			in.Add("--"+f.flag+" "+p, p)
		}
		*f.files = files
	}
	if err := checkOutputs(&in, cfg.out, "--results", cfg.results); err != nil {
		return err
	}
	if p := cfg.cpuprofile; p != "" {
		for _, s := range []string{".gnark", ".zkpipe"} {
			if err := checkOutputs(&in, cfg.out, "--cpuprofile", p+s); err != nil {
				return err
			}
		}
	}
	out := cfg.out
	if out == "" {
		if out, err = os.MkdirTemp("", "zkpipe-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(out)
	}
	if cfg.zkey != "" {
		return benchCircom(c, cfg, out)
	}
	return benchGnark(c, cfg, out)
}

// benchGnark benches a gnark circuit directory: with the user's --witness
// files, or witnesses a built-in circuit generates.
func benchGnark(c *cli.Context, cfg benchConfig, out string) error {
	n := cfg.n
	circ, err := gnarksrc.LoadDirWith(cfg.circuit, gnarkOptions(c))
	if err != nil {
		return err
	}
	src := circ.Source.(*gnarksrc.Source)
	var files []string
	var ws []witness.Witness
	if len(cfg.witnessFiles) > 0 {
		files = cfg.witnessFiles[:min(len(cfg.witnessFiles), n)]
		if ws, err = bench.ReadGnarkWitnesses(c.Context, src, circ.Name, files); err != nil {
			return err
		}
	} else {
		if _, err := src.Witness(1); err != nil {
			return fmt.Errorf("circuit %s was not made by zkpipe setup from a built-in, so bench cannot make its witnesses: give them with --witness FILE (repeatable; a directory or a glob too)", circ.Name)
		}
		// The same witnesses for both, made beforehand and kept out of the
		// timing; zkpipe reads them from files, as a user's stream would.
		wdir := filepath.Join(out, "witnesses")
		if err := os.MkdirAll(wdir, 0o755); err != nil {
			return err
		}
		for i := range min(n, benchWitnesses) {
			w, err := src.Witness(int64(i + 1))
			if err != nil {
				return err
			}
			b, err := w.MarshalBinary()
			if err != nil {
				return err
			}
			f := filepath.Join(wdir, fmt.Sprintf("w%d", i))
			if err := os.WriteFile(f, b, 0o644); err != nil {
				return err
			}
			files, ws = append(files, f), append(ws, w)
		}
	}
	jobs, fileOf, err := bench.Lines(n, bench.GnarkJobs(files))
	if err != nil {
		return err
	}
	fmt.Printf("bench: %s, %d constraints, %d wires, %d proofs of %d witnesses, %d CPUs\n", circ.Name, circ.Constraints, circ.NbWires, n, len(files), runtime.NumCPU())

	var gnarkRate float64
	if !cfg.skipGnark {
		stop, err := bench.StartProfile(cfg.cpuprofile, "gnark")
		if err != nil {
			return err
		}
		t, err := bench.Gnark(src, ws, files, n)
		stop()
		if err != nil {
			return err
		}
		gnarkRate = t.Rate()
		fmt.Printf("gnark groth16.Prove: %d proofs in %s, %.3f proofs/s (%.0f ms/proof, %.0f CPU ms/proof, %.1f cores busy)\n", n, t.Wall.Round(time.Millisecond), gnarkRate,
			t.Wall.Seconds()*1000/float64(n), t.CPU.Seconds()*1000/float64(n), t.CPU.Seconds()/t.Wall.Seconds())
	}
	lines, wall, cpu, err := benchStream(c, cfg, out, circ, jobs, fileOf)
	if err != nil {
		return err
	}
	for _, r := range lines {
		if err := gnarksrc.VerifyFilesWith(src.VerifyingKey(), src.HashToField(), r.Proof, r.Public); err != nil {
			return fmt.Errorf("zkpipe proof %s (witness %s) rejected by gnark: %w", r.ID, fileOf[r.ID], err)
		}
	}
	rate := float64(n) / wall.Seconds()
	fmt.Printf("zkpipe stream:       %d proofs in %s, %.3f proofs/s (%.0f CPU ms/proof, %.1f cores busy), all verified by gnark\n", n, wall.Round(time.Millisecond), rate,
		cpu.Seconds()*1000/float64(n), cpu.Seconds()/wall.Seconds())
	if gnarkRate > 0 {
		fmt.Printf("ratio zkpipe/gnark:  %.2f×\n", rate/gnarkRate)
	}
	bench.StageTable(os.Stdout, lines)
	bench.Shape(os.Stdout, lines)
	if k := cfg.serial; k > 0 {
		opts, err := engineOptions(c, filepath.Join(out, "serial"))
		if err != nil {
			return err
		}
		return bench.SerialCPU(c.Context, opts, circ, files[:min(k, len(files))], os.Stdout)
	}
	return nil
}

// benchCircom benches a circom zkey on the user's .wtns or input files:
// zkpipe's stream, each proof checked against the zkey's verifying key (and
// the first by snarkjs groth16 verify when snarkjs is there), compared with
// one snarkjs prove of the first witness when snarkjs is there.
func benchCircom(c *cli.Context, cfg benchConfig, out string) error {
	n := cfg.n
	js, err := bench.CircomJobs(c.Context, cfg.wtnsFiles, cfg.inputFiles)
	if err != nil {
		return err
	}
	js = js[:min(len(js), n)]
	limits, err := circomLimits(c)
	if err != nil {
		return err
	}
	circ, err := circomsrc.LoadFiles(c.Context, circomsrc.Files{Zkey: cfg.zkey, Wasm: cfg.wasm, ReadTimeout: c.Duration("read-timeout"), WasmLimits: limits})
	if err != nil {
		return err
	}
	src := circ.Source.(*circomsrc.Source)
	jobs, fileOf, err := bench.Lines(n, js)
	if err != nil {
		closeCircuits([]*stages.Circuit{circ})
		return err
	}
	fmt.Printf("bench: %s (circom), %d constraints, %d wires, %d proofs of %d witnesses, %d CPUs\n", circ.Name, circ.Constraints, circ.NbWires, n, len(js), runtime.NumCPU())

	// zkpipe's stream first: its parse names a witness that does not fit
	// before snarkjs is asked to prove it.
	lines, wall, cpu, err := benchStream(c, cfg, out, circ, jobs, fileOf)
	if err != nil {
		return err
	}
	for _, r := range lines {
		if err := circomsrc.VerifyFiles(c.Context, src.VerifyingKey(), r.Proof, r.Public); err != nil {
			return fmt.Errorf("zkpipe proof %s (witness %s) rejected: %w", r.ID, fileOf[r.ID], err)
		}
	}
	snarkjs, why := "", "--skip-gnark"
	if !cfg.skipGnark {
		snarkjs, why = findSnarkjs()
	}
	// snarkjs's files (its proof, the vkey it verifies with) are scratch,
	// kept out of --out, which holds zkpipe's proofs alone.
	scratch, err := os.MkdirTemp("", "zkpipe-bench-snarkjs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	verified := "all verified against the zkey's verifying key"
	if snarkjs != "" {
		if err := bench.SnarkjsVerify(c.Context, snarkjs, cfg.snarkjsTimeout, cfg.zkey, scratch, lines[0].Proof, lines[0].Public); err != nil {
			return err
		}
		verified += ", the first by snarkjs groth16 verify"
	}
	rate := float64(n) / wall.Seconds()
	fmt.Printf("zkpipe stream:       %d proofs in %s, %.3f proofs/s (%.0f CPU ms/proof, %.1f cores busy), %s\n", n, wall.Round(time.Millisecond), rate,
		cpu.Seconds()*1000/float64(n), cpu.Seconds()/wall.Seconds(), verified)
	if snarkjs == "" {
		fmt.Printf("comparison: none (%s)\n", why)
	} else {
		sw, what, err := bench.SnarkjsProve(c.Context, snarkjs, cfg.snarkjsTimeout, cfg.zkey, cfg.wasm, js[0], src.VerifyingKey(), scratch)
		if err != nil {
			return err
		}
		fmt.Printf("comparison: %s (%s), one proof of %s: %s, %.3f proofs/s, verified\n", what, snarkjs, js[0].File, sw.Round(time.Millisecond), 1/sw.Seconds())
		fmt.Printf("ratio zkpipe/snarkjs: %.2f× (snarkjs: one proof, its Node start-up included)\n", rate*sw.Seconds())
	}
	bench.StageTable(os.Stdout, lines)
	bench.Shape(os.Stdout, lines)
	return nil
}

// benchStream runs zkpipe's stream over jobs and returns its result lines,
// timed from the engine being open (keys resident) to the last result. A
// failed job is an error naming its witness file.
func benchStream(c *cli.Context, cfg benchConfig, out string, circ *stages.Circuit, jobs string, fileOf map[string]string) ([]stream.Result, time.Duration, time.Duration, error) {
	runtime.GC()
	var lines []stream.Result
	var resultsFile *stream.Writer
	if p := cfg.results; p != "" {
		f, err := os.Create(p)
		if err != nil {
			closeCircuits([]*stages.Circuit{circ})
			return nil, 0, 0, err
		}
		defer f.Close()
		resultsFile = stream.NewWriter(f)
	}
	var start time.Time
	var cpu0 time.Duration
	started := func() error { start, cpu0 = time.Now(), stages.ProcessCPU(); return nil }
	opts, err := engineOptions(c, out)
	if err != nil {
		closeCircuits([]*stages.Circuit{circ})
		return nil, 0, 0, err
	}
	stop, err := bench.StartProfile(cfg.cpuprofile, "zkpipe")
	if err != nil {
		closeCircuits([]*stages.Circuit{circ})
		return nil, 0, 0, err
	}
	err = runStream(c, opts, []*stages.Circuit{circ}, strings.NewReader(jobs), started, func(r stream.Result) error {
		lines = append(lines, r)
		if resultsFile != nil {
			return resultsFile.Write(r)
		}
		return nil
	})
	wall, cpu := time.Since(start), stages.ProcessCPU()-cpu0
	stop()
	if err != nil {
		return nil, 0, 0, err
	}
	for _, r := range lines {
		if r.Error != "" {
			return nil, 0, 0, fmt.Errorf("witness %s: zkpipe %s", fileOf[r.ID], r.Error)
		}
	}
	return lines, wall, cpu, nil
}

// findSnarkjs finds snarkjs for bench's circom comparison: in
// $ZKPIPE_NODE_BIN when set (where .ci/circom-tools.sh installs it), else on
// $PATH. why says why there is none.
func findSnarkjs() (path, why string) {
	if d := os.Getenv("ZKPIPE_NODE_BIN"); d != "" {
		p := filepath.Join(d, "snarkjs")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("no snarkjs in ZKPIPE_NODE_BIN=%s", d)
		}
		return p, ""
	}
	p, err := exec.LookPath("snarkjs")
	if err != nil {
		return "", "snarkjs not found: set ZKPIPE_NODE_BIN to the directory that holds it"
	}
	return p, ""
}
