package blob

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/zkpipe/zkpipe/mem"
)

func TestMemoryKeepsCopiesInOrder(t *testing.T) {
	var m Memory
	data := []byte("proof")
	if p, err := m.Write("a.proof", data); err != nil || p != "a.proof" {
		t.Fatalf("Write: %q %v, want the name back", p, err)
	}
	data[0] = 'X' // the writer keeps no reference to the caller's bytes
	m.Write("a.public", []byte("pub"))
	m.Write("a.proof", []byte("proof2")) // replaced, keeps its place
	if got := m.Names(); !slices.Equal(got, []string{"a.proof", "a.public"}) {
		t.Errorf("names %v", got)
	}
	if b, ok := m.File("a.proof"); !ok || string(b) != "proof2" {
		t.Errorf("a.proof: %q %v", b, ok)
	}
	if _, ok := m.File("b.proof"); ok {
		t.Error("a file never written")
	}
}

func TestInputReleaseGivesBackItsHold(t *testing.T) {
	var back int64
	in := NewInput("w", []byte("witness"), mem.NewReservation(100, func(n int64) { back += n }))
	r, size, ok := in.Open()
	if !ok || size != 7 {
		t.Fatalf("Open: %d %v", size, ok)
	}
	in.Release()
	in.Release()
	if back != 100 {
		t.Errorf("released %d of the hold's 100 bytes", back)
	}
	if b, _ := io.ReadAll(r); !bytes.Equal(b, []byte("witness")) {
		t.Errorf("a reader opened before Release reads %q", b)
	}
	if _, _, ok := in.Open(); ok {
		t.Error("Open after Release")
	}
	var none *Input
	none.Release() // a job without one
}
