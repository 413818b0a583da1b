package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/ioplan"
	"github.com/zkpipe/zkpipe/keygen"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

func setupCommand() *cli.Command {
	return &cli.Command{
		Name:  "setup",
		Usage: "compute Groth16 keys: a built-in circuit's (gnark's files) into a circuit directory, or a circom circuit's zkey (snarkjs's format) from its r1cs",
		UsageText: "zkpipe setup --builtin NAME [--constraints N] --dir DIR [--curve bn254|bls12-381] [--hash-to-field default|sha256|keccak256] [--device auto|cpu|cuda] [--verbose]\n" +
			"   zkpipe setup --r1cs CIRCUIT.r1cs --zkey OUT.zkey [--ptau CEREMONY.ptau] [--device auto|cpu|cuda] [--verbose]",
		Description: setupCeremonyNote + "\n\n" + setupCircomNote,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "builtin", Usage: fmt.Sprintf("built-in circuit: %v", circuits.Names()), Value: "mulchain", EnvVars: env("builtin")},
			&cli.IntFlag{Name: "constraints", Aliases: []string{"c"}, Usage: "about how many constraints", Value: 1 << 12, EnvVars: env("constraints")},
			&cli.StringFlag{Name: "dir", Usage: "circuit directory to write (its base name is the circuit's name; required)", EnvVars: env("setup-dir")},
			&cli.StringFlag{Name: "curve", Value: curve.BN254.String(), Usage: fmt.Sprintf("the circuit's curve: %s (prove and verify read it from the files)", curve.Names("or")), EnvVars: env("curve")},
			&cli.StringFlag{Name: "hash-to-field", Value: string(gnarksrc.HashDefault), Usage: "how commitments hash to their challenge, recorded in the directory for prove and verify: default (gnark's), sha256 (what gnark's Solidity verifier computes) or keccak256", EnvVars: env("hash-to-field")},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say on stderr how long each phase took (compile, each query's products, each file)", EnvVars: env("setup-verbose")},
			&cli.StringFlag{Name: "device", Value: "auto", EnvVars: env("device"),
				Usage: "compute backend: auto, cpu or cuda, of the keys' fixed-base products (auto: a GPU when the CUDA library opens one, not the host stand-in; else the CPU)"},
			&cli.StringFlag{Name: "cuda-lib", EnvVars: env("cuda-lib"),
				Usage: "path of " + gpu.CUDALibraryName + " for --device cuda or auto (default: where prove finds it)"},
			&cli.StringFlag{Name: "cuda-device", Value: "0", EnvVars: env("cuda-device"), Usage: "GPUs for --device cuda: setup takes one index (0)"},
			// no variables: ZKPIPE_R1CS and ZKPIPE_ZKEY are prove's inputs,
			// which a setup must not take for its own (--zkey is written)
			&cli.StringFlag{Name: "r1cs", Usage: "circom constraint system (circom --r1cs) to compute a --zkey for: a circom circuit's setup, its curve the file's", Category: "circom"},
			&cli.StringFlag{Name: "zkey", Usage: "circom circuit: snarkjs Groth16 proving key to write, from --r1cs (written whole or not at all; never over an input)", Category: "circom"},
			&cli.StringFlag{Name: "ptau", Usage: "a ceremony's prepared powers of tau (snarkjs powersoftau prepare phase2): the --zkey is the phase 2 snarkjs groth16 setup derives from it, before any contribution, instead of a test key", Category: "circom"},
			// ZKPIPE_CIRCUIT and ZKPIPE_OUT are prove's (directories): not read here
			oldString("circuit", "builtin"), oldString("out", "dir"), oldInt("n", "constraints"),
		},
		Action: func(c *cli.Context) error {
			if c.IsSet("r1cs") || c.IsSet("zkey") || c.IsSet("ptau") {
				return setupCircom(c)
			}
			cfg, err := setupFlags(c)
			if err != nil {
				return err
			}
			htf, err := gnarksrc.ParseHashToField(c.String("hash-to-field"))
			if err != nil {
				return err
			}
			id, err := curve.Parse(c.String("curve"))
			if err != nil {
				return usageErrorf(c, "--curve: %v", err)
			}
			// the note after every check of the request: a setup refused
			// says only why
			if _, err := circuits.Lookup(cfg.builtin); err != nil {
				return usageErrorf(c, "--builtin: %v", err)
			}
			fmt.Fprintln(logOut(c), "zkpipe setup: "+setupCeremonyNote)
			start := time.Now()
			phaseLog := setupPhaseLog(c, "zkpipe setup")
			opened := time.Now()
			fb, err := setupDevice(c)
			if err != nil {
				return err
			}
			var kopts []keygen.Option
			if fb != nil {
				defer fb.Close()
				kopts = append(kopts, keygen.WithFixedBase(fb))
				if phaseLog != nil {
					phaseLog(fmt.Sprintf("open GPU %d (%s)", fb.Index(), fb.Device()), time.Since(opened))
				}
			}
			info, err := gnarksrc.SetupLogged(id, cfg.builtin, cfg.constraints, cfg.dir, phaseLog, kopts...)
			if errors.Is(err, circuits.ErrTooLarge) {
				return refusedError{err}
			}
			if err != nil {
				return err
			}
			if err := gnarksrc.WriteHashToField(cfg.dir, htf); err != nil {
				return err
			}
			// the time is the whole command's: compile, keys and files
			fmt.Printf("%s: %s on %s, %d constraints (domain %d), %d wires, in %s\n",
				cfg.dir, cfg.builtin, id, info.Constraints, info.Domain, info.Wires, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
}

// setupCeremonyNote is said in setup's help and on stderr at every setup:
// its keys are for tests and benchmarks, because one process chose their
// secret and a user cannot tell whether it was forgotten.
const setupCeremonyNote = "the keys it writes " + throwawayKeys

// throwawayKeys is why setup's keys (and bench --builtin's, in memory)
// are test keys.
const throwawayKeys = "come from toxic waste drawn from crypto/rand and discarded, never stored; " +
	"they suit tests and benchmarks, not production: a production key comes from a ceremony " +
	"(a powers-of-tau and a circuit-specific phase 2, with several parties, as gnark and snarkjs document)"

// setupConfig is what setup's flags ask for.
type setupConfig struct {
	builtin, dir string
	constraints  int
}

// setupFlags reads setup's flags, and the old spellings of each.
func setupFlags(c *cli.Context) (setupConfig, error) {
	var cfg setupConfig
	b, err := spelling(c, "builtin", "circuit")
	if err != nil {
		return cfg, err
	}
	d, err := spelling(c, "dir", "out")
	if err != nil {
		return cfg, err
	}
	n, err := spelling(c, "constraints", "n")
	if err != nil {
		return cfg, err
	}
	cfg = setupConfig{builtin: c.String(b), dir: c.String(d), constraints: c.Int(n)}
	if cfg.dir == "" {
		return cfg, usageErrorf(c, "--dir DIR is required: the circuit directory to write")
	}
	return cfg, nil
}

// refusedError is a setup refused before any work, for a size the machine
// (or zkpipe's limits) cannot hold: exit 2, the code of a request refused as
// given, as for usage errors, rather than 1, a run that failed.
type refusedError struct{ error }

func (refusedError) exitCode() int { return ExitUsage }

func (e refusedError) Unwrap() error { return e.error }

// setupPhaseLog says on stderr, as who, how long each phase of a setup
// took, with --verbose; nil without.
func setupPhaseLog(c *cli.Context, who string) func(phase string, elapsed time.Duration) {
	if !c.Bool("verbose") {
		return nil
	}
	// the process's CPU time beside each phase's wall time: a phase whose
	// CPU is about its wall ran on one core
	lastCPU := mem.ProcessCPU()
	return func(phase string, elapsed time.Duration) {
		cpu := mem.ProcessCPU()
		fmt.Fprintf(logOut(c), "%s: %-36s %9s wall %9s cpu\n", who, phase, elapsed.Round(time.Millisecond), (cpu - lastCPU).Round(time.Millisecond))
		lastCPU = cpu
	}
}

// setupDevice opens the GPU of --device for keygen's fixed-base products
// (nil: they run on the CPU), for setup: --cuda-device names one GPU, and
// with --verbose setup says why auto found none (fixedBaseDevice).
func setupDevice(c *cli.Context) (*gpu.CUDA, error) {
	return fixedBaseDevice(c, "zkpipe setup", false, c.Bool("verbose"))
}

// fixedBaseDevice opens the GPU of --device (and --cuda-lib,
// --cuda-device) for keygen's fixed-base products (nil: they run on the
// CPU). cuda must open one; auto takes one when the library opens a GPU
// (not the host stand-in, which is for tests) and otherwise sets up on the
// CPU, saying why on stderr, as who, when say; cpu opens none. With
// firstOf, --cuda-device may name several GPUs (bench's, for its stream)
// and the setup takes the first (all: GPU 0); without, it must name one.
// The backend is opened small: setup uses one compute stream and no
// transfer lane.
func fixedBaseDevice(c *cli.Context, who string, firstOf, say bool) (*gpu.CUDA, error) {
	d := c.String("device")
	switch d {
	case "cpu":
		return nil, nil
	case "auto", "cuda":
	default:
		return nil, usageErrorf(c, "--device %q: want auto, cpu or cuda", d)
	}
	devices, all, err := parseDevices(c.String("cuda-device"))
	switch {
	case err != nil && firstOf:
		return nil, usageErrorf(c, "%v", err)
	case err != nil || !firstOf && (all || len(devices) != 1):
		return nil, usageErrorf(c, "--cuda-device %q: setup takes one GPU's index", c.String("cuda-device"))
	case all:
		devices = []int{0}
	}
	fb, err := gpu.OpenCUDA(c.String("cuda-lib"), gpu.WithConfig(cudaConfigFromEnv()), gpu.WithCUDADevice(devices[0]),
		gpu.WithMSMTables(0), gpu.WithTransferLanes(1), gpu.WithPinnedBytes(1<<20), gpu.WithComputeStreams(1))
	if err == nil && d == "auto" && fb.Emulated() {
		fb.Close()
		err = fmt.Errorf("%s is the host stand-in, not a GPU (--device cuda uses it)", fb.Library())
	}
	if err != nil {
		if d == "cuda" {
			return nil, fmt.Errorf("--device cuda: %w", err)
		}
		if say {
			fmt.Fprintf(logOut(c), "%s: fixed-base products on the CPU (no GPU: %v)\n", who, err)
		}
		return nil, nil
	}
	return fb, nil
}

// setupCircomNote is setup's help on the circom path.
const setupCircomNote = "With --r1cs and --zkey, setup writes a circom circuit's Groth16 key in snarkjs's zkey format, " +
	"which snarkjs groth16 prove/verify and zkey export accept: a test key as above, or with --ptau " +
	"the phase 2 that snarkjs groth16 setup derives from a ceremony's prepared powers of tau (byte for byte), " +
	"before any contribution: contribute (snarkjs zkey contribute) before using it in earnest."

// setupCircom is setup --r1cs: a circom circuit's zkey, from fresh toxic
// waste or from --ptau (package keygen computes it, circomsrc writes it).
func setupCircom(c *cli.Context) error {
	r1csPath, zkeyPath, ptauPath := c.String("r1cs"), c.String("zkey"), c.String("ptau")
	if r1csPath == "" || zkeyPath == "" {
		return usageErrorf(c, "--r1cs and --zkey go together: the circom r1cs to read and the zkey to write")
	}
	for _, f := range []string{"builtin", "constraints", "dir", "curve", "hash-to-field", "circuit", "out", "n"} {
		// a variable set for the built-ins' setups (ZKPIPE_CURVE) is not
		// a request of this one: only an argument is refused
		if c.IsSet(f) && !fromEnvironment(c, f) {
			return usageErrorf(c, "--%s is for a built-in circuit's setup; --r1cs sets up the circom circuit of its file (its curve the file's)", f)
		}
	}
	var plan ioplan.Plan
	plan.Read("--r1cs "+r1csPath, r1csPath)
	if ptauPath != "" {
		plan.Read("--ptau "+ptauPath, ptauPath)
	}
	plan.Replace("--zkey", zkeyPath)
	if err := plan.Check(); err != nil {
		return err
	}
	start := time.Now()
	phaseLog := setupPhaseLog(c, "zkpipe setup")
	r, err := circomsrc.ReadR1CSFile(r1csPath)
	if err != nil {
		return fmt.Errorf("--r1cs: %w", err)
	}
	n, err := r.ZkeyDomainSize()
	if err != nil {
		return refusedError{fmt.Errorf("--r1cs %s: %w", r1csPath, err)}
	}
	var p *circomsrc.PtauPhase2
	if ptauPath != "" {
		if p, err = circomsrc.ReadPtauPhase2(c.Context, ptauPath, r.Curve, n); err != nil {
			return fmt.Errorf("--ptau: %w", err)
		}
		if phaseLog != nil {
			phaseLog("read the r1cs and the ptau", time.Since(start))
		}
	} else {
		fmt.Fprintln(logOut(c), "zkpipe setup: "+setupCeremonyNote)
	}
	opened := time.Now()
	fb, err := setupDevice(c)
	if err != nil {
		return err
	}
	var kopts []keygen.Option
	if phaseLog != nil {
		kopts = append(kopts, keygen.WithPhaseLog(phaseLog))
	}
	if fb != nil {
		defer fb.Close()
		kopts = append(kopts, keygen.WithFixedBase(fb))
		if phaseLog != nil {
			phaseLog(fmt.Sprintf("open GPU %d (%s)", fb.Index(), fb.Device()), time.Since(opened))
		}
	}
	var z *circomsrc.Zkey
	if p != nil {
		z, err = keygen.ZkeyFromPtau(r, p, kopts...)
	} else {
		z, err = keygen.Zkey(r, kopts...)
	}
	if err != nil {
		return err
	}
	written := time.Now()
	if err := writeAtomic(zkeyPath, func(w io.Writer) error { return circomsrc.WriteZkey(w, z) }); err != nil {
		return fmt.Errorf("--zkey %s: %w", zkeyPath, err)
	}
	if phaseLog != nil {
		phaseLog("write the zkey", time.Since(written))
	}
	kind := "a test key"
	if p != nil {
		kind = fmt.Sprintf("phase 2 of %s (2^%d), no contribution yet", ptauPath, p.Power)
		if !p.HashComplete {
			fmt.Fprintf(logOut(c), "zkpipe setup: the circuit's domain (2^%d) is the ceremony's whole: snarkjs's circuit hash of such a key reads past the ptau's tauG1, and the one written differs from it (snarkjs zkey verify will refuse the key; its proofs are not affected)\n", log2Int(n))
		}
	}
	// the time is the whole command's: the files, the keys, the write
	fmt.Printf("%s: %s on %s, %d constraints (domain %d), %d wires, %d public, in %s\n",
		zkeyPath, kind, r.Curve, len(r.Constraints), n, r.NWires, r.NPublic(), time.Since(start).Round(time.Millisecond))
	return nil
}

// log2Int is k for n = 2^k.
func log2Int(n int) int {
	k := 0
	for ; n > 1; n >>= 1 {
		k++
	}
	return k
}

// fromEnvironment reports whether one of the variables of c's flag name
// is set (so its value may be the environment's, not an argument's).
func fromEnvironment(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		if df, ok := f.(cli.DocGenerationFlag); ok && slices.Contains(f.Names(), name) {
			for _, v := range df.GetEnvVars() {
				if _, ok := os.LookupEnv(v); ok {
					return true
				}
			}
		}
	}
	return false
}
