package gnarksrc

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// zkpipe setup writes circuit.pk's digest beside it, and a load of that
// very file skips its point slices' subgroup checks (saying so); a key
// changed since, or whose digest file is anything else, is checked point
// by point and a point outside its subgroup refused. The digest is no
// signature: rewritten to match a changed key, it is trusted (the proofs
// of such a key still fail their check against the verifying key).
func TestPKDigestSkipsTheChecksOfSetupsOwnKey(t *testing.T) {
	base := filepath.Join(t.TempDir(), "c")
	if _, err := SetupOn(curve.BLS12_381, "commit", 64, base); err != nil {
		t.Fatal(err)
	}
	if !pkTrusted(base, Options{}) {
		t.Fatalf("setup's own key does not match the digest it wrote")
	}
	// copyDir with the digest (copyDir takes the four files every test needs)
	copyAll := func() string {
		dir := copyDir(t, base)
		b, err := os.ReadFile(filepath.Join(base, PKDigestFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, PKDigestFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	load := func(dir string) (string, error) {
		var log bytes.Buffer
		c, err := LoadDirWith(dir, Options{Progress: &log, ProgressEvery: time.Hour}) // lines said, no ticks
		if err == nil {
			err = c.Key.CheckDeferred()
		}
		return log.String(), err
	}
	if log, err := load(copyAll()); err != nil || !strings.Contains(log, "subgroup checks skipped") {
		t.Fatalf("setup's key: %v, log %q: want it loaded without the checks, saying so", err, log)
	}
	// A's point 3 outside G1's subgroup
	data, err := os.ReadFile(filepath.Join(base, PKFile))
	if err != nil {
		t.Fatal(err)
	}
	bad := hostilefile.OutsideBLS12381G1()
	enc := bad.RawBytes()
	found := false
	for _, p := range pkLayout(bytes.NewReader(data), int64(len(data)), curve.BLS12_381, nil).parts {
		if p.name == "proving key's A" {
			copy(data[p.off+3*int64(len(enc)):], enc[:])
			found = true
		}
	}
	if !found {
		t.Fatal("no part A")
	}
	for _, c := range []struct {
		name    string
		digest  func(dir string)
		refused bool
	}{
		{"the old digest", func(string) {}, true},
		{"no digest", func(dir string) { os.Remove(filepath.Join(dir, PKDigestFile)) }, true},
		{"a digest of garbage", func(dir string) {
			os.WriteFile(filepath.Join(dir, PKDigestFile), []byte("zkpipe-pk-digest-v1 sha256/4MiB 00\n"), 0o644)
		}, true},
		{"a digest rewritten to match", func(dir string) {
			if err := writePKDigest(dir); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyAll()
			if err := os.WriteFile(filepath.Join(dir, PKFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
			c.digest(dir)
			_, err := load(dir)
			if refused := err != nil && strings.Contains(err.Error(), "point 3 is not in the prime-order subgroup"); refused != c.refused {
				t.Fatalf("a key changed after setup, %s: %v (want refused: %v)", c.name, err, c.refused)
			}
		})
	}
}

// digestWriter's digest of the bytes written through it, in writes of
// any sizes, is pkDigest's of a file of those bytes: empty, under one
// piece, a piece exactly, pieces and a part, on 1 and all cores; and what
// it passes on is those bytes.
func TestDigestWriterIsPKDigest(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 3))
	for _, size := range []int{0, 1, 1000, pkDigestChunk, 3*pkDigestChunk + 12345} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		path := filepath.Join(t.TempDir(), "pk")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := pkDigest(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{1, runtime.NumCPU()} {
			old := runtime.GOMAXPROCS(procs)
			var passed bytes.Buffer
			d := newDigestWriter(&passed)
			for p := data; len(p) > 0; {
				k := min(len(p), 1+rng.IntN(3*pkDigestChunk/2))
				if n, err := d.Write(p[:k]); n != k || err != nil {
					t.Fatal(n, err)
				}
				p = p[k:]
			}
			got := d.digest()
			runtime.GOMAXPROCS(old)
			if got != want || !bytes.Equal(passed.Bytes(), data) {
				t.Fatalf("%d bytes, %d cores: digest %s, pkDigest %s; bytes passed on equal: %v", size, procs, got, want, bytes.Equal(passed.Bytes(), data))
			}
		}
	}
}
