package soltest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/vm"
	"github.com/ethereum/go-ethereum/core/vm/runtime"
)

// The tools: solcjs from $ZKPIPE_SOLCJS, snarkjs from $ZKPIPE_NODE_BIN
// (scripts/test exports both); without them the tests run the .ci scripts
// themselves (npm must reach its registry). They never skip.

// tool returns $env, or the last line the script prints.
func tool(t *testing.T, env, script string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	var out, errb bytes.Buffer
	cmd := exec.Command("bash", filepath.Join("..", "..", ".ci", script))
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("no %s: set it, or let .ci/%s install it: %v\n%s", env, script, err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

var solcMu sync.Mutex // solcjs is some hundreds of MB of wasm: one at a time

// compile compiles the contract named contract in file with solcjs and
// returns its creation bytecode.
func compile(t *testing.T, file, contract string) []byte {
	t.Helper()
	solcMu.Lock()
	defer solcMu.Unlock()
	solc := tool(t, "ZKPIPE_SOLCJS", "solc-tools.sh")
	out := t.TempDir()
	cmd := exec.Command(solc, "--bin", "--optimize", "--base-path", filepath.Dir(file), "-o", out, file)
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("solcjs %s: %v\n%s", file, err, o)
	}
	bins, _ := filepath.Glob(filepath.Join(out, "*_"+contract+".bin"))
	if len(bins) != 1 {
		ls, _ := os.ReadDir(out)
		t.Fatalf("solcjs %s: want one %s.bin, got %v", file, contract, ls)
	}
	b, err := os.ReadFile(bins[0])
	if err != nil {
		t.Fatal(err)
	}
	code, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", bins[0], err)
	}
	return code
}

// chain is one EVM state with one contract deployed in it.
type chain struct {
	cfg  *runtime.Config
	addr common.Address
}

// deploy runs the contract's creation code in a fresh EVM (go-ethereum's
// default runtime config: every fork through Cancun).
func deploy(t *testing.T, initcode []byte) *chain {
	t.Helper()
	cfg := new(runtime.Config)
	code, addr, _, err := runtime.Create(initcode, cfg)
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if len(code) == 0 {
		t.Fatal("deploy: no code")
	}
	return &chain{cfg: cfg, addr: addr}
}

// call calls the contract with input (read-only) and returns what it
// returned; a revert is errReverted, with the revert data.
func (c *chain) call(input []byte) ([]byte, error) {
	ret, _, err := runtime.Call(c.addr, input, c.cfg)
	if errors.Is(err, vm.ErrExecutionReverted) {
		return ret, fmt.Errorf("%w (data %x)", errReverted, ret)
	}
	return ret, err
}

var errReverted = errors.New("reverted")

// zkpipe builds the zkpipe command (once) and runs it with args, failing
// the test unless it exits 0.
func zkpipe(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(zkpipeBin(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("zkpipe %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
