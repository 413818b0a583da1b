package circomsrc

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Bounds on the zkey sections a verifier reads: the header is a u32, the
// Groth16 header two moduli and six points (under 1 KiB for BLS12-381), and
// IC 64 bytes a public input (96 for BLS12-381): 64 MiB is 700 000 of them.
var vkSectionLimit = map[uint32]uint64{1: 64, 2: 4096, 3: 64 << 20}

// ReadZkeyVerifyingKey reads the verifying key from a zkey streamed from r,
// reading only its headers and IC section and skipping the rest unread
// (snarkjs writes them first, so a verifier stops after some kilobytes of
// a key of gigabytes).
func ReadZkeyVerifyingKey(r io.Reader) (*VerifyingKey, error) {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("zkey: header: %w", err)
	}
	if string(head[:4]) != "zkey" {
		return nil, fmt.Errorf("not a zkey file (it does not begin with %q)", "zkey")
	}
	if v := binary.LittleEndian.Uint32(head[4:]); v != 1 {
		return nil, fmt.Errorf("zkey: a version this reader does not know (it knows 1)")
	}
	n := binary.LittleEndian.Uint32(head[8:])
	f := &binFile{kind: "zkey", version: 1, sections: map[uint32][]byte{}}
	for i := uint32(0); i < n && len(f.sections) < len(vkSectionLimit); i++ {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return nil, fmt.Errorf("zkey: section %d of %d: %w", i+1, n, err)
		}
		typ, size := binary.LittleEndian.Uint32(head[:]), binary.LittleEndian.Uint64(head[4:])
		limit, want := vkSectionLimit[typ]
		if !want {
			if _, err := io.CopyN(io.Discard, r, int64(min(size, 1<<62))); err != nil {
				return nil, fmt.Errorf("zkey: section %d (type %d): %w", i+1, typ, err)
			}
			continue
		}
		if _, dup := f.sections[typ]; dup {
			return nil, fmt.Errorf("zkey: section type %d appears twice", typ)
		}
		if size > limit {
			return nil, fmt.Errorf("zkey: section type %d: %d bytes, more than the %d it can be", typ, size, limit)
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("zkey: section type %d: %w", typ, err)
		}
		f.sections[typ] = b
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
