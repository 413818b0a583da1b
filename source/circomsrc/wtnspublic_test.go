package circomsrc

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/zkpipe/zkpipe/blob/boundedread"
)

// ReadWtnsPublic gives the public signals that snarkjs puts in public.json:
// wires 1 … nPublic of the full witness, read in full by ParseWtns here.
func TestReadWtnsPublic(t *testing.T) {
	for _, base := range []string{"testdata/mul", "testdata/bls12381/blsmul"} {
		t.Run(base, func(t *testing.T) { checkReadWtnsPublic(t, base) })
	}
}

func checkReadWtnsPublic(t *testing.T, base string) {
	vk, err := ReadVerifyingKey(base + ".vkey.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(base + ".wtns")
	if err != nil {
		t.Fatal(err)
	}
	id, full, err := ParseWtnsOf(data)
	if err != nil || id != vk.Curve {
		t.Fatalf("a %s wtns for a %s key: %v", id, vk.Curve, err)
	}
	got, err := ReadWtnsPublic(context.Background(), base+".wtns", vk.NPublic, boundedread.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := curveOf(id).decimals(full[1 : 1+vk.NPublic])
	if vk.NPublic == 0 || !slices.Equal(got, want) {
		t.Fatalf("public signals %v, want %v", got, want)
	}
	// more public signals than the witness has wires: an error, not a panic
	if _, err := ReadWtnsPublic(context.Background(), base+".wtns", len(full), boundedread.Options{}); err == nil {
		t.Error("a wtns read for more public signals than it has wires")
	}
	if _, err := ReadWtnsPublic(context.Background(), base+".vkey.json", 1, boundedread.Options{}); err == nil {
		t.Error("a JSON file read as a wtns")
	}
}
