package fleet_test

import (
	"context"
	bin "encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
)

// TestSubmitChecksWitnessesAgainstTheCircuit: submit uploads a witness file
// only if its header and exact size are those of a witness of the job's
// circuit (gnark: the public and secret counts; circom: magic, field, wire
// count). Anything else (a system file, a sparse GiB, another circuit's
// witness, a truncated or padded one, the other kind) is refused before a
// byte is uploaded, and the refusal quotes nothing of the file. A real
// witness, through a symlink or a hard link too, is queued. Before, every
// regular file was uploaded.
func TestSubmitChecksWitnessesAgainstTheCircuit(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	td, _ := filepath.Abs(filepath.Join("..", "source", "circomsrc", "testdata"))
	if _, err := fleet.PushCircom(context.Background(), q, filepath.Join(td, "mul.zkey"), ""); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, _, real := proveSeed(t, circuitDir(t), 3)
	good := write("good.witness", real)
	link := filepath.Join(dir, "link.witness")
	os.Symlink(good, link)
	hard := filepath.Join(dir, "hard.witness")
	os.Link(good, hard)
	sparse := filepath.Join(dir, "sparse.witness")
	f, _ := os.Create(sparse)
	f.Write(real[:12])
	f.Truncate(1 << 30) // a GiB, no disk used
	f.Close()
	other := make([]byte, 12+32*5) // 2 public, 3 secret: another circuit's
	bin.BigEndian.PutUint32(other[0:], 2)
	bin.BigEndian.PutUint32(other[4:], 3)
	bin.BigEndian.PutUint32(other[8:], 5)
	secret := write("shadow", []byte("root:$6$s3cr3tHASHVALUE:19000:0:99999:7:::\n"))
	wtns, err := os.ReadFile(filepath.Join(td, "mul.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	wrongCount := append([]byte{}, wtns...)
	// the wire count in the wtns header section: after the 12-byte
	// container head, 12 bytes of section head, n8 and the 32-byte prime
	bin.LittleEndian.PutUint32(wrongCount[12+12+4+32:], bin.LittleEndian.Uint32(wrongCount[12+12+4+32:])+1)

	bad := map[string]string{
		"shadow":       fmt.Sprintf(`{"id":"shadow","circuit":"chain","witness":%q}`, secret),
		"passwd":       `{"id":"passwd","circuit":"chain","witness":"/etc/passwd"}`,
		"sparse":       fmt.Sprintf(`{"id":"sparse","circuit":"chain","witness":%q}`, sparse),
		"other":        fmt.Sprintf(`{"id":"other","circuit":"chain","witness":%q}`, write("other.witness", other)),
		"truncated":    fmt.Sprintf(`{"id":"truncated","circuit":"chain","witness":%q}`, write("t.witness", real[:len(real)-1])),
		"padded":       fmt.Sprintf(`{"id":"padded","circuit":"chain","witness":%q}`, write("p.witness", append(append([]byte{}, real...), 0))),
		"empty":        fmt.Sprintf(`{"id":"empty","circuit":"chain","witness":%q}`, write("e.witness", nil)),
		"wtns-gnark":   fmt.Sprintf(`{"id":"wtns-gnark","circuit":"chain","wtns":%q}`, filepath.Join(td, "mul.wtns")),
		"gnark-circom": fmt.Sprintf(`{"id":"gnark-circom","circuit":"mul","witness":%q}`, good),
		"wtns-count":   fmt.Sprintf(`{"id":"wtns-count","circuit":"mul","wtns":%q}`, write("c.wtns", wrongCount)),
		"wtns-junk":    fmt.Sprintf(`{"id":"wtns-junk","circuit":"mul","wtns":%q}`, secret),
		"wtns-padded":  fmt.Sprintf(`{"id":"wtns-padded","circuit":"mul","wtns":%q}`, write("pad.wtns", append(append([]byte{}, wtns...), make([]byte, 8192)...))),
		"no-circuit":   fmt.Sprintf(`{"id":"no-circuit","circuit":"absent","witness":%q}`, good),
	}
	var lines []string
	for _, l := range bad {
		lines = append(lines, l)
	}
	got := map[string]fleet.Submitted{}
	refused, err := fleet.Submit(context.Background(), q, strings.NewReader(strings.Join(lines, "\n")), fleet.SubmitOptions{},
		func(s fleet.Submitted) { got[s.ID] = s })
	if err != nil {
		t.Fatal(err)
	}
	if refused != len(bad) {
		t.Errorf("%d of %d refused", refused, len(bad))
	}
	for id, s := range got {
		if s.Err == nil {
			t.Errorf("%s: queued", id)
			continue
		}
		msg := s.Err.Error()
		if !strings.Contains(msg, "job "+id) || strings.Contains(msg, "root") || strings.Contains(msg, "s3cr3t") {
			t.Errorf("%s: %v", id, s.Err)
		}
	}
	if objs, err := q.Witness.List(context.Background()); !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Fatalf("objects uploaded for refused jobs: %d %v", len(objs), err)
	}

	ok := submit(t, q, "",
		fmt.Sprintf(`{"id":"good","circuit":"chain","witness":%q}`, good),
		fmt.Sprintf(`{"id":"link","circuit":"chain","witness":%q}`, link),
		fmt.Sprintf(`{"id":"hard","circuit":"chain","witness":%q}`, hard),
		fmt.Sprintf(`{"id":"wtns","circuit":"mul","wtns":%q}`, filepath.Join(td, "mul.wtns")))
	for _, s := range ok {
		if !s.Queued {
			t.Errorf("%s: %+v", s.ID, s)
		}
	}
}

// TestWorkerErrorQuotesNoWitnessBytes: a witness that skipped submit's
// check (a client publishing itself) fails at a real worker with an error
// line that carries nothing of the file: not its bytes, not its header read
// as integers. Before, the line said "witness has 1919905652 public ...":
// "root" as a number.
func TestWorkerErrorQuotesNoWitnessBytes(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Out: t.TempDir(), Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	shadow := []byte("root:$6$s3cr3tHASHVALUExxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:19000:0:99999:7:::\n")
	submitRaw(t, q, "leak", "chain", shadow[:76]) // the exact size of a witness of chain
	submitRaw(t, q, "leak2", "chain", shadow)     // and not
	runWorker(t, q, eng)
	res := waitResults(t, q, 2, 30*time.Second)
	for _, id := range []string{"leak", "leak2"} {
		r := res[id]
		if r.Error == "" {
			t.Fatalf("%s: %+v", id, r)
		}
		for _, s := range []string{"root", "s3cr3t", fmt.Sprint(bin.BigEndian.Uint32(shadow)), fmt.Sprint(bin.BigEndian.Uint32(shadow[4:])), fmt.Sprint(bin.BigEndian.Uint32(shadow[8:]))} {
			if strings.Contains(r.Error, s) {
				t.Errorf("%s: the error line carries %q of the file: %s", id, s, r.Error)
			}
		}
	}
}
