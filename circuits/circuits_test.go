package circuits_test

import (
	"testing"

	"github.com/zkpipe/zkpipe/circuits"
)

// Shape must say what Compile makes, since a circuit directory's
// circuit.json is checked with it instead of compiling.
func TestShapeIsCompiled(t *testing.T) {
	for _, name := range circuits.Names() {
		b, err := circuits.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{4, 5, 7, 127, 128, 129, 256, 300, 1001} {
			ccs, err := b.Compile(n)
			if err != nil {
				t.Fatal(err)
			}
			sh := b.Shape(n)
			got := circuits.Shape{Public: ccs.GetNbPublicVariables() - 1, Secret: ccs.GetNbSecretVariables(), Constraints: ccs.GetNbConstraints()}
			if sh.Constraints == 0 {
				got.Constraints = 0
			}
			if sh != got {
				t.Errorf("%s at %d: Shape says %+v, Compile made %+v", name, n, sh, got)
			}
		}
	}
}
