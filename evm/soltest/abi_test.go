package soltest

import (
	"bytes"
	"fmt"
	"math/big"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/zkpipe/zkpipe/evm"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// TestCalldataIsTheABIEncoding: evm.Calldata is go-ethereum's own ABI
// encoding of verifyProof(bytes, uint256[N]) with gnark's MarshalSolidity
// proof, for proofs with and without a commitment and one or more inputs.
func TestCalldataIsTheABIEncoding(t *testing.T) {
	root := t.TempDir()
	for _, b := range []string{"mulchain", "commit", "bits"} {
		dir := filepath.Join(root, b)
		if _, err := gnarksrc.Setup(b, 100, dir); err != nil {
			t.Fatal(err)
		}
		circ, err := gnarksrc.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		src := circ.Source.(*gnarksrc.Source)
		full, err := src.Witness(1)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := src.WholeProvingKey()
		if err != nil {
			t.Fatal(err)
		}
		pi, err := groth16.Prove(src.R1CS(), pk, full)
		if err != nil {
			t.Fatal(err)
		}
		proof := pi.(*groth16bn254.Proof)
		pw, err := full.Public()
		if err != nil {
			t.Fatal(err)
		}
		pub := pw.Vector().(fr.Vector)

		n := len(pub)
		def, err := abi.JSON(strings.NewReader(fmt.Sprintf(
			`[{"type":"function","name":"verifyProof","stateMutability":"view","inputs":[{"name":"proof","type":"bytes"},{"name":"input","type":"uint256[%d]"}],"outputs":[]}]`, n)))
		if err != nil {
			t.Fatal(err)
		}
		inputs := reflect.New(reflect.ArrayOf(n, reflect.TypeOf((*big.Int)(nil)))).Elem()
		for i := range pub {
			inputs.Index(i).Set(reflect.ValueOf(pub[i].BigInt(new(big.Int))))
		}
		want, err := def.Pack("verifyProof", proof.MarshalSolidity(), inputs.Interface())
		if err != nil {
			t.Fatal(err)
		}
		if got := evm.Calldata(proof, pub); !bytes.Equal(got, want) {
			t.Errorf("%s (%d inputs, %d commitments): evm.Calldata\n%x\ngo-ethereum's ABI\n%x", b, n, len(proof.Commitments), got, want)
		}
		if evm.Signature(n) != def.Methods["verifyProof"].Sig {
			t.Errorf("signature %q, go-ethereum's %q", evm.Signature(n), def.Methods["verifyProof"].Sig)
		}
	}
}
