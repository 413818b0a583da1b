package boundedread

import (
	"fmt"
	"math"
	"math/bits"
)

// Need is what a file's header says one of its parts (a section, a slice
// of points, a list) must hold, in bytes: Min to Max. Every reader of a
// binary format checks a part's declared size with Check, against its
// Need and against what the file has left, before it allocates or reads a
// byte of the part: a part padded to gigabytes (a sparse file, a few
// kilobytes on disk) is refused at once, unread, whatever the file's own
// size allows.
type Need struct {
	Min, Max int64
	// Of says what the bytes hold, for errors: "24 points".
	Of string
}

// Exactly is a part of exactly n bytes, holding of.
func Exactly(n int64, of string) Need { return Need{Min: n, Max: n, Of: of} }

// Between is a part of min to max bytes, holding of.
func Between(min, max int64, of string) Need { return Need{Min: min, Max: max, Of: of} }

// Items is the size of count items of each bytes, and rest bytes more,
// saturating at math.MaxInt64 (no count a file declares overflows it).
func Items(count, each, rest uint64) int64 {
	hi, lo := bits.Mul64(count, each)
	sum, carry := bits.Add64(lo, rest, 0)
	if hi != 0 || carry != 0 || sum > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(sum)
}

// Check checks that a part (what: "zkey: IC section") declaring size bytes
// is what n says and fits in left, the bytes the file has for it (< 0:
// not known, a pipe). Its error names the part, what it must hold and the
// size it declares.
func (n Need) Check(what string, size, left int64) error {
	switch {
	case size < 0:
		return fmt.Errorf("%s: a size of %d bytes", what, size)
	case left >= 0 && size > left:
		return fmt.Errorf("%s says %d bytes, the file has %d for it: truncated, or padded", what, size, left)
	case size >= n.Min && size <= n.Max:
		return nil
	case n.Min == n.Max:
		return fmt.Errorf("%s: %s need %d bytes, the section has %d", what, n.Of, n.Min, size)
	case size > n.Max:
		return fmt.Errorf("%s: %s need at most %d bytes, the section has %d", what, n.Of, n.Max, size)
	}
	return fmt.Errorf("%s: %s need at least %d bytes, the section has %d", what, n.Of, n.Min, size)
}
