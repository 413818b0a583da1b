package commands

import (
	"io"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/stream"
)

// The packages' messages name the options a user would change by their Go
// names (engine.Options.Memory.Budget, fleet.WorkerOptions.JobTimeout,
// mem.Config.Budget, circomsrc.Limits.Memory, and gpu's engine.Options.CUDA.Lib):
// a library user sets those; no package but commands names a flag. What the zkpipe command
// prints names the flag that sets each instead, as optionFlags says: the
// errors its commands return (withFlagNames), the engine's and the fleet's
// log lines (flagNamedWriter) and the result lines it writes
// (flagNamedResult).

// optionFlags maps each option the packages' messages name to the flag of
// the zkpipe command that sets it. TestOptionFlagsNameEveryOption holds it
// complete: every option named in a message of engine, fleet or mem is here
// or in optionsWithoutFlag.
var optionFlags = func() map[string]string {
	m := map[string]string{
		"engine.Options.Device":               "--device",
		"engine.Options.BG2Device":            "--bg2-device",
		"engine.Options.MSMTasks":             "--msm-tasks",
		"engine.Options.FFTTasks":             "--fft-tasks",
		"engine.Options.ShareCores":           "--share-cores",
		"engine.Options.CPUHeavyOps":          "--cpu-heavy-ops",
		"engine.Options.TailMSMBatch":         "--tail-msm-batch",
		"engine.Options.MaxPartitions":        "--max-partitions",
		"engine.Options.FixedShape":           "--adapt-shape=false",
		"engine.Options.AdaptEvery":           "--adapt-every",
		"engine.Options.Out":                  "--out",
		"engine.Options.Memory.Budget":        "--mem-budget",
		"engine.Options.Memory.Pinned":        "--pinned-budget",
		"engine.Options.Memory.Device":        "--device-budget",
		"engine.Options.Memory.Status":        "--mem-status",
		"engine.Options.CUDA.Device":          "--cuda-device",
		"engine.Options.CUDA.Devices":         "--cuda-device",
		"engine.Options.CUDA.PinnedMiB":       "--cuda-pinned-mib",
		"engine.Options.CUDA.Lanes":           "--cuda-lanes",
		"engine.Options.CUDA.ClassifyWorkers": "--cuda-classify-workers",
		"engine.Options.CUDA.ComputeStreams":  "--cuda-compute-streams",
		"engine.Options.Tracing.Group":        "--trace-group",
		"engine.Options.CUDA.Lib":             "--cuda-lib",

		"circomsrc.Limits.Memory":      "--wasm-memory",
		"circomsrc.Limits.Timeout":     "--wasm-timeout",
		"circomsrc.Files.Wasm":         "--wasm",
		"circomsrc.Files.Zkey":         "--zkey",
		"gnarksrc.Options.HashToField": "--hash-to-field",

		"mem.Config.Budget": "--mem-budget", // set from engine.Options.Memory.Budget
		"mem.Config.Pinned": "--pinned-budget",

		"fleet.Auth.Creds":                   "--nats-creds",
		"fleet.Auth.NKey":                    "--nats-nkey",
		"fleet.Auth.User":                    "--nats-user",
		"fleet.Auth.Password":                "--nats-password",
		"fleet.Auth.Token":                   "--nats-token",
		"fleet.Auth.Cert":                    "--nats-cert",
		"fleet.Auth.Key":                     "--nats-key",
		"fleet.ServerOptions.Listen":         "--nats-listen",
		"fleet.ServerOptions.StoreDir":       "--store",
		"fleet.ServerOptions.User":           "--nats-user",
		"fleet.ServerOptions.Password":       "--nats-password",
		"fleet.ServerOptions.Token":          "--nats-token",
		"fleet.ServerOptions.ConfigFile":     "--nats-config",
		"fleet.ServerOptions.OpenMonitoring": "--nats-open-monitoring",
		"fleet.ServerOptions.ServerName":     "--server-name",
		"fleet.ServerOptions.ClusterName":    "--cluster-name",
		"fleet.ServerOptions.ClusterListen":  "--cluster-listen",
		"fleet.ServerOptions.Routes":         "--routes",
		"fleet.Config.Replicas":              "--replicas",
		"fleet.SubmitOptions.Priority":       "--priority",
		"fleet.SubmitOptions.Circuit":        "--circuit", // as submit said before --default-circuit
		"fleet.WorkerOptions.JobTimeout":     "--job-timeout",
		"fleet.ResultsOptions.Out":           "--out",
	}
	for _, name := range stages.Names {
		m["engine.Options.Shapes["+name+"].Workers"] = "--" + name + "-workers"
		m["engine.Options.Shapes["+name+"].Queue"] = "--" + name + "-queue"
	}
	return m
}()

// optionsWithoutFlag are options the packages' messages name that no flag
// sets: the commands never give them a value the engine refuses, so a
// message naming them never reaches a command's user.
var optionsWithoutFlag = map[string]bool{
	"engine.Options.Cores":            true, // the engine's runtime.NumCPU
	"engine.Options.Memory.GCPercent": true, // engine.BudgetGCPercent or 0
}

// optionName is the shape of an option's name in a message: a package, a
// type, and fields, a map's key in brackets (Shapes[parse]), not inside a
// longer word or path (submatch 1 is the name).
var optionName = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.-])((?:engine|fleet|mem|circomsrc|gnarksrc)\.[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*|\[[a-z0-9-]+\])+)`)

// optionNames are the options msg names, in order.
func optionNames(msg string) []string {
	var names []string
	for _, m := range optionName.FindAllStringSubmatch(msg, -1) {
		names = append(names, m[1])
	}
	return names
}

// flagNames is msg with each option it names as optionFlags names its
// flag; names not in optionFlags stay.
func flagNames(msg string) string {
	if !strings.Contains(msg, ".") {
		return msg
	}
	var b strings.Builder
	last := 0
	for _, m := range optionName.FindAllStringSubmatchIndex(msg, -1) {
		if flag, ok := optionFlags[msg[m[2]:m[3]]]; ok {
			b.WriteString(msg[last:m[2]])
			b.WriteString(flag)
			last = m[3]
		}
	}
	if last == 0 {
		return msg
	}
	b.WriteString(msg[last:])
	return b.String()
}

// flagNamedError is an error whose message names flags where err's named
// options; errors.Is and errors.As see err through it.
type flagNamedError struct {
	msg string
	err error
}

func (e *flagNamedError) Error() string { return e.msg }
func (e *flagNamedError) Unwrap() error { return e.err }

// withFlagName is err, its message naming flags (err itself when it names
// no option).
func withFlagName(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if named := flagNames(msg); named != msg {
		return &flagNamedError{msg: named, err: err}
	}
	return err
}

// withFlagNames has every command of cmds (and their subcommands) return
// its errors naming flags, not options.
func withFlagNames(cmds []*cli.Command) []*cli.Command {
	for _, cmd := range cmds {
		if action := cmd.Action; action != nil {
			cmd.Action = func(c *cli.Context) error { return withFlagName(action(c)) }
		}
		withFlagNames(cmd.Subcommands)
	}
	return cmds
}

// flagNamedResult is r with its error naming flags (a job refused by the
// memory governor says to raise --mem-budget).
func flagNamedResult(r stream.Result) stream.Result {
	r.Error = flagNames(r.Error)
	if r.Partitions != nil {
		// a request's: its partitions' own errors too, in a copy
		parts := make([]stream.PartitionResult, len(r.Partitions))
		for i, p := range r.Partitions {
			p.Error = flagNames(p.Error)
			parts[i] = p
		}
		r.Partitions = parts
	}
	return r
}

// flagNamedWriter passes what the engine and the fleet log to w, naming
// flags. They write a message in one Write (fmt.Fprintf), so an option's
// name is never split between two.
type flagNamedWriter struct{ w io.Writer }

func (f flagNamedWriter) Write(p []byte) (int, error) {
	named := flagNames(string(p))
	if named == string(p) {
		return f.w.Write(p)
	}
	if _, err := io.WriteString(f.w, named); err != nil {
		return 0, err
	}
	return len(p), nil
}
