package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/evm"
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
	gnark   groth16.VerifyingKey // of the circuit's curve
	htf     gnarksrc.HashToField // the gnark circuit's hash-to-field (its directory's)
	circom  *circomsrc.VerifyingKey
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
		return &Verifier{Against: "--vkey " + vkey, circom: vk}, nil
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
		return &Verifier{Against: "--circuit " + circuitDir, gnark: vk, htf: htf}, nil
	}
	return nil, nil
}

// circuitVerifier is the verifying key of a circuit this process loaded.
func circuitVerifier(c *stages.Circuit, against string) *Verifier {
	switch s := c.Source.(type) {
	case *gnarksrc.Source:
		return &Verifier{Against: against, gnark: s.VerifyingKey(), htf: s.HashToField()}
	case *circomsrc.Source:
		return &Verifier{Against: against, circom: s.VerifyingKey()}
	}
	return nil
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

// check verifies job id's stored files. Only the files of a proof are
// taken, by the names the key's kind gives them, not those the stored
// result line claims; gnark's JSON form, and its Solidity calldata where
// the job stored one (worker --calldata), are made again from the verified
// proof rather than trusted.
func (v *Verifier) check(id string, files map[string][]byte) (checked, error) {
	var c checked
	need := func(name string) ([]byte, error) {
		b, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("%w: the stored outputs hold no %s", errRejected, name)
		}
		return b, nil
	}
	if v.gnark != nil {
		c.proof, c.public = id+".proof", id+".public"
		pb, err := need(c.proof)
		if err != nil {
			return c, err
		}
		wb, err := need(c.public)
		if err != nil {
			return c, err
		}
		proof, inputs, err := gnarksrc.VerifyProofWith(v.gnark, v.htf, c.proof, pb, c.public, wb)
		if err != nil {
			return c, fmt.Errorf("%w: %v", errRejected, err)
		}
		pj, err := gnarksrc.ProofJSON(proof)
		if err != nil {
			return c, err
		}
		js, err := json.Marshal(pj)
		if err != nil {
			return c, err
		}
		c.names = []string{c.public, id + ".proof.json"}
		c.data = [][]byte{wb, js}
		if _, ok := files[id+".calldata"]; ok {
			bp, ok := proof.(*groth16bn254.Proof) // Solidity calldata: BN254's alone
			if !ok {
				return c, fmt.Errorf("%w: %s: calldata beside a proof of a curve other than BN254", errRejected, id)
			}
			vec, err := publicVector(inputs)
			if err != nil {
				return c, err
			}
			c.calldata = id + ".calldata"
			c.names, c.data = append(c.names, c.calldata), append(c.data, evm.CalldataHex(bp, vec))
		}
		c.names, c.data = append(c.names, c.proof), append(c.data, pb)
		c.inputs = inputs
		return c, nil
	}
	c.proof, c.public = id+".proof.json", id+".public.json"
	pb, err := need(c.proof)
	if err != nil {
		return c, err
	}
	wb, err := need(c.public)
	if err != nil {
		return c, err
	}
	inputs, err := v.circom.VerifyJSON(c.proof, pb, c.public, wb)
	if err != nil {
		return c, fmt.Errorf("%w: %v", errRejected, err)
	}
	c.names, c.data, c.inputs = []string{c.public, c.proof}, [][]byte{wb, pb}, inputs
	return c, nil
}

// publicVector is a verified proof's public inputs (decimal) as field
// elements, for its calldata.
// publicVector is a BN254 proof's public inputs as its calldata takes them.
func publicVector(inputs []string) (fr.Vector, error) {
	vec := make(fr.Vector, len(inputs))
	for i, in := range inputs {
		if _, err := vec[i].SetString(in); err != nil {
			return nil, fmt.Errorf("public input %d: %w", i, err)
		}
	}
	return vec, nil
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
		if got, err := v.check(id, files); err == nil {
			return v, got, nil
		}
	}
	v, err := k.get(ctx, circuit)
	if err != nil {
		return nil, checked{}, err
	}
	got, err := v.check(id, files)
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
		v := &Verifier{Against: fmt.Sprintf("circuit store %s (%s)", obj, info.Digest), htf: htf}
		if f == gnarksrc.VKFile {
			var data []byte
			if data, err = io.ReadAll(io.LimitReader(r, maxVKBytes)); err == nil {
				v.gnark, err = gnarksrc.ParseVerifyingKey(data)
			}
		} else {
			v.circom, err = circomsrc.ReadZkeyVerifyingKey(r)
		}
		r.Close()
		if err != nil {
			if ctx.Err() != nil || isTransient(err) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s: %v", errRejected, obj, err)
		}
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
