package solve

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopiedFromGoModGnark fails when go.mod requires (or replaces to) a
// gnark other than the release the solver template was copied from: the solver's
// internals (blueprints, hints, levels, the R1CS fields it reads) may have
// changed under the copy. Test binaries carry no module list
// (debug.ReadBuildInfo has no Deps), so it reads go.mod itself.
func TestCopiedFromGoModGnark(t *testing.T) {
	gomod := findGoMod(t)
	required, replaced := gnarkInGoMod(t, gomod)
	if required == "" {
		t.Fatalf("%s requires no github.com/consensys/gnark: is the copied solver still needed?", gomod)
	}
	if replaced != "" {
		t.Fatalf("%s replaces github.com/consensys/gnark (%s): check that solver.go matches that gnark's "+
			"constraint/<curve>/solver.go (internal/generator/templates/solver.go.tmpl), then teach this test the replacement", gomod, replaced)
	}
	if required != copiedFromGnark {
		t.Fatalf("%s requires gnark %s but the solver template (internal/generator/templates/solver.go.tmpl) was copied from gnark %s.\n"+
			"Copy constraint/bn254/solver.go from gnark %s into the template, reapply the changes its header lists "+
			"(newSolver taking Buffers, *cs.R1CS for *system, R1CS only), check that gnark's system.Solve "+
			"still does what solve.go's Solve repeats (stateful blueprints reset, printLogs), "+
			"then set copiedFromGnark, run go generate ./internal/generator and the solve packages' tests.",
			gomod, required, copiedFromGnark, required)
	}
}

// findGoMod walks up from the package directory (go test's working
// directory) to the module's go.mod.
func findGoMod(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "go.mod")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

// gnarkInGoMod returns the gnark version go.mod requires and the text of
// any replace directive for it. It reads go.mod's two forms, a single
// "require path version" line and lines inside a require ( ... ) block.
func gnarkInGoMod(t *testing.T, gomod string) (required, replaced string) {
	f, err := os.Open(gomod)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const gnark = "github.com/consensys/gnark"
	block := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			continue
		case fields[0] == ")":
			block = ""
			continue
		case len(fields) == 2 && fields[1] == "(":
			block = fields[0]
			continue
		}
		verb := block
		if block == "" {
			verb, fields = fields[0], fields[1:]
		}
		if len(fields) == 0 || fields[0] != gnark {
			continue
		}
		switch verb {
		case "require":
			if len(fields) >= 2 {
				required = fields[1]
			}
		case "replace":
			replaced = strings.Join(fields, " ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return required, replaced
}
