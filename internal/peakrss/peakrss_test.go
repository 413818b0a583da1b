package peakrss

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestPeakIsTheChildsOwn: a test process holding 300 MiB starts a child
// that takes 64 MiB, then one that takes 256 MiB; Run reports each child's
// own peak, where the child's ru_maxrss carries the parent's 300 MiB.
func TestPeakIsTheChildsOwn(t *testing.T) {
	if mib := os.Getenv("PEAKRSS_CHILD_MIB"); mib != "" {
		n, _ := strconv.Atoi(mib)
		b := make([]byte, n<<20)
		for i := range b { // touch every page
			b[i] = 1
		}
		time.Sleep(50 * time.Millisecond) // a sample or two at the peak
		os.Exit(int(b[len(b)-1]) - 1)
	}
	hold := make([]byte, 300<<20)
	for i := range hold {
		hold[i] = 1
	}
	for _, mib := range []int64{64, 256} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestPeakIsTheChildsOwn$")
		cmd.Env = append(os.Environ(), "PEAKRSS_CHILD_MIB="+strconv.FormatInt(mib, 10))
		peak, err := Run(cmd)
		if err != nil {
			t.Fatal(err)
		}
		rusage := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
		t.Logf("child of %d MiB: peak %d MiB, its ru_maxrss %d MiB", mib, peak>>20, rusage>>20)
		if peak < mib<<20*9/10 || peak > (mib+96)<<20 {
			t.Errorf("child of %d MiB: peak %d MiB", mib, peak>>20)
		}
	}
	hold[0] = hold[len(hold)-1]
}
