package gnarksrc

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zkpipe/zkpipe/curve"
)

// trailingDir is a circuit directory of a small built-in, set up once for
// these tests; each test copies it.
func trailingDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := Setup("commit", 64, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyDir copies a circuit directory, so each case breaks its own.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "c")
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{R1CSFile, PKFile, VKFile, MetaFile} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// compress rewrites dir's BN254 proving key in gnark's default
// (compressed) encoding, pk.WriteTo.
func compress(t *testing.T, dir string) {
	t.Helper()
	compressOn(t, dir, curve.BN254)
}

// loadRefused loads dir and wants an error naming file and containing one
// of want's |-separated phrases, with the heap grown by less than 64 MiB on
// the way.
func loadRefused(t *testing.T, dir, file, want, what string) {
	t.Helper()
	var err error
	grew := allocated(func() { _, err = LoadDir(dir) })
	matches := func(msg string) bool {
		for _, w := range strings.Split(want, "|") {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), file) || !matches(err.Error()) {
		t.Fatalf("%s: %v, want an error naming %s with %q", what, err, file, want)
	}
	if grew > 64<<20 {
		t.Fatalf("%s: %d bytes allocated before the refusal", what, grew)
	}
}

// TestCircuitFilesWithTrailingBytes: a circuit.r1cs, circuit.pk (raw or
// compressed) or circuit.vk followed by one byte, or by 3 GiB of zeros
// (sparse), directly or through a symlink, is refused for its trailing
// bytes, unread. Before, an r1cs followed by 3 GiB of zeros loaded and
// proved.
func TestCircuitFilesWithTrailingBytes(t *testing.T) {
	base := trailingDir(t)
	for _, compressed := range []bool{false, true} {
		for _, file := range []string{R1CSFile, PKFile, VKFile} {
			for _, grow := range []int64{1, 3 << 30} {
				dir := copyDir(t, base)
				if compressed {
					compress(t, dir)
				}
				if _, err := LoadDir(dir); err != nil {
					t.Fatalf("the copy itself: %v", err)
				}
				p := filepath.Join(dir, file)
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(p, st.Size()+grow); err != nil {
					t.Skipf("no sparse file here: %v", err)
				}
				// a key 3 GiB over what it can be is refused by its
				// size (pkLimit, vkLimit) before its layout is walked
				want := "trailing bytes|more than a proving key of this r1cs can be|more than a verifying key can be"
				loadRefused(t, dir, file, want, file)
				// the same file reached by a symlink
				real := filepath.Join(t.TempDir(), "real")
				if err := os.Rename(p, real); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(real, p); err != nil {
					t.Fatal(err)
				}
				loadRefused(t, dir, file, want, file+" by a symlink")
			}
		}
	}
}

// TestCircuitFilesDeclaringMoreThanTheyHold: counts that gnark's decoders
// allocate by, set far beyond the file (2³²−1 points, a 2⁴⁰-byte body, a
// 2⁴⁰ domain, 2⁶² wires), are refused before the allocation, naming the
// file; so is a proof that says it has 2³²−1 commitments.
func TestCircuitFilesDeclaringMoreThanTheyHold(t *testing.T) {
	base := trailingDir(t)
	// offsets in a raw proving key: the domain (8 + 5·32 + 1), three G1
	// points of 64 bytes, then A's u32 count
	const pkA = 169 + 3*64
	for _, c := range []struct {
		name, file, want string
		edit             func(b []byte)
	}{
		{"r1cs body", R1CSFile, "its header says", func(b []byte) { binary.LittleEndian.PutUint64(b, 1<<40) }},
		{"r1cs sections", R1CSFile, "its levels section says 1099511627776 bytes, the file has", func(b []byte) { binary.LittleEndian.PutUint64(b[32:], 1<<40) }},
		{"pk domain", PKFile, "domain of 1099511627776", func(b []byte) { binary.BigEndian.PutUint64(b, 1<<40) }},
		{"pk A", PKFile, "truncated, or not as gnark writes it", func(b []byte) { binary.BigEndian.PutUint32(b[pkA:], 1<<32-1) }},
		// the vk's points are compressed, as Setup writes it
		{"vk K", VKFile, "truncated, or not as gnark writes it", func(b []byte) { binary.BigEndian.PutUint32(b[3*32+3*64:], 1<<32-1) }},
	} {
		dir := copyDir(t, base)
		p := filepath.Join(dir, c.file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c.edit(b)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		loadRefused(t, dir, c.file, c.want, c.name)
	}

	// a proof of the circuit whose commitment count is a lie
	c, err := LoadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	vk := c.Source.(*Source).VerifyingKey()
	proof := make([]byte, 64+128+64+4+64)
	binary.BigEndian.PutUint32(proof[256:], 1<<32-1)
	grew := allocated(func() { _, _, err = VerifyProof(vk, "p.proof", proof, "p.public", make([]byte, 12)) })
	if err == nil || !strings.Contains(err.Error(), "commitments") || grew > 64<<20 {
		t.Fatalf("a proof of 2^32-1 commitments: %v (%d bytes allocated)", err, grew)
	}
}

// TestCircuitFileFromAPipe: a circuit file streamed through a FIFO is
// walked too (in memory, once read within its limit): a proving key whose
// A count is 2³²−1, or one followed by a byte, is refused; the key as it
// is loads.
func TestCircuitFileFromAPipe(t *testing.T) {
	base := trailingDir(t)
	good, err := os.ReadFile(filepath.Join(base, PKFile))
	if err != nil {
		t.Fatal(err)
	}
	lie := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(lie[169+3*64:], 1<<32-1)
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"as it is", "", good},
		{"A count", "truncated, or not as gnark writes it", lie},
		{"a byte more", "trailing bytes", append(append([]byte(nil), good...), 0)},
	} {
		dir := copyDir(t, base)
		p := filepath.Join(dir, PKFile)
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer w.Close()
			w.Write(c.data)
		}()
		var err error
		grew := allocated(func() { _, err = LoadDir(dir) })
		<-done
		switch {
		case c.want == "" && err != nil:
			t.Fatalf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Fatalf("%s: %v, want %q", c.name, err, c.want)
		case c.want != "" && grew > 64<<20:
			t.Fatalf("%s: %d bytes allocated", c.name, grew)
		}
	}
}
