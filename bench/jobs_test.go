package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zkpipe/zkpipe/stream"
)

func writeLines(t *testing.T, path string, lines ...string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ReadJobs counts a file's job lines (blank ones skipped, as prove skips
// them) and the circuit names they give, in order of first use.
func TestReadJobs(t *testing.T) {
	p := writeLines(t, filepath.Join(t.TempDir(), "jobs.jsonl"),
		`{"id":"a1","circuit":"a","generate":{"seed":1}}`,
		``,
		`{"id":"b1","circuit":"b","witness":"w/b1"}`,
		`{"id":"a2","circuit":"a","generate":{"seed":2}}`,
		`{"id":"n1","wtns":"w/n1.wtns"}`)
	j, err := ReadJobs(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	want := []CircuitUse{{"a", 2, 1, "a1"}, {"b", 1, 3, "b1"}, {"", 1, 5, "n1"}}
	if j.Count != 4 || fmt.Sprint(j.Names) != fmt.Sprint(want) {
		t.Errorf("%d jobs, names %v; want 4 and %v", j.Count, j.Names, want)
	}
	if got := j.Where("b1"); got != "--jobs "+p+" line 3" {
		t.Errorf("Where(b1) = %q", got)
	}
	if got := j.Where("a2.3"); got != "--jobs "+p+" line 4 (pass 3)" {
		t.Errorf("Where(a2.3) = %q", got)
	}
	if err := j.Resolve([]string{"a", "b"}); err == nil || !strings.Contains(err.Error(), `line 5: job "n1" names no circuit, and 2 are loaded (a, b)`) {
		t.Errorf("Resolve(a, b): %v", err)
	}
	if err := j.Resolve([]string{"a", "c"}); err == nil || !strings.Contains(err.Error(), `line 3: job "b1" names circuit "b", which is not loaded (loaded: a, c)`) {
		t.Errorf("Resolve(a, c): %v", err)
	}
	one := writeLines(t, filepath.Join(t.TempDir(), "one.jsonl"), `{"id":"x","generate":{"seed":1}}`)
	if j, err := ReadJobs(context.Background(), one); err != nil || j.Resolve([]string{"only"}) != nil {
		t.Errorf("a job that names no circuit, one loaded: %v", err)
	}
}

// A line that is not a job, and the first line past MaxProofs jobs, are
// errors naming the file and the line; so are stdin, a FIFO, a directory,
// a missing file and an empty one.
func TestReadJobsErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		writeLines(t, filepath.Join(dir, "bad.jsonl"), `{"id":"a","generate":{"seed":1}}`, `{"id":"b" oops`):                                      "bad.jsonl: line 2: malformed job",
		writeLines(t, filepath.Join(dir, "dup.jsonl"), `{"id":"a"}`, ``, `{"id":"a"}`):                                                            `dup.jsonl: line 3: duplicate id "a"`,
		writeLines(t, filepath.Join(dir, "id.jsonl"), `{"id":"../x"}`):                                                                            "id.jsonl: line 1: invalid id",
		writeLines(t, filepath.Join(dir, "field.jsonl"), `{"id":"a","witnes":"w"}`):                                                               `field.jsonl: line 1: malformed job: json: unknown field "witnes"`,
		writeLines(t, filepath.Join(dir, "blank.jsonl"), ``, ``):                                                                                  "blank.jsonl: no jobs in it",
		writeLines(t, filepath.Join(dir, "parts.jsonl"), `{"id":"a","generate":{"seed":1}}`, `{"id":"r","partitions":[{"generate":{"seed":1}}]}`): `parts.jsonl: line 2: job "r" is a request of partitions: bench --jobs times single jobs`,
		"-":                                "--jobs -: bench reads the jobs twice",
		dir:                                "not a regular file",
		filepath.Join(dir, "absent.jsonl"): "no such file",
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		// opened without a writer, a FIFO would block the open: give one
		w, err := os.OpenFile(fifo, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		cases[fifo] = "fifo: not a regular file"
	}
	var long []string
	for i := range MaxProofs + 2 {
		long = append(long, fmt.Sprintf(`{"id":"j%d","generate":{"seed":%d}}`, i, i))
	}
	long[7] = "" // a blank line: counted as a line, not as a job
	cases[writeLines(t, filepath.Join(dir, "long.jsonl"), long...)] = fmt.Sprintf("long.jsonl: line %d: more than %d jobs", MaxProofs+2, MaxProofs)
	for path, want := range cases {
		if _, err := ReadJobs(context.Background(), path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	// exactly MaxProofs jobs are taken
	if j, err := ReadJobs(context.Background(), writeLines(t, filepath.Join(dir, "max.jsonl"), long[:MaxProofs+1]...)); err != nil || j.Count != MaxProofs {
		t.Errorf("%d lines holding %d jobs: %v", MaxProofs+1, MaxProofs, err)
	}
}

// feedIDs reads the ids Feed gives for n jobs.
func feedIDs(t *testing.T, j *Jobs, n int) []string {
	t.Helper()
	f := j.Feed(context.Background(), n)
	defer f.Close()
	lines := make(chan stream.Line)
	errc := make(chan error, 1)
	go func() { errc <- stream.Read(context.Background(), f, lines) }()
	var ids []string
	for l := range lines {
		if l.Err != nil {
			t.Fatal(l.Err)
		}
		ids = append(ids, l.Request.ID+"/"+l.Request.Circuit)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return ids
}

// Feed gives the first n jobs, or the file over again with ids ID.2, ID.3…
// (each line as it was, the id aside); Plan refuses a repeat whose id is
// one of the file's own or too long, before anything is fed.
func TestFeedAndPlan(t *testing.T) {
	dir := t.TempDir()
	p := writeLines(t, filepath.Join(dir, "jobs.jsonl"), `{"id":"a","circuit":"x","generate":{"seed":1}}`, ``, `{"id":"b","circuit":"y","witness":"w"}`)
	j, err := ReadJobs(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{
		1: "[a/x]",
		2: "[a/x b/y]",
		5: "[a/x b/y a.2/x b.2/y a.3/x]",
	} {
		if err := j.Plan(n); err != nil {
			t.Errorf("Plan(%d): %v", n, err)
		}
		if got := fmt.Sprint(feedIDs(t, j, n)); got != want {
			t.Errorf("Feed(%d): %s, want %s", n, got, want)
		}
	}
	// a stream that stops reading early lets Feed's writer go
	f := j.Feed(context.Background(), 1000)
	if _, err := io.ReadFull(f, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	clash := writeLines(t, filepath.Join(dir, "clash.jsonl"), `{"id":"a"}`, `{"id":"a.2"}`)
	if j, err := ReadJobs(context.Background(), clash); err != nil {
		t.Fatal(err)
	} else if err := j.Plan(2); err != nil {
		t.Errorf("Plan(2) repeats nothing: %v", err)
	} else if err := j.Plan(3); err == nil || !strings.Contains(err.Error(), `line 1: job "a" cannot be repeated for -n 3: its id in pass 2, "a.2", is the id of line 2`) {
		t.Errorf("Plan(3): %v", err)
	}
	longID := strings.Repeat("i", 127)
	long := writeLines(t, filepath.Join(dir, "longid.jsonl"), `{"id":"`+longID+`"}`)
	if j, err := ReadJobs(context.Background(), long); err != nil {
		t.Fatal(err)
	} else if err := j.Plan(2); err == nil || !strings.Contains(err.Error(), "longer than 128 characters") {
		t.Errorf("Plan(2) of a 127-character id: %v", err)
	}
}
