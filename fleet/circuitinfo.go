package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
)

// CircuitInfo is a whole circuit in the store and what is known of it.
type CircuitInfo struct {
	Name string
	Kind string // "gnark" (a circuit directory) or "circom" (a zkey)
	// Curve ("bn254", "bls12-381") and Constraints are as the push that
	// stored the circuit found them, loading it (a circom circuit's
	// constraints as circom counts them: the zkey's rows less those of
	// its public inputs); from circuit.json for a circuit that zkpipe
	// setup made and an older zkpipe pushed; "" and 0 when neither says.
	Curve       string
	Constraints int
	// HashToField is a gnark circuit's (its hash-to-field file's, or
	// gnark's default without one); "" for a circom circuit, whose proofs
	// have no commitments to hash.
	HashToField string
}

// The metadata a push gives each object of a circuit (CircuitList reads
// it): whoever can write the store can write these too, so they describe
// and decide nothing (workers read the circuit's own files).
const (
	metaCurve       = "zkpipe-curve"
	metaConstraints = "zkpipe-constraints"
)

// describe is the metadata of a circuit's objects, from the circuit loaded
// and its constraints.
func describe(c *stages.Circuit, constraints int) map[string]string {
	return map[string]string{metaCurve: c.Key.Curve.String(), metaConstraints: strconv.Itoa(constraints)}
}

// CircuitList lists the whole circuits in the store, as Circuits does, with
// their kind, curve, constraints and hash-to-field. Reading a circuit's
// hash-to-field (or circuit.json) is a round trip to the store each.
func CircuitList(ctx context.Context, q *Queue) ([]CircuitInfo, error) {
	whole, err := wholeCircuits(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []CircuitInfo
	for name, objs := range whole {
		c := CircuitInfo{Name: name, Kind: "gnark"}
		key := objs[gnarksrc.PKFile]
		if z, ok := objs[zkeyObject]; ok {
			c.Kind, key = "circom", z
		}
		if key != nil {
			c.Curve = key.Metadata[metaCurve]
			c.Constraints, _ = strconv.Atoi(key.Metadata[metaConstraints])
		}
		if c.Kind == "gnark" {
			if c.Curve == "" || c.Constraints == 0 {
				if err := fromMeta(ctx, q, objs[gnarksrc.MetaFile], &c); err != nil {
					return nil, fmt.Errorf("circuit %s: %w", name, err)
				}
			}
			if c.HashToField, err = hashToFieldOf(ctx, q, objs[gnarksrc.HashFile]); err != nil {
				return nil, fmt.Errorf("circuit %s: %w", name, err)
			}
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// smallObject reads an object of at most 64 KiB (circuitFileLimit's bound
// on circuit.json and hash-to-field); nil if it is gone meanwhile.
func smallObject(ctx context.Context, q *Queue, info *jetstream.ObjectInfo) ([]byte, error) {
	if info.Size > 64<<10 {
		return nil, fmt.Errorf("the store's %s is %d bytes, more than it can be", info.Name, info.Size)
	}
	var b []byte
	err := retryQuick(ctx, func(ctx context.Context) (err error) { b, err = q.Circuits.GetBytes(ctx, info.Name); return err })
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, err
	}
	return b, nil
}

// fromMeta fills c's curve and constraints from circuit.json, where the
// circuit has one (zkpipe setup's; nil info: none).
func fromMeta(ctx context.Context, q *Queue, info *jetstream.ObjectInfo, c *CircuitInfo) error {
	if info == nil {
		return nil
	}
	b, err := smallObject(ctx, q, info)
	if err != nil || b == nil {
		return err
	}
	var m gnarksrc.Meta
	if json.Unmarshal(b, &m) != nil {
		return nil // not ours to judge here: the workers' load says what is wrong
	}
	if c.Curve == "" {
		c.Curve = m.Curve
	}
	if c.Constraints == 0 {
		c.Constraints = m.R1CSConstraints
	}
	return nil
}

// hashToFieldOf is a gnark circuit's hash-to-field: its file's (info), or
// gnark's default without one.
func hashToFieldOf(ctx context.Context, q *Queue, info *jetstream.ObjectInfo) (string, error) {
	if info == nil {
		return string(gnarksrc.HashDefault), nil
	}
	b, err := smallObject(ctx, q, info)
	if err != nil {
		return "", err
	}
	h, err := gnarksrc.ParseHashToField(string(b))
	if err != nil {
		return "?", nil // the workers refuse it when they load the circuit
	}
	return string(h), nil
}
