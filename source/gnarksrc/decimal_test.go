package gnarksrc

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
)

// TestPublicValuesInCanonicalDecimal: a public input of q−3 (an input of −3)
// is written as q−3 in result lines and JSON proofs, never gnark-crypto's
// "-3", which no verifier reads as a field element.
func TestPublicValuesInCanonicalDecimal(t *testing.T) {
	q := fr.Modulus()
	want := func(k int64) string { return new(big.Int).Sub(q, big.NewInt(k)).String() }

	var buf bytes.Buffer
	buf.Write(header(2, 0, 2))
	for _, k := range []int64{3, 65535} {
		var e fr.Element
		e.SetInt64(-k)
		b := e.Bytes()
		buf.Write(b[:])
	}
	got, err := ParsePublicInputs(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != want(3) || got[1] != want(65535) {
		t.Fatalf("public inputs %q, want %s and %s", got, want(3), want(65535))
	}

	// A point whose y is p−y′ for a small y′ would print as "-y′": check the
	// JSON form's coordinates against big.Int's decimal of each.
	_, _, g1, g2 := bn254.Generators()
	var neg bn254.G1Affine
	neg.Neg(&g1) // y = p − 2
	p, err := ProofJSON(&groth16bn254.Proof{Ar: neg, Krs: neg, Bs: g2})
	if err != nil {
		t.Fatal(err)
	}
	if y := neg.Y.BigInt(new(big.Int)).String(); p.A[1] != y || p.C[1] != y {
		t.Fatalf("pi_a y %s, pi_c y %s, want %s", p.A[1], p.C[1], y)
	}
	if p.A[1][0] == '-' {
		t.Fatalf("pi_a y %s is negative", p.A[1])
	}
}
