package mem

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pbnjay/memory"
)

// Machine is the memory a budget's share is taken of.
type Machine struct {
	Total  int64 // physical memory (pbnjay/memory)
	Cgroup int64 // the cgroup's limit; 0 when none is set
	Limit  int64 // Total lowered to Cgroup: what this process may really use
}

// ReadMachine reads the machine's memory and this process's cgroup limit.
func ReadMachine() Machine {
	m := Machine{Total: int64(memory.TotalMemory())}
	m.Cgroup, _ = CgroupLimit("/")
	m.Limit = m.Total
	if m.Cgroup > 0 && (m.Limit <= 0 || m.Cgroup < m.Limit) {
		m.Limit = m.Cgroup
	}
	return m
}

// cgroupUnlimited: cgroup v1 writes "no limit" as the largest page-aligned
// int64 (9223372036854771712); anything this large is no limit.
const cgroupUnlimited = 1 << 60

// CgroupLimit returns the tightest memory limit set on the cgroup this
// process belongs to or on any of its ancestors, or 0 if none is. root is the
// file system root ("/"; tests pass a fixture tree holding proc/self/cgroup
// and sys/fs/cgroup/…).
//
// cgroup v2 ("0::/path"): memory.max under sys/fs/cgroup/path (or, on hybrid
// hosts, sys/fs/cgroup/unified/path); "max" is no limit. cgroup v1
// ("N:…memory…:/path"): memory.limit_in_bytes under sys/fs/cgroup/memory/path.
// Each level from the process's cgroup up to the mount's root is read, and
// levels that do not exist are skipped: in a container the path in
// /proc/self/cgroup is often the host's, while the mount shows the
// container's own cgroup at its root.
func CgroupLimit(root string) (int64, error) {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, err
	}
	var limit int64
	tighten := func(v int64) {
		if v > 0 && v < cgroupUnlimited && (limit == 0 || v < limit) {
			limit = v
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			for _, mount := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
				tighten(walkUp(filepath.Join(root, mount), f[2], "memory.max"))
			}
		case hasController(f[1], "memory"):
			tighten(walkUp(filepath.Join(root, "sys/fs/cgroup/memory"), f[2], "memory.limit_in_bytes"))
		}
	}
	return limit, sc.Err()
}

// walkUp reads file in mount/path and each ancestor up to mount, and returns
// the smallest limit found (0: none).
func walkUp(mount, path, file string) int64 {
	var limit int64
	dir := filepath.Join(mount, filepath.Clean("/"+path))
	for {
		if v := readLimit(filepath.Join(dir, file)); v > 0 && (limit == 0 || v < limit) {
			limit = v
		}
		if dir == mount || len(dir) < len(mount) {
			return limit
		}
		dir = filepath.Dir(dir)
	}
}

// readLimit reads one limit file: a number of bytes, or "max"; 0 when the
// file is missing, unparsable or says no limit.
func readLimit(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || v >= cgroupUnlimited {
		return 0
	}
	return v
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
