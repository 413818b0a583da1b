// Command generator writes zkpipe's per-curve code: each template of
// outputs is executed once per curve of curves, and each of tables once over
// all of them (a package's dispatch table of its curves, and package curve's
// IDs), gofmt'ed, and written where the list says. curves is the Go side's one
// list of curves: no other Go file names them one by one. The files are
// committed; TestGeneratedFilesAreFresh fails when one differs from what its
// template makes. Run it from the module root:
//
//	go generate ./internal/generator   (or: go run ./internal/generator)
//
// Adding a curve: an entry in curves, its constants in curve/params.go, its
// entry in the CUDA library's list (gpu/cuda/curves.cuh), and its tests
// (notes/curve-seam.md). The seam's limit: a curve whose scalar field fits
// four 64-bit words (proofdata.Scalar, the CUDA library's Fr): BN254,
// BLS12-381, BLS12-377 or BW6-633's G1 would fit, BW6-761 (6 words) would not.
package main

//go:generate go run . -root ../..

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// Curve is what a template knows of one curve.
type Curve struct {
	ID string // its constant in package curve, and gnark-crypto's ecc.ID: curve.BN254, ecc.BN254
	// Note is the comment on its constant in package curve.
	Note string
	// Aliases are the other names curve.Parse takes for it (its name is
	// Path: "bn254").
	Aliases []string
	Suffix  string // the suffix of its identifiers in shared packages: cpuBN254
	Dir     string // its directory and file names in zkpipe: solve/bn254, cpu_bn254.go
	Path    string // its segment of gnark's and gnark-crypto's import paths: ecc/bls12-381
	Pkg     string // gnark-crypto's package name for it: bls12381
	// Name is how errors and comments name it ("BN254", "BLS12-381").
	Name string
	// Snarkjs is snarkjs's name for it, in its JSON's "curve" ("bn128").
	Snarkjs string
	// PointMask is gnark-crypto's mask of the metadata bits of a point's
	// first byte; RawInfinity the bits of a raw point at infinity, ""
	// where it has none of its own (BN254's is all zeros, as a raw point).
	PointMask, RawInfinity string
	// InvalidMasks are the metadata bits no point has, "" where every
	// value means one (BN254's two bits).
	InvalidMasks string
	// G1CofactorOne: every point on the curve's G1 is in its prime-order
	// subgroup (BN254), so no subgroup check is made of G1 points.
	G1CofactorOne bool
}

// Import is the import line of gnark-crypto's curve package, aliased when
// its name is not its path's last element.
func (c Curve) Import() string {
	p := `"github.com/consensys/gnark-crypto/ecc/` + c.Path + `"`
	if c.Pkg != c.Path {
		return c.Pkg + " " + p
	}
	return p
}

// Group is one of a curve's two groups, for templates that write the
// same code for G1 and G2 ({{range .Groups}}).
type Group struct {
	G   string // G1 or G2: gnark-crypto's G1Affine, BatchScalarMultiplicationG1
	Pkg string // the curve's gnark-crypto package name
}

// Field is the type of g's coordinates: fp.Element for G1, the curve's
// exported E2 for G2.
func (g Group) Field() string {
	if g.G == "G1" {
		return "fp.Element"
	}
	return g.Pkg + ".E2"
}

// Groups are c's G1 and G2.
func (c Curve) Groups() []Group { return []Group{{"G1", c.Pkg}, {"G2", c.Pkg}} }

// curves: the Go side's list of curves, in curve.ID order (IDs from 1) and
// in the CUDA library's order (ZK_CURVE_* from 0, gpu/cuda/curves.cuh).
var curves = []Curve{
	{ID: "BN254", Note: "alt_bn128: Ethereum's precompiles, snarkjs's default", Aliases: []string{"bn128", "alt_bn128"},
		Suffix: "BN254", Dir: "bn254", Path: "bn254", Pkg: "bn254", Name: "BN254", Snarkjs: "bn128",
		PointMask: "0b11 << 6", G1CofactorOne: true},
	{ID: "BLS12_381", Note: "Zcash, Filecoin, Ethereum's EIP-2537", Aliases: []string{"bls12_381", "bls12381"},
		Suffix: "BLS12381", Dir: "bls12381", Path: "bls12-381", Pkg: "bls12381", Name: "BLS12-381", Snarkjs: "bls12381",
		PointMask: "0b111 << 5", RawInfinity: "0b010 << 5", InvalidMasks: "0b001 << 5, 0b011 << 5, 0b111 << 5"},
}

// output is one template and where each curve's file goes ({{.Dir}} is
// the curve's directory name).
type output struct{ template, path string }

var outputs = []output{
	{"stages_assemble.go.tmpl", "stages/assemble_{{.Dir}}.go"},
	{"gpu_cpu.go.tmpl", "gpu/cpu_{{.Dir}}.go"},
	{"gpu_backend_test.go.tmpl", "gpu/backend_{{.Dir}}_test.go"},
	{"gpu_cuda.go.tmpl", "gpu/cuda_{{.Dir}}.go"},
	{"gnarksrc_curve.go.tmpl", "source/gnarksrc/curve_{{.Dir}}.go"},
	{"gnarksrc_pkload.go.tmpl", "source/gnarksrc/pkload_{{.Dir}}.go"},
	{"circomsrc_curve.go.tmpl", "source/circomsrc/curve_{{.Dir}}.go"},
	{"solver.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/solver.go"},
	{"solve.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/solve.go"},
	{"solve_r1c.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/r1c.go"},
	{"solve_fast_test.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/r1c_test.go"},
	{"solve_levels_test.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/levels_test.go"},
	{"solve_levels_internal_test.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/levels_internal_test.go"},
	{"solve_parts_internal_test.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/parts_internal_test.go"},
	{"solve_test.go.tmpl", "source/gnarksrc/solve/{{.Dir}}/solve_test.go"},
	{"keygen_setup.go.tmpl", "keygen/setup_{{.Dir}}.go"},
	{"keygen_fixed.go.tmpl", "keygen/fixed_{{.Dir}}.go"},
	{"keygen_setup_test.go.tmpl", "keygen/setup_{{.Dir}}_test.go"},
	{"keygen_write.go.tmpl", "keygen/write_{{.Dir}}.go"},
	{"keygen_circom.go.tmpl", "keygen/circom_{{.Dir}}.go"},
	{"keygen_circom_test.go.tmpl", "keygen/circom_{{.Dir}}_test.go"},
	{"cpumsm.go.tmpl", "cpumsm/{{.Dir}}.go"},
	{"cpumsm_test.go.tmpl", "cpumsm/{{.Dir}}_test.go"},
}

// tables are the templates executed once over every curve (their data is
// curves): each package's one table of its curves' halves, which the
// per-curve files declare and never register themselves (no init()).
var tables = []output{
	{"curve_ids.go.tmpl", "curve/ids.go"},
	{"stages_curves.go.tmpl", "stages/curvetable.go"},
	{"gpu_curves.go.tmpl", "gpu/curvetable.go"},
	{"gnarksrc_curves.go.tmpl", "source/gnarksrc/curvetable.go"},
	{"circomsrc_curves.go.tmpl", "source/circomsrc/curvetable.go"},
	{"keygen_curves.go.tmpl", "keygen/curvetable.go"},
}

//go:embed templates
var templates embed.FS

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// add is a + b: a curve's ID is its index in curves + 1
	"add": func(a, b int) int { return a + b },
}

// generated formats one generated file: its header, then src gofmt'ed.
func generated(path, tmpl, what string, src []byte) ([]byte, error) {
	var body bytes.Buffer
	fmt.Fprintf(&body, "// Code generated by internal/generator from templates/%s for %s. DO NOT EDIT.\n\n", tmpl, what)
	body.Write(src)
	if !strings.HasSuffix(path, ".go") {
		return body.Bytes(), nil
	}
	out, err := format.Source(body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s for %s: gofmt: %w\n%s", tmpl, what, err, body.Bytes())
	}
	return out, nil
}

// render returns every generated file's path (relative to the module root)
// and contents.
func render() (map[string][]byte, error) {
	out := make(map[string][]byte)
	for _, o := range outputs {
		src, err := templates.ReadFile("templates/" + o.template)
		if err != nil {
			return nil, err
		}
		t, err := template.New(o.template).Funcs(funcs).Parse(string(src))
		if err != nil {
			return nil, err
		}
		pt, err := template.New("path").Parse(o.path)
		if err != nil {
			return nil, err
		}
		for _, c := range curves {
			var path, body bytes.Buffer
			if err := pt.Execute(&path, c); err != nil {
				return nil, err
			}
			if err := t.Execute(&body, c); err != nil {
				return nil, fmt.Errorf("%s for %s: %w", o.template, c.Name, err)
			}
			if out[path.String()], err = generated(path.String(), o.template, c.Name, body.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range tables {
		src, err := templates.ReadFile("templates/" + o.template)
		if err != nil {
			return nil, err
		}
		t, err := template.New(o.template).Funcs(funcs).Parse(string(src))
		if err != nil {
			return nil, err
		}
		var body bytes.Buffer
		if err := t.Execute(&body, curves); err != nil {
			return nil, fmt.Errorf("%s: %w", o.template, err)
		}
		if out[o.path], err = generated(o.path, o.template, "every curve", body.Bytes()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func main() {
	root := flag.String("root", ".", "the module's root directory")
	flag.Parse()
	files, err := render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "generator:", err)
		os.Exit(1)
	}
	for path, src := range files {
		p := filepath.Join(*root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "generator:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "generator:", err)
			os.Exit(1)
		}
	}
}
