package gnarksrc

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
	"github.com/zkpipe/zkpipe/mem"
)

// SetupInfo describes a circuit directory Setup wrote.
type SetupInfo struct {
	Constraints, Domain, Wires int
}

// Setup compiles the built-in circuit name at about n constraints, computes
// its keys with keygen.Setup (gnark's keys, over all cores; 8–19× gnark's
// groth16.Setup on 2 cores at 2^12–2^18, notes/keygen.md) and writes
// dir/circuit.{r1cs,pk,vk,json}. The proving
// key is written uncompressed (gnark's WriteRawTo) so it loads without a
// square root per point. A size this machine cannot set up (circuits.
// CheckSetup: over 2^27 constraints, or more memory than the process may
// use) is refused before anything is compiled, with an error wrapping
// circuits.ErrTooLarge that names the figures. The circuit is BN254's;
// SetupOn sets up on another curve.
func Setup(name string, n int, dir string) (SetupInfo, error) {
	return SetupOn(curve.BN254, name, n, dir)
}

// SetupOn is Setup over curve id's scalar field, with id's keys. (The
// memory bound before compiling is BN254's; the compiled circuit's is its
// curve's: circuits.SetupMemoryOn.)
func SetupOn(id curve.ID, name string, n int, dir string) (SetupInfo, error) {
	return SetupLogged(id, name, n, dir, nil)
}

// SetupLogged is SetupOn telling log, when not nil, as each phase ends:
// "compile", "write circuit.r1cs", keygen.Setup's phases
// (keygen.WithPhaseLog: the proving key is written as its points are
// computed, keygen.SetupTo, so each query's phase includes its share of
// the file), then "write" and each other file's name, always from the
// calling goroutine.
//
// The proving key is streamed into its file, never whole in memory: the
// setup's peak is the compiled circuit, its terms and one query's scalars
// (keygen.SetupTo), well below the key's size.
//
// opts go to keygen.SetupTo after its phase log: keygen.WithFixedBase
// puts the fixed-base products on a GPU.
func SetupLogged(id curve.ID, name string, n int, dir string, log func(phase string, elapsed time.Duration), opts ...keygen.Option) (SetupInfo, error) {
	if log == nil {
		log = func(string, time.Duration) {}
	}
	ccs, err := compileBuiltin(id, name, n, log)
	if err != nil {
		return SetupInfo{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return SetupInfo{}, err
	}
	out := blob.Dir(dir)
	// the compile's garbage handed back before the file's buffers come:
	// with GOGC's slack and the scavenger's pace it stayed in the
	// process's RSS through the r1cs's write (mulchain at 2^22: 1.13 GB
	// there, 0.8 at keygen's peak after)
	debug.FreeOSMemory()
	// circuit.r1cs first: gnark's bytes, written as they are encoded
	// (WriteR1CS: gnark's own encoder builds the whole file in memory,
	// twice its size beside the circuit, on one core)
	start := time.Now()
	if _, err := out.WriteStream(R1CSFile, func(w io.Writer) error { _, err := WriteR1CS(w, ccs); return err }); err != nil {
		return SetupInfo{}, fmt.Errorf("encode %s: %w", R1CSFile, err)
	}
	log("write "+R1CSFile, time.Since(start))
	info := setupInfo(ccs)
	meta, _ := json.Marshal(Meta{Builtin: name, Constraints: n, R1CSConstraints: ccs.GetNbConstraints(), Curve: id.String()})
	var vk groth16.VerifyingKey
	var digest string
	if _, err := out.WriteStream(PKFile, func(w io.Writer) (err error) {
		// the key's digest, which lets a load of this very file skip the
		// subgroup checks of points that are in their subgroups by
		// construction, taken as its bytes go by (digestWriter)
		dw := newDigestWriter(w)
		defer func() { digest = dw.digest() }()
		// keygen gets the only reference: the circuit's instructions and
		// calldata (100–130 B a constraint) go once it has their terms
		c := ccs
		ccs = nil
		vk, _, err = keygen.SetupTo(dw, c, append([]keygen.Option{keygen.WithPhaseLog(log)}, opts...)...)
		start = time.Now()
		return err
	}); err != nil {
		return SetupInfo{}, fmt.Errorf("setup %s: %w", name, err)
	}
	// what is left of the proving key's file once keygen is done: its
	// last buffer and the sync
	log("write "+PKFile, time.Since(start))
	start = time.Now()
	if err := writeDigestFile(dir, digest); err != nil {
		return SetupInfo{}, err
	}
	log("write "+PKDigestFile, time.Since(start))
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{VKFile, func(w io.Writer) error { _, err := vk.WriteTo(w); return err }},
		{MetaFile, func(w io.Writer) error { _, err := w.Write(meta); return err }},
	} {
		start := time.Now()
		if _, err := out.WriteStream(f.name, f.write); err != nil {
			return SetupInfo{}, fmt.Errorf("encode %s: %w", f.name, err)
		}
		log("write "+f.name, time.Since(start))
	}
	return info, nil
}

// compileBuiltin compiles the built-in name at about n constraints over
// curve id for a setup, telling log "compile". A size this machine cannot
// set up is refused by the memory it needs before the compiler spends it
// (circuits' CheckSetup), and again by the compiled circuit's own counts
// before keygen (CheckSetupOf), with mem.ReadMachine().Limit: the errors
// wrap circuits.ErrTooLarge.
func compileBuiltin(id curve.ID, name string, n int, log func(phase string, elapsed time.Duration)) (constraint.ConstraintSystem, error) {
	b, err := circuits.Lookup(name)
	if err != nil {
		return nil, err
	}
	allow := mem.ReadMachine().Limit
	if err := b.CheckSetup(n, allow); err != nil {
		return nil, err
	}
	start := time.Now()
	ccs, err := b.CompileOn(id, n)
	if err != nil {
		return nil, err
	}
	log("compile", time.Since(start))
	if err := circuits.CheckSetupOf(ccs, allow); err != nil {
		return nil, fmt.Errorf("%s at %d constraints: %w", name, n, err)
	}
	return ccs, nil
}

// setupInfo is what a setup of ccs reports: its constraints, domain and wires.
func setupInfo(ccs constraint.ConstraintSystem) SetupInfo {
	nbWires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
	domain := 1
	for domain < ccs.GetNbConstraints() {
		domain <<= 1
	}
	return SetupInfo{Constraints: ccs.GetNbConstraints(), Domain: domain, Wires: nbWires}
}

// checkMeta refuses a circuit.json that does not describe the circuit.r1cs
// beside it: generate jobs would make witnesses for another circuit. The
// built-in's shape at the asked size must be the r1cs's, and so must the
// constraint count Setup recorded, where it did.
func checkMeta(b circuits.Builtin, meta *Meta, ccs constraint.ConstraintSystem) error {
	if m := b.Min(); meta.Constraints < m {
		return fmt.Errorf("%s: %d constraints is below the minimum %d of %s", MetaFile, meta.Constraints, m, b.Name)
	}
	got := ccs.GetNbConstraints()
	if meta.R1CSConstraints != 0 && meta.R1CSConstraints != got {
		return fmt.Errorf("%s says %s has %d constraints, it has %d: not of one circuit", MetaFile, R1CSFile, meta.R1CSConstraints, got)
	}
	sh := b.Shape(meta.Constraints)
	pub, secret := ccs.GetNbPublicVariables()-1, ccs.GetNbSecretVariables()
	if sh.Public != pub || sh.Secret != secret || sh.Constraints != 0 && sh.Constraints != got {
		return fmt.Errorf("%s says built-in %s at %d constraints (%d public and %d secret inputs), %s has %d constraints, %d public and %d secret inputs: not of one circuit",
			MetaFile, b.Name, meta.Constraints, sh.Public, sh.Secret, R1CSFile, got, pub, secret)
	}
	return nil
}
