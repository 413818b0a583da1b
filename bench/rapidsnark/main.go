// Command rapidsnark-bench proves .wtns files one after another with
// rapidsnark (github.com/iden3/go-rapidsnark/prover, cgo over the C++
// library), as a service built on it would: one proof per call, each call
// given the zkey. It prints one JSON line of timings and writes each proof
// and its public inputs in snarkjs's JSON, so they can be checked with
// `snarkjs groth16 verify`.
//
// A module of its own: rapidsnark's static libraries and cgo stay out of
// zkpipe's build.
//
//	go run . -zkey chain.zkey -out DIR w1.wtns w2.wtns …
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/iden3/go-rapidsnark/prover"
)

func main() {
	zkeyPath := flag.String("zkey", "", "snarkjs Groth16 proving key")
	out := flag.String("out", "", "directory for ID.proof.json and ID.public.json (optional)")
	flag.Parse()
	if *zkeyPath == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: rapidsnark-bench -zkey FILE [-out DIR] W.wtns…")
		os.Exit(2)
	}
	t0 := time.Now()
	zkey, err := os.ReadFile(*zkeyPath)
	if err != nil {
		fail(err)
	}
	wtns := make([][]byte, flag.NArg())
	for i, p := range flag.Args() {
		if wtns[i], err = os.ReadFile(p); err != nil {
			fail(err)
		}
	}
	load := time.Since(t0)

	var each []float64
	t1 := time.Now()
	for i, w := range wtns {
		ts := time.Now()
		proof, public, err := prover.Groth16ProverRaw(zkey, w)
		if err != nil {
			fail(fmt.Errorf("%s: %w", flag.Arg(i), err))
		}
		each = append(each, time.Since(ts).Seconds())
		if *out != "" {
			id := strings.TrimSuffix(filepath.Base(flag.Arg(i)), ".wtns")
			write(filepath.Join(*out, id+".proof.json"), proof)
			write(filepath.Join(*out, id+".public.json"), public)
		}
	}
	total := time.Since(t1).Seconds()
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"prover": "rapidsnark", "proofs": len(wtns), "seconds": total,
		"proofs_per_s": float64(len(wtns)) / total, "each_s": each, "read_files_s": load.Seconds(),
	})
}

func write(path, data string) {
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rapidsnark-bench:", err)
	os.Exit(1)
}
