package mem

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"16GiB", 16 << 30}, {"512MiB", 512 << 20}, {"512mib", 512 << 20}, {"4KiB", 4 << 10},
		{"1.5G", 3 << 29}, {"2Gi", 2 << 30}, {"1T", 1 << 40},
		{"512MB", 512e6}, {"2GB", 2e9}, {"4096", 4096}, {"100B", 100}, {"2e9", 2e9},
		{" 8 GiB ", 8 << 30},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "12XB", "1.2.3M", "NaN", "Inf", "1e30GiB", "75%"} {
		if got, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, got)
		}
	}
}

func TestParseBudget(t *testing.T) {
	const total = 64 << 30
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"75%", 48 << 30}, {"100%", total}, {"12.5%", 8 << 30}, {" 50 %", 32 << 30},
		{"16GiB", 16 << 30}, {"off", Unlimited}, {"Unlimited", Unlimited}, {"none", Unlimited},
	} {
		got, err := ParseBudget(c.in, total)
		if err != nil || got != c.want {
			t.Errorf("ParseBudget(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"0%", "101%", "-5%", "x%", "0", "0GiB", "lots", "75", "512KiB"} {
		if got, err := ParseBudget(bad, total); err == nil {
			t.Errorf("ParseBudget(%q) = %d, want an error", bad, got)
		}
	}
	if _, err := ParseBudget("75%", 0); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("a share of unknown memory: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		17: "17 B", 4 << 10: "4.00 KiB", 1536 << 20: "1.50 GiB", 512 << 20: "512 MiB",
		12 << 30: "12.0 GiB", Unlimited: "unlimited", -(2 << 20): "-2.00 MiB",
	} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
