package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// flagDef is one command's definition of a flag.
type flagDef struct {
	command string // "export solidity"
	name    string // the flag's first name
	kind    string // its Go type: *cli.StringFlag
	usage   string
	hidden  bool
}

// allFlags is every flag of every command of App, subcommands too.
func allFlags() []flagDef {
	var defs []flagDef
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			p := strings.TrimSpace(path + " " + cmd.Name)
			for _, f := range cmd.Flags {
				d := flagDef{command: p, name: f.Names()[0], kind: fmt.Sprintf("%T", f)}
				if df, ok := f.(cli.DocGenerationFlag); ok {
					d.usage = df.GetUsage()
				}
				if vf, ok := f.(cli.VisibleFlag); ok {
					d.hidden = !vf.IsVisible()
				}
				defs = append(defs, d)
			}
			walk(p, cmd.Subcommands)
		}
	}
	walk("", App().Commands)
	return defs
}

// spellingsAndEnv are a flag's names (first the flag's, then its aliases)
// and its environment variables.
func spellingsAndEnv(f cli.Flag) (names, envs []string) {
	names = f.Names()
	if df, ok := f.(cli.DocGenerationFlag); ok {
		envs = df.GetEnvVars()
	}
	return names, envs
}

// One meaning per flag name, per short alias and per environment variable
// across every command (the rule in namesflags.go and README): a name two
// commands define differently has one meaning in flagMeanings, which each
// of its usages starts with; a spelling or variable names one flag
// everywhere; a hidden flag is only an old spelling of a flag of its own
// command.
func TestFlagNamesHaveOneMeaning(t *testing.T) {
	defs := allFlags()
	byName := map[string][]flagDef{}
	visible := map[string]map[string]bool{} // command → its visible flag names
	for _, d := range defs {
		if visible[d.command] == nil {
			visible[d.command] = map[string]bool{}
		}
		if !d.hidden {
			visible[d.command][d.name] = true
			byName[d.name] = append(byName[d.name], d)
		}
	}
	for _, d := range defs {
		if !d.hidden {
			continue
		}
		now, ok := strings.CutPrefix(d.usage, deprecatedPrefix)
		if !ok || !visible[d.command][now] {
			t.Errorf("%s: hidden --%s is not the deprecated spelling of one of its flags (usage %q)", d.command, d.name, d.usage)
		}
		if now == d.name {
			t.Errorf("%s: --%s is its own deprecated spelling", d.command, d.name)
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ds := byName[n]
		same := true
		for _, d := range ds[1:] {
			same = same && d.usage == ds[0].usage && d.kind == ds[0].kind
		}
		if same {
			continue // one definition, shared (the engine's flags)
		}
		meaning, ok := flagMeanings[n]
		if !ok {
			t.Errorf("--%s is defined differently by %s and has no entry in flagMeanings: %s", n, commandsOf(ds), usages(ds))
			continue
		}
		for _, d := range ds {
			if !strings.HasPrefix(d.usage, meaning) {
				t.Errorf("%s --%s: usage %q does not mean %q, as --%s means elsewhere", d.command, n, d.usage, meaning, n)
			}
		}
	}
	for _, kind := range []string{"spelling", "environment variable"} {
		owner := map[string]map[string][]string{} // spelling or variable → flag name → commands
		var walk func(path string, cmds []*cli.Command)
		walk = func(path string, cmds []*cli.Command) {
			for _, cmd := range cmds {
				p := strings.TrimSpace(path + " " + cmd.Name)
				for _, f := range cmd.Flags {
					names, envs := spellingsAndEnv(f)
					keys := names
					if kind != "spelling" {
						keys = envs
					}
					name := names[0]
					if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
						name = strings.TrimPrefix(f.(cli.DocGenerationFlag).GetUsage(), deprecatedPrefix) // an old spelling stands for its flag
						if kind == "spelling" {
							keys = nil // hidden spellings are checked above
						}
					}
					for _, k := range keys {
						if owner[k] == nil {
							owner[k] = map[string][]string{}
						}
						owner[k][name] = append(owner[k][name], p)
					}
				}
				walk(p, cmd.Subcommands)
			}
		}
		walk("", App().Commands)
		for k, flags := range owner {
			if len(flags) > 1 {
				t.Errorf("%s %q names different flags: %v", kind, k, flags)
			}
		}
	}
}

func commandsOf(ds []flagDef) string {
	var cs []string
	for _, d := range ds {
		cs = append(cs, d.command)
	}
	slices.Sort(cs)
	return strings.Join(slices.Compact(cs), ", ")
}

func usages(ds []flagDef) string {
	var us []string
	for _, d := range ds {
		us = append(us, fmt.Sprintf("%s: %q", d.command, d.usage))
	}
	return strings.Join(us, "; ")
}

// runLogged runs zkpipe args in process and returns its error and stderr.
func runLogged(args ...string) (string, error) {
	var log bytes.Buffer
	app := App()
	app.Writer, app.ErrWriter = io.Discard, &log
	err := app.Run(append([]string{"zkpipe"}, args...))
	return log.String(), err
}

// builtinOf is the built-in circuit and size a setup directory was made of.
func builtinOf(t *testing.T, dir string) (string, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, gnarksrc.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var m gnarksrc.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Builtin, m.Constraints
}

// Every renamed flag's old spelling still works, says on stderr what
// replaced it, and is refused beside its new spelling; a variable that
// meant something else in another command is not read.
func TestOldSpellingsStillWork(t *testing.T) {
	root := t.TempDir()
	d := func(name string) string { return filepath.Join(root, name) }

	// setup: --circuit → --builtin, --out → --dir, -n → --constraints
	log, err := runLogged("setup", "--circuit", "bits", "-n", "64", "--out", d("old"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"setup: --circuit is deprecated, use --builtin", "setup: --out is deprecated, use --dir", "setup: -n is deprecated, use --constraints"} {
		if !strings.Contains(log, w) {
			t.Errorf("setup with old spellings: stderr %q, want %q", log, w)
		}
	}
	if b, n := builtinOf(t, d("old")); b != "bits" || n != 64 {
		t.Errorf("setup --circuit bits -n 64: made %s at %d", b, n)
	}
	// the new spellings say nothing beside setup's ceremony note
	if log, err = runLogged("setup", "--builtin", "bits", "-c", "64", "--dir", d("new")); err != nil || strings.TrimSpace(log) != "zkpipe setup: "+setupCeremonyNote {
		t.Fatalf("setup with new spellings: %v, stderr %q", err, log)
	}
	if b, n := builtinOf(t, d("new")); b != "bits" || n != 64 {
		t.Errorf("setup --builtin bits -c 64: made %s at %d", b, n)
	}
	for _, args := range [][]string{
		{"--builtin", "bits", "--circuit", "bits", "--dir", d("x")},
		{"--dir", d("x"), "--out", d("x")},
		{"-c", "64", "-n", "64", "--dir", d("x")},
	} {
		if _, err := runLogged(append([]string{"setup"}, args...)...); err == nil || !strings.Contains(err.Error(), "give one") {
			t.Errorf("setup %v: %v, want a refusal of both spellings", args, err)
		}
	}
	// ZKPIPE_OUT and ZKPIPE_CIRCUIT are prove's directories: setup reads
	// neither, and without --dir it refuses rather than guess
	t.Setenv("ZKPIPE_OUT", d("proofs"))
	t.Setenv("ZKPIPE_CIRCUIT", d("new"))
	if _, err := runLogged("setup", "--builtin", "bits", "-c", "64"); err == nil || !strings.Contains(err.Error(), "--dir DIR is required") {
		t.Errorf("setup without --dir, ZKPIPE_OUT set: %v", err)
	}
	if _, err := os.Stat(d("proofs")); err == nil {
		t.Errorf("setup wrote into ZKPIPE_OUT")
	}
	t.Setenv("ZKPIPE_OUT", "")
	t.Setenv("ZKPIPE_CIRCUIT", "")

	// export solidity: --out → --contract (ZKPIPE_EXPORT_OUT too)
	if log, err = runLogged("export", "solidity", "--circuit", d("new"), "--out", d("old.sol")); err != nil || !strings.Contains(log, "export solidity: --out is deprecated, use --contract") {
		t.Fatalf("export --out: %v, stderr %q", err, log)
	}
	if _, err = runLogged("export", "solidity", "--circuit", d("new"), "--contract", d("new.sol")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZKPIPE_EXPORT_OUT", d("env.sol"))
	if _, err = runLogged("export", "solidity", "--circuit", d("new")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZKPIPE_EXPORT_OUT", "")
	sameFiles(t, d("old.sol"), d("new.sol"), d("env.sol"))

	// timeline: --out → --svg (-o stays)
	results := d("results.jsonl")
	if err := os.WriteFile(results, []byte(`{"id":"a","stages":[{"stage":"parse","queued_at_ms":0,"started_at_ms":1,"ended_at_ms":3}],"total_ms":3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if log, err = runLogged("timeline", results, "--out", d("old.svg")); err != nil || !strings.Contains(log, "timeline: --out is deprecated, use --svg") {
		t.Fatalf("timeline --out: %v, stderr %q", err, log)
	}
	for _, f := range []string{"--svg", "-o"} {
		if _, err = runLogged("timeline", results, f, d(f+".svg")); err != nil {
			t.Fatal(err)
		}
	}
	sameFiles(t, d("old.svg"), d("--svg.svg"), d("-o.svg"))

	// demo: --circuit → --builtin (ZKPIPE_DEMO_CIRCUIT too)
	for _, c := range []struct {
		args []string
		env  string
	}{{args: []string{"--circuit", "bits"}}, {env: "bits"}} {
		if c.env != "" {
			t.Setenv("ZKPIPE_DEMO_CIRCUIT", c.env)
		}
		cache := t.TempDir()
		args := append([]string{"demo", "-c", "64", "-n", "1", "--cache", cache, "--out", t.TempDir(), "--mem-status", "0"}, c.args...)
		if log, err = runLogged(args...); err != nil || !strings.Contains(log, "demo: --circuit is deprecated, use --builtin") {
			t.Fatalf("%v: %v, stderr %q", args, err, log)
		}
		dirs, _ := filepath.Glob(filepath.Join(cache, "*", gnarksrc.MetaFile))
		if len(dirs) != 1 {
			t.Fatalf("demo's cache: %v", dirs)
		}
		if b, _ := builtinOf(t, filepath.Dir(dirs[0])); b != "bits" {
			t.Errorf("%v: proved %s", args, b)
		}
	}
	t.Setenv("ZKPIPE_DEMO_CIRCUIT", "")

	// submit: --circuit → --default-circuit (read before NATS is reached)
	jobs := d("jobs.jsonl")
	writeJobs(t, jobs, generateJobs(1)...)
	nats := []string{"submit", "--nats", "nats://127.0.0.1:1"}
	if _, err := runLogged(append(nats, "--circuit", "a", "--default-circuit", "b", jobs)...); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("submit with both spellings: %v", err)
	}
	if log, _ := runLogged(append(nats, "--circuit", "a", jobs)...); !strings.Contains(log, "submit: --circuit is deprecated, use --default-circuit") {
		t.Errorf("submit --circuit: stderr %q", log)
	}
}

// sameFiles fails unless every file has the bytes of the first.
func sameFiles(t *testing.T, paths ...string) {
	t.Helper()
	want, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths[1:] {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s", p, paths[0])
		}
	}
}
