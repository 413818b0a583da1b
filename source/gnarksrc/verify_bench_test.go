package gnarksrc_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/zkpipe/zkpipe/internal/provertest"
)

// BenchmarkVerify measures what Emit adds to each proof: gnark's
// groth16.Verify of the proof against the circuit's verifying key. Its cost
// depends on the public inputs and commitments, not on the circuit's size;
// the benchmark reports gnark's own prove time beside it for scale.
// Sizes are 2^16, and those in ZKPIPE_BENCH_LOG2 (e.g. "20"):
//
//	ZKPIPE_BENCH_LOG2=20 go test ./source/gnarksrc -run XXX -bench Verify -benchtime 200x
func BenchmarkVerify(b *testing.B) {
	logs := []int{16}
	if s := os.Getenv("ZKPIPE_BENCH_LOG2"); s != "" {
		l, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		logs = []int{l}
	}
	for _, name := range []string{"mulchain", "commit"} {
		for _, l := range logs {
			b.Run(fmt.Sprintf("%s/2^%d", name, l), func(b *testing.B) {
				n := 1<<l - 8 // a domain of 2^l, with room for a commitment's constraints
				keys := provertest.Setup(b, name, n)
				full, err := keys.Builtin.Witness(n, 1)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				proof, err := groth16.Prove(keys.CCS, keys.PK, full)
				if err != nil {
					b.Fatal(err)
				}
				prove := time.Since(t0)
				pub, err := full.Public()
				if err != nil {
					b.Fatal(err)
				}
				p, vk, v := proof.(*groth16bn254.Proof), keys.VK.(*groth16bn254.VerifyingKey), pub.Vector().(fr.Vector)
				b.ResetTimer()
				for b.Loop() {
					if err := groth16bn254.Verify(p, vk, v); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(prove.Milliseconds()), "gnark-prove-ms")
			})
		}
	}
}
