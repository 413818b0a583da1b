package circomsrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// Each file of a circom circuit (zkey, wasm, r1cs) is read bounded: a FIFO
// nobody writes to fails at the load timeout, /dev/zero is refused, and a
// huge sparse file is refused by its size, each naming the file. Before, a
// FIFO hung zkpipe prove in open(2) for ever, and os.ReadFile read a huge
// file until memory ran out.
func TestLoadFilesBoundsEveryRead(t *testing.T) {
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	makers := hostilefile.Kinds
	for _, which := range []string{"zkey", "zkey-whole", "wasm", "r1cs"} {
		for _, m := range makers {
			t.Run(which+"/"+m.Name, func(t *testing.T) {
				f := Files{Zkey: filepath.Join(td, "mul.zkey"), Wasm: filepath.Join(td, "mul.wasm"), R1CS: filepath.Join(td, "mul.r1cs"), LoadTimeout: 200 * time.Millisecond}
				want := m.Want
				switch {
				case which == "zkey-whole":
					f.ReadKeyWhole = true
				case which == "zkey" && m.Name == "sparse":
					// its points left in the file: the sparse terabyte is
					// refused by its header, nothing past its 12 bytes read
					want = "not a zkey file"
				}
				p := filepath.Join(t.TempDir(), "mul."+strings.TrimSuffix(which, "-whole"))
				m.Make(t, p)
				switch which {
				case "zkey", "zkey-whole":
					f.Zkey = p
				case "wasm":
					f.Wasm = p
				case "r1cs":
					f.R1CS = p
				}
				done := make(chan error, 1)
				go func() {
					c, err := LoadFiles(context.Background(), f)
					if err == nil {
						c.Source.(*Source).Close(context.Background())
					}
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
						t.Fatalf("LoadFiles: %v; want an error naming %s and saying %q", err, p, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("still reading after 10 s")
				}
			})
		}
	}
}

// ReadZkeyVerifyingKey, reading a zkey's first sections only, gives the key
// snarkjs exported from the same zkey.
func TestReadZkeyVerifyingKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadZkeyVerifyingKey(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadVerifyingKey(filepath.Join("testdata", "mul.vkey.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("from the zkey %+v\nsnarkjs's %+v", got, want)
	}
	if err := VerifyFiles(context.Background(), got, filepath.Join("testdata", "mul.proof.json"), filepath.Join("testdata", "mul.public.json")); err != nil {
		t.Fatalf("snarkjs's proof against the zkey's key: %v", err)
	}
	if _, err := ReadZkeyVerifyingKey(bytes.NewReader(data[:200])); err == nil {
		t.Fatal("a truncated zkey gave a key")
	}
}

// A zkey whose header and section table are sound but whose coefficient
// section (read into memory even when the points stay in the file) is a
// sparse terabyte is refused by its size, naming the file and the section,
// before anything is allocated for it: its count says what it holds, and
// the deferred read's check is the whole read's.
func TestLoadFilesRefusesAHugeCoefficientSection(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	// the same sections, the coefficients (type 4) last and claiming 1 TiB
	var out bytes.Buffer
	out.Write(orig[:12])
	var coef []byte
	for pos := 12; pos+12 <= len(orig); {
		typ, size := binary.LittleEndian.Uint32(orig[pos:]), int(binary.LittleEndian.Uint64(orig[pos+4:]))
		if typ == 4 {
			coef = orig[pos : pos+12]
		} else {
			out.Write(orig[pos : pos+12+size])
		}
		pos += 12 + size
	}
	if coef == nil {
		t.Fatal("mul.zkey: no coefficient section")
	}
	const huge = 1 << 40
	head := bytes.Clone(coef)
	binary.LittleEndian.PutUint64(head[4:], huge)
	out.Write(head)
	p := filepath.Join(t.TempDir(), "huge.zkey")
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, int64(out.Len())+huge); err != nil {
		t.Fatal(err)
	}
	for _, whole := range []bool{false, true} {
		_, err := LoadFiles(context.Background(), Files{Zkey: p, ReadKeyWhole: whole, LoadTimeout: 200 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "coefficients section: 0 coefficients need 4 bytes, the section has 1099511627776") &&
			!strings.Contains(err.Error(), "more than a zkey this machine's memory can hold") {
			t.Fatalf("whole=%v: %v; want an error naming %s and its coefficient section's size, or the machine's memory", whole, err, p)
		}
	}
}
