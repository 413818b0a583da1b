package gnarksrc

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	groth16bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/hostilefile"
	"github.com/zkpipe/zkpipe/internal/keysink"
	"github.com/zkpipe/zkpipe/internal/racedetect"
	"github.com/zkpipe/zkpipe/proofdata"
)

// gnarkBases is the memory of pk's base slices, by part.
func gnarkBases(t *testing.T, pk groth16.ProvingKey) map[proofdata.KeyParts][]byte {
	switch k := pk.(type) {
	case *groth16bn254.ProvingKey:
		return map[proofdata.KeyParts][]byte{proofdata.PartA: pointBytes(k.G1.A), proofdata.PartB1: pointBytes(k.G1.B),
			proofdata.PartK: pointBytes(k.G1.K), proofdata.PartZ: pointBytes(k.G1.Z), proofdata.PartB2: pointBytes(k.G2.B)}
	case *groth16bls12381.ProvingKey:
		return map[proofdata.KeyParts][]byte{proofdata.PartA: pointBytes(k.G1.A), proofdata.PartB1: pointBytes(k.G1.B),
			proofdata.PartK: pointBytes(k.G1.K), proofdata.PartZ: pointBytes(k.G1.Z), proofdata.PartB2: pointBytes(k.G2.B)}
	}
	t.Fatalf("a %T", pk)
	return nil
}

const streamedParts = deferredParts &^ proofdata.PartDomain

// TestDeferredBasesStreamAsGnarkReadsThem: LoadDir leaves a key file's
// bases and its domain's tables unread (raw and compressed keys, both
// curves), so the host copy holds none of them; Stream hands over every
// point of each part once, in chunks of a few points (a short last one),
// equal to gnark's decoding of the file; Need then reads the host copy
// into what gnark reads, tables included.
func TestDeferredBasesStreamAsGnarkReadsThem(t *testing.T) {
	defer func(b int) { loadChunkBytes = b }(loadChunkBytes)
	loadChunkBytes = 1000
	for _, id := range curve.All {
		for _, raw := range []bool{true, false} {
			dir := keyDir(t, id, "mulchain", 300)
			data := readKeyFile(t, dir)
			want, err := gnarkKey(id, data)
			if err != nil {
				t.Fatal(err)
			}
			if !raw {
				data = encodeKey(t, want, false)
				if err := os.WriteFile(filepath.Join(dir, PKFile), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			k := c.Key
			if got := k.Deferred(); got != deferredParts {
				t.Fatalf("%s raw=%v: deferred parts %06b, want %06b", id, raw, got, deferredParts)
			}
			if got := k.HostBytes(); got != 0 {
				t.Errorf("%s raw=%v: the host copy holds %d bytes of bases and tables before any load", id, raw, got)
			}
			sink := keysink.New(k)
			if err := k.Stream(streamedParts, sink); err != nil {
				t.Fatalf("%s raw=%v: %v", id, raw, err)
			}
			for part, b := range gnarkBases(t, want) {
				if !bytes.Equal(sink.Bytes[part], b) {
					t.Errorf("%s raw=%v: part %06b streamed differs from gnark's decoding", id, raw, part)
				}
				for i, w := range sink.Writes[part] {
					if w != 1 {
						t.Fatalf("%s raw=%v: part %06b point %d written %d times", id, raw, part, i, w)
					}
				}
			}
			if err := k.Need(proofdata.AllParts); err != nil {
				t.Fatal(err)
			}
			if k.Deferred() != 0 {
				t.Errorf("%s raw=%v: parts %06b still deferred after Need", id, raw, k.Deferred())
			}
			if got := c.Source.(*Source).ProvingKey(); !reflect.DeepEqual(got, want) {
				t.Errorf("%s raw=%v: the key read by Need differs from gnark's", id, raw)
			}
		}
	}
}

// TestDeferredStreamHoldsNoWholePart: streaming a key's bases allocates a
// few chunks' worth, not the parts themselves (what a load onto a GPU
// holds of the key on the host); reading them into the host copy
// allocates them whole (the measure can tell the two apart).
func TestDeferredStreamHoldsNoWholePart(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("what a stream allocates is not the program's under the race detector: the plain run measures it")
	}
	defer func(b int) { loadChunkBytes = b }(loadChunkBytes)
	loadChunkBytes = 8 << 10
	dir := keyDir(t, curve.BN254, "mulchain", 1<<13)
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	k := c.Key
	bases := keysink.BaseBytes(k)
	allocated := func(f func() error) int64 {
		t.Helper()
		n, err := keysink.Allocated(f)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	streamed := allocated(k.CheckDeferred) // every deferred base, into no memory
	fetched := allocated(func() error { return k.Need(streamedParts) })
	t.Logf("bases %d bytes; streaming allocated %d, fetching %d", bases, streamed, fetched)
	if streamed > bases/4 {
		t.Errorf("streaming the bases allocated %d bytes, for %d bytes of bases: they were held whole", streamed, bases)
	}
	if fetched < bases {
		t.Errorf("reading the bases into the host copy allocated %d bytes, less than their %d: the measure is off", fetched, bases)
	}
}

// TestDeferredKeyRefusesAChangedFile: bases left unread are read from the
// file LoadDir read, or not at all: a key file rewritten since (another
// setup's, same size) or cut short is refused, naming the file.
func TestDeferredKeyRefusesAChangedFile(t *testing.T) {
	for _, change := range []string{"rewritten", "cut"} {
		dir := keyDir(t, curve.BN254, "mulchain", 300)
		c, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, PKFile)
		data := readKeyFile(t, dir)
		if change == "cut" {
			data = data[:len(data)-100]
		} else {
			data[len(data)/2] ^= 1
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute) // a clock too coarse to tell the writes apart
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
		for how, err := range map[string]error{"stream": c.Key.CheckDeferred(), "fetch": c.Key.Need(proofdata.PartA)} {
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed since") {
				t.Errorf("%s, %s: %v, want an error naming %s as changed", change, how, err, path)
			}
		}
	}
}

// TestKeyOptionsReadItWhole: ReadKeyWhole, and KeepProvingKey (a pk
// proven with after), read the key whole at LoadDir.
func TestKeyOptionsReadItWhole(t *testing.T) {
	dir := keyDir(t, curve.BN254, "mulchain", 300)
	for _, o := range []Options{{ReadKeyWhole: true}, {KeepProvingKey: true}} {
		c, err := LoadDirWith(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if d := c.Key.Deferred(); d != 0 {
			t.Errorf("%+v: parts %06b left unread", o, d)
		}
	}
}

// TestDeferredKeyAgreesWithTheWholeReadOnDamagedFiles: a proving key file
// damaged at random (a few bytes changed, or cut short) is taken by the
// deferred read (LoadDir, then every base streamed and fetched) exactly
// when the whole read takes it, and then to the same key; either way no
// panic, and a refusal names the key file. A damaged key that loads
// (a change in no point's bytes, or a compressed point's X that is another
// point's: the keys here are raw, and raw points are checked on the curve)
// is caught by every proof's check against the verifying key.
func TestDeferredKeyAgreesWithTheWholeReadOnDamagedFiles(t *testing.T) {
	defer func(b int) { loadChunkBytes = b }(loadChunkBytes)
	loadChunkBytes = 1000
	r := rand.New(rand.NewPCG(26, 7))
	tries := 150
	if testing.Short() {
		tries = 30
	}
	for _, id := range curve.All {
		dir := keyDir(t, id, "mulchain", 300)
		pk := filepath.Join(dir, PKFile)
		orig := readKeyFile(t, dir)
		took := 0
		for try := range tries {
			data, how := hostilefile.Damaged(r, orig, try)
			if err := os.WriteFile(pk, data, 0o644); err != nil {
				t.Fatal(err)
			}
			whole, werr := LoadDirWith(dir, Options{ReadKeyWhole: true})
			def, derr := LoadDir(dir)
			if derr == nil {
				derr = keysink.ReadDeferred(def.Key)
			}
			if err := keysink.Agree(werr, derr, PKFile); err != nil {
				t.Fatalf("%s, try %d (%s): %v", id, try, how, err)
			}
			if werr != nil {
				continue
			}
			took++
			if !reflect.DeepEqual(whole.Source.(*Source).ProvingKey(), def.Source.(*Source).ProvingKey()) {
				t.Fatalf("%s, try %d (%s): the two reads give different keys", id, try, how)
			}
		}
		t.Logf("%s: %d of %d damaged key files still load", id, took, tries)
	}
}
