package commands

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/fleet"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
)

// Every option a message of engine, fleet or mem names is in optionFlags
// (or has no flag), every name there is a field of the type it names, and
// every flag it gives is a flag of some command.
func TestOptionFlagsNameEveryOption(t *testing.T) {
	named := map[string]string{} // option → where a message names it
	for _, dir := range []string{"../engine", "../fleet", "../mem", "../gpu", "../source/circomsrc", "../source/gnarksrc"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
						}
						s = strings.ReplaceAll(s, "[%s]", "[parse]") // a format's stage: Shapes[%s]
						for _, o := range optionNames(s) {
							named[o] = fset.Position(lit.Pos()).String()
						}
					}
					return true
				})
			}
		}
	}
	if len(named) < 30 {
		t.Fatalf("only %d options named in the packages' messages: is optionName still their shape?", len(named))
	}
	for o, where := range named {
		if _, ok := optionFlags[o]; !ok && !optionsWithoutFlag[o] {
			t.Errorf("%s names %s, which optionFlags does not map to a flag", where, o)
		}
	}

	roots := map[string]reflect.Type{
		"engine.Options": reflect.TypeOf(engine.Options{}), "mem.Config": reflect.TypeOf(mem.Config{}),
		"fleet.Auth": reflect.TypeOf(fleet.Auth{}), "fleet.ServerOptions": reflect.TypeOf(fleet.ServerOptions{}),
		"fleet.SubmitOptions": reflect.TypeOf(fleet.SubmitOptions{}), "fleet.WorkerOptions": reflect.TypeOf(fleet.WorkerOptions{}),
		"fleet.ResultsOptions": reflect.TypeOf(fleet.ResultsOptions{}), "fleet.Config": reflect.TypeOf(fleet.Config{}),
		"circomsrc.Limits": reflect.TypeOf(circomsrc.Limits{}), "circomsrc.Files": reflect.TypeOf(circomsrc.Files{}),
		"gnarksrc.Options": reflect.TypeOf(gnarksrc.Options{}),
	}
	flags := map[string]bool{}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					flags["--"+n] = true
				}
			}
			walk(c.Subcommands)
		}
	}
	walk(App().Commands)
	options := []string{}
	for o := range optionFlags {
		options = append(options, o)
	}
	for o := range optionsWithoutFlag {
		options = append(options, o)
	}
	for _, o := range options {
		parts := strings.Split(o, ".")
		typ, ok := roots[parts[0]+"."+parts[1]]
		if !ok {
			t.Errorf("%s: no such options type", o)
			continue
		}
		for _, field := range parts[2:] {
			field, key, isMap := strings.Cut(field, "[") // Shapes[parse]: a map's key
			sf, ok := typ.FieldByName(field)
			if !ok {
				t.Errorf("%s: %s has no field %s", o, typ, field)
				break
			}
			if typ = sf.Type; isMap {
				if typ.Kind() != reflect.Map {
					t.Errorf("%s: %s is not a map, yet keyed by %s", o, field, key)
					break
				}
				typ = typ.Elem()
			}
		}
		if flag, ok := optionFlags[o]; ok {
			if name, _, _ := strings.Cut(flag, "="); !flags[name] {
				t.Errorf("%s: no command has the flag %s", o, name)
			}
		}
	}
}

func TestFlagNames(t *testing.T) {
	for in, want := range map[string]string{
		"engine.Options.Shapes[msm-h].Workers 0: want 1 to 1024":                                                          "--msm-h-workers 0: want 1 to 1024",
		"needs 1 GiB, more than the whole 1.00 MiB memory budget (raise mem.Config.Budget)":                               "needs 1 GiB, more than the whole 1.00 MiB memory budget (raise --mem-budget)",
		"engine.Options.CUDA.Devices 3 and engine.Options.CUDA.Device":                                                    "--cuda-device 3 and --cuda-device",
		"NATS auth: give one of fleet.Auth.Creds, fleet.Auth.NKey, fleet.Auth.User/fleet.Auth.Password, fleet.Auth.Token": "NATS auth: give one of --nats-creds, --nats-nkey, --nats-user/--nats-password, --nats-token",
		"engine.Options.Nope stays, as does engine.ErrClosed and a.b.C":                                                   "engine.Options.Nope stays, as does engine.ErrClosed and a.b.C",
		"witness /tmp/x.engine.Options.Out is a path":                                                                     "witness /tmp/x.engine.Options.Out is a path", // inside a word: not a name
	} {
		if got := flagNames(in); got != want {
			t.Errorf("flagNames(%q) = %q, want %q", in, got, want)
		}
	}
	sentinel := errors.New("sentinel")
	err := withFlagName(fmt.Errorf("engine.Options.Memory.Budget: %w", sentinel))
	if err.Error() != "--mem-budget: sentinel" || !errors.Is(err, sentinel) {
		t.Errorf("withFlagName: %q, Is(sentinel) %v", err, errors.Is(err, sentinel))
	}
	if plain := errors.New("no option here"); withFlagName(plain) != plain {
		t.Error("an error naming no option is not kept as it is")
	}
}

// The engine's errors name its options; zkpipe prove prints the flags: each
// message as it was when the engine named flags itself.
func TestEngineOptionErrorsNameFlags(t *testing.T) {
	dir := setupCircuit(t, t.TempDir(), "chain", "mulchain", 100)
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--parse-workers", "0"}, "--parse-workers 0: want 1 to"},
		{[]string{"--tail-msm-queue", "-1"}, "--tail-msm-queue -1"},
		{[]string{"--msm-tasks", "5000"}, "--msm-tasks 5000: want 0 (one per core) to 1024"},
		{[]string{"--share-cores", "--msm-tasks", "8"}, "--share-cores sizes each MSM and NTT itself: leave --msm-tasks (8) and --fft-tasks (0) unset"},
		{[]string{"--tail-msm-batch", "65"}, "--tail-msm-batch 65: want 1 to 64"},
		{[]string{"--tail-msm-batch", "-1"}, "--tail-msm-batch -1"},
		{[]string{"--cuda-compute-streams", "17"}, "--cuda-compute-streams 17: want 1 to 16"},
		{[]string{"--device", "tpu"}, `--device "tpu": want auto, cpu or cuda`},
		{[]string{"--mem-budget", "lots"}, "--mem-budget: "},
		{[]string{"--mem-budget", "1GiB", "--pinned-budget", "2GiB"}, "--pinned-budget 2.00 GiB is more than --mem-budget 1.00 GiB: pinned memory is resident"},
		{[]string{"--device-budget", "much"}, `--device-budget "much": want a size such as 80GiB`},
	} {
		args := append([]string{"zkpipe", "prove", "--device", "cpu", "--circuit", dir, "--jobs", os.DevNull, "--out", filepath.Join(t.TempDir(), "out")}, c.flags...)
		err := App().Run(args)
		var named *flagNamedError
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "engine.") || !errors.As(err, &named) {
			t.Errorf("%v: err = %v, want %q, named by the command", c.flags, err, c.want)
		}
	}
}

// A job larger than the budget: its result line and the warning at start
// name the flag (the governor's and the engine's messages name options).
func TestMemoryHintsNameTheFlag(t *testing.T) {
	dir := setupCircuit(t, t.TempDir(), "chain", "mulchain", 300)
	lines, status := proveJobs(t, dir, 1, "--mem-budget", "1MiB", "--mem-status", "0")
	if !strings.Contains(lines[0].Error, "memory budget (raise --mem-budget)") {
		t.Errorf("result line error %q, want it to say to raise --mem-budget", lines[0].Error)
	}
	if !strings.Contains(status, "its jobs will fail (raise --mem-budget)") || strings.Contains(status, "mem.Config") || strings.Contains(status, "engine.Options") {
		t.Errorf("status %q, want the warning to say to raise --mem-budget", status)
	}
}

// TestLibrariesNameNoFlag: no message of a package but commands (and bench,
// the bench command's own work, and fleet's, whose commands are its API)
// names one of zkpipe's flags: a library's errors name the option a
// program sets (optionFlags maps it back for the command's user).
func TestLibrariesNameNoFlag(t *testing.T) {
	flags := map[string]bool{}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					if len(n) > 1 {
						flags["--"+n] = true
					}
				}
			}
			walk(c.Subcommands)
		}
	}
	walk(App().Commands)
	flagIn := regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	for _, dir := range []string{"../engine", "../stages", "../gpu", "../mem", "../pipeline", "../source/circomsrc", "../source/gnarksrc",
		"../keygen", "../blob", "../blob/boundedread", "../stream", "../ioplan", "../circuits", "../proofdata", "../adapt", "../metrics", "../tracing", "../timeline", "../evm", "../curve", "../cpumsm"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || (sel.Sel.Name != "Errorf" && sel.Sel.Name != "New") {
						return true
					}
					for _, a := range call.Args {
						lit, ok := a.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						s, _ := strconv.Unquote(lit.Value)
						for _, fl := range flagIn.FindAllString(s, -1) {
							if flags[fl] {
								t.Errorf("%s: an error names the flag %s: name the option a program sets", fset.Position(lit.Pos()), fl)
							}
						}
					}
					return true
				})
			}
		}
	}
}
