package circomsrc

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/zkpipe/zkpipe/blob/boundedread"
)

// allocated is how many bytes the Go heap has handed out so far.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// readBin reads path as the circuit's zkey or r1cs, as LoadFiles does.
func readBin(kind, path string) error {
	var err error
	if kind == "zkey" {
		_, err = ReadZkeyFile(path)
	} else {
		_, err = ReadR1CSFile(path)
	}
	return err
}

// sparseCopy copies testdata/name to dir and makes it grow bytes (sparse)
// past its end.
func sparseCopy(t *testing.T, dir, name string, grow int64) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, int64(len(data))+grow); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	return p
}

// lastSection returns the offset of the last section's size field of a
// snarkjs container.
func lastSection(t *testing.T, data []byte) int {
	t.Helper()
	n := binary.LittleEndian.Uint32(data[8:])
	pos := 12
	last := 0
	for range n {
		last = pos + 4
		pos += 12 + int(binary.LittleEndian.Uint64(data[pos+4:]))
	}
	return last
}

// TestTrailingBytesRefusedUnread: a zkey or r1cs followed by gigabytes of
// zeros (sparse: 3 and 8 GiB), reached directly, by a hard link or by a
// symlink, is refused for its trailing bytes before they are read; the
// heap grows by a few megabytes at most. Before, the whole file was read
// (peak RSS 2.1× the file) and only then refused.
func TestTrailingBytesRefusedUnread(t *testing.T) {
	for _, kind := range []string{"zkey", "r1cs"} {
		for _, grow := range []int64{1, 3 << 30, 8 << 30} {
			dir := t.TempDir()
			p := sparseCopy(t, dir, "mul."+kind, grow)
			link, sym := filepath.Join(dir, "hard."+kind), filepath.Join(dir, "sym."+kind)
			if err := os.Link(p, link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(p, sym); err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{p, link, sym} {
				before := allocated()
				err := readBin(kind, path)
				grew := allocated() - before
				if err == nil || !strings.Contains(err.Error(), "trailing bytes") || !strings.Contains(err.Error(), path) {
					t.Fatalf("%s + %d bytes (%s): %v, want a trailing-bytes error naming the path", kind, grow, path, err)
				}
				if grew > 64<<20 {
					t.Fatalf("%s + %d bytes: %d bytes allocated before the refusal", kind, grow, grew)
				}
			}
		}
	}
}

// TestSectionOverrunRefusedUnread: a last section that says it is 8 GiB
// longer than it is, in the file alone or in a sparse file that is still
// shorter than that, is refused by the table before it is allocated; so is
// a header that counts 2³²−1 sections.
func TestSectionOverrunRefusedUnread(t *testing.T) {
	for _, kind := range []string{"zkey", "r1cs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mul."+kind))
		if err != nil {
			t.Fatal(err)
		}
		at := lastSection(t, data)
		size := binary.LittleEndian.Uint64(data[at:])
		for _, c := range []struct {
			name string
			grow int64 // sparse bytes after the file, fewer than the lie
			edit func(b []byte)
			want string
		}{
			{"overrun", 0, func(b []byte) { binary.LittleEndian.PutUint64(b[at:], size+8<<30) }, "the file has"},
			{"overrun-sparse", 3 << 30, func(b []byte) { binary.LittleEndian.PutUint64(b[at:], size+8<<30) }, "the file has"},
			{"sections", 0, func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 1<<32-1) }, "more sections than"},
		} {
			b := append([]byte(nil), data...)
			c.edit(b)
			p := filepath.Join(t.TempDir(), c.name+"."+kind)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.grow > 0 {
				if err := os.Truncate(p, int64(len(b))+c.grow); err != nil {
					t.Skipf("no sparse file here: %v", err)
				}
			}
			before := allocated()
			err := readBin(kind, p)
			grew := allocated() - before
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s %s: %v, want %q", kind, c.name, err, c.want)
			}
			if grew > 64<<20 {
				t.Fatalf("%s %s: %d bytes allocated before the refusal", kind, c.name, grew)
			}
		}
	}
}

// TestTrailingBytesFromAPipe: a zkey or r1cs streamed through a FIFO, whose
// size is not known until its end, is refused when a byte follows its last
// section, having read only one more.
func TestTrailingBytesFromAPipe(t *testing.T) {
	for _, kind := range []string{"zkey", "r1cs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mul."+kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, extra := range []int{0, 1, 1 << 20} {
			p := filepath.Join(t.TempDir(), "fifo."+kind)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				w, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				defer w.Close()
				w.Write(append(append([]byte(nil), data...), make([]byte, extra)...)) // EPIPE once the reader refuses
			}()
			err = readBin(kind, p)
			<-done
			switch {
			case extra == 0 && err != nil:
				t.Fatalf("%s from a pipe: %v", kind, err)
			case extra > 0 && (err == nil || !strings.Contains(err.Error(), "trailing bytes")):
				t.Fatalf("%s + %d bytes from a pipe: %v, want trailing bytes", kind, extra, err)
			}
		}
	}
}

// TestWtnsPublicRefusesTrailingBytes: the public inputs of a wtns with 3
// GiB after its sections (sparse), or whose values section says more than
// the file has, are refused as the prover refuses the wtns, unread.
func TestWtnsPublicRefusesTrailingBytes(t *testing.T) {
	dir := t.TempDir()
	p := sparseCopy(t, dir, "mul.wtns", 3<<30)
	if _, err := ReadWtnsPublic(t.Context(), p, 1, boundedreadOptions()); err == nil || !strings.Contains(err.Error(), "trailing bytes") {
		t.Fatalf("wtns + 3 GiB: %v, want trailing bytes", err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWtnsPublic(t.Context(), filepath.Join("testdata", "mul.wtns"), 1, boundedreadOptions()); err != nil {
		t.Fatalf("the fixture: %v", err)
	}
	at := lastSection(t, data)
	binary.LittleEndian.PutUint64(data[at:], binary.LittleEndian.Uint64(data[at:])+8<<30)
	q := filepath.Join(dir, "overrun.wtns")
	if err := os.WriteFile(q, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadWtnsPublic(t.Context(), q, 1, boundedreadOptions()); err == nil || !strings.Contains(err.Error(), "the file has") {
		t.Fatalf("wtns overrun: %v", err)
	}
}

func boundedreadOptions() boundedread.Options { return boundedread.Options{} }
