package gnarksrc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/circuits"
	"github.com/zkpipe/zkpipe/stages"
)

// SetupInfo describes a circuit directory Setup wrote.
type SetupInfo struct {
	Constraints, Domain, Wires int
}

// Setup compiles the built-in circuit name at about n constraints, runs
// gnark's groth16.Setup and writes dir/circuit.{r1cs,pk,vk,json}. The proving
// key is written uncompressed (gnark's WriteRawTo) so it loads without a
// square root per point.
func Setup(name string, n int, dir string) (SetupInfo, error) {
	b, err := circuits.Lookup(name)
	if err != nil {
		return SetupInfo{}, err
	}
	ccs, err := b.Compile(n)
	if err != nil {
		return SetupInfo{}, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return SetupInfo{}, fmt.Errorf("setup %s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return SetupInfo{}, err
	}
	out := stages.Dir(dir)
	meta, _ := json.Marshal(Meta{Builtin: name, Constraints: n})
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{R1CSFile, func(w *bytes.Buffer) error { _, err := ccs.WriteTo(w); return err }},
		{PKFile, func(w *bytes.Buffer) error { _, err := pk.WriteRawTo(w); return err }},
		{VKFile, func(w *bytes.Buffer) error { _, err := vk.WriteTo(w); return err }},
		{MetaFile, func(w *bytes.Buffer) error { _, err := w.Write(meta); return err }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			return SetupInfo{}, fmt.Errorf("encode %s: %w", f.name, err)
		}
		if _, err := out.Write(f.name, buf.Bytes()); err != nil {
			return SetupInfo{}, err
		}
	}
	nbWires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
	domain := 1
	for domain < ccs.GetNbConstraints() {
		domain <<= 1
	}
	return SetupInfo{Constraints: ccs.GetNbConstraints(), Domain: domain, Wires: nbWires}, nil
}
