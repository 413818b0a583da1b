package circomsrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfft "github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bnfft "github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/hostilefile"
	"github.com/zkpipe/zkpipe/internal/keysink"
	"github.com/zkpipe/zkpipe/internal/racedetect"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/stages"
)

const basesParts = proofdata.PartA | proofdata.PartB1 | proofdata.PartK | proofdata.PartZ | proofdata.PartB2

// keyBases is the memory of k's host base slices, by part.
func keyBases(t *testing.T, k *proofdata.Key) map[proofdata.KeyParts][]byte {
	t.Helper()
	switch k.Curve {
	case curve.BN254:
		b, err := proofdata.BasesOf[bn254.G1Affine, bn254.G2Affine, bnfft.Domain](k.Curve, k)
		if err != nil {
			t.Fatal(err)
		}
		return map[proofdata.KeyParts][]byte{proofdata.PartA: pointBytes(b.A), proofdata.PartB1: pointBytes(b.B1),
			proofdata.PartK: pointBytes(b.K), proofdata.PartZ: pointBytes(b.Z), proofdata.PartB2: pointBytes(b.B2)}
	case curve.BLS12_381:
		b, err := proofdata.BasesOf[bls12381.G1Affine, bls12381.G2Affine, blsfft.Domain](k.Curve, k)
		if err != nil {
			t.Fatal(err)
		}
		return map[proofdata.KeyParts][]byte{proofdata.PartA: pointBytes(b.A), proofdata.PartB1: pointBytes(b.B1),
			proofdata.PartK: pointBytes(b.K), proofdata.PartZ: pointBytes(b.Z), proofdata.PartB2: pointBytes(b.B2)}
	}
	t.Fatalf("a %s key", k.Curve)
	return nil
}

// loadBoth loads zkey read whole and with its points left in the file.
func loadBoth(t *testing.T, zkey string) (whole, def *stages.Circuit) {
	t.Helper()
	whole, err := LoadFiles(context.Background(), Files{Zkey: zkey, ReadKeyWhole: true})
	if err != nil {
		t.Fatal(err)
	}
	if def, err = LoadFiles(context.Background(), Files{Zkey: zkey}); err != nil {
		t.Fatal(err)
	}
	return whole, def
}

// checkStreamsAsWhole checks a circuit loaded with its points in the file
// against the whole read of the same zkey: same selections and sizes, the
// stream's points the whole read's, part by part, byte for byte, each once
// (in chunks of a few points, a short last one); then Need reads the host
// copy into the whole read's bases.
func checkStreamsAsWhole(t *testing.T, zkey string) (whole, def *stages.Circuit) {
	t.Helper()
	whole, def = loadBoth(t, zkey)
	k, wk := def.Key, whole.Key
	if got, want := k.Deferred(), basesParts; got != want {
		t.Fatalf("%s: deferred parts %06b, want %06b", zkey, got, want)
	}
	if whole.Key.Deferred() != 0 {
		t.Fatalf("%s: ReadKeyWhole left parts %06b unread", zkey, whole.Key.Deferred())
	}
	if k.Size != wk.Size || !reflect.DeepEqual(def.Sel, whole.Sel) {
		t.Fatalf("%s: sizes %+v and selections %v, the whole read's %+v and %v", zkey, k.Size, def.Sel, wk.Size, whole.Sel)
	}
	sink := keysink.New(k)
	if err := k.Stream(k.Deferred(), sink); err != nil {
		t.Fatalf("%s: %v", zkey, err)
	}
	for part, b := range keyBases(t, wk) {
		if k.Deferred()&part == 0 {
			continue
		}
		if !bytes.Equal(sink.Bytes[part], b) {
			t.Errorf("%s: part %06b streamed differs from the whole read's", zkey, part)
		}
		for i, w := range sink.Writes[part] {
			if w != 1 {
				t.Fatalf("%s: part %06b point %d written %d times", zkey, part, i, w)
			}
		}
	}
	if err := k.Need(proofdata.AllParts); err != nil {
		t.Fatal(err)
	}
	if k.Deferred() != 0 {
		t.Errorf("%s: parts %06b still deferred after Need", zkey, k.Deferred())
	}
	if !reflect.DeepEqual(k.Bases, wk.Bases) {
		t.Errorf("%s: the bases Need read differ from the whole read's", zkey)
	}
	return whole, def
}

// TestDeferredZkeyStreamsAsTheWholeReadReadsIt: over every committed zkey
// of both curves (BLS12-381's H permuted, rowMul ≠ 1: streamed in windows
// of rows, many here) and a larger synthetic key of each with many points
// at infinity, what streams and what Need reads are the whole read's key.
func TestDeferredZkeyStreamsAsTheWholeReadReadsIt(t *testing.T) {
	defer func(b, w int) { streamChunkBytes, hWindowBytes = b, w }(streamChunkBytes, hWindowBytes)
	streamChunkBytes = 1000 // a few points a chunk, a short last one
	hWindowBytes = 7000     // a few chunks' rows a pass, a short last one
	var dropped bool
	zkeys := []string{"mul", "mul2", "nopub", "arr", "bls12381/blsmul", "bls12381/blsmul2"}
	for i := range zkeys {
		zkeys[i] = filepath.Join("testdata", zkeys[i]+".zkey")
	}
	for _, id := range curve.All {
		zkeys = append(zkeys, syntheticZkey(t, id, 300, 512, nil))
	}
	for _, zkey := range zkeys {
		whole, _ := checkStreamsAsWhole(t, zkey)
		z := whole.Source.(*Source).Zkey()
		dropped = dropped || whole.Key.Size.A < z.NVars || whole.Key.Size.B < z.NVars
	}
	if !dropped {
		t.Error("no key had a point at infinity to drop")
	}
}

// TestDeferredZkeyStreamHoldsNoWholePart: streaming a key's bases
// allocates a few chunks' worth, not the parts themselves; reading them
// into the host copy allocates them whole (the measure can tell the two
// apart).
func TestDeferredZkeyStreamHoldsNoWholePart(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("what a stream allocates is not the program's under the race detector: the plain run measures it")
	}
	defer func(b, w int) { streamChunkBytes, hWindowBytes = b, w }(streamChunkBytes, hWindowBytes)
	streamChunkBytes = 8 << 10
	c, err := LoadFiles(context.Background(), Files{Zkey: syntheticZkey(t, curve.BN254, 1<<13, 1<<13, nil)})
	if err != nil {
		t.Fatal(err)
	}
	k := c.Key
	if k.Deferred() != basesParts || k.HostBytes() != 4*int64(k.N())*proofdata.ScalarBytes {
		t.Fatalf("deferred %06b, host copy %d bytes: want every base deferred, only the domain's tables held", k.Deferred(), k.HostBytes())
	}
	bases := keysink.BaseBytes(k)
	allocated := func(f func() error) int64 {
		t.Helper()
		n, err := keysink.Allocated(f)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	streamed := allocated(k.CheckDeferred)
	fetched := allocated(func() error { return k.Need(basesParts) })
	t.Logf("bases %d bytes; streaming allocated %d, fetching %d", bases, streamed, fetched)
	if streamed > bases/8 {
		t.Errorf("streaming the bases allocated %d bytes, for %d bytes of bases: they were held whole", streamed, bases)
	}
	if fetched < bases {
		t.Errorf("reading the bases into the host copy allocated %d bytes, less than their %d: the measure is off", fetched, bases)
	}

	// BLS12-381's H, permuted, streams a window of rows at a time: the
	// stream holds a window, not H
	streamChunkBytes, hWindowBytes = 64<<10, 256<<10
	c, err = LoadFiles(context.Background(), Files{Zkey: syntheticZkey(t, curve.BLS12_381, 1<<10, 1<<16, nil)})
	if err != nil {
		t.Fatal(err)
	}
	k = c.Key
	h := int64(k.Size.Z) * int64(k.Curve.Params().G1AffineBytes)
	streamed = allocated(func() error { return k.Stream(proofdata.PartZ, discard{}) })
	fetched = allocated(func() error { return k.Need(proofdata.PartZ) })
	t.Logf("BLS12-381's H %d bytes, in windows of %d: streaming allocated %d, fetching %d", h, hWindowBytes, streamed, fetched)
	if streamed > h/4 {
		t.Errorf("streaming BLS12-381's H allocated %d bytes, for %d bytes of H: it was held whole", streamed, h)
	}
	if fetched < h || fetched > h+h/8 {
		t.Errorf("fetching BLS12-381's H allocated %d bytes, for %d bytes of H: want it once, straight into its rows", fetched, h)
	}
}

type discard struct{}

func (discard) Write(proofdata.KeyParts, int, int, []byte) error { return nil }

// TestDeferredZkeyRefusesAChangedFile: points left in the file are read
// from the file LoadFiles read, or not at all: a zkey rewritten since (a
// point changed, same size) or cut short is refused, naming the file.
func TestDeferredZkeyRefusesAChangedFile(t *testing.T) {
	for _, change := range []string{"rewritten", "cut"} {
		path := syntheticZkey(t, curve.BN254, 300, 512, nil)
		c, err := LoadFiles(context.Background(), Files{Zkey: path})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if change == "cut" {
			data = data[:len(data)-100]
		} else {
			data[len(data)-100] ^= 1
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
	// a point at infinity become a point, the file's time put back: the
	// stream meets a point the selections do not have
	path := syntheticZkey(t, curve.BN254, 300, 512, nil)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadFiles(context.Background(), Files{Zkey: path})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table, err := checkBinTable(bytes.NewReader(data), int64(len(data)), "zkey", 9)
	if err != nil {
		t.Fatal(err)
	}
	a := table[5].off // A's point 0 is infinity, its point 1 not
	copy(data[a:a+64], data[a+64:a+128])
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	want := "changed since the circuit was loaded (its A section's point 0)"
	if err := c.Key.CheckDeferred(); err == nil || !strings.Contains(err.Error(), path+": "+want) {
		t.Errorf("a point where LoadFiles saw infinity: %v, want %q", err, want)
	}
}

// TestDeferredZkeyNamesABadPoint: a point off the curve, or B1 and B2
// disagreeing on a wire's infinity, loads (the points are left in the
// file) and fails the stream and the fetch with the whole read's error:
// the file, the section, the point.
func TestDeferredZkeyNamesABadPoint(t *testing.T) {
	defer func(b int) { streamChunkBytes = b }(streamChunkBytes)
	streamChunkBytes = 1000
	for _, id := range curve.All {
		for _, tc := range []struct {
			name string
			bad  map[uint32][]int // section → points spoiled
			want string
		}{
			{"off the curve", map[uint32][]int{6: {200}}, "zkey: B1 section: point 200 is not on the curve"},
			{"B2 off the curve", map[uint32][]int{7: {7}}, "zkey: B2 section: point 7 is not on the curve"},
			{"H off the curve", map[uint32][]int{9: {511}}, "zkey: H section: point 511 is not on the curve"},
		} {
			path := syntheticZkey(t, id, 300, 512, tc.bad)
			if _, err := LoadFiles(context.Background(), Files{Zkey: path, ReadKeyWhole: true}); err == nil || !strings.Contains(err.Error(), path+": "+tc.want) {
				t.Errorf("%s, %s: the whole read: %v, want %q", id, tc.name, err, tc.want)
			}
			c, err := LoadFiles(context.Background(), Files{Zkey: path})
			if err != nil {
				t.Fatalf("%s, %s: LoadFiles: %v", id, tc.name, err)
			}
			for how, err := range map[string]error{"stream": c.Key.CheckDeferred(), "fetch": c.Key.Need(proofdata.AllParts)} {
				if err == nil || !strings.Contains(err.Error(), path+": "+tc.want) {
					t.Errorf("%s, %s, %s: %v, want %q", id, tc.name, how, err, path+": "+tc.want)
				}
			}
		}
		// B2's point 3 infinity where B1's is not
		path := syntheticZkey(t, id, 300, 512, nil, 3)
		c, err := LoadFiles(context.Background(), Files{Zkey: path})
		if err != nil {
			t.Fatal(err)
		}
		want := "B1 and B2 disagree on wire 3"
		if err := c.Key.CheckDeferred(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: B2 point at infinity: %v, want %q naming %s", id, err, want, path)
		}
	}
}

// syntheticZkey writes a zkey of curve id with nVars wires and a domain of
// n, its headers, IC and coefficients mul.zkey's (blsmul's): every point
// the generator but every third wire's A, every fifth's B1 and B2 and
// every seventh's C (infinity). bad names points to spoil by section
// (their x coordinate's first byte flipped: off the curve); with
// infB2 given, those B2 points are infinity (B1's are not). Its proofs
// are nonsense; its points are what a reader checks.
func syntheticZkey(t *testing.T, id curve.ID, nVars, n int, bad map[uint32][]int, infB2 ...int) string {
	t.Helper()
	src := filepath.Join("testdata", "mul.zkey")
	var g1, g2 []byte
	switch id {
	case curve.BN254:
		_, _, a, b := bn254.Generators()
		g1, g2 = pointBytes([]bn254.G1Affine{a}), pointBytes([]bn254.G2Affine{b})
	case curve.BLS12_381:
		src = filepath.Join("testdata", "bls12381", "blsmul.zkey")
		_, _, a, b := bls12381.Generators()
		g1, g2 = pointBytes([]bls12381.G1Affine{a}), pointBytes([]bls12381.G2Affine{b})
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseBinFile(data, "zkey", 1)
	if err != nil {
		t.Fatal(err)
	}
	hdr := bytes.Clone(f.sections[2])
	n8q := int(binary.LittleEndian.Uint32(hdr))
	at := 4 + n8q + 4 + 32
	nPublic := int(binary.LittleEndian.Uint32(hdr[at+4:]))
	binary.LittleEndian.PutUint32(hdr[at:], uint32(nVars))
	binary.LittleEndian.PutUint32(hdr[at+8:], uint32(n))
	points := func(typ uint32, count int, g []byte, every int) []byte {
		out := make([]byte, 0, count*len(g))
		zero := make([]byte, len(g))
		inf := map[int]bool{}
		if typ == 7 {
			for _, i := range infB2 {
				inf[i] = true
			}
		}
		for i := range count {
			if (every > 0 && i%every == 0) || inf[i] {
				out = append(out, zero...)
			} else {
				out = append(out, g...)
			}
		}
		for _, i := range bad[typ] {
			out[i*len(g)] ^= 1
		}
		return out
	}
	sections := []struct {
		typ  uint32
		data []byte
	}{
		{1, f.sections[1]}, {2, hdr}, {3, f.sections[3]}, {4, f.sections[4]},
		{5, points(5, nVars, g1, 3)}, {6, points(6, nVars, g1, 5)}, {7, points(7, nVars, g2, 5)},
		{8, points(8, nVars-nPublic-1, g1, 7)}, {9, points(9, n, g1, 0)},
	}
	out := []byte("zkey")
	out = binary.LittleEndian.AppendUint32(out, 1)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(sections)))
	for _, s := range sections {
		out = binary.LittleEndian.AppendUint32(out, s.typ)
		out = binary.LittleEndian.AppendUint64(out, uint64(len(s.data)))
		out = append(out, s.data...)
	}
	path := filepath.Join(t.TempDir(), "synth.zkey")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDeferredZkeyAgreesWithTheWholeReadOnDamagedFiles: a zkey damaged at
// random (a few bytes changed anywhere, or the file cut short) is taken
// by the deferred read exactly when the whole read takes it (LoadFiles,
// then every point streamed and fetched), and then to the same bases;
// either way, no panic, and a refusal names the file.
func TestDeferredZkeyAgreesWithTheWholeReadOnDamagedFiles(t *testing.T) {
	defer func(b, w int) { streamChunkBytes, hWindowBytes = b, w }(streamChunkBytes, hWindowBytes)
	streamChunkBytes, hWindowBytes = 1000, 7000
	r := rand.New(rand.NewPCG(26, 6))
	dir := t.TempDir()
	tries := 400
	if testing.Short() {
		tries = 30
	}
	for _, name := range []string{"mul", "bls12381/blsmul"} {
		orig, err := os.ReadFile(filepath.Join("testdata", name+".zkey"))
		if err != nil {
			t.Fatal(err)
		}
		took := 0
		for try := range tries {
			data, how := hostilefile.Damaged(r, orig, try)
			path := filepath.Join(dir, fmt.Sprintf("z%d.zkey", try))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			whole, werr := LoadFiles(context.Background(), Files{Zkey: path, ReadKeyWhole: true})
			def, derr := LoadFiles(context.Background(), Files{Zkey: path})
			if derr == nil {
				derr = keysink.ReadDeferred(def.Key)
			}
			if err := keysink.Agree(werr, derr, path); err != nil {
				t.Fatalf("%s, try %d (%s): %v", name, try, how, err)
			}
			if werr != nil {
				continue
			}
			took++
			wb, db := keyBases(t, whole.Key), keyBases(t, def.Key)
			for part, b := range wb {
				if !bytes.Equal(b, db[part]) {
					t.Fatalf("%s, try %d (%s): part %06b read differently", name, try, how, part)
				}
			}
		}
		t.Logf("%s: %d of %d damaged files still load (damage in sections not read, or in no point)", name, took, tries)
	}
}
