package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
)

// A Verifier checks a job's stored proof against one verifying key. The
// proof store is writable by anyone with access to the queue, so nothing
// read from it is called proved until a Verifier has accepted it.
type Verifier struct {
	// Against says what the key is, for a result line's verified_with.
	Against string
	outputs stages.Verifier // the circuit's source's: it names and checks the outputs
	// A key read from a file or the store (not a loaded circuit's): what
	// a submitted witness is checked against (witnesscheck.go).
	gnark  groth16.VerifyingKey // of the circuit's curve
	htf    gnarksrc.HashToField // the gnark circuit's hash-to-field (its directory's)
	circom *circomsrc.VerifyingKey
}

// keyVerifier is the Verifier of a key read from a file or the store: its
// stored calldata is made again where a job stored one (the worker's
// --calldata is not known here).
func keyVerifier(against string, gnark groth16.VerifyingKey, htf gnarksrc.HashToField, circom *circomsrc.VerifyingKey) *Verifier {
	v := &Verifier{Against: against, gnark: gnark, htf: htf, circom: circom}
	if circom != nil {
		v.outputs = circomsrc.NewVerifier(circom)
	} else {
		v.outputs = gnarksrc.NewVerifier(gnark, htf, true)
	}
	return v
}

// LocalVerifier reads a verifying key the user holds, the strongest anchor
// zkpipe results can have: a gnark circuit directory's circuit.vk, or a
// snarkjs verification_key.json. Reads are bounded (boundedread).
func LocalVerifier(ctx context.Context, circuitDir, vkey string) (*Verifier, error) {
	switch {
	case circuitDir != "" && vkey != "":
		return nil, errors.New("give --circuit (gnark) or --vkey (circom), not both")
	case vkey != "":
		vk, err := circomsrc.ReadVerifyingKey(vkey)
		if err != nil {
			return nil, fmt.Errorf("--vkey: %w", err)
		}
		return keyVerifier("--vkey "+vkey, nil, "", vk), nil
	case circuitDir != "":
		p := filepath.Join(circuitDir, gnarksrc.VKFile)
		data, err := boundedread.ReadAll(ctx, p, maxVKBytes, boundedread.Options{})
		if err != nil {
			return nil, fmt.Errorf("--circuit: %w", err)
		}
		vk, err := gnarksrc.ParseVerifyingKey(data)
		if err != nil {
			return nil, fmt.Errorf("--circuit: %s: %w", p, err)
		}
		htf, err := gnarksrc.ReadHashToField(circuitDir)
		if err != nil {
			return nil, fmt.Errorf("--circuit: %w", err)
		}
		return keyVerifier("--circuit "+circuitDir, vk, htf, nil), nil
	}
	return nil, nil
}

// circuitVerifier is the verifying key of a circuit this process loaded:
// its source's Verifier.
func circuitVerifier(c *stages.Circuit, against string) *Verifier {
	return &Verifier{Against: against, outputs: c.Source.Verifier()}
}

// maxVKBytes bounds a gnark verifying key read from the store or a file:
// some 64 bytes a public input, so over a million of them.
const maxVKBytes = 64 << 20

// checked is a job's stored proof that passed: the files to write, in
// order (the proof last: its presence means the rest is there), and the
// names and public inputs of its result line (calldata "" when the job
// stored none).
type checked struct {
	names                   []string
	data                    [][]byte
	proof, public, calldata string
	inputs                  []string
}

// errRejected marks stored outputs that are not a valid proof for the key.
var errRejected = errors.New("rejected")

// check verifies job id's stored files with the circuit's source's
// Verifier. Only the files of a proof are taken, by the names the source
// gives them, not those the stored result line claims; what is made from
// the proof (gnark's JSON form, and its Solidity calldata where the job
// stored one) is made again from the verified proof rather than trusted.
func (v *Verifier) check(ctx context.Context, id string, files map[string][]byte) (checked, error) {
	o := v.outputs.Outputs(id)
	for _, name := range []string{o.Proof, o.Public} {
		if _, ok := files[name]; !ok {
			return checked{}, fmt.Errorf("%w: the stored outputs hold no %s", errRejected, name)
		}
	}
	got, err := v.outputs.Check(ctx, blob.Files(files), o)
	if err != nil {
		if ctx.Err() != nil {
			return checked{}, err
		}
		return checked{}, fmt.Errorf("%w: %v", errRejected, err)
	}
	c := checked{proof: o.Proof, public: o.Public, calldata: got.Calldata(), inputs: got.PublicInputs}
	c.names, c.data = []string{o.Public}, [][]byte{got.Public}
	for _, m := range got.Made {
		c.names, c.data = append(c.names, m.Name), append(c.data, m.Data)
	}
	c.names, c.data = append(c.names, o.Proof), append(c.data, got.Proof)
	return c, nil
}

// storeKeys reads circuits' verifying keys from the circuit store, each once
// per digest: a circuit pushed again is read again.
type storeKeys struct {
	q    *Queue
	mu   sync.Mutex
	m    map[string]storeKey  // by object name
	last map[string]*Verifier // by circuit: the key get last found
}

type storeKey struct {
	digest string
	v      *Verifier
}

func newStoreKeys(q *Queue) *storeKeys {
	return &storeKeys{q: q, m: map[string]storeKey{}, last: map[string]*Verifier{}}
}

// check verifies job id's stored files against circuit's key in the
// store. A key read before is tried first, without a round trip to the
// store; if it rejects the proof, the store is asked again, in case the
// circuit was pushed again since.
func (k *storeKeys) check(ctx context.Context, circuit, id string, files map[string][]byte) (*Verifier, checked, error) {
	k.mu.Lock()
	v := k.last[circuit]
	k.mu.Unlock()
	if v != nil {
		if got, err := v.check(ctx, id, files); err == nil {
			return v, got, nil
		}
	}
	v, err := k.get(ctx, circuit)
	if err != nil {
		return nil, checked{}, err
	}
	got, err := v.check(ctx, id, files)
	return v, got, err
}

// get returns circuit name's key in the store: circuit.vk of a gnark
// circuit, or the key inside circuit.zkey (only its first sections are
// read). A circuit with neither is an error wrapping errRejected.
func (k *storeKeys) get(ctx context.Context, name string) (*Verifier, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("%w: %v", errRejected, err)
	}
	for _, f := range []string{gnarksrc.VKFile, zkeyObject} {
		obj := name + "/" + f
		info, err := k.q.Circuits.GetInfo(ctx, obj)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		digest, htf := info.Digest, gnarksrc.HashDefault
		if f == gnarksrc.VKFile {
			// the circuit's hash-to-field travels beside its key; a change
			// of either is a new key
			var hd string
			if htf, hd, err = k.hashToField(ctx, name); err != nil {
				return nil, err
			}
			digest += " " + hd
		}
		k.mu.Lock()
		e, ok := k.m[obj]
		k.mu.Unlock()
		if ok && e.digest == digest {
			k.mu.Lock()
			k.last[name] = e.v
			k.mu.Unlock()
			return e.v, nil
		}
		if f == gnarksrc.VKFile && info.Size > maxVKBytes {
			return nil, fmt.Errorf("%w: %s: %d bytes, more than a verifying key can be (%d)", errRejected, obj, info.Size, maxVKBytes)
		}
		r, err := k.q.getObject(ctx, CircuitBucket, obj)
		if err != nil {
			return nil, err
		}
		var gnark groth16.VerifyingKey
		var circom *circomsrc.VerifyingKey
		if f == gnarksrc.VKFile {
			var data []byte
			if data, err = io.ReadAll(io.LimitReader(r, maxVKBytes)); err == nil {
				gnark, err = gnarksrc.ParseVerifyingKey(data)
			}
		} else {
			circom, err = circomsrc.ReadZkeyVerifyingKey(r)
		}
		r.Close()
		if err != nil {
			if ctx.Err() != nil || isTransient(err) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s: %v", errRejected, obj, err)
		}
		v := keyVerifier(fmt.Sprintf("circuit store %s (%s)", obj, info.Digest), gnark, htf, circom)
		k.mu.Lock()
		k.m[obj] = storeKey{digest, v}
		k.last[name] = v
		k.mu.Unlock()
		return v, nil
	}
	return nil, fmt.Errorf("%w: circuit %q has no verifying key in the store (%s or %s)", errRejected, name, gnarksrc.VKFile, zkeyObject)
}

// hashToField reads circuit name's hash-to-field from the store (gnark's
// default when it has none) and that object's digest ("" when none).
func (k *storeKeys) hashToField(ctx context.Context, name string) (gnarksrc.HashToField, string, error) {
	obj := name + "/" + gnarksrc.HashFile
	info, err := k.q.Circuits.GetInfo(ctx, obj)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return gnarksrc.HashDefault, "", nil
	}
	if err != nil {
		return "", "", err
	}
	if info.Size > circuitFileLimit(gnarksrc.HashFile) {
		return "", "", fmt.Errorf("%w: %s: %d bytes, more than a hash-to-field name can be", errRejected, obj, info.Size)
	}
	r, err := k.q.getObject(ctx, CircuitBucket, obj)
	if err != nil {
		return "", "", err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, int64(circuitFileLimit(gnarksrc.HashFile))))
	if err != nil {
		return "", "", err
	}
	h, err := gnarksrc.ParseHashToField(string(b))
	if err != nil {
		return "", "", fmt.Errorf("%w: %s: %v", errRejected, obj, err)
	}
	return h, info.Digest, nil
}
