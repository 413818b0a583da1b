package circuits

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"sync"
)

// The native side of porep: SHA-256's compression function (with its
// round count a parameter, 64 being SHA-256's) and the Poseidon
// permutation the circuit proves, over big.Int mod the curve's r, for
// the public inputs a witness needs (roots and commitments follow from
// the secret inputs drawn from a seed).

var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var sha256IV = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// sha256Block is SHA-256's compression of one 64-byte block into h, with
// rounds rounds (64 is SHA-256; fewer is the same function cut short: the
// message schedule extended as far as the rounds need it).
func sha256Block(h *[8]uint32, block []byte, rounds int) {
	var w [64]uint32
	for i := range 16 {
		w[i] = binary.BigEndian.Uint32(block[4*i:])
	}
	for i := 16; i < rounds; i++ {
		s0 := bits.RotateLeft32(w[i-15], -7) ^ bits.RotateLeft32(w[i-15], -18) ^ w[i-15]>>3
		s1 := bits.RotateLeft32(w[i-2], -17) ^ bits.RotateLeft32(w[i-2], -19) ^ w[i-2]>>10
		w[i] = w[i-16] + s0 + w[i-7] + s1
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for i := range rounds {
		s1 := bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)
		ch := e&f ^ ^e&g
		t1 := hh + s1 + ch + sha256K[i] + w[i]
		s0 := bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)
		maj := a&b ^ a&c ^ b&c
		t2 := s0 + maj
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	h[0] += a
	h[1] += b
	h[2] += c
	h[3] += d
	h[4] += e
	h[5] += f
	h[6] += g
	h[7] += hh
}

// sha256Rounds is SHA-256 of msg (its padding, blocks of sha256Block)
// with rounds rounds a block; crypto/sha256's where rounds is 64.
func sha256Rounds(msg []byte, rounds int) [32]byte {
	if rounds == 64 {
		return sha256.Sum256(msg)
	}
	return sha256Blocks(msg, rounds)
}

// sha256Blocks is sha256Rounds through sha256Block whatever the rounds.
func sha256Blocks(msg []byte, rounds int) [32]byte {
	padded := append([]byte(nil), msg...)
	padded = append(padded, 0x80)
	for (len(padded)+8)%64 != 0 {
		padded = append(padded, 0)
	}
	padded = binary.BigEndian.AppendUint64(padded, uint64(len(msg))*8)
	h := sha256IV
	for i := 0; i < len(padded); i += 64 {
		sha256Block(&h, padded[i:i+64], rounds)
	}
	var out [32]byte
	for i, v := range h {
		binary.BigEndian.PutUint32(out[4*i:], v)
	}
	return out
}

// leBytes32 is x's 32 bytes, little-endian: how Filecoin hashes a node.
func leBytes32(x *big.Int) []byte {
	var b [32]byte
	x.FillBytes(b[:])
	for i := range 16 {
		b[i], b[31-i] = b[31-i], b[i]
	}
	return b[:]
}

// fromDigest is a digest as Filecoin packs it: its bytes read
// little-endian, the top two bits dropped (254 bits), reduced mod p.
func fromDigest(d [32]byte, p *big.Int) *big.Int {
	var be [32]byte
	for i := range 32 {
		be[i] = d[31-i]
	}
	be[0] &= 0x3f
	x := new(big.Int).SetBytes(be[:])
	return x.Mod(x, p)
}

// poseidonRF is the full rounds of every width (neptune's 8).
const poseidonRF = 8

// poseidonRP is neptune's partial rounds for width t (2 ≤ t ≤ 12, 128-bit
// security, x^5 S-boxes: its parameters/round_numbers.txt).
func poseidonRP(t int) int {
	switch {
	case t <= 3:
		return 55
	case t <= 7:
		return 56
	default:
		return 57
	}
}

// poseidonConsts are one Poseidon instance's constants over one field.
type poseidonConsts struct {
	t, rf, rp int
	rc        [][]*big.Int // a round's t round constants
	mds       [][]*big.Int // the full rounds' matrix, Cauchy: 1/(i + t + j)
	// a partial round's sparse matrix (neptune's form): element 0 is
	// Σ w_j·s_j, element j ≥ 1 is s_j + v_j·s_0; invertible where
	// w_0 ≠ Σ w_j·v_j (drawn again until it is)
	w, v [][]*big.Int
	tag  *big.Int // neptune's Merkle tree domain tag 2^(t−1) − 1
}

var poseidonCache sync.Map // key: "p/t/rf/rp" → *poseidonConsts

// poseidonFor is the Poseidon of width t with rf full and rp partial
// rounds over the field of p: round constants from SHA-256 of a counter,
// a Cauchy MDS matrix, the Merkle tree tag. Not neptune's constants
// (the brief: derived deterministically); its rounds and so its
// constraints a hash are neptune's.
func poseidonFor(p *big.Int, t, rf, rp int) *poseidonConsts {
	key := fmt.Sprintf("%x/%d/%d/%d", p, t, rf, rp)
	if c, ok := poseidonCache.Load(key); ok {
		return c.(*poseidonConsts)
	}
	c := &poseidonConsts{t: t, rf: rf, rp: rp}
	draw := func(what string, r, j, try int) *big.Int {
		d := sha256.Sum256(fmt.Appendf(nil, "zkpipe porep poseidon t=%d rf=%d rp=%d %s round=%d element=%d try=%d", t, rf, rp, what, r, j, try))
		return new(big.Int).Mod(new(big.Int).SetBytes(d[:]), p)
	}
	for r := range rf + rp {
		row := make([]*big.Int, t)
		for j := range row {
			row[j] = draw("constant", r, j, 0)
		}
		c.rc = append(c.rc, row)
	}
	for r := range rp {
		for try := 0; ; try++ {
			w, v := make([]*big.Int, t), make([]*big.Int, t)
			schur := new(big.Int)
			for j := range t {
				w[j], v[j] = draw("w", r, j, try), draw("v", r, j, try)
				if j > 0 {
					schur.Add(schur, new(big.Int).Mul(w[j], v[j]))
				}
			}
			if schur.Sub(w[0], schur).Mod(schur, p).Sign() != 0 {
				c.w, c.v = append(c.w, w), append(c.v, v)
				break
			}
		}
	}
	for i := range t {
		row := make([]*big.Int, t)
		for j := range row {
			row[j] = new(big.Int).ModInverse(big.NewInt(int64(i+t+j)), p)
		}
		c.mds = append(c.mds, row)
	}
	c.tag = big.NewInt(1<<(t-1) - 1)
	v, _ := poseidonCache.LoadOrStore(key, c)
	return v.(*poseidonConsts)
}

// poseidonHash is the permutation of [tag, in…] and its element 1, as the
// circuit computes it (gadgets.poseidon): each round adds its constants,
// then the S-boxes (all elements in a full round, the first in a partial
// one), then the full rounds' matrix or a partial round's sparse one.
func poseidonHash(c *poseidonConsts, p *big.Int, in []*big.Int) *big.Int {
	state := make([]*big.Int, c.t)
	state[0] = new(big.Int).Set(c.tag)
	for j, x := range in {
		state[j+1] = new(big.Int).Set(x)
	}
	half := c.rf / 2
	next := make([]*big.Int, c.t)
	for r := range c.rf + c.rp {
		full := r < half || r >= half+c.rp
		for j := range state {
			state[j].Add(state[j], c.rc[r][j])
			if full || j == 0 {
				x := new(big.Int).Mod(state[j], p)
				x2 := new(big.Int).Mul(x, x)
				x2.Mod(x2, p)
				x4 := x2.Mul(x2, x2)
				x4.Mod(x4, p)
				state[j] = x4.Mul(x4, x).Mod(x4, p)
			}
		}
		if full {
			for i := range next {
				s := new(big.Int)
				for j, x := range state {
					s.Add(s, new(big.Int).Mul(c.mds[i][j], x))
				}
				next[i] = s.Mod(s, p)
			}
		} else {
			w, v := c.w[r-half], c.v[r-half]
			s := new(big.Int)
			for j, x := range state {
				s.Add(s, new(big.Int).Mul(w[j], x))
			}
			next[0] = s.Mod(s, p)
			for j := 1; j < c.t; j++ {
				x := new(big.Int).Mul(v[j], state[0])
				next[j] = x.Add(x, state[j]).Mod(x, p)
			}
		}
		state, next = next, state
	}
	return state[1]
}
