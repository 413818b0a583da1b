package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bls12381fr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/zkpipe/zkpipe/curve"
	"github.com/zkpipe/zkpipe/internal/keysink"
	"github.com/zkpipe/zkpipe/proofdata"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/stream"
)

// TestCUDALoadStreamsTheZkeyFile: a circom circuit loaded from its zkey
// file keeps its bases in the file (BLS12-381's H too, whose rows snarkjs
// permutes: it streams in windows of rows); the CUDA backend's Load streams
// them from the file to the device, the host reads only what its B_G2
// needs (fetched), the host copy is dropped, and the proof of the committed
// witness passes snarkjs.
func TestCUDALoadStreamsTheZkeyFile(t *testing.T) {
	lib := cudaLib(t)
	ctx := context.Background()
	bases := proofdata.PartA | proofdata.PartB1 | proofdata.PartK | proofdata.PartZ | proofdata.PartB2
	for _, tc := range []struct {
		id   curve.ID
		dir  string
		name string
	}{{curve.BN254, mulDir, "mul"}, {curve.BLS12_381, filepath.Join(mulDir, "bls12381"), "blsmul"}} {
		for _, bg2 := range []string{"cuda", "cpu"} {
			t.Run(tc.name+"/bg2="+bg2, func(t *testing.T) {
				c, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: filepath.Join(tc.dir, tc.name+".zkey")})
				if err != nil {
					t.Fatal(err)
				}
				deferred := bases
				if got := c.Key.Deferred(); got != deferred {
					t.Fatalf("deferred parts %06b, want %06b", got, deferred)
				}
				watch := keysink.WatchKey(c.Key)
				e, err := New(ctx, cudaOptions(lib, bg2, t.TempDir()), c)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				wantFetched := proofdata.KeyParts(0)
				if bg2 == "cpu" {
					wantFetched = proofdata.PartB2
				}
				if watch.Fetched() != wantFetched || watch.Streamed() != deferred&^wantFetched {
					t.Errorf("fetched parts %06b and streamed %06b, want %06b and %06b", watch.Fetched(), watch.Streamed(), wantFetched, deferred&^wantFetched)
				}
				keep := proofdata.KeyParts(0)
				if bg2 == "cpu" {
					keep = proofdata.PartB2
				}
				if got := c.Key.Dropped(); got != proofdata.AllParts&^keep {
					t.Errorf("dropped parts %06b, want %06b", got, proofdata.AllParts&^keep)
				}
				data, err := os.ReadFile(filepath.Join(tc.dir, tc.name+".wtns"))
				if err != nil {
					t.Fatal(err)
				}
				_, w, err := circomsrc.ParseWtnsOf(data)
				if err != nil {
					t.Fatal(err)
				}
				var proof *circomsrc.Proof
				var public []string
				if tc.id == curve.BN254 {
					proof, public, err = circomsrc.ProveWtnsOf(ctx, e, tc.name, proofdata.Elements[fr.Element](w))
				} else {
					proof, public, err = circomsrc.ProveWtnsOf(ctx, e, tc.name, proofdata.Elements[bls12381fr.Element](w))
				}
				if err != nil {
					t.Fatalf("ProveWtnsOf: %v", err)
				}
				snarkjsVerifies(t, filepath.Join(tc.dir, tc.name+".vkey.json"), proof, public)
			})
		}
	}
}

// --cuda-device all over the stand-in as two GPUs: gpu.Multi reads a
// circom circuit's zkey file once for both devices (BLS12-381's permuted
// H in windows too), fetches nothing, and both GPUs prove proofs that
// snarkjs's verifying key accepts.
func TestAllGPUsStreamTheZkeyFileOnce(t *testing.T) {
	lib := standInLib(t, "-DZK_HOST_DEVICES=2")
	ctx := context.Background()
	bases := proofdata.PartA | proofdata.PartB1 | proofdata.PartK | proofdata.PartZ | proofdata.PartB2
	for _, tc := range []struct{ dir, name string }{{mulDir, "mul"}, {filepath.Join(mulDir, "bls12381"), "blsmul"}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := circomsrc.LoadFiles(ctx, circomsrc.Files{Zkey: filepath.Join(tc.dir, tc.name+".zkey")})
			if err != nil {
				t.Fatal(err)
			}
			watch := keysink.WatchKey(c.Key)
			o := cpuOptions(filepath.Join(t.TempDir(), "out"))
			o.Device, o.BG2Device = "cuda", "cuda"
			o.CUDA = CUDAOptions{Lib: lib, AllDevices: true, PinnedMiB: 1, Lanes: 1, ComputeStreams: 3}
			wtns, err := filepath.Abs(filepath.Join(tc.dir, tc.name+".wtns"))
			if err != nil {
				t.Fatal(err)
			}
			jobs := make(chan stream.Line, 6)
			for i := 1; i <= cap(jobs); i++ {
				jobs <- stream.Line{Number: i, Request: stream.Request{ID: fmt.Sprintf("j%d", i), Wtns: wtns}}
			}
			close(jobs)
			lines, err := runAll(t, o, jobs, c)
			if err != nil {
				t.Fatal(err)
			}
			if watch.Streams() != 1 || watch.Streamed() != bases || watch.Fetched() != 0 {
				t.Errorf("%d streams of parts %06b, fetched %06b: want the zkey's bases %06b read once, for both devices", watch.Streams(), watch.Streamed(), watch.Fetched(), bases)
			}
			vk, err := circomsrc.ReadVerifyingKey(filepath.Join(tc.dir, tc.name+".vkey.json"))
			if err != nil {
				t.Fatal(err)
			}
			on := map[string]int{}
			for _, l := range lines {
				if l.Error != "" {
					t.Errorf("%s: %s", l.ID, l.Error)
					continue
				}
				on[l.Device]++
				if err := circomsrc.VerifyFiles(ctx, vk, l.Proof, l.Public); err != nil {
					t.Errorf("%s on %s: snarkjs's verifying key rejects it: %v", l.ID, l.Device, err)
				}
			}
			if on["cuda:0"] == 0 || on["cuda:1"] == 0 || len(lines) != cap(jobs) {
				t.Errorf("jobs per GPU %v over %d lines: want both GPUs used", on, len(lines))
			}
		})
	}
}
