package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/zkpipe/zkpipe/stream"
)

// Jobs is a user's job stream (the JSON Lines zkpipe prove --jobs reads),
// read once and checked whole before anything is loaded or timed, then fed
// to the engine as many times over as -n asks (Feed).
//
// Only what the checks, the error messages and the report need is kept
// (each job's id and line, and the circuit names the jobs give), never the
// lines themselves: a line may hold 16 MiB of inline circom inputs
// (stream.MaxLineBytes), and the file up to MaxProofs of them.
type Jobs struct {
	Path  string
	Count int // job lines; blank lines are skipped, as prove skips them

	ids   []string       // in file order
	line  map[string]int // id → its line number in the file
	Names []CircuitUse   // the circuit names the jobs give, in order of first use
}

// CircuitUse is a circuit name as jobs give it ("" for a job that names
// none) and the jobs that give it.
type CircuitUse struct {
	Name      string
	Jobs      int
	FirstLine int    // the first job that gives it, for error messages
	FirstID   string //
}

// ReadJobs reads path, a regular file of job lines, checked as prove's
// stream checks them (JSON, known fields, a valid id, no id twice). The
// first line that is not a job, or the first past MaxProofs jobs, is an
// error naming the file and the line; nothing past it is read.
func ReadJobs(ctx context.Context, path string) (*Jobs, error) {
	if path == "-" {
		return nil, fmt.Errorf("--jobs -: bench reads the jobs twice (checked whole before timing, then proved), so it needs a file, not stdin")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--jobs %s: %w", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("--jobs %s: %w", path, err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("--jobs %s: not a regular file (bench reads the jobs twice: checked whole before timing, then proved)", path)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := make(chan stream.Line, 64)
	readErr := make(chan error, 1)
	go func() { readErr <- stream.ReadWith(ctx, f, lines, stream.ReadOptions{}) }()
	// drain stops the reader early and waits for it to close lines.
	drain := func() {
		cancel()
		for range lines {
		}
		<-readErr
	}

	j := &Jobs{Path: path, line: make(map[string]int)}
	use := make(map[string]int) // name → index in j.Names
	for l := range lines {
		if l.Err != nil {
			drain()
			return nil, fmt.Errorf("--jobs %s: %w", path, l.Err)
		}
		if l.Request.IsPartitioned() {
			drain()
			return nil, fmt.Errorf("--jobs %s: line %d: job %q is a request of partitions: bench --jobs times single jobs (bench/partitions.sh times a request against its partitions as single jobs)", path, l.Number, l.Request.ID)
		}
		if j.Count == MaxProofs {
			drain()
			return nil, fmt.Errorf("--jobs %s: line %d: more than %d jobs, bench's bound (that of -n): give a shorter file", path, l.Number, MaxProofs)
		}
		j.Count++
		id := l.Request.ID
		j.ids = append(j.ids, id)
		j.line[id] = l.Number
		name := l.Request.Circuit
		if i, ok := use[name]; ok {
			j.Names[i].Jobs++
		} else {
			use[name] = len(j.Names)
			j.Names = append(j.Names, CircuitUse{Name: name, Jobs: 1, FirstLine: l.Number, FirstID: id})
		}
	}
	if err := <-readErr; err != nil {
		return nil, fmt.Errorf("--jobs %s: %w", path, err)
	}
	if j.Count == 0 {
		return nil, fmt.Errorf("--jobs %s: no jobs in it", path)
	}
	return j, nil
}

// Resolve checks that every job's circuit is one of loaded, by the rule
// the engine resolves it by (stages.Engine.Circuit): its name, or none
// when exactly one circuit is loaded. The first job that names another is
// an error naming its line: found now, before the keys are made resident.
func (j *Jobs) Resolve(loaded []string) error {
	known := make(map[string]bool, len(loaded))
	for _, n := range loaded {
		known[n] = true
	}
	list := strings.Join(loaded, ", ")
	for _, u := range j.Names {
		switch {
		case u.Name == "" && len(loaded) != 1:
			return fmt.Errorf("--jobs %s: line %d: job %q names no circuit, and %d are loaded (%s): give its \"circuit\"", j.Path, u.FirstLine, u.FirstID, len(loaded), list)
		case u.Name != "" && !known[u.Name]:
			return fmt.Errorf("--jobs %s: line %d: job %q names circuit %q, which is not loaded (loaded: %s): give its --circuit DIR (or --zkey FILE)", j.Path, u.FirstLine, u.FirstID, u.Name, list)
		}
	}
	return nil
}

// Plan checks that n jobs can be fed from the file: the first n lines when
// n ≤ Count, else the file over again, pass k (from 2) giving each job the
// id "ID.k", which must be a valid id and none of the file's own.
func (j *Jobs) Plan(n int) error {
	for i := j.Count; i < n; i++ {
		id := j.ids[i%j.Count]
		cid := CycledID(id, i/j.Count+1)
		if !stream.ValidID(cid) {
			return fmt.Errorf("--jobs %s: line %d: job %q cannot be repeated for -n %d: its id in pass %d, %q, is longer than 128 characters", j.Path, j.line[id], id, n, i/j.Count+1, cid)
		}
		if l, ok := j.line[cid]; ok {
			return fmt.Errorf("--jobs %s: line %d: job %q cannot be repeated for -n %d: its id in pass %d, %q, is the id of line %d; give -n %d or less, or rename that job", j.Path, j.line[id], id, n, i/j.Count+1, cid, l, j.Count)
		}
	}
	return nil
}

// CycledID is the id of job id in pass k of a file fed more than once:
// id itself in pass 1, "id.k" after. The suffix after the last dot is a
// number, so two jobs' repeats never share an id.
func CycledID(id string, pass int) string {
	if pass <= 1 {
		return id
	}
	return id + "." + strconv.Itoa(pass)
}

// Where says where the job of id (as fed: CycledID) comes from, for error
// messages: "--jobs FILE line 3" or "--jobs FILE line 3 (pass 2)".
func (j *Jobs) Where(id string) string {
	if l, ok := j.line[id]; ok {
		return fmt.Sprintf("--jobs %s line %d", j.Path, l)
	}
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		if k, err := strconv.Atoi(id[i+1:]); err == nil {
			if l, ok := j.line[id[:i]]; ok {
				return fmt.Sprintf("--jobs %s line %d (pass %d)", j.Path, l, k)
			}
		}
	}
	return fmt.Sprintf("--jobs %s", j.Path)
}

// Feed is n job lines read from the file as the engine takes them: its
// lines in turn, read again for each pass, each with its CycledID. A line
// that no longer reads as a job (the file changed since ReadJobs) ends it
// with an error. Close it once the stream is done.
func (j *Jobs) Feed(ctx context.Context, n int) io.ReadCloser {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	fd := &feed{PipeReader: pr, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(fd.done)
		pw.CloseWithError(j.feed(ctx, pw, n))
	}()
	return fd
}

func (j *Jobs) feed(ctx context.Context, w io.Writer, n int) error {
	written := 0
	for pass := 1; written < n; pass++ {
		sent, err := j.feedPass(ctx, w, pass, n-written)
		if err != nil {
			return err
		}
		if sent == 0 {
			return fmt.Errorf("--jobs %s: no jobs in it any more (it changed while benching)", j.Path)
		}
		written += sent
	}
	return nil
}

// feedPass writes up to max lines of pass to w and says how many.
func (j *Jobs) feedPass(ctx context.Context, w io.Writer, pass, max int) (int, error) {
	f, err := os.Open(j.Path)
	if err != nil {
		return 0, fmt.Errorf("--jobs %s: %w", j.Path, err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := make(chan stream.Line, 16)
	readErr := make(chan error, 1)
	go func() { readErr <- stream.ReadWith(ctx, f, lines, stream.ReadOptions{}) }()
	sent, err := j.writePass(w, lines, pass, max)
	cancel() // stops the reader when the pass ended early
	for range lines {
	}
	if rerr := <-readErr; err == nil && sent < max && rerr != nil {
		err = fmt.Errorf("--jobs %s: %w", j.Path, rerr) // the file ended early because it could not be read
	}
	return sent, err
}

// writePass writes up to max of lines to w, with the ids of pass.
func (j *Jobs) writePass(w io.Writer, lines <-chan stream.Line, pass, max int) (int, error) {
	sent := 0
	for l := range lines {
		if l.Err != nil {
			return sent, fmt.Errorf("--jobs %s: it changed while benching: %w", j.Path, l.Err)
		}
		l.Request.ID = CycledID(l.Request.ID, pass)
		b, err := json.Marshal(l.Request)
		if err != nil {
			return sent, err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return sent, err // the stream stopped reading: Close
		}
		if sent++; sent == max {
			return sent, nil
		}
	}
	return sent, nil
}

// feed is Feed's reader; Close stops its writer and waits for it.
type feed struct {
	*io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

func (f *feed) Close() error {
	f.cancel()
	f.PipeReader.Close()
	<-f.done
	return nil
}
