// Package bench holds what zkpipe bench needs besides the stream itself: the
// user's witness files or job stream (--jobs), the comparison provers
// (gnark's groth16.Prove, snarkjs's groth16 prove), the independent checks
// of every proof, and the report of a run.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/stream"
)

// MaxWitnesses is how many distinct witnesses a bench reuses in turn: what
// it keeps on disk and in memory does not grow with -n.
const MaxWitnesses = 64

// MaxProofs bounds -n: far past a useful measurement (each proof's result
// line is kept for the stage table, about 2 KiB).
const MaxProofs = 100_000

// Collect expands the values of flag (files, directories of files, or
// globs) into the distinct files they name, in order: a file named twice,
// or through a symlink or a hard link, counts once. Only the first
// MaxWitnesses are kept; skipped says how many more there were.
func Collect(flag string, patterns []string) (files []string, skipped int, err error) {
	var seen []os.FileInfo
	add := func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return statError(flag, p, err)
		}
		if fi.IsDir() {
			return nil // a directory's subdirectories (an out/ beside the witnesses) are not witnesses
		}
		for _, s := range seen {
			if os.SameFile(s, fi) {
				return nil
			}
		}
		seen = append(seen, fi)
		if len(files) == MaxWitnesses {
			skipped++
			return nil
		}
		files = append(files, p)
		return nil
	}
	for _, pat := range patterns {
		var names []string
		switch fi, err := os.Stat(pat); {
		case err == nil && fi.IsDir():
			entries, err := os.ReadDir(pat)
			if err != nil {
				return nil, 0, fmt.Errorf("--%s %s: %w", flag, pat, err)
			}
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), ".") {
					names = append(names, filepath.Join(pat, e.Name()))
				}
			}
			if len(names) == 0 {
				return nil, 0, fmt.Errorf("--%s %s: an empty directory", flag, pat)
			}
		case err == nil:
			names = []string{pat}
		case strings.ContainsAny(pat, "*?["):
			if names, err = filepath.Glob(pat); err != nil {
				return nil, 0, fmt.Errorf("--%s %s: %w", flag, pat, err)
			}
			if len(names) == 0 {
				return nil, 0, fmt.Errorf("--%s %s: no file matches", flag, pat)
			}
		default:
			return nil, 0, statError(flag, pat, err)
		}
		sort.Strings(names)
		before := len(seen)
		for _, n := range names {
			if err := add(n); err != nil {
				return nil, 0, err
			}
		}
		if len(seen) == before && !named(seen, names) {
			return nil, 0, fmt.Errorf("--%s %s: no files, only directories", flag, pat)
		}
	}
	return files, skipped, nil
}

// statError says why path, given to --flag, cannot be read, naming it
// once (a dangling symlink in a directory too).
func statError(flag, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--%s %s: no such file", flag, path)
	}
	return fmt.Errorf("--%s %s: %w", flag, path, err)
}

// named reports whether one of names is a file already seen: a pattern
// that adds nothing new, but names files, is fine.
func named(seen []os.FileInfo, names []string) bool {
	for _, n := range names {
		fi, err := os.Stat(n)
		if err != nil || fi.IsDir() {
			continue
		}
		for _, s := range seen {
			if os.SameFile(s, fi) {
				return true
			}
		}
	}
	return false
}

// maxInputBytes bounds one circom input file: inputs are a circuit's
// signals in JSON, far smaller than this.
const maxInputBytes = 64 << 20

// Job is one witness of a bench: its file and the request that proves it.
type Job struct {
	File    string
	Request stream.Request
}

// GnarkJobs are gnark witness files as jobs.
func GnarkJobs(files []string) []Job {
	jobs := make([]Job, len(files))
	for i, f := range files {
		jobs[i] = Job{File: f, Request: stream.Request{Witness: f}}
	}
	return jobs
}

// CircomJobs are .wtns files, then circom input files (JSON objects read
// now, bounded, so a bad one is named before anything is timed), as jobs.
func CircomJobs(ctx context.Context, wtns, inputs []string) ([]Job, error) {
	var jobs []Job
	for _, f := range wtns {
		jobs = append(jobs, Job{File: f, Request: stream.Request{Wtns: f}})
	}
	for _, f := range inputs {
		b, err := boundedread.ReadAll(ctx, f, maxInputBytes, boundedread.Options{})
		if err != nil {
			return nil, fmt.Errorf("--input %s: %w", f, err)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("--input %s: not a JSON object of the circuit's inputs: %w", f, err)
		}
		jobs = append(jobs, Job{File: f, Request: stream.Request{Input: json.RawMessage(b)}})
	}
	return jobs[:min(len(jobs), MaxWitnesses)], nil
}

// Lines are n job lines cycling over jobs, with ids b0 … b(n-1); fileOf
// maps an id back to its witness file for error messages.
func Lines(n int, jobs []Job) (lines string, fileOf map[string]string, err error) {
	var sb strings.Builder
	fileOf = make(map[string]string, n)
	for i := range n {
		j := jobs[i%len(jobs)]
		j.Request.ID = fmt.Sprintf("b%d", i)
		b, err := json.Marshal(j.Request)
		if err != nil {
			return "", nil, err
		}
		sb.Write(b)
		sb.WriteByte('\n')
		fileOf[j.Request.ID] = j.File
	}
	return sb.String(), fileOf, nil
}
