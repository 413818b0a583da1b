package keygen

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelFor calls f over [0, n) in chunks of at least minChunk, on
// GOMAXPROCS goroutines that take the next chunk when done (so a slow
// chunk does not hold the others), and returns when all are done. The
// chunks are about 4 per core: small enough to balance, large enough that
// a chunk's setup (an exponentiation, a batch inversion) is paid rarely.
func parallelFor(n, minChunk int, f func(start, end int)) {
	if n <= 0 {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	chunk := max(minChunk, (n+4*workers-1)/(4*workers))
	nbChunks := (n + chunk - 1) / chunk
	workers = min(workers, nbChunks)
	if workers == 1 {
		f(0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= nbChunks {
					return
				}
				start := k * chunk
				f(start, min(start+chunk, n))
			}
		}()
	}
	wg.Wait()
}

// The fixed-base comb (fixed_<curve>.go). Products are made combBlock at
// a time so that one batch inversion serves a block and the block's
// Jacobian points (96–288 KiB) stay in cache while a window's table part
// streams by.
const (
	combBlock    = 1024
	combMaxWidth = 16 // the table's memory: 16·2^15 points
)

// combWidth is the window width c for about n products: the fewest mixed
// additions, ⌈(bits+1)/c⌉·(2^(c−1) + n) (the table, then one a window a
// product), c at most combMaxWidth.
func combWidth(n int) int {
	best, bestCost := 2, -1
	for c := 2; c <= combMaxWidth; c++ {
		cost := combWindows(c, 255) * ((1 << (c - 1)) + n)
		if bestCost < 0 || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// combWindows is the number of c-bit windows for a scalar of bits bits:
// one more bit than the scalar, for the top signed digit's carry.
func combWindows(c, bits int) int { return (bits + 1 + c - 1) / c }

// signedDigits writes k (a scalar's regular form, little-endian words) as
// len(digits) signed c-bit digits in (−2^(c−1), 2^(c−1)], least
// significant first: Σ digits[w]·2^(c·w) = k. A window's value over
// 2^(c−1) is taken as value − 2^c and carries one into the next window;
// the caller's windows cover one bit more than k has, so nothing carries
// out of the last.
func signedDigits(digits []int32, k [4]uint64, c int) {
	half, radix := uint64(1)<<(c-1), uint64(1)<<c
	carry := uint64(0)
	for w := range digits {
		pos := w * c
		var v uint64
		if i := pos / 64; i < 4 {
			v = k[i] >> (pos % 64)
			if pos%64+c > 64 && i+1 < 4 {
				v |= k[i+1] << (64 - pos%64)
			}
		}
		d := v&(radix-1) + carry
		if d > half {
			digits[w] = int32(int64(d) - int64(radix))
			carry = 1
		} else {
			digits[w] = int32(d)
			carry = 0
		}
	}
	if carry != 0 {
		panic("keygen: signed digits carry out of the last window")
	}
}

// lagrangeBlock is the rows of L_i(τ) that share one inversion.
const lagrangeBlock = 256

// zBlock is the block of Z's indices that shares one exponentiation
// (zScalars: some 400 multiplications, 0.1 a scalar at 2^12).
const zBlock = 1 << 12

// reverseBits is i's low b bits in reverse order (fft.BitReverse's
// permutation of a domain of 2^b).
func reverseBits(i, b int) int {
	if b == 0 {
		return 0
	}
	return int(bits.Reverse64(uint64(i)) >> (64 - b))
}
