package gnarksrc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/circuits"
)

// ReadPublicInputs gives the values of gnark's own public witness
// (witness.Public), in the decimal a verified proof's inputs are written in.
func TestReadPublicInputs(t *testing.T) {
	b, err := circuits.Lookup("mulchain")
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Witness(64, 3)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := w.MarshalBinary()
	dir := t.TempDir()
	p := filepath.Join(dir, "w.witness")
	os.WriteFile(p, data, 0o644)
	got, err := ReadPublicInputs(context.Background(), p, boundedread.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := w.Public()
	var want []string
	for _, v := range pub.Vector().(fr.Vector) {
		want = append(want, v.String())
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("public inputs %v, want %v", got, want)
	}
	for name, bad := range map[string][]byte{
		"short":    data[:len(data)-1],
		"long":     append(slices.Clone(data), 0),
		"header":   append(header(1, 1, 3), data[12:]...),
		"no value": header(1, 0, 1),
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, bad, 0o644)
		if _, err := ReadPublicInputs(context.Background(), p, boundedread.Options{}); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}
