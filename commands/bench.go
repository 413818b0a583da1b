package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/consensys/gnark/backend/witness"
	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/bench"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/keygen"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

func benchCommand() *cli.Command {
	flags := engineFlags(
		&cli.GenericFlag{Name: "circuit", Value: &repeated{}, Usage: "gnark circuit directory: one made by zkpipe setup, or a user's (circuit.r1cs/pk/vk as gnark writes them) with --witness; with --jobs, repeatable (named after the directory, as prove names it)", EnvVars: env("bench-circuit")},
		&cli.StringFlag{Name: "builtin", Usage: fmt.Sprintf("built-in circuit (%v) set up in memory and benched, no key files written: for keys larger than the disk; throwaway test keys, as zkpipe setup's; not with --circuit, --zkey or --jobs", circuits.Names()), EnvVars: env("bench-builtin")},
		&cli.IntFlag{Name: "constraints", Aliases: []string{"c"}, Usage: "about how many constraints, of the --builtin", Value: 1 << 12, EnvVars: env("bench-constraints")},
		&cli.StringFlag{Name: "curve", Value: curve.BN254.String(), Usage: fmt.Sprintf("the circuit's curve, of the --builtin: %s", curve.Names("or")), EnvVars: env("bench-curve")},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say on stderr how long each phase took, of the --builtin's setup (compile, each query's products)", EnvVars: env("bench-verbose")},
		&cli.StringFlag{Name: "jobs", Usage: "JSON Lines of jobs, as zkpipe prove --jobs reads them (a file, not -): time that stream over the --circuit and --zkey circuits given, all its jobs, or -n of them (the first n, or the file over again with ids ID.2, ID.3, …); not with --witness, --wtns, --input", EnvVars: env("bench-jobs")},
		&cli.StringSliceFlag{Name: "witness", Usage: "a user's gnark circuit: its full binary witnesses (witness.MarshalBinary), as files, directories of files or globs (repeatable); cycled to -n proofs", EnvVars: env("bench-witness")},
		&cli.GenericFlag{Name: "zkey", Value: &repeated{}, Usage: "circom circuit: snarkjs Groth16 proving key, benched with --wtns or --input; with --jobs, repeatable (named after the file, less .zkey)", EnvVars: env("bench-zkey"), Category: "circom"},
		&cli.StringSliceFlag{Name: "wtns", Usage: "circom witnesses (.wtns) of the --zkey: files, directories or globs (repeatable)", EnvVars: env("bench-wtns"), Category: "circom"},
		&cli.StringSliceFlag{Name: "input", Usage: "circom input files (JSON objects of the circuit's inputs) for --wasm: files, directories or globs (repeatable)", EnvVars: env("bench-input"), Category: "circom"},
		&cli.GenericFlag{Name: "wasm", Value: &repeated{}, Usage: "circom witness calculator of the --zkey, for --input; with --jobs, of the --zkey in the same position, for input jobs (repeatable)", EnvVars: env("bench-wasm"), Category: "circom"},
		&cli.DurationFlag{Name: "snarkjs-timeout", Value: 10 * time.Minute, Usage: "bound on each snarkjs call of the circom comparison", EnvVars: env("bench-snarkjs-timeout"), Category: "circom"},
		&cli.IntFlag{Name: "proofs", Aliases: []string{"n"}, Value: 8, Usage: fmt.Sprintf("how many proofs in each run (1 to %d; at most %d distinct witnesses are reused in turn; with --jobs: all the file's jobs when unset)", bench.MaxProofs, bench.MaxWitnesses), EnvVars: env("bench-proofs")},
		&cli.BoolFlag{Name: "skip-gnark", Usage: "time zkpipe only (no gnark or snarkjs comparison)", EnvVars: env("skip-gnark")},
		&cli.IntFlag{Name: "gnark-proofs", Usage: "how many proofs gnark's groth16.Prove makes for the comparison of a --circuit or --builtin (default: -n's): it proves one after another, each over every core, so its rate holds from the first proof and a few stand beside a long zkpipe stream, whose rate needs the pipeline full", EnvVars: env("bench-gnark-proofs")},
		&cli.StringFlag{Name: "out", Usage: "directory for proofs (default: a fresh temporary one)", EnvVars: env("bench-out")},
		&cli.StringFlag{Name: "results", Usage: "JSON Lines of results: also write zkpipe's result lines to this file (for zkpipe timeline)", EnvVars: env("bench-results")},
		&cli.StringFlag{Name: "cpuprofile", Usage: "write CPU profiles (pprof) of gnark's proofs to FILE.gnark and of zkpipe's stream to FILE.zkpipe", EnvVars: env("bench-cpuprofile")},
		&cli.IntFlag{Name: "serial-cpu", Usage: "then prove this many of the same witnesses one at a time and print each stage's CPU ms per proof", EnvVars: env("bench-serial-cpu")},
	)
	return &cli.Command{
		Name:  "bench",
		Usage: "prove the same proofs with gnark's groth16.Prove (circom: snarkjs, once) and with zkpipe's stream; compare proofs/s (--jobs: a user's own job stream)",
		UsageText: "zkpipe bench --circuit DIR [--witness FILE…] [-n N]\n" +
			"zkpipe bench --builtin NAME [--constraints N] [--curve bn254|bls12-381] [-n N]\n" +
			"zkpipe bench --zkey FILE (--wtns FILE… | --wasm FILE --input FILE…) [-n N]\n" +
			"zkpipe bench --jobs FILE [--circuit DIR]… [--zkey FILE [--wasm FILE]]… [-n N]",
		Flags:  flags,
		Action: runBench,
	}
}

// benchWitnesses is how many distinct witnesses a bench makes or takes.
const benchWitnesses = bench.MaxWitnesses

// benchConfig is a bench's flags, parsed.
type benchConfig struct {
	n, serial                int
	gnarkN                   int    // gnark's proofs for the comparison (--gnark-proofs, else n)
	circuit, zkey, wasm      string // without --jobs: the one circuit (and calculator) benched
	witness, wtns, input     []string
	skipGnark                bool
	out, results, cpuprofile string
	snarkjsTimeout           time.Duration

	// with --jobs: the job stream and every circuit its jobs name; nSet
	// says whether -n was given (else: all the file's jobs)
	jobs                   string
	circuits, zkeys, wasms []string
	nSet                   bool

	// with --builtin: the built-in set up in memory, at about constraints
	// constraints on curve
	builtin     string
	constraints int
	curve       curve.ID

	// the files --witness, --wtns and --input name, collected
	witnessFiles, wtnsFiles, inputFiles []string
}

func benchFlags(c *cli.Context) (benchConfig, error) {
	cfg := benchConfig{
		n: c.Int("proofs"), serial: c.Int("serial-cpu"), nSet: c.IsSet("proofs"),
		witness: c.StringSlice("witness"), wtns: c.StringSlice("wtns"), input: c.StringSlice("input"),
		skipGnark: c.Bool("skip-gnark"), out: c.String("out"), results: c.String("results"), cpuprofile: c.String("cpuprofile"),
		snarkjsTimeout: c.Duration("snarkjs-timeout"),
		jobs:           c.String("jobs"),
		builtin:        c.String("builtin"), constraints: c.Int("constraints"),
		circuits: repeatedValues(c, "circuit"), zkeys: repeatedValues(c, "zkey"), wasms: repeatedValues(c, "wasm"),
	}
	if cfg.jobs == "" {
		switch {
		case len(cfg.circuits) > 1 || len(cfg.zkeys) > 1:
			return cfg, usageErrorf(c, "give --circuit DIR (gnark) or --zkey FILE (circom), one of them (several only with --jobs FILE)")
		case len(cfg.wasms) > 1:
			return cfg, usageErrorf(c, "one --wasm, for the --zkey (several only with --jobs FILE)")
		}
		cfg.circuit, cfg.zkey, cfg.wasm = first(cfg.circuits), first(cfg.zkeys), first(cfg.wasms)
	}
	cfg.gnarkN = cfg.n
	if c.IsSet("gnark-proofs") {
		cfg.gnarkN = c.Int("gnark-proofs")
	}
	switch {
	case cfg.n < 1 || cfg.n > bench.MaxProofs:
		return cfg, fmt.Errorf("--proofs (-n) %d: want 1 to %d", cfg.n, bench.MaxProofs)
	case c.IsSet("gnark-proofs") && (cfg.skipGnark || cfg.jobs != "" || cfg.zkey != ""):
		return cfg, usageErrorf(c, "--gnark-proofs sizes gnark's comparison of one gnark --circuit or --builtin: give it without --skip-gnark, --zkey or --jobs")
	case cfg.gnarkN < 1 || cfg.gnarkN > bench.MaxProofs:
		return cfg, fmt.Errorf("--gnark-proofs %d: want 1 to %d", cfg.gnarkN, bench.MaxProofs)
	case cfg.serial < 0 || cfg.serial > bench.MaxProofs:
		return cfg, fmt.Errorf("--serial-cpu %d: want 0 (none) to %d", cfg.serial, bench.MaxProofs)
	case cfg.snarkjsTimeout <= 0:
		return cfg, fmt.Errorf("--snarkjs-timeout %s: want a positive duration", cfg.snarkjsTimeout)
	case cfg.builtin != "":
		return cfg, builtinFlags(c, &cfg)
	case c.IsSet("constraints") || c.IsSet("curve") || c.IsSet("verbose"):
		return cfg, usageErrorf(c, "--constraints, --curve and --verbose are a --builtin's, set up in memory: a --circuit's or --zkey's come from its files")
	case cfg.jobs != "":
		return cfg, jobsFlags(c, cfg)
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

// builtinFlags checks the flags of a bench of a built-in set up in memory
// (--builtin): bench makes its witnesses, and it is the only circuit.
func builtinFlags(c *cli.Context, cfg *benchConfig) error {
	switch {
	case len(cfg.circuits) > 0 || len(cfg.zkeys) > 0 || cfg.jobs != "":
		return usageErrorf(c, "--builtin %s sets its circuit up in memory: give no --circuit, --zkey or --jobs with it", cfg.builtin)
	case len(cfg.witness) > 0 || len(cfg.wtns) > 0 || len(cfg.input) > 0 || len(cfg.wasms) > 0:
		return usageErrorf(c, "--builtin %s: bench makes the built-in's witnesses: give no --witness, --wtns, --input or --wasm with it", cfg.builtin)
	}
	if _, err := circuits.Lookup(cfg.builtin); err != nil {
		return usageErrorf(c, "--builtin: %v", err)
	}
	id, err := curve.Parse(c.String("curve"))
	if err != nil {
		return usageErrorf(c, "--curve: %v", err)
	}
	cfg.curve = id
	return nil
}

// jobsFlags checks the flags of a bench over --jobs: the jobs name their
// own witnesses, so --witness, --wtns and --input are refused.
func jobsFlags(c *cli.Context, cfg benchConfig) error {
	switch {
	case len(cfg.witness) > 0 || len(cfg.wtns) > 0 || len(cfg.input) > 0:
		return usageErrorf(c, "--jobs FILE names each job's witness: give no --witness, --wtns or --input with it")
	case len(cfg.circuits) == 0 && len(cfg.zkeys) == 0:
		return usageErrorf(c, "--jobs %s: give the circuits its jobs name: --circuit DIR (gnark) or --zkey FILE (circom), repeatable", cfg.jobs)
	case len(cfg.wasms) > len(cfg.zkeys):
		return usageErrorf(c, "%d --wasm for %d --zkey: give each --wasm after its --zkey", len(cfg.wasms), len(cfg.zkeys))
	case cfg.serial > 0:
		return usageErrorf(c, "--serial-cpu is for one gnark --circuit with its witnesses, not --jobs")
	}
	return nil
}

// repeated is the value of a flag bench takes once, or several times with
// --jobs. Unlike cli.StringSliceFlag it never splits a value at commas: a
// single --circuit (or $ZKPIPE_BENCH_CIRCUIT) reads as the string flag it
// was, a directory with a comma in its name included.
type repeated struct{ values []string }

func (r *repeated) Set(v string) error { r.values = append(r.values, v); return nil }
func (r *repeated) String() string     { return strings.Join(r.values, ", ") }

// repeatedValues are the values of the repeated flag name: those of the
// command line, else its variable's. cli sets the variable first, as one
// value, when it is set and not empty; the command line's values follow.
func repeatedValues(c *cli.Context, name string) []string {
	for _, f := range c.Command.Flags {
		g, ok := f.(*cli.GenericFlag)
		if !ok || g.Name != name {
			continue
		}
		r, ok := c.Generic(name).(*repeated)
		if !ok {
			return nil
		}
		v := r.values
		if len(g.EnvVars) == 1 && os.Getenv(g.EnvVars[0]) != "" && len(v) > 1 {
			v = v[1:]
		}
		return v
	}
	return nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func runBench(c *cli.Context) error {
	cfg, err := benchFlags(c)
	if err != nil {
		return err
	}
	if cfg.jobs != "" {
		return benchJobs(c, cfg)
	}
	var in ioplan.Plan
	if cfg.circuit != "" {
		readCircuitDir(&in, cfg.circuit)
	}
	for _, f := range [][2]string{{"zkey", cfg.zkey}, {"wasm", cfg.wasm}} {
		if f[1] != "" {
			in.Read("--"+f[0]+" "+f[1], f[1])
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
			in.Read("--"+f.flag+" "+p, p)
		}
		*f.files = files
	}
	writeOut(&in, cfg.out)
	in.Write("--results", cfg.results)
	if p := cfg.cpuprofile; p != "" {
		for _, s := range []string{".gnark", ".zkpipe"} {
			in.Write("--cpuprofile", p+s)
		}
	}
	if err := in.Check(); err != nil {
		return err
	}
	out := cfg.out
	if out == "" {
		if out, err = os.MkdirTemp("", "zkpipe-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(out)
	}
	var circ *stages.Circuit
	switch {
	case cfg.zkey != "":
		return benchCircom(c, cfg, out)
	case cfg.builtin != "":
		circ, err = setupBuiltin(c, cfg)
	default:
		circ, err = gnarksrc.LoadDirWith(cfg.circuit, gnarkOptions(c))
	}
	if err != nil {
		return err
	}
	return benchGnark(c, cfg, out, circ)
}

// setupBuiltin sets the --builtin up in memory (gnarksrc.SetupCircuit),
// its fixed-base products on the GPU where --device opens one (as setup
// computes them), and says how long it took. Its proving key is the
// circuit's alone: the engine's drop of the host copy, once the key is
// resident on a GPU, frees it (unless --serial-cpu keeps it), and gnark's
// comparison proves before the stream starts.
func setupBuiltin(c *cli.Context, cfg benchConfig) (*stages.Circuit, error) {
	// refused before the GPU opens (SetupCircuit checks again, the
	// compiled circuit's counts too)
	b, err := circuits.Lookup(cfg.builtin)
	if err != nil {
		return nil, err
	}
	if err := b.CheckSetup(cfg.constraints, mem.ReadMachine().Limit); err != nil {
		return nil, refusedError{err}
	}
	fmt.Fprintln(logOut(c), "zkpipe bench --builtin: its keys "+throwawayKeys)
	start := time.Now()
	fb, err := fixedBaseDevice(c, "zkpipe bench --builtin", true, true)
	if err != nil {
		return nil, err
	}
	var kopts []keygen.Option
	where := "the CPU"
	if fb != nil {
		// the GPU's engine makes its own twiddles (and gnark's prover
		// makes them per FFT): pk.Domain's tables would be 128 B a domain
		// point at the setup's peak, 16 GiB at 2^27, for nothing
		kopts = append(kopts, keygen.WithFixedBase(fb), keygen.WithoutDomainTables())
		where = fmt.Sprintf("GPU %d (%s)", fb.Index(), fb.Device())
	}
	circ, info, err := gnarksrc.SetupCircuit(cfg.curve, cfg.builtin, cfg.constraints, gnarkOptions(c), setupPhaseLog(c, "zkpipe bench --builtin"), kopts...)
	if fb != nil {
		fb.Close() // before the engine opens the GPU for the stream
	}
	if errors.Is(err, circuits.ErrTooLarge) {
		return nil, refusedError{err}
	}
	if err != nil {
		return nil, err
	}
	fmt.Printf("setup: %s on %s in memory, no key files: %d constraints (domain %d), %d wires, in %s (compile and keys, fixed-base products on %s); throwaway test keys\n",
		cfg.builtin, cfg.curve, info.Constraints, info.Domain, info.Wires, time.Since(start).Round(time.Millisecond), where)
	// keygen's scratch (tens of GiB at 2^27) back to the system before the
	// engine reads the resident memory its budget starts from
	debug.FreeOSMemory()
	return circ, nil
}

// benchGnark benches a gnark circuit: with the user's --witness files, or
// witnesses a built-in circuit generates.
func benchGnark(c *cli.Context, cfg benchConfig, out string, circ *stages.Circuit) error {
	n := cfg.n
	var files []string
	var ws []witness.Witness
	var err error
	if len(cfg.witnessFiles) > 0 {
		files = cfg.witnessFiles[:min(len(cfg.witnessFiles), n)]
		if ws, err = bench.ReadGnarkWitnesses(c.Context, circ, files); err != nil {
			return err
		}
	} else {
		if _, err := bench.BuiltinWitness(circ, 1); err != nil {
			return fmt.Errorf("circuit %s was not made by zkpipe setup from a built-in, so bench cannot make its witnesses: give them with --witness FILE (repeatable; a directory or a glob too)", circ.Name)
		}
		// The same witnesses for both, made beforehand and kept out of the
		// timing; zkpipe reads them from files, as a user's stream would.
		wdir := filepath.Join(out, "witnesses")
		if err := os.MkdirAll(wdir, 0o755); err != nil {
			return err
		}
		for i := range min(n, benchWitnesses) {
			w, err := bench.BuiltinWitness(circ, int64(i+1))
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
		t, err := bench.Gnark(circ, ws, files, cfg.gnarkN)
		stop()
		if err != nil {
			return err
		}
		gnarkRate = t.Rate()
		fmt.Printf("gnark groth16.Prove: %d proofs in %s, %.3f proofs/s (%.0f ms/proof, %.0f CPU ms/proof, %.1f cores busy)\n", t.N, t.Wall.Round(time.Millisecond), gnarkRate,
			t.Wall.Seconds()*1000/float64(t.N), t.CPU.Seconds()*1000/float64(t.N), t.CPU.Seconds()/t.Wall.Seconds())
	}
	lines, wall, cpu, err := benchStream(c, cfg, out, circ, jobs, fileOf)
	if err != nil {
		return err
	}
	for _, r := range lines {
		if err := verifyJob(c, circ, r); err != nil {
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
		if err := verifyJob(c, circ, r); err != nil {
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
		sw, what, err := bench.SnarkjsProve(c.Context, snarkjs, cfg.snarkjsTimeout, cfg.zkey, cfg.wasm, js[0], circ.Source.Verifier(), scratch)
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
	return benchStreamOf(c, cfg, out, []*stages.Circuit{circ}, strings.NewReader(jobs), func(id string) string { return "witness " + fileOf[id] })
}

// benchStreamOf runs zkpipe's stream of the jobs read from in over circs
// and returns its result lines, timed from the engine being open (keys
// resident: bench's warm-up) to the last result. A failed job is an error
// that starts with where(its id).
func benchStreamOf(c *cli.Context, cfg benchConfig, out string, circs []*stages.Circuit, in io.Reader, where func(id string) string) ([]stream.Result, time.Duration, time.Duration, error) {
	runtime.GC()
	var lines []stream.Result
	var resultsFile *stream.Writer
	if p := cfg.results; p != "" {
		f, err := os.Create(p)
		if err != nil {
			closeCircuits(circs)
			return nil, 0, 0, err
		}
		defer f.Close()
		resultsFile = stream.NewWriter(f)
	}
	var start time.Time
	var cpu0 time.Duration
	started := func() error { start, cpu0 = time.Now(), mem.ProcessCPU(); return nil }
	opts, err := engineOptions(c, out)
	if err != nil {
		closeCircuits(circs)
		return nil, 0, 0, err
	}
	// --serial-cpu proves the same circuit again afterwards, on a second
	// engine that loads its key afresh: keep the host copy for it
	opts.Memory.KeepHostKeys = cfg.serial > 0
	stop, err := bench.StartProfile(cfg.cpuprofile, "zkpipe")
	if err != nil {
		closeCircuits(circs)
		return nil, 0, 0, err
	}
	err = runStream(c, opts, circs, in, started, func(r stream.Result) error {
		lines = append(lines, r)
		if resultsFile != nil {
			return resultsFile.Write(r)
		}
		return nil
	})
	wall, cpu := time.Since(start), mem.ProcessCPU()-cpu0
	stop()
	if err != nil {
		return nil, 0, 0, err
	}
	for _, r := range lines {
		if r.Error != "" {
			return nil, 0, 0, fmt.Errorf("%s: zkpipe %s", where(r.ID), r.Error)
		}
	}
	return lines, wall, cpu, nil
}

// benchJobs benches a user's job stream (--jobs): the file read and
// checked whole first (before any key is loaded), its circuits loaded and
// every job's circuit resolved, then the stream timed from the engine
// being open to its last result, as prove would run it: witness files read
// and generate jobs solved inside parse. Every proof is checked again here
// against its circuit's verifying key (gnark's groth16.Verify; circom: the
// zkey's), and the figures are given in total and per circuit.
func benchJobs(c *cli.Context, cfg benchConfig) error {
	jobs, err := bench.ReadJobs(c.Context, cfg.jobs)
	if err != nil {
		return err
	}
	n := jobs.Count
	if cfg.nSet {
		n = cfg.n
	}
	if err := jobs.Plan(n); err != nil {
		return err
	}
	if err := checkJobsOutputs(cfg); err != nil {
		return err
	}
	out := cfg.out
	if out == "" {
		if out, err = os.MkdirTemp("", "zkpipe-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(out)
	}
	circs, err := loadJobCircuits(c, cfg, jobs)
	if err != nil {
		return err
	}

	how := "all of them"
	switch {
	case n < jobs.Count:
		how = fmt.Sprintf("the first %d", n)
	case n > jobs.Count:
		how = fmt.Sprintf("the file %d times over, its repeats with ids ID.2, ID.3, …", (n+jobs.Count-1)/jobs.Count)
	}
	fmt.Printf("bench: --jobs %s, %s over %s, %d proofs (%s), %d CPUs\n", cfg.jobs, counted(jobs.Count, "job"), counted(len(circs.list), "circuit"), n, how, runtime.NumCPU())
	for _, u := range jobs.Names {
		circ := circs.of(u.Name)
		fmt.Printf("  %s (%s): %d constraints, %d wires; %d of the file's jobs\n", circ.Name, sourceKind(circ), circ.Constraints, circ.NbWires, u.Jobs)
	}

	feed := jobs.Feed(c.Context, n)
	defer feed.Close()
	lines, wall, cpu, err := benchStreamOf(c, cfg, out, circs.list, feed, jobs.Where)
	if err != nil {
		return err
	}
	if len(lines) != n {
		return fmt.Errorf("--jobs %s: %d result lines for %d jobs", cfg.jobs, len(lines), n)
	}
	for _, r := range lines {
		if err := verifyJob(c, circs.byName[r.Circuit], r); err != nil {
			return fmt.Errorf("%s: zkpipe proof of job %s rejected: %w", jobs.Where(r.ID), r.ID, err)
		}
	}
	rate := float64(n) / wall.Seconds()
	fmt.Printf("zkpipe stream:       %d proofs in %s, %.3f proofs/s (%.0f CPU ms/proof, %.1f cores busy), all verified (gnark's groth16.Verify; circom: the zkey's verifying key)\n", n, wall.Round(time.Millisecond), rate,
		cpu.Seconds()*1000/float64(n), cpu.Seconds()/wall.Seconds())
	var gnark map[string]bench.Timing
	if cfg.skipGnark {
		fmt.Println("comparison: none (--skip-gnark)")
	} else if gnark, err = benchJobsGnark(c, cfg, jobs, n, circs, rate); err != nil {
		return err
	}
	bench.CircuitTable(os.Stdout, lines, wall, gnark)
	fmt.Println("all circuits:")
	bench.StageTable(os.Stdout, lines)
	if names, of := bench.ByCircuit(lines); len(names) > 1 {
		for _, name := range names {
			fmt.Printf("circuit %s:\n", name)
			bench.StageTable(os.Stdout, of[name])
		}
	}
	bench.Shape(os.Stdout, lines)
	return nil
}

// checkJobsOutputs refuses, before anything is loaded, a --results or
// --cpuprofile that is one of a --jobs bench's inputs (as prove refuses
// them: the jobs file and the circuits' files).
func checkJobsOutputs(cfg benchConfig) error {
	var in ioplan.Plan
	in.Read("--jobs "+cfg.jobs, cfg.jobs)
	for _, dir := range cfg.circuits {
		readCircuitDir(&in, dir)
	}
	for _, p := range cfg.zkeys {
		in.Read("--zkey "+p, p)
	}
	for _, p := range cfg.wasms {
		in.Read("--wasm "+p, p)
	}
	writeOut(&in, cfg.out)
	in.Write("--results", cfg.results)
	if p := cfg.cpuprofile; p != "" {
		for _, s := range []string{".gnark", ".zkpipe"} {
			in.Write("--cpuprofile", p+s)
		}
	}
	return in.Check()
}

// jobCircuits are the circuits of a --jobs bench, by name.
type jobCircuits struct {
	list   []*stages.Circuit
	byName map[string]*stages.Circuit
}

// of is the circuit of a job that names name: that one, or for none the
// one loaded (Jobs.Resolve checked that there is only one).
func (j jobCircuits) of(name string) *stages.Circuit {
	if name == "" {
		return j.list[0]
	}
	return j.byName[name]
}

// loadJobCircuits loads the --circuit and --zkey circuits of a --jobs
// bench (their keys resident, as prove loads them) and checks that each
// job's circuit is one of them.
func loadJobCircuits(c *cli.Context, cfg benchConfig, jobs *bench.Jobs) (jobCircuits, error) {
	list, err := loadCircuitFiles(c, cfg.circuits, cfg.zkeys, cfg.wasms, nil)
	if err != nil {
		return jobCircuits{}, err
	}
	circs := jobCircuits{list: list, byName: make(map[string]*stages.Circuit, len(list))}
	names := make([]string, len(list))
	for i, circ := range list {
		if _, ok := circs.byName[circ.Name]; ok {
			closeCircuits(list)
			return jobCircuits{}, fmt.Errorf("two circuits named %q: jobs name their circuit, by its directory's or zkey's name; give them different names", circ.Name)
		}
		circs.byName[circ.Name], names[i] = circ, circ.Name
	}
	if err := jobs.Resolve(names); err != nil {
		closeCircuits(list)
		return jobCircuits{}, err
	}
	return circs, nil
}

// benchJobsGnark proves the gnark jobs of the stream again with gnark's
// groth16.Prove, one after another, prints its figures against zkpipe's
// (the ratio only when every job is gnark's: circom jobs have no such
// prover to compare with) and returns its timings per circuit.
func benchJobsGnark(c *cli.Context, cfg benchConfig, jobs *bench.Jobs, n int, circs jobCircuits, rate float64) (map[string]bench.Timing, error) {
	resolve := func(name string) *stages.Circuit { return circs.of(name) }
	stop, err := bench.StartProfile(cfg.cpuprofile, "gnark")
	if err != nil {
		return nil, err
	}
	per, skipped, err := bench.GnarkStream(c.Context, jobs, n, resolve)
	stop()
	if err != nil {
		return nil, err
	}
	var t bench.Timing
	for _, p := range per {
		t.N, t.Wall, t.CPU = t.N+p.N, t.Wall+p.Wall, t.CPU+p.CPU
	}
	if t.N == 0 {
		fmt.Println("comparison: none (no gnark jobs: --jobs compares gnark circuits only)")
		return nil, nil
	}
	fmt.Printf("gnark groth16.Prove: %d proofs in %s, %.3f proofs/s (%.0f ms/proof, %.0f CPU ms/proof, %.1f cores busy), one after another\n", t.N, t.Wall.Round(time.Millisecond), t.Rate(),
		t.Wall.Seconds()*1000/float64(t.N), t.CPU.Seconds()*1000/float64(t.N), t.CPU.Seconds()/t.Wall.Seconds())
	if skipped > 0 {
		fmt.Printf("ratio zkpipe/gnark:  none (%d of the %d jobs are circom's, which gnark does not prove; see gnark ms/proof per circuit)\n", skipped, n)
	} else {
		fmt.Printf("ratio zkpipe/gnark:  %.2f×\n", rate/t.Rate())
	}
	return per, nil
}

// verifyJob checks r's proof files against its circuit's verifying key,
// as the engine checked it before writing them (and even when
// --skip-verify had it not).
func verifyJob(c *cli.Context, circ *stages.Circuit, r stream.Result) error {
	if circ == nil {
		return fmt.Errorf("its result names circuit %q, which bench did not load", r.Circuit)
	}
	_, err := circ.Source.Verifier().Check(c.Context, blob.DirReader(""), stages.Outputs{Proof: r.Proof, Public: r.Public})
	return err
}

// counted is n things: "1 job", "2 jobs".
func counted(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// sourceKind says which kind of circuit circ is.
func sourceKind(circ *stages.Circuit) string { return circ.Source.Kind() }

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
