package circomsrc

import (
	"fmt"
	"io"
	"math"
)

// ReadZkeyVerifyingKey reads the verifying key from a zkey streamed from r,
// reading only its headers and IC section, each once its size is what the
// headers say, and passing over the rest unread (snarkjs writes them
// first, so a verifier stops after some kilobytes of a key of gigabytes).
func ReadZkeyVerifyingKey(r io.Reader) (*VerifyingKey, error) {
	f, err := streamBinFile(r, "zkey", 1, math.MaxInt64, types(1, 2, 3))
	if err != nil {
		return nil, err
	}
	z, err := parseZkeyHead(f)
	if err != nil {
		return nil, err
	}
	return curveOf(z.Curve).vk(z), nil
}

// VerifyJSON checks a snarkjs proof.json against its public.json, both in
// memory (named for errors), and returns the public inputs in decimal.
func (vk *VerifyingKey) VerifyJSON(proofName string, proofData []byte, publicName string, publicData []byte) ([]string, error) {
	if n := int64(len(proofData)); n > proofJSONLimit {
		return nil, fmt.Errorf("proof %s: %d bytes, more than the %d a proof.json can be", proofName, n, proofJSONLimit)
	}
	if n, lim := int64(len(publicData)), publicJSONLimit(vk.NPublic); n > lim {
		return nil, fmt.Errorf("public inputs %s: %d bytes, more than the %d that %d inputs can be", publicName, n, lim, vk.NPublic)
	}
	p, err := parseProof(proofName, proofData, vk.Curve)
	if err != nil {
		return nil, err
	}
	pub, err := parsePublic(publicName, publicData, vk.Curve)
	if err != nil {
		return nil, err
	}
	if err := vk.Verify(p, pub); err != nil {
		return nil, fmt.Errorf("%s: %w", proofName, err)
	}
	return curveOf(vk.Curve).decimals(pub), nil
}
