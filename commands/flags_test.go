package commands

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/stages"
)

// helpOf is the help text of "zkpipe CMD…".
func helpOf(t *testing.T, cmd ...string) string {
	t.Helper()
	var out bytes.Buffer
	app := App()
	app.Writer, app.ErrWriter = &out, &out
	if err := app.Run(append(append([]string{"zkpipe"}, cmd...), "--help")); err != nil {
		t.Fatalf("zkpipe %s --help: %v", strings.Join(cmd, " "), err)
	}
	return out.String()
}

// Flags whose value zkpipe chooses when they are unset say "auto" in help,
// never the placeholder the flag carries.
func TestHelpSaysAutoWhereZkpipeChooses(t *testing.T) {
	auto := []string{"msm-tasks", "fft-tasks", "wasm-timeout", "device-budget"}
	for _, s := range stages.Names {
		auto = append(auto, s+"-workers", s+"-queue")
	}
	for _, cmd := range [][]string{{"prove"}, {"bench"}, {"demo"}, {"worker"}, {"serve"}, {"groth16", "prove"}} {
		help := helpOf(t, cmd...)
		for _, name := range auto {
			line := helpLine(help, "--"+name)
			if line == "" {
				t.Errorf("%s: no --%s in help", cmd, name)
				continue
			}
			if !strings.Contains(line, "(default: auto)") {
				t.Errorf("%s --help: --%s does not say auto: %q", cmd, name, line)
			}
		}
	}
}

// helpLine is the help line of flag (the first line that starts with it).
func helpLine(help, flag string) string {
	for _, l := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), flag+" ") {
			return l
		}
	}
	return ""
}

// engineOptionsOf reads the engine's options from a command line of prove's
// flags.
func engineOptionsOf(t *testing.T, args ...string) (int, error) {
	t.Helper()
	var mib int
	var err error
	app := &cli.App{Flags: proveFlags(), Action: func(c *cli.Context) error {
		o, e := engineOptions(c, t.TempDir())
		mib, err = o.CUDA.PinnedMiB, e
		return nil
	}}
	if rerr := app.Run(append([]string{"zkpipe"}, args...)); rerr != nil {
		t.Fatalf("%v: %v", args, rerr)
	}
	return mib, err
}

// --cuda-pinned takes a size as the other size flags do; --cuda-pinned-mib,
// its deprecated spelling, still takes MiB; both at once is refused.
func TestCUDAPinnedSize(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		mib  int
		err  string
	}{
		{args: nil, mib: 32},
		{args: []string{"--cuda-pinned", "64MiB"}, mib: 64},
		{args: []string{"--cuda-pinned", "1GiB"}, mib: 1024},
		{args: []string{"--cuda-pinned", "2m"}, mib: 2},
		{args: []string{"--cuda-pinned", "1048576"}, mib: 1},
		{env: map[string]string{"ZKPIPE_CUDA_PINNED": "128MiB"}, mib: 128},
		{args: []string{"--cuda-pinned-mib", "64"}, mib: 64},
		{env: map[string]string{"ZKPIPE_CUDA_PINNED_MIB": "16"}, mib: 16},
		{args: []string{"--cuda-pinned", "64MiB", "--cuda-pinned-mib", "64"}, err: "give one"},
		{args: []string{"--cuda-pinned", "512KiB"}, err: `--cuda-pinned "512KiB": want a whole number of MiB`},
		{args: []string{"--cuda-pinned", "1.5MiB"}, err: "want a whole number of MiB"},
		{args: []string{"--cuda-pinned", "0"}, err: "at least 1MiB"},
		{args: []string{"--cuda-pinned", "lots"}, err: "--cuda-pinned \"lots\""},
		{args: []string{"--cuda-pinned-mib", "0"}, err: "--cuda-pinned-mib 0: want at least 1"},
		{args: []string{"--cuda-pinned-mib", "-4"}, err: "--cuda-pinned-mib -4"},
	} {
		t.Run("", func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			mib, err := engineOptionsOf(t, c.args...)
			switch {
			case c.err == "" && (err != nil || mib != c.mib):
				t.Errorf("%v %v: %d MiB, %v; want %d MiB", c.args, c.env, mib, err, c.mib)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("%v %v: %v; want an error with %q", c.args, c.env, err, c.err)
			}
		})
	}
	if l := helpLine(helpOf(t, "prove"), "--cuda-pinned-mib"); !strings.Contains(l, "deprecated") {
		t.Errorf("--cuda-pinned-mib's help does not say it is deprecated: %q", l)
	}
}

// A prove run without --out writes its proofs to ./out and says so once on
// stderr; one given --out (by flag or ZKPIPE_OUT) says nothing of it.
func TestProveSaysWhereProofsGoWithoutOut(t *testing.T) {
	root := t.TempDir()
	chain := setupCircuit(t, root, "chain", "mulchain", 64)
	jobs := filepath.Join(root, "jobs.jsonl")
	writeJobs(t, jobs, generateJobs(2)...)
	note := "zkpipe: writing proofs to ./out (no --out given)"
	for _, c := range []struct {
		name string
		args []string
		env  string
		out  string // where the proofs land, under the working directory
		says bool
	}{
		{name: "no --out", out: "out", says: true},
		{name: "--out", args: []string{"--out", "given"}, out: "given"},
		{name: "--out out", args: []string{"--out", "out"}, out: "out"},
		{name: "ZKPIPE_OUT", env: "fromenv", out: "fromenv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wd := t.TempDir()
			t.Chdir(wd)
			if c.env != "" {
				t.Setenv("ZKPIPE_OUT", c.env)
			}
			var log bytes.Buffer
			results := filepath.Join(wd, "results.jsonl")
			args := append([]string{"zkpipe", "prove", "--circuit", chain, "--jobs", jobs, "--results", results, "--mem-status", "0"}, c.args...)
			lines := runProveTo(t, &log, results, args...)
			if len(lines) != 2 || lines[0].Error != "" || lines[1].Error != "" {
				t.Fatalf("results: %+v\n%s", lines, log.String())
			}
			for _, l := range lines {
				if filepath.Dir(l.Proof) != filepath.Join(wd, c.out) && filepath.Dir(l.Proof) != c.out {
					t.Errorf("proof %s, want it in %s", l.Proof, c.out)
				}
				if _, err := os.Stat(filepath.Join(wd, c.out, filepath.Base(l.Proof))); err != nil {
					t.Error(err)
				}
			}
			if n := strings.Count(log.String(), note); (c.says && n != 1) || (!c.says && n != 0) {
				t.Errorf("stderr says %q %d times:\n%s", note, n, log.String())
			}
		})
	}
}

// The install lines of README.md work from a clone: each go command of its
// Install section builds a zkpipe that runs (the output path moved into a
// temporary directory); none fetches a published module.
func TestREADMEInstallLinesWorkFromAClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zkpipe (-short)")
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no Install section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	// the lines of its code blocks and its inline `go …` spans
	lines := strings.Split(section, "\n")
	for _, m := range regexp.MustCompile("`(go [^`]+)`").FindAllStringSubmatch(section, -1) {
		lines = append(lines, m[1])
	}
	ran := 0
	for _, line := range lines {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(line)
		if len(args) < 2 || args[0] != "go" || (args[1] != "build" && args[1] != "install") {
			continue
		}
		if strings.Contains(line, "@") {
			t.Errorf("README install line %q fetches a module version, which an unpublished module does not have", line)
			continue
		}
		bin := t.TempDir()
		for i := range args {
			if args[i] == "-o" && i+1 < len(args) {
				args[i+1] = filepath.Join(bin, args[i+1])
			}
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README install line %q: %v\n%s", line, err, out)
			continue
		}
		if out, err := exec.Command(filepath.Join(bin, "zkpipe"), "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "zkpipe") {
			t.Errorf("zkpipe built by %q: %v\n%s", line, err, out)
		}
		ran++
	}
	if ran == 0 {
		t.Error("README's Install section has no go line that builds zkpipe")
	}
}

// A flag whose help says what 0 means says it once: where its usage says
// "(0: …" and its default text "0 (…)" or "0: …", they are the same words
// (--cpu-heavy-ops said "0: 2" beside "0 (no bound)").
func TestHelpSaysOneMeaningOfZero(t *testing.T) {
	inUsage := regexp.MustCompile(`\(0: ([^;)]*)`)
	inDefault := regexp.MustCompile(`^0(?:: | \()([^)]*)\)?$`)
	seen := 0
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			p := strings.TrimSpace(path + " " + cmd.Name)
			for _, f := range cmd.Flags {
				df, ok := f.(cli.DocGenerationFlag)
				if !ok {
					continue
				}
				u := inUsage.FindStringSubmatch(df.GetUsage())
				d := inDefault.FindStringSubmatch(df.GetDefaultText())
				if u == nil || d == nil {
					continue
				}
				seen++
				if strings.TrimSpace(u[1]) != strings.TrimSpace(d[1]) {
					t.Errorf("%s --%s: its usage says 0 is %q, its default %q", p, f.Names()[0], u[1], d[1])
				}
			}
			walk(p, cmd.Subcommands)
		}
	}
	walk("", App().Commands)
	if seen == 0 {
		t.Error("no flag says what 0 means in both its usage and its default: the check checks nothing")
	}
}

// README's go.mod lines for a program that uses zkpipe as a library (the
// module is unpublished: a replace to the clone) build such a program: a
// module of its own, outside the repository, importing package engine,
// built with -mod=mod from the module cache (zkpipe's go.sum beside it:
// no network).
func TestREADMELibraryGoModLinesWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program (-short)")
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## zkpipe as a Go library\n")
	if !ok {
		t.Fatal("README.md has no library section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var mod []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "require github.com/zkpipe/zkpipe ") || strings.HasPrefix(line, "replace github.com/zkpipe/zkpipe => ") {
			mod = append(mod, line)
		}
	}
	if len(mod) != 2 || !strings.HasPrefix(mod[1], "replace") {
		t.Fatalf("README's library section gives %q, want its require and replace lines", mod)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	old, _ := strings.CutPrefix(mod[1], "replace github.com/zkpipe/zkpipe => ")
	mod[1] = strings.Replace(mod[1], old, root, 1) // the clone's path
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"go.mod": "module example.com/prover\n\ngo 1.26\n\n" + strings.Join(mod, "\n") + "\n",
		"go.sum": string(sum),
		"main.go": `package main

import (
	"context"
	"fmt"

	"github.com/zkpipe/zkpipe/engine"
)

func main() {
	eng, err := engine.New(context.Background(), engine.Options{Device: "cpu", Out: "proofs"})
	if err != nil {
		panic(err)
	}
	eng.Close()
	fmt.Println("engine ok")
}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", "-mod=mod", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "engine ok") {
		t.Fatalf("a program with README's go.mod lines: %v\n%s", err, out)
	}
}

// docs/map.md, the one map of the code, has a row for every package of
// the module and none for a package that is gone.
func TestCodeMapNamesEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	md, err := os.ReadFile(filepath.Join("..", "docs", "map.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(md), "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			if name, _, ok := strings.Cut(rest, "`"); ok {
				rows[name] = true
			}
		}
	}
	for _, path := range strings.Fields(string(out)) {
		name := strings.TrimPrefix(strings.TrimPrefix(path, "github.com/zkpipe/zkpipe"), "/")
		if name == "" {
			name = "."
		}
		if !rows[name] {
			t.Errorf("docs/map.md has no row for package %s", name)
		}
		delete(rows, name)
	}
	for name := range rows {
		t.Errorf("docs/map.md has a row for %s, which is no package of the module", name)
	}
}
