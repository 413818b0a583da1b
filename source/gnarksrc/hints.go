package gnarksrc

import (
	"sync"

	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/std/algebra/emulated/fields_bls12381"
	"github.com/consensys/gnark/std/algebra/emulated/fields_bn254"
	"github.com/consensys/gnark/std/algebra/emulated/fields_bw6761"
	"github.com/consensys/gnark/std/algebra/emulated/sw_bls12381"
	"github.com/consensys/gnark/std/algebra/emulated/sw_bw6761"
	"github.com/consensys/gnark/std/algebra/emulated/sw_emulated"
	swemulatedmap "github.com/consensys/gnark/std/algebra/emulated/sw_emulated/maptocurve_increment"
	"github.com/consensys/gnark/std/algebra/native/fields_bls12377"
	"github.com/consensys/gnark/std/algebra/native/sw_bls12377"
	swbls12377map "github.com/consensys/gnark/std/algebra/native/sw_bls12377/maptocurve_increment"
	swgrumpkinmap "github.com/consensys/gnark/std/algebra/native/sw_grumpkin/maptocurve_increment"
	"github.com/consensys/gnark/std/algebra/native/twistededwards"
	"github.com/consensys/gnark/std/conversion"
	"github.com/consensys/gnark/std/evmprecompiles"
	"github.com/consensys/gnark/std/hash/sha3"
	"github.com/consensys/gnark/std/math/bits"
	"github.com/consensys/gnark/std/math/bitslice"
	"github.com/consensys/gnark/std/math/cmp"
	"github.com/consensys/gnark/std/math/emulated"
	"github.com/consensys/gnark/std/math/uints"
	"github.com/consensys/gnark/std/rangecheck"
	"github.com/consensys/gnark/std/selector"
)

var stdHintsOnce sync.Once

// registerStdHints registers the solver hints of gnark's standard library
// (hashes, emulated arithmetic, range checks, signatures, lookups) in
// gnark's global hint registry, once. A circuit compiled from gnark/std calls
// those hints by ID when solved, and ccs.Solve fails with "missing hint"
// without them. NewWith calls this rather than an init, so that nothing
// depends on the order packages are initialised in.
//
// The list is std.RegisterHints's, less the two internal packages
// (logderivarg, fieldextension), which register their own hints when the
// packages here import them. It is not std.RegisterHints itself: importing
// package std re-registers every hint from its init, and gnark logs each
// repeat to stdout before main can silence it, which would corrupt result
// lines written to stdout.
func registerStdHints() {
	stdHintsOnce.Do(func() {
		for _, hints := range [][]solver.Hint{
			bits.GetHints(), cmp.GetHints(), selector.GetHints(), emulated.GetHints(),
			rangecheck.GetHints(), evmprecompiles.GetHints(), bitslice.GetHints(),
			sha3.GetHints(), uints.GetHints(), conversion.GetHints(),
			fields_bls12381.GetHints(), fields_bn254.GetHints(), fields_bw6761.GetHints(),
			fields_bls12377.GetHints(), twistededwards.GetHints(),
			sw_emulated.GetHints(), sw_bls12381.GetHints(), sw_bw6761.GetHints(), swemulatedmap.GetHints(),
			sw_bls12377.GetHints(), swbls12377map.GetHints(), swgrumpkinmap.GetHints(),
		} {
			for _, h := range hints {
				if solver.GetRegisteredHint(solver.GetHintID(h)) == nil {
					solver.RegisterHint(h)
				}
			}
		}
	})
}
