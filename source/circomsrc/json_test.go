package circomsrc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	if _, err := ReadPublic(context.Background(), huge, 2); err == nil || !strings.Contains(err.Error(), huge) {
		t.Errorf("ReadPublic of a huge file: got %v, want an error naming it", err)
	}
	if _, err := ReadProof(ctx, fifo); err == nil || !strings.Contains(err.Error(), fifo) {
		t.Errorf("ReadProof of a FIFO: got %v, want an error naming it", err)
	}
	if _, err := ReadPublic(ctx, fifo, 2); err == nil || !strings.Contains(err.Error(), fifo) {
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
