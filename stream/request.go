package stream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/zkpipe/zkpipe/blob"
)

// Request is one job line, e.g.
//
//	{"id":"j1","circuit":"mulchain","witness":"jobs/j1.witness"}
//	{"id":"j2","generate":{"seed":7}}
//	{"id":"j3","wtns":"w/j3.wtns"}            (circom, with --zkey)
//	{"id":"j4","input":{"a":"3","b":"11"}}    (circom, with --wasm)
//	{"id":"r1","circuit":"bits","partitions":[{"witness":"w0"},{"generate":{"seed":3}}]}
//
// A request of partitions (Partitions set) is k proofs of one circuit,
// each of its own witness, answered by one result line; it has no witness
// field of its own (see partition.go).
type Request struct {
	ID       string          `json:"id"`
	Circuit  string          `json:"circuit,omitempty"`  // a loaded circuit's name; optional with one loaded
	Witness  string          `json:"witness,omitempty"`  // gnark binary full witness
	Generate *Generate       `json:"generate,omitempty"` // built-in circuits: make the witness
	Wtns     string          `json:"wtns,omitempty"`     // circom: snarkjs .wtns witness
	Input    json.RawMessage `json:"input,omitempty"`    // circom: circuit inputs, for --wasm
	// Partitions, when set (even to []), make this a request of several
	// proofs, one per entry; CheckPartitions says what a valid one is.
	Partitions []Partition `json:"partitions,omitempty"`
}

// Generate asks a built-in circuit for a satisfying witness drawn from Seed.
type Generate struct {
	Seed int64 `json:"seed"`
}

// Line is a request as read, or why it could not be read.
type Line struct {
	Number  int // 1-based line number in the input
	Request Request
	Err     error // malformed line, missing or bad id, duplicate id
	// IDChecked: the reader has checked the id (ValidID) and set Err if it
	// was bad, so the engine does not check it again. A Line made by hand
	// leaves it false.
	IDChecked bool

	// Witness, when set, is the file Request.Witness or Request.Wtns names,
	// as a value (bytes in hand, or a fleet worker's fetch from its store
	// as parse opens it): the source reads it instead of a path, and the
	// name only says which kind of witness it is. Released once read.
	Witness *blob.Input
	// Out, when set, takes the job's outputs instead of the engine's
	// output (a fleet worker's, for its object store).
	Out blob.Writer
}

// validID keeps ids usable as file names under --out.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id can name a job's files: 1-128 of
// [A-Za-z0-9._-], not starting with . _ or -.
func ValidID(id string) bool { return validID.MatchString(id) }

// LineID names the job of input line n whose own id is missing or
// unusable: "#line-N". It starts with '#', which no valid id can hold, so
// it never collides with a real job's id ("line-3" is a valid one).
func LineID(n int) string { return fmt.Sprintf("#line-%d", n) }

// ErrDuplicateID marks a second job with an id already seen in this stream.
var ErrDuplicateID = errors.New("duplicate id")

// MaxLineBytes is the longest job line Read accepts: inputs may be inline.
const MaxLineBytes = 16 << 20

// Read sends one Line per non-blank input line on out, as lines arrive (a
// pipe may stay open for hours), until r ends or ctx is cancelled; then it
// closes out. A line that is not a valid request still yields a Line, with
// Err set and an id of LineID(N) when its own is unusable, so that it gets a
// result like any other job; so does a line over MaxLineBytes, whose rest is
// skipped unread into memory. Read returns r's error, if any, other than EOF.
func Read(ctx context.Context, r io.Reader, out chan<- Line) error {
	return ReadWith(ctx, r, out, ReadOptions{})
}

// ReadOptions change what Read does when ctx ends before r does.
type ReadOptions struct {
	// CountRest: read r to its end (without parsing, a line over
	// MaxLineBytes held no more than Read holds one) to count the job lines
	// not sent. Only for an r whose end comes without waiting (a regular
	// file): on a pipe, counting would wait for its writer.
	CountRest bool
}

// Stopped is ReadWith's error when ctx ended before r did and a line was
// left unsent: Unread counts the job lines not sent, the rest of r
// included when Counted (ReadOptions.CountRest); else at least Unread.
type Stopped struct {
	Unread  int
	Counted bool
	Err     error // ctx's
}

func (s *Stopped) Error() string {
	if s.Counted {
		return fmt.Sprintf("stopped with %d job line(s) not read", s.Unread)
	}
	return "stopped before the end of the jobs: the lines after the last one read were not read (not counted)"
}

func (s *Stopped) Unwrap() error { return s.Err }

// ReadWith is Read with o; when ctx ends with a line unsent it returns a
// *Stopped.
func ReadWith(ctx context.Context, r io.Reader, out chan<- Line, o ReadOptions) error {
	defer close(out)
	return ReadEach(ctx, r, func(l Line) bool {
		select {
		case out <- l:
			return true
		case <-ctx.Done():
			return false
		}
	}, o)
}

// ReadEach is ReadWith handing each line to take, in the reading goroutine,
// instead of sending it: a consumer that turns lines into work needs no
// goroutine of its own between the reader and itself. When take returns
// false (it took no more), ReadEach stops as ReadWith does when ctx ends,
// with a *Stopped that counts that line among the unread.
func ReadEach(ctx context.Context, r io.Reader, take func(Line) bool, o ReadOptions) error {
	seen := make(map[string]bool)
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		text, tooLong, err := readLine(br, MaxLineBytes)
		if err != nil && err != io.EOF {
			return err
		}
		if len(text) == 0 && !tooLong && err == io.EOF {
			return nil
		}
		n++
		text = bytes.TrimSpace(text)
		if len(text) == 0 && !tooLong {
			if err == io.EOF {
				return nil
			}
			continue
		}
		l := Line{Number: n, IDChecked: true}
		if tooLong {
			l.Err = fmt.Errorf("line %d: job line longer than %d MiB", n, MaxLineBytes>>20)
		} else {
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l.Request); err != nil {
				l.Err = fmt.Errorf("line %d: malformed job: %v", n, err)
			} else if dec.More() {
				l.Err = fmt.Errorf("line %d: malformed job: trailing data after the JSON value", n)
			} else if !validID.MatchString(l.Request.ID) {
				l.Err = fmt.Errorf("line %d: invalid id %q: want 1-128 of [A-Za-z0-9._-], not starting with . _ or -", n, l.Request.ID)
			} else if seen[l.Request.ID] {
				l.Err = fmt.Errorf("line %d: %w %q", n, ErrDuplicateID, l.Request.ID)
			}
		}
		if l.Err != nil && !validID.MatchString(l.Request.ID) {
			l.Request.ID = LineID(n)
		}
		if l.Err == nil {
			seen[l.Request.ID] = true
		}
		if !take(l) {
			st := &Stopped{Unread: 1, Err: ctx.Err()}
			if o.CountRest && err != io.EOF {
				rest, err := countLines(br)
				if err != nil {
					return fmt.Errorf("%w (counting the rest: %w)", st, err)
				}
				st.Unread, st.Counted = 1+rest, true
			} else if o.CountRest {
				st.Counted = true
			}
			return st
		}
		if err == io.EOF {
			return nil
		}
	}
}

// countLines counts the non-blank lines left in br, as Read would have
// yielded them, holding at most one line under MaxLineBytes.
func countLines(br *bufio.Reader) (int, error) {
	n := 0
	for {
		text, tooLong, err := readLine(br, MaxLineBytes)
		if err != nil && err != io.EOF {
			return n, err
		}
		if tooLong || len(bytes.TrimSpace(text)) > 0 {
			n++
		}
		if err == io.EOF {
			return n, nil
		}
	}
}

// readLine reads one line from br, without its newline. A line longer than
// limit is read to its end but not kept: tooLong reports it, and text is
// nil. err is io.EOF for a last line without a newline (text then holds
// it) and at the end of input (text empty).
func readLine(br *bufio.Reader, limit int) (text []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			size := len(text) + len(frag)
			if err == nil {
				size-- // the newline
			}
			if size > limit {
				tooLong, text = true, nil
			} else {
				text = append(text, frag...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return text, tooLong, err
		}
		if !tooLong {
			text = text[:len(text)-1] // the newline
		}
		return text, tooLong, nil
	}
}
