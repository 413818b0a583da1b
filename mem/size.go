package mem

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unlimited is the budget of a governor that admits everything (the
// "unbounded" run); it still measures and counts.
const Unlimited int64 = math.MaxInt64

// units are the suffixes ParseSize accepts. Binary prefixes (KiB, Ki, K) are
// powers of 1024 and decimal ones (KB) powers of 1000; a bare K, M, G or T is
// binary, as in docker's --memory and GOMEMLIMIT's spirit, because that is what
// people mean when they size memory.
var units = []struct {
	suffix string
	bytes  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a size such as 16GiB, 512MiB, 1.5G, 4096 or 2e9 (bytes).
// Suffixes are case-insensitive.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			mult = u.bytes
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (16GiB, 512MiB, 1.5G, 4096)", s)
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(b), nil
}

// ParseBudget reads a budget flag: a size (ParseSize), a share of total such
// as "75%", or "off" (also "none", "unlimited") for Unlimited. A share must be
// in (0, 100]. A size under 1 MiB is refused: it could admit nothing, and is
// most likely a share without its "%".
func ParseBudget(s string, total int64) (int64, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "off", "none", "unlimited":
		return Unlimited, nil
	}
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return 0, fmt.Errorf("budget %q: a share must be a number in (0, 100] followed by %%", s)
		}
		if total <= 0 {
			return 0, fmt.Errorf("budget %q: the machine's memory is unknown; give a size", s)
		}
		return max(int64(float64(total)*v/100), 1), nil
	}
	b, err := ParseSize(t)
	if err != nil {
		return 0, fmt.Errorf("budget: %w", err)
	}
	if b < 1<<20 {
		return 0, fmt.Errorf("budget %q is under 1 MiB, too small for any proof (a share needs its %%: 75%%)", s)
	}
	return b, nil
}

// FormatBytes writes n in binary units with three significant figures,
// "1.50 GiB", "512 MiB", "4.00 KiB", "17 B"; Unlimited is "unlimited".
func FormatBytes(n int64) string {
	if n == Unlimited {
		return "unlimited"
	}
	neg := ""
	if n < 0 {
		neg, n = "-", -n
	}
	if n < 1<<10 {
		return fmt.Sprintf("%s%d B", neg, n)
	}
	v := float64(n)
	unit := 0
	for v >= 1<<10 && unit < 4 {
		v /= 1 << 10
		unit++
	}
	name := [...]string{"B", "KiB", "MiB", "GiB", "TiB"}[unit]
	switch {
	case v >= 100:
		return fmt.Sprintf("%s%.0f %s", neg, v, name)
	case v >= 10:
		return fmt.Sprintf("%s%.1f %s", neg, v, name)
	default:
		return fmt.Sprintf("%s%.2f %s", neg, v, name)
	}
}
