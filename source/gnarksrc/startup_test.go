package gnarksrc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/internal/hostilefile"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// hostile are the files a loader must refuse in bounded time.
var hostile = hostilefile.Kinds

// within runs f, failing the test if it has not returned after d.
func within[T any](t *testing.T, d time.Duration, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("still reading after %v", d)
	}
	panic("unreachable")
}

// Each file of a circuit directory is read bounded: a FIFO nobody writes to
// fails at the load timeout, /dev/zero is refused, and a file larger than
// its kind can be is refused by its size, each naming the file. Before, a
// FIFO hung zkpipe prove in open(2) for ever, and a huge file was read on
// until memory ran out.
func TestLoadDirBoundsEveryRead(t *testing.T) {
	src := setup(t, "mulchain", 16)
	for _, file := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
		for _, h := range hostile {
			t.Run(file+"/"+h.Name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "mulchain")
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile} {
					if f != file {
						copyFile(t, filepath.Join(src, f), filepath.Join(dir, f))
					}
				}
				p := filepath.Join(dir, file)
				h.Make(t, p)
				err := within(t, 10*time.Second, func() error {
					_, err := gnarksrc.LoadDirWith(dir, gnarksrc.Options{LoadTimeout: 200 * time.Millisecond})
					return err
				})
				if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), h.Want) {
					t.Fatalf("LoadDirWith: %v; want an error naming %s and saying %q", err, p, h.Want)
				}
			})
		}
	}
	// and the directory itself still loads
	if _, err := gnarksrc.LoadDir(src); err != nil {
		t.Fatal(err)
	}
}

// zkpipe verify --circuit reads circuit.vk bounded too.
func TestReadVerifyingKeyBounded(t *testing.T) {
	for _, h := range hostile[1:] { // a FIFO waits out the default 30 s
		p := filepath.Join(t.TempDir(), gnarksrc.VKFile)
		h.Make(t, p)
		err := within(t, 10*time.Second, func() error { _, err := gnarksrc.ReadVerifyingKey(p); return err })
		if err == nil || !strings.Contains(err.Error(), h.Want) {
			t.Errorf("%s: %v, want %q", h.Name, err, h.Want)
		}
	}
}
