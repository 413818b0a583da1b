package proofdata

// Point is a group element in its curve's own gnark-crypto type, by
// pointer (*bn254.G1Jac, *bls12381.G2Affine, …): the stages carry it from
// the backend that made it to assemble and the source, which are the
// curve's own code, without looking inside. A backend returns fresh points
// it no longer touches.
type Point interface{ IsOnCurve() bool }

// G1Sums holds one result per G1 query (Jacobian points).
type G1Sums struct {
	A, B1, K Point
}
