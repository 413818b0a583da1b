package gnarksrc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/proofdata"
)

// keyDir sets up built-in name at n constraints on id in a temporary
// directory; Setup writes circuit.pk raw (keygen.WriteRawProvingKey).
func keyDir(t *testing.T, id curve.ID, name string, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := SetupOn(id, name, n, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readKeyFile(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, PKFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gnarkKey decodes data with gnark's own pk.UnsafeReadFrom.
func gnarkKey(id curve.ID, data []byte) (groth16.ProvingKey, error) {
	pk := groth16.NewProvingKey(id.ECC())
	_, err := pk.UnsafeReadFrom(bytes.NewReader(data))
	return pk, err
}

// ourKey decodes data with readProvingKey, returning the bytes it read.
func ourKey(id curve.ID, data []byte) (groth16.ProvingKey, int64, error) {
	pk := groth16.NewProvingKey(id.ECC())
	n, err := readProvingKey(id, pk, nil, false)(bytes.NewReader(data))
	return pk, n, err
}

func encodeKey(t *testing.T, pk groth16.ProvingKey, raw bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if raw {
		_, err = pk.WriteRawTo(&buf)
	} else {
		_, err = pk.WriteTo(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// keySlice is where a raw key's point slice lies: its first point's
// offset, its count, its points' size.
type keySlice struct{ off, n, size int }

// rawSlices walks a raw proving key of a curve with base field fp bytes
// (readProvingKey's layout) and returns its point slices by name: A, B, Z,
// K, B₂, and per commitment i "basis i" and "σ·basis i". It fails t unless
// the walk ends at the file's end.
func rawSlices(t *testing.T, data []byte, fp int) map[string]keySlice {
	t.Helper()
	return keySlices(t, data, fp, 2)
}

// keySlices is rawSlices for points of k·fp bytes a coordinate's worth
// (raw: 2, compressed: 1).
func keySlices(t *testing.T, data []byte, fp, k int) map[string]keySlice {
	t.Helper()
	g1, g2 := k*fp, 2*k*fp
	pos := 8 + 5*32 + 1 + 3*g1 // domain; [α]₁ [β]₁ [δ]₁
	out := map[string]keySlice{}
	slice := func(name string, size int) {
		n := int(binary.BigEndian.Uint32(data[pos:]))
		out[name] = keySlice{pos + 4, n, size}
		pos += 4 + n*size
	}
	for _, name := range []string{"A", "B", "Z", "K"} {
		slice(name, g1)
	}
	pos += 2 * g2 // [β]₂ [δ]₂
	slice("B₂", g2)
	wires := int(binary.BigEndian.Uint64(data[pos:]))
	pos += 8 + 16 + 2*wires
	commitments := int(binary.BigEndian.Uint32(data[pos:]))
	pos += 4
	for i := range commitments {
		slice(fmt.Sprint("basis ", i), g1)
		slice(fmt.Sprint("σ·basis ", i), g1)
	}
	if pos != len(data) {
		t.Fatalf("the walk of the raw key ends at byte %d of %d", pos, len(data))
	}
	return out
}

// point is the bytes of point i of s in data.
func (s keySlice) point(data []byte, i int) []byte {
	return data[s.off+i*s.size : s.off+(i+1)*s.size]
}

// rawInfinity is curve id's raw encoding of the point at infinity:
// gnark-crypto's RawBytes (BN254: all zeros; BLS12-381: 0b010 in its
// metadata bits).
func rawInfinity(id curve.ID, b []byte) {
	clear(b)
	if id == curve.BLS12_381 {
		b[0] = 0b010 << 5
	}
}

// overModulus sets the first coordinate of the raw point b to 0xff… less
// the metadata bits: over curve id's base-field modulus, still raw.
func overModulus(id curve.ID, b []byte) {
	for i := range id.Params().FpBytes {
		b[i] = 0xff
	}
	if id == curve.BLS12_381 {
		b[0] &^= 0b111 << 5
	} else {
		b[0] &^= 0b11 << 6
	}
}

// wantSameKey decodes data with readProvingKey, at the default chunk size
// and at one of a few points (many chunks, a short last one, more workers
// than this machine's cores), and wants each time what gnark's
// UnsafeReadFrom decodes, field for field (domain and its twiddles,
// infinity flags, commitment keys), having read the whole file.
func wantSameKey(t *testing.T, id curve.ID, data []byte, what string) {
	t.Helper()
	want, err := gnarkKey(id, data)
	if err != nil {
		t.Fatalf("%s: gnark: %v", what, err)
	}
	defer func(c int) { loadChunkBytes = c }(loadChunkBytes)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	for _, chunk := range []int{loadChunkBytes, 3 * id.Params().FpBytes * 4} {
		loadChunkBytes = chunk
		got, n, err := ourKey(id, data)
		if err != nil {
			t.Fatalf("%s, chunks of %d bytes: %v", what, chunk, err)
		}
		if n != int64(len(data)) {
			t.Fatalf("%s, chunks of %d bytes: read %d bytes of %d", what, chunk, n, len(data))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s, chunks of %d bytes: the key differs from gnark's UnsafeReadFrom's", what, chunk)
		}
	}
}

// TestProvingKeyReadsAsGnarks: readProvingKey decodes the keys of both
// curves, of a circuit without and one with a BSB22 commitment, raw (as
// zkpipe's Setup writes them) and compressed (gnark's pk.WriteTo), into
// exactly what gnark's UnsafeReadFrom decodes; and with points at
// infinity in every slice, first points included (BLS12-381's raw
// infinity has metadata bits of its own).
func TestProvingKeyReadsAsGnarks(t *testing.T) {
	for _, id := range curve.All {
		for _, name := range []string{"mulchain", "commit"} {
			t.Run(id.String()+"/"+name, func(t *testing.T) {
				raw := readKeyFile(t, keyDir(t, id, name, 300))
				slices := rawSlices(t, raw, id.Params().FpBytes)
				if name == "commit" && slices["basis 0"].n == 0 {
					t.Fatalf("the commit circuit's key has no commitment basis: %v", slices)
				}
				wantSameKey(t, id, raw, "raw")
				pk, err := gnarkKey(id, raw)
				if err != nil {
					t.Fatal(err)
				}
				wantSameKey(t, id, encodeKey(t, pk, false), "compressed")

				// points at infinity: first, middle and last of each slice
				inf := bytes.Clone(raw)
				for _, s := range slices {
					for _, i := range []int{0, s.n / 2, s.n - 1} {
						if s.n > 0 {
							rawInfinity(id, s.point(inf, i))
						}
					}
				}
				wantSameKey(t, id, inf, "raw, with points at infinity")
				pk, err = gnarkKey(id, inf)
				if err != nil {
					t.Fatal(err)
				}
				wantSameKey(t, id, encodeKey(t, pk, false), "compressed, with points at infinity")
			})
		}
	}
}

// TestProvingKeyCorruptionsFail: a raw key cut short anywhere, a point
// whose coordinate is not below the modulus, a compressed point among raw
// ones, a badly encoded infinity, invalid metadata bits, and a commitment
// basis point off the curve (gnark checks those even in UnsafeReadFrom)
// each fail readProvingKey, saying which slice, which point and what is
// wrong; and bytes after the key are left unread.
func TestProvingKeyCorruptionsFail(t *testing.T) {
	for _, id := range curve.All {
		t.Run(id.String(), func(t *testing.T) {
			fp := id.Params().FpBytes
			raw := readKeyFile(t, keyDir(t, id, "commit", 300))
			slices := rawSlices(t, raw, fp)
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
			defer func(c int) { loadChunkBytes = c }(loadChunkBytes)
			loadChunkBytes = 7 * 2 * fp // a few points a chunk, many chunks

			fails := func(what string, data []byte, want ...string) {
				t.Helper()
				_, _, err := ourKey(id, data)
				if err == nil {
					t.Fatalf("%s: read without an error", what)
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("%s: %v, want it to say %q", what, err, w)
					}
				}
			}

			// cut short: in the domain, in a single point, in each slice's
			// count, first point and middle, in the flags, at the last byte
			cuts := []int{0, 100, 169 + fp}
			for _, s := range slices {
				cuts = append(cuts, s.off-2, s.off+1, s.off+s.n/2*s.size+s.size/2)
			}
			b2 := slices["B₂"]
			flags := b2.off + b2.n*b2.size // the wire count, NbInfinityA and B, then the flags
			wires := int(binary.BigEndian.Uint64(raw[flags:]))
			cuts = append(cuts, flags+20, flags+24+wires/2, flags+24+wires+wires/2, len(raw)-1)
			for _, k := range cuts {
				fails(fmt.Sprintf("cut at byte %d of %d", k, len(raw)), raw[:k], "truncated")
				if _, err := gnarkKey(id, raw[:k]); err == nil {
					t.Fatalf("gnark reads the key cut at %d", k)
				}
			}

			// Z's point 5: X not below the modulus (0xff… with the raw
			// metadata bits)
			z := slices["Z"]
			bad := bytes.Clone(raw)
			overModulus(id, z.point(bad, 5))
			fails("X ≥ p", bad, "proving key's Z: point 5 of", "invalid")
			if _, err := gnarkKey(id, bad); err == nil {
				t.Fatalf("gnark reads a point with X ≥ p")
			}

			// K's point 2 flagged compressed amid raw points
			bad = bytes.Clone(raw)
			slices["K"].point(bad, 2)[0] |= 0b100 << 5
			fails("compressed among raw", bad, "proving key's K: point 2 of", "not of its slice's first's encoding")

			// B₂'s point 1 at infinity with a stray bit; A's point 3 with
			// invalid metadata bits (BLS12-381's 0b001)
			if id == curve.BLS12_381 {
				bad = bytes.Clone(raw)
				q := slices["B₂"].point(bad, 1)
				rawInfinity(id, q)
				q[len(q)-1] = 1
				fails("bad infinity", bad, "proving key's B₂: point 1 of", "invalid infinity point encoding")
				bad = bytes.Clone(raw)
				slices["A"].point(bad, 3)[0] = 0b001 << 5
				fails("invalid metadata", bad, "proving key's A: point 3 of", "invalid point encoding")
			}

			// a commitment basis point off the curve: (1, 1)
			bad = bytes.Clone(raw)
			q := slices["basis 0"].point(bad, 0)
			clear(q)
			q[fp-1], q[2*fp-1] = 1, 1
			fails("off the curve", bad, "commitment key 0 basis: point 0 of", "not on the curve")
			if _, err := gnarkKey(id, bad); err == nil {
				t.Fatalf("gnark reads a commitment basis point off the curve")
			}

			// A's point 7 off the curve, its coordinates below the modulus
			// (Y's last byte changed): gnark's UnsafeReadFrom takes it
			bad = bytes.Clone(raw)
			a7 := slices["A"].point(bad, 7)
			a7[2*fp-1] ^= 1
			fails("raw point off the curve", bad, "proving key's A: point 7 of", "not on the curve")
			if _, err := gnarkKey(id, bad); err != nil {
				t.Fatalf("gnark's UnsafeReadFrom refuses a raw point off the curve (%v): zkpipe is no longer the stricter", err)
			}

			// compressed: an X with no square root (X = x, the first x
			// that gnark's decoder refuses), a raw point among compressed
			// ones
			pk, err := gnarkKey(id, raw)
			if err != nil {
				t.Fatal(err)
			}
			comp := encodeKey(t, pk, false)
			cz := keySlices(t, comp, fp, 1)["Z"]
			for x := byte(1); ; x++ {
				bad = bytes.Clone(comp)
				q := cz.point(bad, 4)
				flag := q[0] & (0b111 << 5)
				clear(q)
				q[0], q[len(q)-1] = flag, x
				if _, err := gnarkKey(id, bad); err != nil {
					fails("no square root", bad, "proving key's Z: point 4 of", "square root")
					break
				}
				if x == 64 {
					t.Fatal("no X without a square root among 1…64")
				}
			}
			bad = bytes.Clone(comp)
			cz.point(bad, 6)[0] &^= 0b111 << 5
			fails("raw among compressed", bad, "proving key's Z: point 6 of", "not of its slice's first's encoding")

			// the key ends where it ends: what follows is the caller's
			_, n, err := ourKey(id, append(bytes.Clone(raw), 1, 2, 3))
			if err != nil || n != int64(len(raw)) {
				t.Fatalf("key and 3 bytes more: read %d bytes of the key's %d (%v)", n, len(raw), err)
			}
		})
	}
}

// TestLoadDirNamesTheBadPoint: a circuit.pk with one point deep inside a
// slice spoiled (a coordinate over the modulus, or a point off the curve,
// in G1 and G2: the layout check sizes slices by their first point, so
// only the decode can tell) is refused naming the file, the slice and the
// point: by LoadDir when it reads the key whole, else when the bases are
// read, into the host copy (Need) or streamed.
func TestLoadDirNamesTheBadPoint(t *testing.T) {
	for _, id := range curve.All {
		fp := id.Params().FpBytes
		for _, tc := range []struct {
			what, slice string
			spoil       func(q []byte) // a point of the slice
			says        string
		}{
			{"X over the modulus", "Z", func(q []byte) { overModulus(id, q) }, "invalid"},
			{"off the curve", "Z", func(q []byte) { q[2*fp-1] ^= 1 }, "not on the curve"},        // Y's last byte
			{"off the curve in G2", "B₂", func(q []byte) { q[4*fp-1] ^= 1 }, "not on the curve"}, // Y.A0's last byte
		} {
			dir := keyDir(t, id, "mulchain", 300)
			raw := readKeyFile(t, dir)
			s := rawSlices(t, raw, fp)[tc.slice]
			tc.spoil(s.point(raw, s.n-2))
			if err := os.WriteFile(filepath.Join(dir, PKFile), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("proving key's %s: point %d of %d", tc.slice, s.n-2, s.n)
			check := func(how string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), PKFile) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("%s, %s, %s: %v, want an error naming %s and %q, saying %q", id, tc.what, how, err, PKFile, want, tc.says)
				}
			}
			_, err := LoadDirWith(dir, Options{ReadKeyWhole: true})
			check("read whole", err)
			c, err := LoadDir(dir)
			if err != nil {
				t.Fatalf("%s, %s: the bases are read later, yet: %v", id, tc.what, err)
			}
			check("streamed", c.Key.CheckDeferred())
			check("fetched", c.Key.Need(proofdata.AllParts))
		}
	}
}

// TestLoadDirTakesRawSlicesOpeningWithInfinity: a raw key whose slices
// open with a point at infinity loads through LoadDir, into gnark's
// decoding of the file. BLS12-381 gives a raw infinity metadata bits of
// its own (0b010), which the layout check read as a compressed point's
// until it took the curve's reading: it sized the slice at half and
// refused the key.
func TestLoadDirTakesRawSlicesOpeningWithInfinity(t *testing.T) {
	for _, id := range curve.All {
		dir := keyDir(t, id, "mulchain", 300)
		raw := readKeyFile(t, dir)
		for name, s := range rawSlices(t, raw, id.Params().FpBytes) {
			if s.n > 0 && name != "A" && name != "B" && name != "B₂" { // A and B's infinity is the flags'
				rawInfinity(id, s.point(raw, 0))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, PKFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if err := c.Key.Need(proofdata.AllParts); err != nil { // the parts LoadDir left for later
			t.Fatalf("%s: %v", id, err)
		}
		want, err := gnarkKey(id, raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Source.(*Source).ProvingKey(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: LoadDir's key differs from gnark's decoding of the file", id)
		}
	}
}

// TestProvingKeyReadAllocatesWhatGnarksDoes: reading a raw key allocates
// no more than gnark's UnsafeReadFrom of the same bytes, plus the chunk
// buffers (2·GOMAXPROCS of loadChunkBytes, 64 KiB here) and 256 KiB (the
// flags' buffer among it), far less than the 3 MB file: the key is decoded
// into its place, not held twice. A compressed
// key may allocate besides 192 bytes a point, garbage at once:
// gnark-crypto's one-point decode takes its read buffer from the heap (its
// decoder's reader is an interface), 128 bytes on BN254.
func TestProvingKeyReadAllocatesWhatGnarksDoes(t *testing.T) {
	id := curve.BN254
	raw := readKeyFile(t, keyDir(t, id, "mulchain", 1<<13))
	points := 0
	for _, s := range rawSlices(t, raw, id.Params().FpBytes) {
		points += s.n
	}
	pk, err := gnarkKey(id, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer func(c int) { loadChunkBytes = c }(loadChunkBytes)
	loadChunkBytes = 64 << 10
	for _, enc := range []struct {
		name     string
		data     []byte
		perPoint int
	}{{"raw", raw, 0}, {"compressed", encodeKey(t, pk, false), 192}} {
		var gerr, oerr error
		gnark := allocated(func() { _, gerr = gnarkKey(id, enc.data) })
		ours := allocated(func() { _, _, oerr = ourKey(id, enc.data) })
		if gerr != nil || oerr != nil {
			t.Fatalf("%s: %v, %v", enc.name, gerr, oerr)
		}
		slack := uint64(2*runtime.GOMAXPROCS(0)*loadChunkBytes + 256<<10 + enc.perPoint*points)
		t.Logf("%s key of %d bytes, %d points: %d bytes allocated, gnark's UnsafeReadFrom %d", enc.name, len(enc.data), points, ours, gnark)
		if ours > gnark+slack {
			t.Fatalf("%s key of %d bytes: %d bytes allocated, gnark's UnsafeReadFrom %d: more than its and %d", enc.name, len(enc.data), ours, gnark, slack)
		}
	}
}

// TestLoadDirRefusesCutOrTrailingKeys: a circuit.pk of either curve, raw or
// compressed, cut short by a byte or followed by 7 bytes of garbage, is
// refused by LoadDir, naming the file and saying which.
func TestLoadDirRefusesCutOrTrailingKeys(t *testing.T) {
	for _, id := range curve.All {
		base := keyDir(t, id, "commit", 300)
		raw := readKeyFile(t, base)
		pk, err := gnarkKey(id, raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []struct {
			name string
			data []byte
		}{{"raw", raw}, {"compressed", encodeKey(t, pk, false)}} {
			for _, c := range []struct {
				what, want string
				data       []byte
			}{
				{"cut short", "truncated", enc.data[:len(enc.data)-1]},
				{"trailing garbage", "trailing bytes", append(bytes.Clone(enc.data), "garbage"...)},
			} {
				dir := copyDir(t, base)
				if err := os.WriteFile(filepath.Join(dir, PKFile), c.data, 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := LoadDir(dir)
				if err == nil || !strings.Contains(err.Error(), PKFile) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s %s key %s: %v, want an error naming %s with %q", id, enc.name, c.what, err, PKFile, c.want)
				}
			}
		}
	}
}
