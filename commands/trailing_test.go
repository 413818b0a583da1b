package commands

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/internal/peakrss"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// TestProveRefusesCircuitFilesWithGigabytesAfterThem runs the real zkpipe
// on circuit files followed by 3 and 8 GiB of zeros (sparse): a zkey, a
// circom r1cs beside it, and a gnark directory's circuit.r1cs. Each is
// refused, naming the file and its trailing bytes, by a process whose peak
// RSS stays far below the file (before: the zkey was read whole, 2.1× the
// file, and the gnark r1cs loaded and proved).
func TestProveRefusesCircuitFilesWithGigabytesAfterThem(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	td, _ := filepath.Abs(filepath.Join("..", "source", "circomsrc", "testdata"))
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, `{"id":"a","generate":{"seed":1}}`)
	copyTo := func(from, to string, grow int64) string {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(to), 0o755)
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(to, int64(len(b))+grow); err != nil {
			t.Skipf("no sparse file here: %v", err)
		}
		return to
	}
	chain := setupCircuit(t, root, "chain", "mulchain", 64)
	for _, grow := range []int64{3 << 30, 8 << 30} {
		for _, c := range []struct {
			name string
			args func(dir string) ([]string, string)
		}{
			{"zkey", func(dir string) ([]string, string) {
				z := copyTo(filepath.Join(td, "mul.zkey"), filepath.Join(dir, "mul.zkey"), grow)
				return []string{"--zkey", z}, z
			}},
			{"circom r1cs", func(dir string) ([]string, string) {
				r := copyTo(filepath.Join(td, "mul.r1cs"), filepath.Join(dir, "mul.r1cs"), grow)
				return []string{"--zkey", filepath.Join(td, "mul.zkey"), "--r1cs", r}, r
			}},
			{"gnark r1cs", func(dir string) ([]string, string) {
				d := filepath.Join(dir, "chain")
				for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
					g := int64(0)
					if f == gnarksrc.R1CSFile {
						g = grow
					}
					copyTo(filepath.Join(chain, f), filepath.Join(d, f), g)
				}
				return []string{"--circuit", d}, filepath.Join(d, gnarksrc.R1CSFile)
			}},
		} {
			t.Run(fmt.Sprintf("%s+%dGiB", c.name, grow>>30), func(t *testing.T) {
				dir := t.TempDir()
				args, file := c.args(dir)
				cmd := exec.Command(bin, append(append([]string{"prove", "--device", "cpu"}, args...),
					"--jobs", jobs, "--out", filepath.Join(dir, "out"), "--results", filepath.Join(dir, "r.jsonl"))...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				rss, err := peakrss.Run(cmd)
				if err == nil {
					t.Fatalf("prove with %s + %d bytes succeeded", c.name, grow)
				}
				if msg := stderr.String(); !strings.Contains(msg, file) || !strings.Contains(msg, "trailing bytes") {
					t.Fatalf("%s + %d bytes: %q, want the file named and its trailing bytes", c.name, grow, msg)
				}
				if rss > 512<<20 {
					t.Fatalf("%s + %d bytes: peak RSS %s before the refusal", c.name, grow, mem.FormatBytes(rss))
				}
			})
		}
	}
}
