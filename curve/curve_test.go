package curve

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
)

func TestNamesRoundTrip(t *testing.T) {
	for _, id := range All {
		got, err := Parse(id.String())
		if err != nil || got != id {
			t.Errorf("Parse(%q) = %v, %v", id.String(), got, err)
		}
		e, err := FromECC(id.ECC())
		if err != nil || e != id {
			t.Errorf("FromECC(%s) = %v, %v", id.ECC(), e, err)
		}
		if got, err := Parse(id.ECC().String()); err != nil || got != id { // gnark says bls12_381
			t.Errorf("Parse(%q) = %v, %v", id.ECC().String(), got, err)
		}
	}
	if _, err := Parse("bw6-761"); err == nil {
		t.Error("Parse took bw6-761")
	}
	if _, err := FromECC(ecc.BW6_761); err == nil {
		t.Error("FromECC took BW6-761")
	}
}

// TestParamsAreTheCurves checks each curve's constants against gnark's own
// field: the Montgomery one is R mod r, with R = 2^256; bits and the
// 2-adicity are r's.
func TestParamsAreTheCurves(t *testing.T) {
	for _, id := range All {
		p := id.Params()
		r := id.ECC().ScalarField()
		if p.ScalarBits != r.BitLen() {
			t.Errorf("%s: %d scalar bits, r has %d", id, p.ScalarBits, r.BitLen())
		}
		one := new(big.Int)
		for i := 3; i >= 0; i-- {
			one.Lsh(one, 64).Or(one, new(big.Int).SetUint64(p.One[i]))
		}
		if want := new(big.Int).Mod(new(big.Int).Lsh(big.NewInt(1), 256), r); one.Cmp(want) != 0 {
			t.Errorf("%s: Montgomery one %x, want R mod r = %x", id, one, want)
		}
		rm1 := new(big.Int).Sub(r, big.NewInt(1))
		if int(rm1.TrailingZeroBits()) != p.TwoAdicity {
			t.Errorf("%s: 2-adicity %d, r−1 has %d", id, p.TwoAdicity, rm1.TrailingZeroBits())
		}
		if p.FpBytes*8 < id.ECC().BaseField().BitLen() {
			t.Errorf("%s: %d-byte Fp for a %d-bit p", id, p.FpBytes, id.ECC().BaseField().BitLen())
		}
	}
}
