package mem

import (
	"path/filepath"
	"testing"
)

func TestCgroupLimit(t *testing.T) {
	for dir, want := range map[string]int64{
		"v2":       8 << 30, // memory.max at the namespace's root
		"v2max":    0,       // "max" all the way up
		"v2nested": 4 << 30, // a parent's limit binds the leaf
		"v1":       2 << 30, // host path absent: the mount root's limit
		"v1max":    0,       // 9223372036854771712 is no limit
		"hybrid":   1 << 30, // v1 memory controller beside a unified tree
	} {
		got, err := CgroupLimit(filepath.Join("testdata/cgroup", dir))
		if err != nil || got != want {
			t.Errorf("%s: CgroupLimit = %d, %v; want %d", dir, got, err, want)
		}
	}
	if _, err := CgroupLimit("testdata/nowhere"); err == nil {
		t.Error("no /proc/self/cgroup: want an error")
	}
}

func TestReadMachine(t *testing.T) {
	m := ReadMachine()
	if m.Total <= 0 || m.Limit <= 0 || m.Limit > m.Total {
		t.Fatalf("machine %+v: want 0 < Limit ≤ Total", m)
	}
	if m.Cgroup > 0 && m.Limit > m.Cgroup {
		t.Fatalf("machine %+v: Limit above the cgroup's", m)
	}
}
