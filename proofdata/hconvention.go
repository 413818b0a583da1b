package proofdata

// HConvention says how a circuit's H query was built, and so how the prover
// must evaluate h before its MSM.
type HConvention int

const (
	// HDivideByZ is gnark's: h = (a·b − c)/Z evaluated on the coset g·⟨ω⟩ and
	// interpolated back, n−1 coefficients in bit-reversed order, matching
	// pk.G1.Z (which gnark's setup stores bit-reversed).
	HDivideByZ HConvention = iota
	// HOddCoset is snarkjs's: the zkey's H points are the odd-indexed Lagrange
	// bases of the 2n domain, so h_i = a(ω₂ₙ^{2i+1})·b(…) − c(…) in natural
	// order, n terms, and nothing is divided by Z.
	HOddCoset
)
