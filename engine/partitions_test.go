package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
	"github.com/zkpipe/zkpipe/tracing"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// streamLines proves the job lines text through a fresh engine (Stream,
// as prove reads them) and returns the result lines by id.
func streamLines(t *testing.T, opts Options, text string, circuits ...*stages.Circuit) map[string]stream.Result {
	t.Helper()
	e, err := New(context.Background(), opts, circuits...)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	lines := map[string]stream.Result{}
	err = e.Stream(context.Background(), context.Background(), strings.NewReader(text), func(r stream.Result) error {
		if _, dup := lines[r.ID]; dup {
			t.Errorf("two result lines for %s", r.ID)
		}
		lines[r.ID] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// acceptedFromFiles checks, with gnark's verifier, the proof and public
// witness a line (or a partition's entry) names.
func acceptedFromFiles(t *testing.T, c *stages.Circuit, proof, public string) {
	t.Helper()
	p, err := os.ReadFile(proof)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(public)
	if err != nil {
		t.Fatal(err)
	}
	gnarkAccepts(t, c, p, pub)
}

func writeWitness(t *testing.T, c *stages.Circuit, dir string, seed int64) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("w%d.witness", seed))
	if err := os.WriteFile(p, witnessBytes(t, c, seed), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A request of three partitions (a witness file and two generated
// witnesses) in one stream with single jobs gets one result line holding
// three proofs, each in the request's subdirectory and accepted by gnark;
// the single jobs beside it get their lines as ever.
func TestRequestOfPartitionsProvesOneLineOfVerifiedProofs(t *testing.T) {
	c := loadChain(t)
	out := filepath.Join(t.TempDir(), "out")
	w := writeWitness(t, c, t.TempDir(), 2)
	jobs := fmt.Sprintf(`{"id":"j1","generate":{"seed":7}}
{"id":"porep-1","partitions":[{"generate":{"seed":1}},{"witness":%q},{"generate":{"seed":3}}]}
{"id":"j2","generate":{"seed":8}}
`, w)
	lines := streamLines(t, cpuOptions(out), jobs, c)
	if len(lines) != 3 {
		t.Fatalf("%d result lines, want 3: %v", len(lines), lines)
	}
	r := lines["porep-1"]
	if r.Error != "" || len(r.Partitions) != 3 {
		t.Fatalf("request line: error %q, %d partitions", r.Error, len(r.Partitions))
	}
	if r.Circuit != c.Name || r.TotalMS <= 0 {
		t.Errorf("request line: circuit %q, total_ms %v", r.Circuit, r.TotalMS)
	}
	for i, p := range r.Partitions {
		if p.Index != i || p.ID != fmt.Sprintf("porep-1/%d", i) || p.Error != "" {
			t.Errorf("partition %d: %+v", i, p)
		}
		if want := filepath.Join(out, "porep-1", fmt.Sprintf("%d.proof", i)); p.Proof != want {
			t.Errorf("partition %d: proof %s, want %s", i, p.Proof, want)
		}
		if len(p.Stages) != len(stages.Names) || len(p.PublicInputs) == 0 {
			t.Errorf("partition %d: %d stages, public inputs %v", i, len(p.Stages), p.PublicInputs)
		}
		acceptedFromFiles(t, c, p.Proof, p.Public)
	}
	if fmt.Sprint(r.Partitions[0].PublicInputs) == fmt.Sprint(r.Partitions[1].PublicInputs) {
		t.Error("partitions 0 and 1 prove the same public inputs: not their own witnesses")
	}
	for _, id := range []string{"j1", "j2"} {
		if l := lines[id]; l.Error != "" || l.Partitions != nil {
			t.Errorf("%s: %+v", id, l)
		} else {
			acceptedFromFiles(t, c, l.Proof, l.Public)
		}
	}
	// the line as JSON: index 0 is written, not left out
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"partitions":[{"index":0,"id":"porep-1/0"`) {
		t.Errorf("request line as JSON: %s", b)
	}
}

// One bad partition fails alone and is named; the others' proofs are
// written and verify. A request whose partitions all fail holds up no one.
func TestBadPartitionFailsAloneAndIsNamed(t *testing.T) {
	c := loadChain(t)
	out := filepath.Join(t.TempDir(), "out")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.witness")
	if err := os.WriteFile(bad, []byte("not a witness"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := fmt.Sprintf(`{"id":"r1","partitions":[{"generate":{"seed":1}},{"witness":%q},{"generate":{"seed":3}}]}
{"id":"r2","partitions":[{"witness":%q},{"witness":%q}]}
{"id":"j1","generate":{"seed":9}}
`, bad, bad+".missing", bad)
	lines := streamLines(t, cpuOptions(out), jobs, c)
	r := lines["r1"]
	if !strings.Contains(r.Error, "job r1: partition 1 of 3 failed") || !strings.Contains(r.Error, "job r1/1: parse") {
		t.Errorf("r1's error %q: want partition 1 named", r.Error)
	}
	if len(r.Partitions) != 3 || r.Partitions[1].Error == "" || r.Partitions[1].Proof != "" || r.Partitions[1].FailedStage != stages.Parse {
		t.Fatalf("r1's partitions: %+v", r.Partitions)
	}
	for _, i := range []int{0, 2} {
		if p := r.Partitions[i]; p.Error != "" {
			t.Errorf("partition %d: %s", i, p.Error)
		} else {
			acceptedFromFiles(t, c, p.Proof, p.Public)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "r1", "1.proof")); err == nil {
		t.Error("a proof was written for the bad partition")
	}
	if r2 := lines["r2"]; !strings.Contains(r2.Error, "partitions 0, 1 of 2 failed") {
		t.Errorf("r2's error %q", r2.Error)
	}
	if j1 := lines["j1"]; j1.Error != "" {
		t.Errorf("the job after the failed requests: %s", j1.Error)
	} else {
		acceptedFromFiles(t, c, j1.Proof, j1.Public)
	}
}

// A request that cannot be proven as one is refused whole, in one line
// naming the job and the entry, and writes nothing; the stream goes on.
func TestPartitionRequestsRefused(t *testing.T) {
	c := loadChain(t)
	var many []string
	for i := range 65 {
		many = append(many, fmt.Sprintf(`{"generate":{"seed":%d}}`, i))
	}
	cases := []struct{ line, want string }{
		{`{"id":"r0","partitions":[]}`, "job r0: parse: partitions: none given"},
		{`{"id":"r65","partitions":[` + strings.Join(many, ",") + `]}`, "job r65: parse: partitions: 65 of them, more than the 64 a request may have (MaxPartitions): engine.Options.MaxPartitions is 64"},
		{`{"id":"rw","partitions":[{"witness":"a.w"},{"witness":"./a.w"}]}`, "job rw: parse: partition 1: witness ./a.w is also partition 0's"},
		{`{"id":"rs","partitions":[{"generate":{"seed":3}},{"generate":{"seed":4}},{"generate":{"seed":3}}]}`, "job rs: parse: partition 2: generate seed 3 is also partition 0's"},
		{`{"id":"rt","witness":"a.w","partitions":[{"generate":{"seed":3}}]}`, "job rt: parse: partitions: a request of partitions takes its witnesses in its partitions, not beside them (it has a top-level witness)"},
		{`{"id":"rn","partitions":[{"generate":{"seed":3}},{}]}`, "job rn: parse: partition 1: no witness"},
		{`{"id":"r2","partitions":[{"generate":{"seed":3},"witness":"a.w"}]}`, "job r2: parse: partition 0: 2 witnesses"},
	}
	var text strings.Builder
	for _, cs := range cases {
		text.WriteString(cs.line + "\n")
	}
	text.WriteString(`{"id":"j1","generate":{"seed":1}}` + "\n")
	out := filepath.Join(t.TempDir(), "out")
	lines := streamLines(t, cpuOptions(out), text.String(), c)
	for _, cs := range cases {
		id := cs.line[strings.Index(cs.line, `"id":"`)+6:]
		id = id[:strings.IndexByte(id, '"')]
		l := lines[id]
		if !strings.Contains(l.Error, cs.want) || l.Partitions != nil {
			t.Errorf("%s: error %q, want %q", id, l.Error, cs.want)
		}
		if _, err := os.Stat(filepath.Join(out, id)); err == nil {
			t.Errorf("%s: refused, yet its directory was made", id)
		}
	}
	if l := lines["j1"]; l.Error != "" {
		t.Errorf("j1 after the refusals: %s", l.Error)
	}

	// the cap is an option
	o := cpuOptions(filepath.Join(t.TempDir(), "out"))
	o.MaxPartitions = 2
	lines = streamLines(t, o, `{"id":"r3","partitions":[{"generate":{"seed":1}},{"generate":{"seed":2}},{"generate":{"seed":3}}]}`+"\n", c)
	if l := lines["r3"]; !strings.Contains(l.Error, "3 of them, more than the 2") || !strings.Contains(l.Error, "engine.Options.MaxPartitions is 2") {
		t.Errorf("r3 over a cap of 2: %q", l.Error)
	}
	o.MaxPartitions = MaxPartitionsLimit + 1
	if _, err := New(context.Background(), o, loadChain(t)); err == nil || !strings.Contains(err.Error(), "engine.Options.MaxPartitions 4097") {
		t.Errorf("MaxPartitions over the limit: %v", err)
	}
}

// --skip-done answers a request from its files only when every
// partition's proof verifies and is of its own witness's public inputs; a
// partition's proof copied from another partition makes the request proven
// again.
func TestSkipDoneRequestBindsEachPartition(t *testing.T) {
	c := loadChain(t)
	out := filepath.Join(t.TempDir(), "out")
	dir := t.TempDir()
	jobs := fmt.Sprintf(`{"id":"r1","partitions":[{"witness":%q},{"witness":%q},{"generate":{"seed":3}}]}`+"\n",
		writeWitness(t, c, dir, 1), writeWitness(t, c, dir, 2))
	if l := streamLines(t, cpuOptions(out), jobs, c)["r1"]; l.Error != "" || l.Resumed {
		t.Fatalf("first run: %+v", l)
	}
	o := cpuOptions(out)
	o.SkipDone = true
	l := streamLines(t, o, jobs, c)["r1"]
	if l.Error != "" || !l.Resumed || len(l.Partitions) != 3 {
		t.Fatalf("second run: %+v", l)
	}
	for _, p := range l.Partitions {
		acceptedFromFiles(t, c, p.Proof, p.Public)
	}

	// partition 0's verified proof under partition 1's name, every file of
	// it (a .proof.json of its own would be refused before the statement)
	for _, ext := range []string{".proof", ".public", ".proof.json"} {
		b, err := os.ReadFile(filepath.Join(out, "r1", "0"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "r1", "1"+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	o.Log = &syncWriter{w: &log}
	l = streamLines(t, o, jobs, c)["r1"]
	if l.Error != "" || l.Resumed {
		t.Fatalf("with a swapped partition: %+v, want proven again", l)
	}
	if !strings.Contains(log.String(), "job r1/1: the earlier run's") || !strings.Contains(log.String(), "job r1: partition 1 is not done; proving the request again") {
		t.Errorf("log: %s", log.String())
	}
	for _, p := range l.Partitions {
		acceptedFromFiles(t, c, p.Proof, p.Public)
	}
	if l.Partitions[0].PublicInputs[0] == l.Partitions[1].PublicInputs[0] && fmt.Sprint(l.Partitions[0].PublicInputs) == fmt.Sprint(l.Partitions[1].PublicInputs) {
		t.Error("partition 1 still has partition 0's statement")
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// spanMemory keeps the spans exported, after Shutdown too.
type spanMemory struct {
	mu    sync.Mutex
	spans tracetest.SpanStubs
}

func (m *spanMemory) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spans = append(m.spans, tracetest.SpanStubsFromReadOnlySpans(spans)...)
	return nil
}
func (m *spanMemory) Shutdown(context.Context) error { return nil }

// The engine traces a request as one "request" span, the parent of its
// partitions' job spans.
func TestRequestSpanParentsPartitionJobs(t *testing.T) {
	c := loadChain(t)
	exp := &spanMemory{}
	o := cpuOptions(filepath.Join(t.TempDir(), "out"))
	o.Tracing = tracing.Config{Exporter: exp}
	e, err := New(context.Background(), o, c)
	if err != nil {
		t.Fatal(err)
	}
	err = e.Stream(context.Background(), context.Background(), strings.NewReader(
		`{"id":"r1","partitions":[{"generate":{"seed":1}},{"generate":{"seed":2}}]}`+"\n"+`{"id":"j1","generate":{"seed":3}}`+"\n"),
		func(stream.Result) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var request tracetest.SpanStub
	jobs := map[string]tracetest.SpanStub{}
	for _, s := range exp.spans {
		for _, kv := range s.Attributes {
			switch {
			case s.Name == "request" && kv.Key == "zkpipe.request.id" && kv.Value.AsString() == "r1":
				request = s
			case s.Name == "job" && kv.Key == "zkpipe.job.id":
				jobs[kv.Value.AsString()] = s
			}
		}
	}
	if !request.SpanContext.IsValid() {
		t.Fatal("no request span for r1")
	}
	for _, id := range []string{"r1/0", "r1/1"} {
		if j, ok := jobs[id]; !ok || j.Parent.SpanID() != request.SpanContext.SpanID() {
			t.Errorf("job span %s: present %v, parent %v, want the request's %v", id, ok, j.Parent.SpanID(), request.SpanContext.SpanID())
		}
	}
	if j, ok := jobs["j1"]; !ok || j.Parent.IsValid() {
		t.Errorf("single job j1's span: present %v, parent valid %v", ok, j.Parent.IsValid())
	}
}

// A killed run's temporary files in a request's subdirectory go when the
// directory is opened, as those beside single jobs' files do.
func TestStalePartitionTempFilesGo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(filepath.Join(out, "r1"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale, keep := filepath.Join(out, "r1", ".0.proof.tmp-999"), filepath.Join(out, "r1", "0.proof")
	for _, p := range []string{stale, keep} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenOutDir(out)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file in r1/: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("r1/0.proof removed: %v", err)
	}
}

// A request's partitions are jobs to the governor: each admitted with its
// own reservation, never more at once than the budget holds; and they
// overlap in the stages as single jobs do (a partition enters parse before
// the one before it has left the last stage). Every proof verifies.
func TestPartitionsAdmittedEachUnderTheBudget(t *testing.T) {
	const k = 8
	o := cpuOptions(filepath.Join(t.TempDir(), "out"))
	o.Shapes = map[string]stages.Shape{stages.Synthesize: {Workers: 3, Queue: 1}}
	var e *Engine
	for try := 0; ; try++ {
		c := loadChain(t)
		debug.FreeOSMemory() // what the engine holds at rest follows RSS: steady it
		var err error
		if e, err = New(context.Background(), o, c); err != nil {
			t.Fatal(err)
		}
		m, fp := e.gov.Stats(), c.Footprint()
		if fits := (m.Budget - m.Charged) / fp; o.Memory.Budget != "off" && fits >= 1 && fits <= 6 {
			break
		}
		if e.Close(); try == 10 {
			t.Fatalf("no budget leaves room for 2 jobs: %+v", m)
		}
		o.Memory.Budget = fmt.Sprint(m.Charged + 2*fp + fp/2)
	}
	defer e.Close()
	var parts []string
	for i := range k {
		parts = append(parts, fmt.Sprintf(`{"generate":{"seed":%d}}`, i+1))
	}
	var line stream.Result
	err := e.Stream(context.Background(), context.Background(),
		strings.NewReader(`{"id":"r1","partitions":[`+strings.Join(parts, ",")+`]}`+"\n"),
		func(r stream.Result) error { line = r; return nil })
	if err != nil {
		t.Fatal(err)
	}
	c := e.Circuits()[0]
	m := e.gov.Stats()
	if line.Error != "" || len(line.Partitions) != k {
		t.Fatalf("request line: %+v", line)
	}
	fits := (m.Budget - m.Charged) / c.Footprint()
	if m.Granted != k || m.PeakAdmitted < 1 || int64(m.PeakAdmitted) > fits || m.Charged+m.PeakReserved > m.Budget {
		t.Errorf("%d admissions for %d partitions, %d at once (%d fit), %s reserved at peak over %s resident: budget %s",
			m.Granted, k, m.PeakAdmitted, fits, mem.FormatBytes(m.PeakReserved), mem.FormatBytes(m.Charged), mem.FormatBytes(m.Budget))
	}
	if line.ReservedBytes != k*c.Footprint() {
		t.Errorf("the request reserved %d in all, want %d partitions × %d", line.ReservedBytes, k, c.Footprint())
	}
	overlap := false
	for i, p := range line.Partitions {
		acceptedFromFiles(t, c, p.Proof, p.Public)
		if i > 0 {
			prev := line.Partitions[i-1].Stages
			overlap = overlap || p.Stages[0].StartedAtMS < prev[len(prev)-1].EndedAtMS
		}
	}
	if !overlap {
		t.Error("no partition entered parse before the one before it left assemble: they ran one at a time")
	}
	if m.Waits == 0 {
		t.Errorf("no partition waited for memory: the budget did not bind, the test says nothing (%+v)", m)
	}
	t.Logf("budget %s, resident %s, footprint %s: %d fit, %d at once, %d waited", mem.FormatBytes(m.Budget),
		mem.FormatBytes(m.Charged), mem.FormatBytes(c.Footprint()), fits, m.PeakAdmitted, m.Waits)
}

// A request whose intake stops (a first Ctrl-C) after some partitions
// entered is still answered, once those in flight end: the partitions that
// never entered fail, saying so, and the request's line names them.
func TestRequestCutByIntakeStopIsAnswered(t *testing.T) {
	c := loadChain(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "w0.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	o := cpuOptions(filepath.Join(t.TempDir(), "out"))
	o.FixedShape = true
	o.Shapes = map[string]stages.Shape{stages.Parse: {Workers: 1, Queue: 0}}
	e, err := New(context.Background(), o, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	intake, stop := context.WithCancel(context.Background())
	defer stop()
	opened := make(chan *os.File, 1)
	go func() {
		// opens once partition 0's parse opens the FIFO to read it; never writes
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		opened <- w
	}()
	writer := make(chan *os.File, 1)
	go func() {
		w := <-opened
		stop() // partition 0 is in parse, reading: the rest wait to enter
		writer <- w
	}()
	var lines []stream.Result
	err = e.Stream(context.Background(), intake, strings.NewReader(fmt.Sprintf(
		`{"id":"r1","partitions":[{"witness":%q},{"generate":{"seed":2}},{"generate":{"seed":3}}]}`+"\n", fifo)),
		func(r stream.Result) error { lines = append(lines, r); return nil })
	if w := <-writer; w != nil {
		w.Close()
	}
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(lines) != 1 || lines[0].ID != "r1" || len(lines[0].Partitions) != 3 {
		t.Fatalf("lines: %+v", lines)
	}
	r := lines[0]
	// Partition 1 may have been in the pipeline's hands already (then it
	// proves: jobs in flight finish); partition 2 cannot have been.
	if !strings.Contains(r.Error, "job r1: partitions 0, ") || !strings.Contains(r.Error, "2 of 3 failed") {
		t.Errorf("request error %q", r.Error)
	}
	if !strings.Contains(r.Partitions[0].Error, "intake stopped (a signal)") {
		t.Errorf("partition 0: %q", r.Partitions[0].Error)
	}
	if p := r.Partitions[1]; p.Error == "" {
		acceptedFromFiles(t, c, p.Proof, p.Public)
	}
	if !strings.Contains(r.Partitions[2].Error, "job r1/2: intake stopped before this partition entered the pipeline") {
		t.Errorf("partition 2: %q", r.Partitions[2].Error)
	}
}
