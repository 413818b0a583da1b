package circomsrc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
)

// TestVerifyFilesBoundsItsReads: zkpipe verify --vkey reads the files a user
// names. A huge proof.json or public.json is refused by its size, unread; a
// FIFO nobody writes to ends with ctx; each error names the file. The old
// reads (os.ReadFile) took a 256 MiB file into memory and hung on the FIFO.
func TestVerifyFilesBoundsItsReads(t *testing.T) {
	vk, err := ReadVerifyingKey("testdata/mul.vkey.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// a public.json far longer than two inputs can be is refused unread
	long := filepath.Join(dir, "long.public.json")
	if err := os.WriteFile(long, []byte(`["1",`+strings.Repeat(" ", 8<<10)+`"2"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	proof, public := "testdata/mul.proof.json", "testdata/mul.public.json"
	for _, c := range []struct {
		name, proof, public, want string
	}{
		{"huge proof", huge, public, huge + ": 268435456 bytes, more than"},
		{"huge public", proof, huge, huge + ": 268435456 bytes, more than"},
		{"long public", proof, long, long + ": 8201 bytes, more than the 4608"},
		{"fifo proof", fifo, public, fifo},
		{"fifo public", proof, fifo, fifo},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		err := VerifyFiles(ctx, vk, c.proof, c.public)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
	if _, err := ReadVerifyingKey(huge); err == nil || !strings.Contains(err.Error(), huge) {
		t.Errorf("a 256 MiB verification_key.json: got %v, want an error naming it", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := ReadPublic(context.Background(), huge, curve.BN254, 2); err == nil || !strings.Contains(err.Error(), huge) {
		t.Errorf("ReadPublic of a huge file: got %v, want an error naming it", err)
	}
	if _, err := ReadProof(ctx, fifo); err == nil || !strings.Contains(err.Error(), fifo) {
		t.Errorf("ReadProof of a FIFO: got %v, want an error naming it", err)
	}
	if _, err := ReadPublic(ctx, fifo, curve.BN254, 2); err == nil || !strings.Contains(err.Error(), fifo) {
		t.Errorf("ReadPublic after ctx ended: got %v, want an error naming the file", err)
	}
	// still accepted in either order, still rejected with the wrong inputs
	if err := VerifyFiles(context.Background(), vk, public, proof); err != nil {
		t.Errorf("public.json first: %v", err)
	}
	wrong := filepath.Join(dir, "wrong.public.json")
	if err := os.WriteFile(wrong, []byte(`["1","2"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := VerifyFiles(context.Background(), vk, proof, wrong); err == nil {
		t.Error("a proof verified against public inputs it does not prove")
	}
}

// A coordinate or public input of more than 140 characters is refused, not
// parsed: Go's decimal parse is quadratic, and a 64 MiB verification key of
// one number took minutes.
func TestLongDecimalsRefused(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("1", 4<<20)
	vkey := filepath.Join(dir, "vkey.json")
	os.WriteFile(vkey, []byte(`{"protocol":"groth16","curve":"bn128","nPublic":0,"vk_alpha_1":["`+long+`","2","1"],
		"vk_beta_2":[["0","0"],["1","0"],["0","0"]],"vk_gamma_2":[["0","0"],["1","0"],["0","0"]],"vk_delta_2":[["0","0"],["1","0"],["0","0"]],"IC":[["0","1","0"]]}`), 0o600)
	start := time.Now()
	if _, err := ReadVerifyingKey(vkey); err == nil || !strings.Contains(err.Error(), "vk_alpha_1: a value of 4194304 characters is not a base-field element") || len(err.Error()) > 1000 {
		t.Errorf("a 4 MB coordinate: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	public := filepath.Join(dir, "public.json")
	os.WriteFile(public, []byte(`["`+strings.Repeat("0", 200)+`1"]`), 0o600)
	if _, err := ReadPublic(context.Background(), public, curve.BN254, 1); err == nil || !strings.Contains(err.Error(), "not a field element") {
		t.Errorf("a 201-character public input: %v", err)
	}
}
