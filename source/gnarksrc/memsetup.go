package gnarksrc

import (
	"fmt"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/keygen"
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
	ccs, err := compileBuiltin(id, name, n, log)
	if err != nil {
		return nil, SetupInfo{}, err
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
	return circ, setupInfo(ccs), nil
}
