package gnarksrc

import (
	"fmt"
	"time"

	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/stages"
)

// SetupCircuit is SetupLogged with no files: it compiles the built-in
// circuit name at about n constraints over curve id, computes its keys
// with keygen.Setup (opts after the phase log) and returns the circuit in
// memory (NewWith with o), named after the built-in, whose generate jobs
// make the built-in's witnesses as a directory of Setup's would. For a
// test or a bench at sizes whose keys would not fit on the disk (a BN254
// 2^27 proving key is some 35 GiB).
//
// A size this machine cannot set up is refused as SetupLogged refuses it
// (circuits.CheckSetup before compiling, circuits.CheckSetupOf after, with
// mem.ReadMachine().Limit), with an error wrapping circuits.ErrTooLarge.
//
// The proving key's only reference is the circuit's (Source.ProvingKey):
// unless o.KeepProvingKey, the engine's drop of the host key once it is
// resident on a GPU frees its points, and no second copy stays.
func SetupCircuit(id curve.ID, name string, n int, o Options, log func(phase string, elapsed time.Duration), opts ...keygen.Option) (*stages.Circuit, SetupInfo, error) {
	if log == nil {
		log = func(string, time.Duration) {}
	}
	b, err := circuits.Lookup(name)
	if err != nil {
		return nil, SetupInfo{}, err
	}
	allow := mem.ReadMachine().Limit
	if err := b.CheckSetup(n, allow); err != nil {
		return nil, SetupInfo{}, err
	}
	start := time.Now()
	ccs, err := b.CompileOn(id, n)
	if err != nil {
		return nil, SetupInfo{}, err
	}
	log("compile", time.Since(start))
	if err := circuits.CheckSetupOf(ccs, allow); err != nil {
		return nil, SetupInfo{}, fmt.Errorf("%s at --constraints %d: %w", name, n, err)
	}
	pk, vk, err := keygen.Setup(ccs, append([]keygen.Option{keygen.WithPhaseLog(log)}, opts...)...)
	if err != nil {
		return nil, SetupInfo{}, fmt.Errorf("setup %s: %w", name, err)
	}
	// the Meta a directory of Setup's would hold: NewWith checks it against
	// ccs, and generate jobs make the built-in's witnesses from it
	meta := &Meta{Builtin: name, Constraints: n, R1CSConstraints: ccs.GetNbConstraints(), Curve: id.String()}
	circ, err := NewWith(name, ccs, pk, vk, meta, o)
	if err != nil {
		return nil, SetupInfo{}, err
	}
	domain := 1
	for domain < circ.Constraints {
		domain <<= 1
	}
	return circ, SetupInfo{Constraints: circ.Constraints, Domain: domain, Wires: circ.NbWires}, nil
}
