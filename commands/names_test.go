package commands

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
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
