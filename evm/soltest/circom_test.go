package soltest

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/zkpipe/zkpipe/stream"
)

// TestSnarkjsVerifierInEVM: the contract snarkjs exports for a zkey
// (zkey export solidityverifier), compiled by solc and run in
// go-ethereum's EVM, accepts the proof.json/public.json zkpipe proves from
// that zkey (encoded by snarkjs's zkey export soliditycalldata), and
// rejects a tampered proof, a wrong public input and another job's proof;
// for snarkjs's own key of source/circomsrc/testdata's mul.circom, and for
// the test key zkpipe setup --r1cs makes from its r1cs (a circom user's
// path: circom's r1cs, zkpipe setup, zkpipe proves, the chain verifies).
func TestSnarkjsVerifierInEVM(t *testing.T) {
	td, err := filepath.Abs(filepath.Join("..", "..", "source", "circomsrc", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("snarkjs-key", func(t *testing.T) { checkSnarkjsVerifierInEVM(t, td, filepath.Join(td, "mul.zkey")) })
	t.Run("zkpipe-setup-key", func(t *testing.T) {
		zkey := filepath.Join(t.TempDir(), "mul.zkey")
		zkpipe(t, "setup", "--device", "cpu", "--r1cs", filepath.Join(td, "mul.r1cs"), "--zkey", zkey)
		checkSnarkjsVerifierInEVM(t, td, zkey)
	})
}

func checkSnarkjsVerifierInEVM(t *testing.T, td, zkey string) {
	snarkjs := filepath.Join(tool(t, "ZKPIPE_NODE_BIN", "circom-tools.sh"), "snarkjs")
	root := t.TempDir()
	sol := filepath.Join(root, "Verifier.sol")
	if o, err := exec.Command(snarkjs, "zkey", "export", "solidityverifier", zkey, sol).CombinedOutput(); err != nil {
		t.Fatalf("snarkjs zkey export solidityverifier: %v\n%s", err, o)
	}
	ch := deploy(t, compile(t, sol, "Groth16Verifier"))

	jobs, out, results := filepath.Join(root, "jobs.jsonl"), filepath.Join(root, "out"), filepath.Join(root, "r.jsonl")
	if err := os.WriteFile(jobs, []byte(`{"id":"a","input":{"a":"3","b":"11"}}`+"\n"+`{"id":"b","input":{"a":"7","b":"2"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zkpipe(t, "prove", "--device", "cpu", "--zkey", zkey, "--wasm", filepath.Join(td, "mul.wasm"), "--jobs", jobs, "--out", out, "--results", results)
	lines, err := stream.ReadResultsFile(results)
	if err != nil || len(lines) != 2 {
		t.Fatalf("results: %d lines, %v", len(lines), err)
	}
	calls := map[string][]byte{}
	for _, l := range lines {
		if l.Error != "" {
			t.Fatalf("%s: %s", l.ID, l.Error)
		}
		calls[l.ID] = snarkjsCalldata(t, snarkjs, l.Public, l.Proof)
		if ok, err := ch.accepts(calls[l.ID]); !ok {
			t.Errorf("%s: snarkjs's contract rejects zkpipe's proof: %v", l.ID, err)
		}
	}
	a := calls["a"]
	for w := 0; w < 8; w++ { // A (2 words), B (4), C (2)
		bad := bytes.Clone(a)
		bad[4+32*w+31] ^= 1
		if ok, _ := ch.accepts(bad); ok {
			t.Errorf("a proof with word %d tampered is accepted", w)
		}
	}
	bad := bytes.Clone(a)
	bad[4+32*8+31] ^= 1
	if ok, _ := ch.accepts(bad); ok {
		t.Error("a wrong public input is accepted")
	}
	other := bytes.Clone(calls["b"])
	copy(other[4+32*8:], a[4+32*8:]) // b's proof for a's inputs
	if ok, _ := ch.accepts(other); ok {
		t.Error("another job's proof is accepted")
	}
}

// accepts calls snarkjs's verifyProof, which returns a bool (true as 1)
// rather than reverting.
func (c *chain) accepts(in []byte) (bool, error) {
	ret, err := c.call(in)
	if err != nil {
		return false, err
	}
	if len(ret) != 32 {
		return false, fmt.Errorf("returned %x, want one word", ret)
	}
	if new(big.Int).SetBytes(ret).Cmp(big.NewInt(1)) != 0 {
		return false, errors.New("returned false")
	}
	return true, nil
}

var hexWord = regexp.MustCompile(`0x[0-9a-fA-F]+`)

// snarkjsCalldata is snarkjs's zkey export soliditycalldata for the files,
// ABI-encoded: verifyProof(uint[2] a, uint[2][2] b, uint[2] c, uint[n]
// inputs) takes static arrays only, so the call is the selector and the
// words in snarkjs's order.
func snarkjsCalldata(t *testing.T, snarkjs, public, proof string) []byte {
	t.Helper()
	o, err := exec.Command(snarkjs, "zkey", "export", "soliditycalldata", public, proof).Output()
	if err != nil {
		t.Fatalf("snarkjs zkey export soliditycalldata %s %s: %v", public, proof, err)
	}
	words := hexWord.FindAllString(string(o), -1)
	if len(words) < 9 {
		t.Fatalf("soliditycalldata: %d words, want 8 and the inputs: %s", len(words), o)
	}
	sig := fmt.Sprintf("verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[%d])", len(words)-8)
	in := crypto.Keccak256([]byte(sig))[:4]
	for _, w := range words {
		v, ok := new(big.Int).SetString(w[2:], 16)
		if !ok || v.BitLen() > 256 {
			t.Fatalf("soliditycalldata word %s: not a uint256", w)
		}
		in = append(in, v.FillBytes(make([]byte, 32))...)
	}
	return in
}
