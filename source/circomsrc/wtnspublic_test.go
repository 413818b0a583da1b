package circomsrc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zkpipe/zkpipe/source/boundedread"
)

// ReadWtnsPublic gives the public signals that snarkjs puts in public.json:
// wires 1 … nPublic of the full witness, read in full by ParseWtns here.
func TestReadWtnsPublic(t *testing.T) {
	td := "testdata"
	vk, err := ReadVerifyingKey(filepath.Join(td, "mul.vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(td, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := ParseWtns(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadWtnsPublic(context.Background(), filepath.Join(td, "mul.wtns"), vk.NPublic, boundedread.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := decimals(full[1 : 1+vk.NPublic])
	if vk.NPublic == 0 || !slices.Equal(got, want) {
		t.Fatalf("public signals %v, want %v", got, want)
	}
	// more public signals than the witness has wires: an error, not a panic
	if _, err := ReadWtnsPublic(context.Background(), filepath.Join(td, "mul.wtns"), len(full), boundedread.Options{}); err == nil {
		t.Error("a wtns read for more public signals than it has wires")
	}
	if _, err := ReadWtnsPublic(context.Background(), filepath.Join(td, "mul.vkey.json"), 1, boundedread.Options{}); err == nil {
		t.Error("a JSON file read as a wtns")
	}
}
