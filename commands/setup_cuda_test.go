package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zkpipe setup --device cuda computes the keys' products on the GPU (here
// the library $ZKPIPE_CUDA_LIB names: the host stand-in in scripts/test, a
// GPU's on the H200) and -v names the GPU's opening beside every phase;
// the keys prove (on the CPU) and zkpipe verify, gnark's verifier, accepts
// the proofs. --device auto does not take the stand-in; --device cuda with
// no library, and an unknown --device, are errors.
func TestCUDASetupOnTheDevice(t *testing.T) {
	lib := os.Getenv("ZKPIPE_CUDA_LIB")
	if lib == "" {
		t.Skip("ZKPIPE_CUDA_LIB names no CUDA library")
	}
	root := t.TempDir()
	for _, cv := range []string{"bn254", "bls12-381"} {
		dir := filepath.Join(root, "chain-"+cv)
		var stderr bytes.Buffer
		app := App()
		app.ErrWriter, app.Writer = &stderr, &bytes.Buffer{}
		if err := app.Run([]string{"zkpipe", "setup", "--builtin", "mulchain", "--constraints", "200", "--dir", dir, "--curve", cv,
			"--device", "cuda", "--cuda-lib", lib, "-v"}); err != nil {
			t.Fatalf("%s: %v\n%s", cv, err, stderr.String())
		}
		for _, phase := range []string{"open GPU 0", "G1 A", "G1 K", "G2 B", "write circuit.pk"} {
			if !strings.Contains(stderr.String(), "zkpipe setup: "+phase) {
				t.Errorf("%s: setup -v did not say %q:\n%s", cv, phase, stderr.String())
			}
		}
		jobs := filepath.Join(root, "jobs-"+cv+".jsonl")
		writeJobs(t, jobs, `{"id":"j1","circuit":"chain-`+cv+`","generate":{"seed":1}}`, `{"id":"j2","circuit":"chain-`+cv+`","generate":{"seed":2}}`)
		out, results := filepath.Join(root, "out-"+cv), filepath.Join(root, "r-"+cv+".jsonl")
		for _, l := range runProve(t, results, "zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", jobs, "--out", out,
			"--results", results, "--mem-status", "0") {
			if l.Error != "" {
				t.Fatalf("%s: %s: %s", cv, l.ID, l.Error)
			}
		}
		if err := App().Run([]string{"zkpipe", "verify", "--circuit", dir, filepath.Join(out, "j1.proof"), filepath.Join(out, "j2.proof")}); err != nil {
			t.Errorf("%s: verify: %v", cv, err)
		}
	}

	log, err := runLogged("setup", "--builtin", "mulchain", "-c", "64", "--dir", filepath.Join(root, "auto"), "--device", "auto", "--cuda-lib", lib, "-v")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "fixed-base products on the CPU") || strings.Contains(log, "open GPU") {
		t.Errorf("setup --device auto over the stand-in: stderr\n%s\nwant the products on the CPU", log)
	}
	if _, err := runLogged("setup", "--builtin", "mulchain", "-c", "64", "--dir", filepath.Join(root, "none"), "--device", "cuda",
		"--cuda-lib", filepath.Join(root, "no-such-lib.so")); err == nil || !strings.Contains(err.Error(), "--device cuda") {
		t.Errorf("setup --device cuda with no library: %v", err)
	}
	if _, err := runLogged("setup", "--builtin", "mulchain", "-c", "64", "--dir", filepath.Join(root, "bad"), "--device", "tpu"); err == nil {
		t.Error("setup --device tpu: no error")
	}
}

// zkpipe setup --r1cs --device cuda computes the zkey's products on the
// GPU (the library $ZKPIPE_CUDA_LIB names) and -v names its opening; the
// key proves (on the CPU) proofs snarkjs groth16 verify accepts, on both
// curves.
func TestCUDASetupCircomOnTheDevice(t *testing.T) {
	lib := os.Getenv("ZKPIPE_CUDA_LIB")
	if lib == "" {
		t.Skip("ZKPIPE_CUDA_LIB names no CUDA library")
	}
	td := circomTestdata(t)
	for _, c := range []struct{ name, dir string }{{"mul", td}, {"blsmul", filepath.Join(td, "bls12381")}} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			zkey, vkey := filepath.Join(root, "k.zkey"), filepath.Join(root, "vkey.json")
			log, err := runLogged("setup", "--r1cs", filepath.Join(c.dir, c.name+".r1cs"), "--zkey", zkey, "--device", "cuda", "--cuda-lib", lib, "-v")
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			for _, phase := range []string{"open GPU 0", "G1 A", "G2 B2", "write the zkey"} {
				if !strings.Contains(log, "zkpipe setup: "+phase) {
					t.Errorf("setup -v did not say %q:\n%s", phase, log)
				}
			}
			snarkjsRun(t, "zkey", "export", "verificationkey", zkey, vkey)
			proof, public := filepath.Join(root, "proof.json"), filepath.Join(root, "public.json")
			if code, stderr := runBin(t, "groth16", "fullprove", "--device", "cpu", filepath.Join(c.dir, c.name+".input.json"),
				filepath.Join(c.dir, c.name+".wasm"), zkey, proof, public); code != 0 {
				t.Fatalf("fullprove: exit %d\n%s", code, stderr)
			}
			if !snarkjsAccepts(t, vkey, public, proof) {
				t.Error("snarkjs rejects the proof of the key set up on the device")
			}
		})
	}
}
