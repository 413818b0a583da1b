package fleet_test

import (
	"context"
	le "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/internal/hostilefile"
)

// TestPushRefusesAPaddedZkey: circuit push --zkey of a zkey whose header,
// IC or coefficient section is grown by 4 GiB of zeros in its middle (a
// sparse file) is refused by the section's size, naming it, before the
// section is read or anything is stored. Before, each was read whole
// first (4 GiB of heap).
func TestPushRefusesAPaddedZkey(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	data, err := os.ReadFile(filepath.Join("..", "source", "circomsrc", "testdata", "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	const pad = 4 << 30
	pos := int64(12)
	for range le.LittleEndian.Uint32(data[8:]) {
		typ, size := le.LittleEndian.Uint32(data[pos:]), int64(le.LittleEndian.Uint64(data[pos+4:]))
		name := map[uint32]string{2: "Groth16 header", 3: "IC", 4: "coefficients", 5: "A", 9: "H"}[typ]
		if name != "" {
			b := append([]byte(nil), data...)
			le.LittleEndian.PutUint64(b[pos+4:], uint64(size+pad))
			p := filepath.Join(t.TempDir(), fmt.Sprintf("padded%d.zkey", typ))
			hostilefile.Padded(t, p, b, pos+12+size/2, pad)
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			before := m.TotalAlloc
			_, err := fleet.PushCircom(context.Background(), q, p, "")
			runtime.ReadMemStats(&m)
			if err == nil || !strings.Contains(err.Error(), name+" section") {
				t.Errorf("push of a zkey whose %s section is padded: %v, want it refused naming the section", name, err)
			}
			if grew := m.TotalAlloc - before; grew > 64<<20 {
				t.Errorf("%s section padded: %d bytes allocated by the push", name, grew)
			}
		}
		pos += 12 + size
	}
	if got, err := fleet.Circuits(context.Background(), q); err != nil || len(got) != 0 {
		t.Errorf("circuits stored: %v %v", got, err)
	}
}
