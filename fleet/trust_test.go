package fleet_test

import (
	"bytes"
	"context"
	binenc "encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stream"
)

// plant puts outputs for job id in the proof store and a "proved" result
// line on its subject, as anyone with access to the queue can.
func plant(t *testing.T, q *fleet.Queue, id string, files map[string][]byte) {
	t.Helper()
	line := stream.Result{ID: id, Circuit: "chain", Proof: id + ".proof", Public: id + ".public", Stages: []stream.StageTime{}}
	data, err := json.Marshal(fleet.Outputs{Result: line, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Proofs.PutBytes(context.Background(), id, data); err != nil {
		t.Fatal(err)
	}
	res, _ := json.Marshal(line)
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.results."+id, res); err != nil {
		t.Fatal(err)
	}
}

func collectAll(t *testing.T, q *fleet.Queue, o fleet.ResultsOptions) map[string]stream.Result {
	t.Helper()
	if o.Out == "" {
		o.Out = t.TempDir()
	}
	out := map[string]stream.Result{}
	err := fleet.Collect(context.Background(), q, o, func(r stream.Result) error {
		out[r.ID] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An outputs object that nobody proved (planted by anyone with access to
// the queue) must not come out of zkpipe results as "proved", nor make
// submit report the id as done. Before, both trusted the store: the bogus
// proof became a result line without an error and submit said Done.
func TestPlantedOutputsAreNotProved(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	plant(t, q, "evil", map[string][]byte{"evil.proof": []byte("not a proof"), "evil.public": []byte("nor this")})
	r, ok := collectAll(t, q, fleet.ResultsOptions{})["evil"]
	if !ok {
		t.Fatal("no line for evil")
	}
	if r.Error == "" || !strings.Contains(r.Error, "job evil") {
		t.Errorf("a planted outputs object came out as %+v: want a failed line naming the job", r)
	}
	s := submit(t, q, "", genJob("evil"))
	if s[0].Done || !s[0].Queued {
		t.Errorf("submit of an id whose stored proof is bogus: %+v, want it queued", s[0])
	}
}

// runFake runs a worker over a fake prover until the test ends.
func runFake(t *testing.T, q *fleet.Queue) *fakeProver {
	t.Helper()
	f := newFake(t, 2)
	runWorker(t, q, f)
	return f
}

// tamper returns public with its last input changed: a real proof of other
// public inputs than it claims.
func tamper(public []byte) []byte {
	b := bytes.Clone(public)
	b[len(b)-1] ^= 1
	return b
}

// A real job's stored proof replaced by one that fails the circuit's key:
// results reports the job failed, submit queues it again instead of calling
// it done, and the worker proves it again rather than republish the bogus
// outputs; after that, results has the new proof.
func TestTamperedProofOfARealJob(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	submit(t, q, "", genJob("real"))
	f := runFake(t, q)
	if r := waitResults(t, q, 1, 20*time.Second)["real"]; r.Error != "" {
		t.Fatalf("first proof: %+v", r)
	}
	settled(t, q)
	proof, public := realProof(t)
	data, _ := json.Marshal(fleet.Outputs{
		Result: stream.Result{ID: "real", Circuit: "chain", Proof: "real.proof", Public: "real.public", Stages: []stream.StageTime{}},
		Files:  map[string][]byte{"real.proof": proof, "real.public": tamper(public)},
	})
	if _, err := q.Proofs.PutBytes(context.Background(), "real", data); err != nil {
		t.Fatal(err)
	}
	r := collectAll(t, q, fleet.ResultsOptions{})["real"]
	if r.Error == "" || !strings.Contains(r.Error, "job real: stored proof rejected by circuit store chain/circuit.vk") || r.Proof != "" {
		t.Fatalf("tampered proof collected as %+v", r)
	}
	s := submit(t, q, "", genJob("real"))
	if s[0].Done || !s[0].Queued {
		t.Fatalf("submit of a job whose stored proof is tampered: %+v", s[0])
	}
	settled(t, q)
	if got := f.entered(); len(got) != 2 {
		t.Fatalf("proved %v: want the job proven again", got)
	}
	if r := collectAll(t, q, fleet.ResultsOptions{})["real"]; r.Error != "" {
		t.Fatalf("after proving it again: %+v", r)
	}
}

// A redelivered job (as after a worker died between storing and acking)
// whose stored outputs are bogus is proven again, not answered from them.
// Before, the worker republished whatever the store held as proved.
func TestWorkerDoesNotRepublishBogusOutputs(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	proof, public := realProof(t)
	plant(t, q, "re", map[string][]byte{"re.proof": proof, "re.public": tamper(public)})
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.jobs.normal", []byte(`{"id":"re","circuit":"chain","generate":{"seed":1}}`)); err != nil {
		t.Fatal(err)
	}
	f := runFake(t, q)
	settled(t, q)
	if got := f.entered(); len(got) != 1 {
		t.Fatalf("proved %v: the bogus outputs were republished", got)
	}
	m, err := q.Results.GetLastMsgForSubject(context.Background(), "zkpipe.results.re")
	if err != nil {
		t.Fatal(err)
	}
	var last stream.Result
	json.Unmarshal(m.Data, &last)
	if last.Error != "" || len(last.Stages) == 0 {
		t.Fatalf("last result line %+v, want the new proof's", last)
	}
	if r := collectAll(t, q, fleet.ResultsOptions{})["re"]; r.Error != "" {
		t.Fatalf("collected %+v", r)
	}
}

// The user's own key is the stronger anchor: someone who can write the
// circuit store can push other keys under the circuit's name and plant a
// proof made with them. Checked against the store, that proof passes;
// against --circuit DIR (the user's copy of the circuit), it fails.
func TestLocalKeyWinsOverTheStore(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	evil := filepath.Join(t.TempDir(), "chain")
	if _, err := gnarksrc.Setup("mulchain", 200, evil); err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.PushDir(context.Background(), q, evil); err != nil {
		t.Fatal(err)
	}
	proof, public := proveIn(t, evil)
	plant(t, q, "forged", map[string][]byte{"forged.proof": proof, "forged.public": public})

	if r := collectAll(t, q, fleet.ResultsOptions{})["forged"]; r.Error != "" || !strings.HasPrefix(r.VerifiedWith, "circuit store chain/circuit.vk") {
		t.Fatalf("against the store: %+v (the store's own key accepts it)", r)
	}
	local, err := fleet.LocalVerifier(context.Background(), circuitDir(t), "")
	if err != nil {
		t.Fatal(err)
	}
	r := collectAll(t, q, fleet.ResultsOptions{Verifier: local})["forged"]
	if !strings.Contains(r.Error, "job forged: stored proof rejected by --circuit "+circuitDir(t)) || r.Proof != "" {
		t.Fatalf("against --circuit: %+v", r)
	}
	// and a proof of the user's circuit passes, saying so
	good, pub := realProof(t)
	plant(t, q, "good", map[string][]byte{"good.proof": good, "good.public": pub})
	r = collectAll(t, q, fleet.ResultsOptions{Verifier: local})["good"]
	if r.Error != "" || r.VerifiedWith != "--circuit "+circuitDir(t) || len(r.PublicInputs) == 0 {
		t.Fatalf("a real proof against --circuit: %+v", r)
	}
}

// proveIn proves a generated witness of the built-in circuit in dir.
func proveIn(t *testing.T, dir string) (proof, public []byte) {
	t.Helper()
	proof, public, _ = proveSeed(t, dir, 1)
	return proof, public
}

// proveSeed proves the witness of the built-in circuit in dir drawn from
// seed, with gnark's groth16.Prove, and returns the files' encodings: the
// proof, its public witness and the full witness (a job's witness file).
func proveSeed(t *testing.T, dir string, seed int64) (proof, public, full []byte) {
	t.Helper()
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := c.Source.(*gnarksrc.Source)
	w, err := src.Witness(seed)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := src.WholeProvingKey()
	if err != nil {
		t.Fatal(err)
	}
	p, err := groth16.Prove(src.R1CS(), pk, w)
	if err != nil {
		t.Fatal(err)
	}
	var pb bytes.Buffer
	p.WriteTo(&pb)
	pw, _ := w.Public()
	wb, err := pw.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	full, err = w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return pb.Bytes(), wb, full
}

// One job whose outputs cannot be read does not stop zkpipe results: it is
// reported failed, naming the job, and the lines after it come out. Before,
// Collect returned at the first such job and nothing after it was written.
func TestCollectGoesOnAfterAPoisonedJob(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	if _, err := q.Proofs.PutBytes(context.Background(), "poison", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.results.poison", []byte(`{"id":"poison","circuit":"chain","proof":"poison.proof","public":"poison.public","stages":[]}`)); err != nil {
		t.Fatal(err)
	}
	proof, public := realProof(t)
	plant(t, q, "after", map[string][]byte{"after.proof": proof, "after.public": public})
	out := t.TempDir()
	var got []stream.Result
	err := fleet.Collect(context.Background(), q, fleet.ResultsOptions{Out: out}, func(r stream.Result) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if len(got) != 2 || !strings.Contains(got[0].Error, "job poison: outputs:") || got[1].ID != "after" || got[1].Error != "" {
		t.Fatalf("lines %+v", got)
	}
	if _, err := os.Stat(filepath.Join(out, "poison.proof")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file written for the poisoned job: %v", err)
	}
}

// A result line's id names the files results writes: one that is not a
// valid id (../x) is a failed line, and nothing is written outside --out,
// even when its stored proof is valid.
func TestResultsRefusesAnIDThatIsAPath(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	pushChain(t, q)
	proof, public := realProof(t)
	id := "../escaped"
	data, _ := json.Marshal(fleet.Outputs{
		Result: stream.Result{ID: id, Circuit: "chain", Proof: id + ".proof", Public: id + ".public", Stages: []stream.StageTime{}},
		Files:  map[string][]byte{id + ".proof": proof, id + ".public": public},
	})
	if _, err := q.Proofs.PutBytes(context.Background(), id, data); err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(stream.Result{ID: id, Circuit: "chain", Proof: id + ".proof", Public: id + ".public", Stages: []stream.StageTime{}})
	if _, err := q.Conn.JS.Publish(context.Background(), "zkpipe.results.x", line); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	r := collectAll(t, q, fleet.ResultsOptions{Out: filepath.Join(root, "out")})[id]
	if !strings.Contains(r.Error, "invalid id") || r.Proof != "" {
		t.Errorf("result %+v", r)
	}
	if _, err := os.Stat(filepath.Join(root, "escaped.proof")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file written outside --out: %v", err)
	}
}

// A circuit whose proving key holds a bad point deep inside a slice is not
// pushed: the push reads every point (without keeping the key, which
// LoadDir leaves for the engine's load) and names the file and the point;
// a worker never fetches a key no engine can load.
func TestPushRefusesAKeyWithABadPoint(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	dir := filepath.Join(t.TempDir(), "badpoint")
	if _, err := gnarksrc.Setup("mulchain", 200, dir); err != nil {
		t.Fatal(err)
	}
	pk := filepath.Join(dir, gnarksrc.PKFile)
	data, err := os.ReadFile(pk)
	if err != nil {
		t.Fatal(err)
	}
	// two points' worth of 0xff in the middle of the bases: at least one
	// whole raw point there, over the modulus or of another encoding
	mid := len(data) / 2
	for i := mid; i < mid+128; i++ {
		data[i] = 0xff
	}
	if err := os.WriteFile(pk, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = fleet.PushDir(context.Background(), q, dir)
	if err == nil || !strings.Contains(err.Error(), pk) || !strings.Contains(err.Error(), "point") {
		t.Fatalf("push of a key with a bad point: %v, want an error naming %s and the point", err, pk)
	}
}

// A circom push reads the zkey's points too (the engine's load defers
// them): a zkey with a bad point in its H section is refused at push,
// naming the file and the point, and nothing is stored.
func TestPushRefusesAZkeyWithABadPoint(t *testing.T) {
	q, _ := startQueue(t, 5*time.Second)
	data, err := os.ReadFile(filepath.Join(circomTestdata, "mul.zkey"))
	if err != nil {
		t.Fatal(err)
	}
	// the sections: "zkey", version, count, then (type u32, size u64, data)
	off, spoiled := 12, false
	for off+12 <= len(data) {
		typ, size := binenc.LittleEndian.Uint32(data[off:]), int(binenc.LittleEndian.Uint64(data[off+4:]))
		if typ == 9 { // H: flip the first byte of its first point's x
			data[off+12] ^= 1
			spoiled = true
			break
		}
		off += 12 + size
	}
	if !spoiled {
		t.Fatal("mul.zkey: no H section")
	}
	zp := filepath.Join(t.TempDir(), "badmul.zkey")
	if err := os.WriteFile(zp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = fleet.PushCircom(context.Background(), q, zp, "")
	if err == nil || !strings.Contains(err.Error(), zp) || !strings.Contains(err.Error(), "H section: point 0") {
		t.Fatalf("push of a zkey with a bad point: %v, want an error naming %s and H's point 0", err, zp)
	}
	if objs, err := q.Circuits.List(context.Background()); !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Errorf("stored: %d objects (%v)", len(objs), err)
	}
}
