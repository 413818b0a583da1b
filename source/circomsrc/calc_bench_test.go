//go:build unix

package circomsrc

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCalculate times one witness of a circom circuit, read out in
// bulk (zkpipeReadWitness) and a wire a call (as before it), and reports
// the process's CPU ms a witness beside the wall time: wazero's per-call
// goroutines run on other cores. By default the committed mul.wasm;
// bench/circom's circuits after `run.sh prepare`:
//
//	go test -run '^$' -bench Calculate ./source/circomsrc/ -args \
//	  -calc.wasm=$PWD/.cache/bench-circom-sha256/sha256_js/sha256.wasm \
//	  -calc.input=$PWD/.cache/bench-circom-sha256/w/in0.json
var (
	benchWasm  = flag.String("calc.wasm", "", "circom witness calculator for BenchmarkCalculate (default testdata/mul.wasm)")
	benchInput = flag.String("calc.input", "", "its inputs, a JSON file (default mul's)")
)

func BenchmarkCalculate(b *testing.B) {
	ctx := context.Background()
	code, in := testdata(b, "mul.wasm"), []byte(`{"a":"3","b":11}`)
	if *benchWasm != "" {
		var err error
		if code, err = os.ReadFile(*benchWasm); err != nil {
			b.Fatal(err)
		}
		if in, err = os.ReadFile(*benchInput); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"bulk", "wire-by-wire"} {
		b.Run(mode, func(b *testing.B) {
			c, err := NewCalculator(ctx, code)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(ctx)
			if !c.bulk {
				b.Fatalf("no bulk reader: %v", c.noBulk)
			}
			c.wireByWire = mode != "bulk"
			if _, err := c.Calculate(ctx, json.RawMessage(in)); err != nil { // the instance, made once
				b.Fatal(err)
			}
			cpu0 := processCPU()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Calculate(ctx, json.RawMessage(in)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// processCPU is the process's user and system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
