package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
)

// A circuit in CircuitBucket is its files under NAME/: a gnark directory's
// circuit.{r1cs,pk,vk} and, if zkpipe setup made it, circuit.json; or a
// circom zkey as circuit.zkey and its witness calculator as circuit.wasm.
const (
	zkeyObject = "circuit.zkey"
	wasmObject = "circuit.wasm"
)

// circuitFiles are the names a circuit's objects may have under NAME/.
var circuitFiles = map[string]bool{
	gnarksrc.R1CSFile: true, gnarksrc.PKFile: true, gnarksrc.VKFile: true, gnarksrc.MetaFile: true, gnarksrc.HashFile: true,
	gnarksrc.PKDigestFile: true, zkeyObject: true, wasmObject: true,
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PushDir stores the gnark circuit directory dir as the circuit named after
// it. Workers that already hold a circuit of that name keep proving with
// the keys they loaded until they restart.
func PushDir(ctx context.Context, q *Queue, dir string) (string, error) {
	name := filepath.Base(filepath.Clean(dir))
	if err := checkName(name); err != nil {
		return "", err
	}
	files := map[string]string{}
	for _, f := range []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile, gnarksrc.MetaFile, gnarksrc.HashFile, gnarksrc.PKDigestFile} {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err != nil {
			if (f == gnarksrc.MetaFile || f == gnarksrc.HashFile || f == gnarksrc.PKDigestFile) && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return "", fmt.Errorf("circuit %s: %w", name, err)
		}
		files[f] = p
	}
	// Check the directory loads before anyone's workers try to: every
	// point of the key too, read without keeping it.
	c, err := gnarksrc.LoadDir(dir)
	if err != nil {
		return "", err
	}
	if err := c.Key.CheckDeferred(); err != nil {
		return "", fmt.Errorf("circuit %s: %w", name, err)
	}
	return name, push(ctx, q, name, files, describe(c, c.Constraints))
}

// PushCircom stores a circom circuit, named after its zkey less .zkey, with
// its witness calculator if wasm is not empty.
func PushCircom(ctx context.Context, q *Queue, zkey, wasm string) (string, error) {
	name := strings.TrimSuffix(filepath.Base(zkey), filepath.Ext(zkey))
	if err := checkName(name); err != nil {
		return "", err
	}
	files := map[string]string{zkeyObject: zkey}
	if wasm != "" {
		files[wasmObject] = wasm
	}
	if err := checkRegular(name, files); err != nil {
		return "", err
	}
	// Check the zkey loads before anyone's workers try to: its sections,
	// and every point of its key, read without keeping it.
	c, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: zkey})
	if err != nil {
		return "", err
	}
	if err := c.Key.CheckDeferred(); err != nil {
		return "", fmt.Errorf("circuit %s: %w", name, err)
	}
	// circom's count: a zkey's rows are its constraints' and one a
	// public input, the constant one's included (c.NbPublic)
	return name, push(ctx, q, name, files, describe(c, c.Constraints-c.NbPublic))
}

// checkRegular opens each of files, refusing anything but a regular file.
func checkRegular(name string, files map[string]string) error {
	for obj, path := range files {
		f, _, err := openRegular(path, "circuit "+name+": "+obj)
		if err != nil {
			return err
		}
		f.Close()
	}
	return nil
}

func checkName(name string) error {
	if !validName(name) {
		return fmt.Errorf("circuit name %q: want 1-128 of [A-Za-z0-9._-], not starting with . _ or -", name)
	}
	return nil
}

// pushMarker is an object NAME/circuit.push present while a push of NAME
// is under way: readers treat the circuit as not there yet (retryable), so
// a job never meets half a push, or an old key beside a new one. A push
// cut short leaves it, and the circuit stays unusable until pushed again.
// It holds a pushNote: who pushes, since when, and which files, so that a
// reader can name the files a push cut short did not store.
const pushMarker = "circuit.push"

// pushNote is the marker's contents.
type pushNote struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
	Started time.Time `json:"started"`
	Files   []string  `json:"files"` // the circuit's objects the push stores
}

// maxPushNote bounds the marker a reader reads: anyone with access to the
// store can put one.
const maxPushNote = 4 << 10

// push stores files as circuit name's objects, each with the metadata
// described (what CircuitList shows of it).
func push(ctx context.Context, q *Queue, name string, files map[string]string, described map[string]string) (err error) {
	// Every file is checked before the store is touched.
	if err := checkRegular(name, files); err != nil {
		return err
	}
	marker := name + "/" + pushMarker
	host, _ := os.Hostname()
	note, _ := json.Marshal(pushNote{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Second), Files: sortedFiles(files)})
	// What this push put, removed again if it fails: a push the store
	// cannot take (full) must not leave half a circuit filling it.
	var put []string
	defer func() {
		if err == nil {
			return
		}
		err = q.Explain(err) // "store disk full" when it is
		// not the caller's ctx: it may be what ended the push
		rctx, cancel := context.WithTimeout(context.Background(), handBackTimeout)
		defer cancel()
		var left []string
		for _, obj := range append(put, pushMarker) {
			if derr := q.Circuits.Delete(rctx, name+"/"+obj); derr != nil && !errors.Is(derr, jetstream.ErrObjectNotFound) {
				left = append(left, obj)
			}
		}
		if len(left) > 0 {
			err = fmt.Errorf("%w; and %s of it could not be removed from the store: push it again", err, strings.Join(left, ", "))
		} else if len(put) > 0 {
			err = fmt.Errorf("%w; what this push stored (%s) was removed", err, strings.Join(put, ", "))
		}
	}()
	if _, err := q.Circuits.PutBytes(ctx, marker, note); err != nil {
		return fmt.Errorf("circuit %s: %w", name, err)
	}
	// Remove what an earlier push of another kind left, so a name is one kind.
	old, err := circuitObjects(ctx, q, name)
	if err != nil {
		return fmt.Errorf("circuit %s: %w", name, err)
	}
	for obj := range old {
		if _, keep := files[obj]; !keep && obj != pushMarker {
			if err := q.Circuits.Delete(ctx, name+"/"+obj); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return fmt.Errorf("circuit %s: %w", name, err)
			}
		}
	}
	for _, obj := range sortedFiles(files) {
		// a regular file only, and no more than fstat said: a FIFO would
		// hang the push, /dev/zero fill the store
		f, size, err := openRegular(files[obj], "circuit "+name+": "+obj)
		if err != nil {
			return err
		}
		put = append(put, obj) // a failed put may have stored its meta
		_, err = q.Circuits.Put(ctx, jetstream.ObjectMeta{Name: name + "/" + obj, Metadata: described}, io.LimitReader(f, size))
		f.Close()
		if err != nil {
			return fmt.Errorf("store %s of circuit %s: %w", obj, name, err)
		}
	}
	// Whole: the circuit appears.
	if err := q.Circuits.Delete(ctx, marker); err != nil {
		return fmt.Errorf("circuit %s: %w", name, err)
	}
	return nil
}

func sortedFiles(files map[string]string) []string {
	out := make([]string, 0, len(files))
	for f := range files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// ErrCircuitIncomplete is a circuit in the store that is not whole: a push
// of it under way (or cut short), or files missing. A job of it waits (it
// goes back to the queue) rather than failing for good.
var ErrCircuitIncomplete = errors.New("incomplete in the store (a push under way, or cut short: push it again)")

// complete says what circuit objs lacks to be whole, or "".
func complete(objs map[string]*jetstream.ObjectInfo) string {
	if _, ok := objs[pushMarker]; ok {
		return "a push of it is under way"
	}
	return missing(objs, nil)
}

// missing names the files objs lacks of those want (nil: a gnark
// circuit's r1cs, pk and vk, unless it is a circom zkey), or "".
func missing(objs map[string]*jetstream.ObjectInfo, want []string) string {
	if want == nil {
		want = []string{gnarksrc.R1CSFile, gnarksrc.PKFile, gnarksrc.VKFile}
		if _, ok := objs[zkeyObject]; ok {
			want = nil
		}
	}
	var lack []string
	for _, f := range want {
		if _, ok := objs[f]; !ok {
			lack = append(lack, f)
		}
	}
	if len(lack) == 0 {
		return ""
	}
	return "it has no " + strings.Join(lack, ", ")
}

// incomplete is complete saying more of a push under way (or cut short):
// who began it, when, and which of its files the store does not hold yet,
// as its marker says.
func incomplete(ctx context.Context, q *Queue, objs map[string]*jetstream.ObjectInfo) string {
	info, ok := objs[pushMarker]
	if !ok {
		return complete(objs)
	}
	why := "a push of it is under way, or was cut short"
	if info.Size > maxPushNote {
		return why
	}
	data, err := q.Circuits.GetBytes(ctx, info.Name)
	var note pushNote
	if err != nil || json.Unmarshal(data, &note) != nil || len(note.Files) == 0 {
		return why // a marker of an older zkpipe: plain text
	}
	why = fmt.Sprintf("a push of it by process %d", note.PID)
	if note.Host != "" {
		why += " on " + note.Host
	}
	why += " began " + note.Started.Format(time.RFC3339) + " and has not finished"
	if lack := missing(objs, note.Files); lack != "" {
		why += ": " + lack + " yet"
	}
	return why
}

// Circuits lists the whole circuits in the store. Objects whose names are
// not NAME/FILE with a valid NAME and one of a circuit's files (such as
// ../evil/circuit.pk, put there by any user of the queue) are skipped, as
// are circuits being pushed.
func Circuits(ctx context.Context, q *Queue) ([]string, error) {
	whole, err := wholeCircuits(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []string
	for n := range whole {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// wholeCircuits maps each whole circuit in the store (as Circuits says) to
// its objects, by file.
func wholeCircuits(ctx context.Context, q *Queue) (map[string]map[string]*jetstream.ObjectInfo, error) {
	infos, err := listObjects(ctx, q.Circuits)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	byName := map[string]map[string]*jetstream.ObjectInfo{}
	for _, in := range infos {
		n, f, ok := strings.Cut(in.Name, "/")
		if !ok || !validName(n) || !(circuitFiles[f] || f == pushMarker) {
			continue
		}
		if byName[n] == nil {
			byName[n] = map[string]*jetstream.ObjectInfo{}
		}
		byName[n][f] = in
	}
	for n, objs := range byName {
		if complete(objs) != "" {
			delete(byName, n)
		}
	}
	return byName, nil
}

// circuitObjects maps the files of circuit name to their object infos.
func circuitObjects(ctx context.Context, q *Queue, name string) (map[string]*jetstream.ObjectInfo, error) {
	infos, err := listObjects(ctx, q.Circuits)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]*jetstream.ObjectInfo{}
	for _, in := range infos {
		if f, ok := strings.CutPrefix(in.Name, name+"/"); ok {
			out[f] = in
		}
	}
	return out, nil
}

// listObjects lists store's objects, each try bounded (a list whose
// stream lost its leader meanwhile would wait as long as ctx lasts).
func listObjects(ctx context.Context, store jetstream.ObjectStore) ([]*jetstream.ObjectInfo, error) {
	var infos []*jetstream.ObjectInfo
	err := retryEach(ctx, failoverWait, 15*time.Second, func(ctx context.Context) (err error) {
		infos, err = store.List(ctx)
		return err
	})
	return infos, err
}

// ErrNoCircuit is a job's circuit missing from the store.
var ErrNoCircuit = errors.New("no such circuit in the store (zkpipe circuit push)")

// FetchCircuit brings circuit name from the store into cache/NAME (files whose
// digest already matches are kept) and loads it; a circom witness
// calculator under wasm's bounds, if given (circomsrc's defaults if not). A
// circuit not whole in the store (being pushed, or pushed again while it
// was fetched) is an error wrapping ErrCircuitIncomplete.
func FetchCircuit(ctx context.Context, q *Queue, name, cache string, o gnarksrc.Options, wasm ...circomsrc.Limits) (*stages.Circuit, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	objs, err := circuitObjects(ctx, q, name)
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("circuit %q: %w", name, ErrNoCircuit)
	}
	dir := filepath.Join(cache, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	local := func(obj string) string {
		switch obj {
		case zkeyObject:
			return filepath.Join(dir, name+".zkey") // circomsrc names a circuit after its zkey
		case wasmObject:
			return filepath.Join(dir, name+".wasm")
		}
		return filepath.Join(dir, obj)
	}
	for obj := range objs {
		// Only a circuit's own files: an object NAME/../../x, put there by
		// any user of the queue, would be written outside the cache.
		if !circuitFiles[obj] && obj != pushMarker {
			return nil, fmt.Errorf("circuit %s: the store holds %q, which is not a circuit's file (%s); push the circuit again", name, name+"/"+obj, strings.Join(sortedKeys(circuitFiles), ", "))
		}
	}
	if why := incomplete(ctx, q, objs); why != "" {
		return nil, fmt.Errorf("circuit %s: %w: %s", name, ErrCircuitIncomplete, why)
	}
	for obj, info := range objs {
		if limit := circuitFileLimit(obj); info.Size > limit {
			return nil, fmt.Errorf("circuit %s: the store's %s is %d bytes, more than a circuit's %s can be (%d): not fetched",
				name, obj, info.Size, obj, limit)
		}
		if err := retry(ctx, failoverWait, func(ctx context.Context) error { return fetchObject(ctx, q, info, local(obj)) }); err != nil {
			if errors.Is(err, jetstream.ErrObjectNotFound) || errors.Is(err, errDigestChanged) {
				return nil, fmt.Errorf("circuit %s: %w: %s changed while it was fetched", name, ErrCircuitIncomplete, obj)
			}
			return nil, fmt.Errorf("circuit %s: %w", name, err)
		}
	}
	// The files fetched are of one push only if no push began meanwhile.
	again, err := circuitObjects(ctx, q, name)
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	if !sameObjects(objs, again) {
		return nil, fmt.Errorf("circuit %s: %w: pushed again while it was fetched", name, ErrCircuitIncomplete)
	}
	if _, ok := objs[zkeyObject]; ok {
		f := circomsrc.Files{Zkey: local(zkeyObject), ReadTimeout: o.ReadTimeout}
		if _, ok := objs[wasmObject]; ok {
			f.Wasm = local(wasmObject)
		}
		if len(wasm) > 0 {
			f.WasmLimits = wasm[0]
		}
		return circomsrc.LoadFiles(ctx, f)
	}
	return gnarksrc.LoadDirWith(dir, o)
}

// sameObjects reports whether a and b name the same objects with the same
// contents.
func sameObjects(a, b map[string]*jetstream.ObjectInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		if y, ok := b[k]; !ok || x.Digest != y.Digest || x.NUID != y.NUID {
			return false
		}
	}
	return true
}

// circuitFileLimit is the most a circuit's file can take, as the loaders
// bound their reads: a verifying key 64 MiB, circuit.json 64 KiB, the wasm
// calculator 1 GiB; keys and constraint systems this machine's memory (one
// larger could not be loaded). A planted object larger than that is refused
// before a byte of it reaches the worker's disk.
func circuitFileLimit(obj string) uint64 {
	switch obj {
	case gnarksrc.VKFile:
		return 64 << 20
	case gnarksrc.MetaFile, gnarksrc.HashFile, gnarksrc.PKDigestFile:
		return 64 << 10
	case wasmObject:
		return 1 << 30
	}
	return uint64(max(mem.ReadMachine().Total, 1<<30))
}

// fetchObject writes the object to path, whole or not at all, unless path
// already holds it; no more than the object's declared size is written.
func fetchObject(ctx context.Context, q *Queue, info *jetstream.ObjectInfo, path string) error {
	if d, err := fileDigest(path); err == nil && d == info.Digest {
		return nil
	}
	r, err := q.getObject(ctx, CircuitBucket, info.Name)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", info.Name, err)
	}
	defer r.Close()
	if got, err := r.Info(); err == nil && got.Digest != info.Digest {
		return fmt.Errorf("fetch %s: %w", info.Name, errDigestChanged)
	}
	return writeAtomic(path, io.LimitReader(r, int64(info.Size)))
}

// errDigestChanged is an object replaced between its listing and its get.
var errDigestChanged = errors.New("replaced since it was listed")

// fileDigest is the object store's digest of the file at path.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return jetstream.GetObjectDigestValue(h), nil
}

// writeAtomic copies r to a temporary file beside path, syncs it and
// renames it into place.
func writeAtomic(path string, r io.Reader) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
