package gnarksrc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/curve"
)

// A verifying key that fits no curve's layout (here one cut short, or with
// a byte more) is told what is wrong with it as each curve's key: a
// damaged BLS12-381 key was told only what BN254's layout made of it.
func TestVerifyingKeyOfNoCurveSaysEach(t *testing.T) {
	for _, id := range curve.All {
		data, err := os.ReadFile(filepath.Join(keyDir(t, id, "mulchain", 1<<6), VKFile))
		if err != nil {
			t.Fatal(err)
		}
		for name, bad := range map[string][]byte{"cut": data[:len(data)-5], "trailing": append(append([]byte{}, data...), 0)} {
			path := filepath.Join(t.TempDir(), "circuit.vk")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadVerifyingKey(path)
			if err == nil {
				t.Fatalf("%s key %s: read", id, name)
			}
			for _, each := range curve.All {
				if want := "as a " + strings.ToUpper(each.String()) + " key: "; !strings.Contains(err.Error(), want) {
					t.Errorf("%s key %s: %v; want it to say %q", id, name, err, want)
				}
			}
			if _, perr := ParseVerifyingKey(bad); perr == nil || !strings.Contains(perr.Error(), "as a BLS12-381 key: ") {
				t.Errorf("%s key %s in memory: %v", id, name, perr)
			}
		}
	}
}
