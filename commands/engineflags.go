package commands

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/blob/boundedread"
	"github.com/zkpipe/zkpipe/engine"
	"github.com/zkpipe/zkpipe/gpu"
	"github.com/zkpipe/zkpipe/mem"
	"github.com/zkpipe/zkpipe/source/circomsrc"
	"github.com/zkpipe/zkpipe/source/gnarksrc"
	"github.com/zkpipe/zkpipe/stages"
	"github.com/zkpipe/zkpipe/tracing"
)

// engineFlags are a command's own flags followed by everything that shapes
// the engine: backends, stages, memory, tracing, CUDA (prove, demo, bench).
func engineFlags(own ...cli.Flag) []cli.Flag {
	fs := append(own, computeFlags()...)
	fs = append(fs, stageFlags()...)
	fs = append(fs, memFlags()...)
	fs = append(fs, tracingFlags()...)
	fs = append(fs, sourceFlags()...)
	return append(fs, cudaFlags()...)
}

// sourceFlags set how circuits' files are read and their proofs checked.
func sourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "read-timeout", Value: boundedread.DefaultTimeout, Category: "input", EnvVars: env("read-timeout"),
			Usage: "the longest one witness file may take to read, from open to the last byte: a FIFO nobody writes to or a stalled mount fails its job alone (0: the default)"},
		&cli.BoolFlag{Name: "skip-verify", Category: "input", EnvVars: env("skip-verify"),
			Usage: "do not check gnark proofs against the verifying key before writing them (about 0.6 ms a proof): for benchmarks only"},
		&cli.DurationFlag{Name: "wasm-timeout", DefaultText: "auto", Category: "circom", EnvVars: env("wasm-timeout"),
			Usage: "the longest one circom witness calculation (--wasm) may run; a job past it fails alone, and a call at load past it fails start-up " +
				"(0: a minute and a second more for each 16384 wires of the circuit; never unbounded)"},
		&cli.StringFlag{Name: "wasm-memory", Value: "auto", Category: "circom", EnvVars: env("wasm-memory"),
			Usage: "the most memory one circom witness calculator instance may grow to, counted in each job's memory reservation; " +
				"a job that needs more fails alone: a size up to 4GiB, or auto (4× what the module declares, at least 256MiB, at most an eighth of --mem-budget)"},
	}
}

// circomLimits are the circom witness calculator's bounds from the flags
// (circomsrc.Files.WasmLimits).
func circomLimits(c *cli.Context) (circomsrc.Limits, error) {
	var l circomsrc.Limits
	if l.Timeout = c.Duration("wasm-timeout"); l.Timeout < 0 {
		return l, fmt.Errorf("--wasm-timeout %s: want 0 (by the circuit's size) or more", l.Timeout)
	}
	switch v := strings.TrimSpace(c.String("wasm-memory")); strings.ToLower(v) {
	case "auto", "":
		if b, err := mem.ParseBudget(c.String("mem-budget"), mem.ReadMachine().Limit); err == nil && b != mem.Unlimited {
			l.Budget = b
		}
	default:
		b, err := mem.ParseBudget(v, 0)
		if err != nil || b == mem.Unlimited || b <= 0 || b > 4<<30 {
			return l, fmt.Errorf("--wasm-memory %q: want a size up to 4GiB (the wasm32 limit), or auto", v)
		}
		// Each instance is allocated whole at this size, within the memory
		// budget: more than the budget could never be admitted, and its
		// allocation at load would take the process past it.
		if budget, err := mem.ParseBudget(c.String("mem-budget"), mem.ReadMachine().Limit); err == nil && budget != mem.Unlimited && b > budget {
			return l, fmt.Errorf("--wasm-memory %s is more than --mem-budget %s (%s): each witness calculator instance is allocated whole at --wasm-memory, within the budget; lower --wasm-memory (or auto) or raise --mem-budget",
				v, c.String("mem-budget"), mem.FormatBytes(budget))
		}
		l.Memory = b
	}
	return l, nil
}

// parseTables reads --cuda-msm-tables into engine.CUDAOptions.MSMTableMiB:
// auto (0), off (−1) or a size in MiB.
func parseTables(s string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return 0, nil
	case "off", "0":
		return -1, nil
	}
	b, err := mem.ParseBudget(s, 0)
	if err != nil || b == mem.Unlimited || b < 1<<20 {
		return 0, fmt.Errorf("--cuda-msm-tables %q: want a size such as 8GiB, off or auto", s)
	}
	return int(b >> 20), nil
}

// parsePinned reads --cuda-pinned (a size, as the other size flags) or its
// deprecated spelling --cuda-pinned-mib (a number of MiB) into MiB, the unit
// of the CUDA backend's buffers.
func parsePinned(c *cli.Context) (int, error) {
	if c.IsSet("cuda-pinned-mib") {
		if c.IsSet("cuda-pinned") {
			return 0, fmt.Errorf("--cuda-pinned-mib %d and --cuda-pinned %s: give one (--cuda-pinned-mib is its deprecated spelling)", c.Int("cuda-pinned-mib"), c.String("cuda-pinned"))
		}
		mib := c.Int("cuda-pinned-mib")
		if mib < 1 {
			return 0, fmt.Errorf("--cuda-pinned-mib %d: want at least 1 (MiB); prefer --cuda-pinned %dMiB", mib, max(mib, 1))
		}
		return mib, nil
	}
	v := c.String("cuda-pinned")
	b, err := mem.ParseSize(v)
	if err != nil || b < 1<<20 || b%(1<<20) != 0 || b>>20 > math.MaxInt32 {
		return 0, fmt.Errorf("--cuda-pinned %q: want a whole number of MiB, at least 1MiB (32MiB, 1GiB)", v)
	}
	return int(b >> 20), nil
}

// gnarkOptions are the gnark source's options from the flags.
func gnarkOptions(c *cli.Context) gnarksrc.Options {
	// progress of a circuit's load on the status line's interval (off with it)
	return gnarksrc.Options{ReadTimeout: c.Duration("read-timeout"), SkipVerify: c.Bool("skip-verify"),
		Progress: os.Stderr, ProgressEvery: c.Duration("mem-status"), SolveTasks: c.Int("solve-tasks")}
}

// engineOptions reads the engine's flags into its options; out is the
// output directory.
func engineOptions(c *cli.Context, out string) (engine.Options, error) {
	devices, all, err := parseDevices(c.String("cuda-device"))
	if err != nil {
		return engine.Options{}, err
	}
	tables, err := parseTables(c.String("cuda-msm-tables"))
	if err != nil {
		return engine.Options{}, err
	}
	pinned, err := parsePinned(c)
	if err != nil {
		return engine.Options{}, err
	}
	bases, err := gpu.ParseBasesPlace(c.String("cuda-bases"))
	if err != nil {
		return engine.Options{}, fmt.Errorf("--cuda-bases: %w", err)
	}
	o := engine.Options{
		Device: c.String("device"), BG2Device: c.String("bg2-device"),
		MSMTasks: c.Int("msm-tasks"), FFTTasks: c.Int("fft-tasks"), ShareCores: c.Bool("share-cores"),
		CPUHeavyOps: c.Int("cpu-heavy-ops"),
		CUDA: engine.CUDAOptions{Lib: c.String("cuda-lib"), Config: cudaConfigFromEnv(), Devices: devices, AllDevices: all,
			PinnedMiB: pinned, Lanes: c.Int("cuda-lanes"), ClassifyWorkers: c.Int("cuda-classify-workers"), MSMTableMiB: tables,
			ComputeStreams: c.Int("cuda-compute-streams"), Bases: bases},
		Shapes:       map[string]stages.Shape{},
		TailMSMBatch: c.Int("tail-msm-batch"),
		FixedShape:   !c.Bool("adapt-shape"), AdaptEvery: c.Duration("adapt-every"),
		Memory: engine.MemoryOptions{Budget: c.String("mem-budget"), Pinned: c.String("pinned-budget"),
			Device: c.String("device-budget"), Status: c.Duration("mem-status"),
			SetGoLimit: true, GCPercent: budgetGCPercent()},
		Tracing: otelEnv(tracing.Config{
			Endpoint: c.String("otlp-endpoint"), Protocol: c.String("otlp-protocol"),
			Group: c.Int("trace-group"), QueueSpans: c.Bool("trace-queue-spans"),
		}),
		Out: out,
		Log: logOut(c),
	}
	// A stage the user shaped (by flag or environment) keeps that shape; the
	// engine chooses the others.
	for _, name := range stages.Names {
		w, q := name+"-workers", name+"-queue"
		if c.IsSet(w) || c.IsSet(q) {
			o.Shapes[name] = stages.Shape{Workers: c.Int(w), Queue: c.Int(q)}
		}
	}
	return o, nil
}

// budgetGCPercent is the GOGC the engine sets under a budget: the one
// measured best (engine.BudgetGCPercent), unless the user set GOGC, which
// the runtime follows already. The memory limit follows the budget whatever
// GOMEMLIMIT says (--mem-budget is the limit a user sets here).
func budgetGCPercent() int {
	if os.Getenv("GOGC") != "" {
		return 0
	}
	return engine.BudgetGCPercent
}

// parseDevices reads --cuda-device: a GPU index, a list (0,1), or all.
func parseDevices(v string) (devices []int, all bool, err error) {
	if v == "all" {
		return nil, true, nil
	}
	for _, f := range strings.Split(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 {
			return nil, false, fmt.Errorf("--cuda-device %q: want a GPU index (0), a list (0,1) or all", v)
		}
		if slices.Contains(devices, i) {
			return nil, false, fmt.Errorf("--cuda-device %q: GPU %d twice (its memory would be counted twice)", v, i)
		}
		devices = append(devices, i)
	}
	return devices, false, nil
}

// stageFlags are --NAME-workers and --NAME-queue for each stage.
func stageFlags() []cli.Flag {
	var fs []cli.Flag
	for _, name := range stages.Names {
		fs = append(fs,
			&cli.IntFlag{Name: name + "-workers", Value: 1, DefaultText: "auto", Usage: "workers of stage " + name + " (unset: chosen by zkpipe from the cores and devices)", EnvVars: env(name + "-workers"), Category: "stages"},
			&cli.IntFlag{Name: name + "-queue", Value: 1, DefaultText: "auto", Usage: "queue depth in front of stage " + name + " (unset: chosen with the workers)", EnvVars: env(name + "-queue"), Category: "stages"},
		)
	}
	return append(fs,
		&cli.IntFlag{Name: "tail-msm-batch", Value: 1, Category: "stages", EnvVars: env("tail-msm-batch"),
			Usage: fmt.Sprintf("most jobs a tail-msm worker runs at once: it takes a job and up to K−1 more already waiting in its queue (never waiting for more), "+
				"and runs the A, B1 and K MSMs of a circuit's jobs among them in one device pass over their shared bases (1: one at a time; at most %d)", gpu.MaxMSMBatch)},
		&cli.BoolFlag{Name: "adapt-shape", Value: true, Category: "stages", EnvVars: env("adapt-shape"),
			Usage: "while the stream runs, give the bottleneck stage more workers while the cores allow, taking idle workers from other stages " +
				"and undoing a change that does not raise proofs/s; stages set by --NAME-workers or --NAME-queue never change (false: keep the shape chosen at start)"},
		&cli.DurationFlag{Name: "adapt-every", Value: 2 * time.Second, Category: "stages", EnvVars: env("adapt-every"),
			Usage: "the least time between two shape changes (each window also waits for 10 finished proofs)"},
	)
}

// computeFlags set the backends and the parallelism inside a stage.
func computeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "device", Value: "auto", Usage: "compute backend: auto, cpu or cuda", EnvVars: env("device"), Category: "compute"},
		&cli.StringFlag{Name: "bg2-device", Value: "auto", Usage: "device of the B_G2 stage: auto (the GPU when --device runs on one), cpu or cuda", EnvVars: env("bg2-device"), Category: "compute"},
		&cli.IntFlag{Name: "msm-tasks", DefaultText: "auto", Usage: "goroutines one CPU MSM or batch-addition may use (0: one per core; at most 1024)", EnvVars: env("msm-tasks"), Category: "compute"},
		&cli.IntFlag{Name: "fft-tasks", DefaultText: "auto", Usage: "goroutines one CPU NTT may use (0: one per core)", EnvVars: env("fft-tasks"), Category: "compute"},
		&cli.IntFlag{Name: "solve-tasks", DefaultText: "auto", Usage: "goroutines one witness solve (synthesize, gnark circuits) spreads each level of constraints over (0: one per core; several solves at once each take that many)", EnvVars: env("solve-tasks"), Category: "compute"},
		&cli.BoolFlag{Name: "share-cores", EnvVars: env("share-cores"), Category: "compute",
			Usage: "each CPU MSM and NTT starts with the cores divided among those running at once, instead of every one taking all of them (with --msm-tasks and --fft-tasks unset)"},
		&cli.IntFlag{Name: "cpu-heavy-ops", DefaultText: "0 (no bound)", EnvVars: env("cpu-heavy-ops"), Category: "compute",
			Usage: "CPU MSMs and NTTs that run at once, all stages' together (H's three NTTs count as one); the others wait (0: no bound; at most 1024)"},
	}
}

func cudaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cuda-lib", Category: "compute", EnvVars: env("cuda-lib"),
			Usage: "path of " + gpu.CUDALibraryName + " (built by gpu/cuda/build.sh); default: beside the zkpipe executable, then /usr/local/lib, /usr/local/lib64, /usr/lib/<multiarch>, /usr/lib64, /usr/lib; never the working directory"},
		&cli.StringFlag{Name: "cuda-device", Value: "0", Category: "compute", EnvVars: env("cuda-device"),
			Usage: "GPUs for --device cuda: an index (0), a list (0,1) or all; with several, each job runs its device stages on the least loaded GPU, and the device-stage worker counts apply to each"},
		&cli.StringFlag{Name: "cuda-pinned", Value: "32MiB", Category: "compute", EnvVars: env("cuda-pinned"),
			Usage: "size of each pinned bounce buffer of the CUDA backend, two per lane (allocated once, counted against --pinned-budget): a size such as 32MiB, at least 1MiB"},
		&cli.IntFlag{Name: "cuda-pinned-mib", Category: "compute", EnvVars: env("cuda-pinned-mib"), DefaultText: "unset",
			Usage: "deprecated: --cuda-pinned in MiB (--cuda-pinned-mib 64 is --cuda-pinned 64MiB); not with --cuda-pinned"},
		&cli.IntFlag{Name: "cuda-lanes", Value: 4, Category: "compute", EnvVars: env("cuda-lanes"),
			Usage: "uploads to the GPU that run at once (each copies through its own pinned buffers on its own core)"},
		&cli.IntFlag{Name: "cuda-classify-workers", Value: 0, Category: "compute", EnvVars: env("cuda-classify-workers"), DefaultText: "0: GOMAXPROCS",
			Usage: "goroutines that classify one job's queries into the pinned buffers, shared by its queries, each taking parts of at least 65536 scalars (1: one a query, as before parts)"},
		&cli.StringFlag{Name: "cuda-msm-tables", Value: "auto", Category: "compute", EnvVars: env("cuda-msm-tables"),
			Usage: "device memory one circuit's precomputed MSM tables may take (each base's multiples for every window, built at load: faster MSMs for about 16× the bases' memory): a size such as 8GiB, off, or auto (32GiB, off under --device-budget)"},
		&cli.StringFlag{Name: "cuda-bases", Value: "auto", Category: "compute", EnvVars: env("cuda-bases"),
			Usage: "where a circuit's bases live between proofs: device (uploaded once at load), host (pinned host memory, streamed to the GPU in pieces for every proof, as on a card smaller than the key), or auto (device where the key and one job fit, else host)"},
		&cli.IntFlag{Name: "cuda-compute-streams", Value: 2, Category: "compute", EnvVars: env("cuda-compute-streams"),
			Usage: "device operations (MSMs, batch-additions, H) that run at once on each GPU, each on its own stream with its own scratch: one job's H beside another's tail MSMs, and a job's A, B1 and K tail MSMs side by side (1: one at a time)"},
	}
}

func memFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mem-budget", Value: "75%", Category: "memory", EnvVars: env("mem-budget"),
			Usage: "resident memory (RSS) zkpipe may use: a size (16GiB, 512MiB), a share of the machine's memory " +
				"lowered to its cgroup limit (75%), or off; a job is admitted to synthesize only when its footprint fits. " +
				"Under a budget the Go memory limit follows it and GOGC is 50 unless set in the environment"},
		&cli.StringFlag{Name: "pinned-budget", Value: "25%", Category: "memory", EnvVars: env("pinned-budget"),
			Usage: "page-locked host memory a GPU backend may hold for staging, within --mem-budget: a size, or a share of --mem-budget (of the machine's memory when that is off)"},
		&cli.StringFlag{Name: "device-budget", DefaultText: "auto", Category: "memory", EnvVars: env("device-budget"),
			Usage: "GPU memory that resident keys and jobs in flight may hold, a size (80GiB); unset: the GPU's free memory at start. A job waits at pin/transfer until its device memory fits"},
		&cli.DurationFlag{Name: "mem-status", Value: time.Second, Category: "memory", EnvVars: env("mem-status"),
			Usage: "print a status line on stderr this often while jobs are in flight (at least 1s; 0: never), and when idle " +
				"only on a change or once a minute: proofs, proofs/s, each stage's queued+running jobs, RSS and pinned memory against their budgets"},
	}
}

// otelEnv adds to cfg what OpenTelemetry's own variables say of turning
// tracing on or off; the exporter reads the rest of OTEL_EXPORTER_OTLP_*
// (the endpoint among them) itself.
func otelEnv(cfg tracing.Config) tracing.Config {
	cfg.EndpointFromEnv = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	cfg.Disabled = strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || os.Getenv("OTEL_TRACES_EXPORTER") == "none"
	return cfg
}

func tracingFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "otlp-endpoint", Category: "tracing",
			Usage: "send OpenTelemetry traces to this OTLP collector, e.g. http://localhost:4317 (grpc) or http://localhost:4318 (http); " +
				"unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, else tracing is off",
			EnvVars: env("otlp-endpoint")},
		&cli.StringFlag{Name: "otlp-protocol", Value: "grpc", Category: "tracing",
			Usage:   "OTLP transport: grpc or http (http/protobuf)",
			EnvVars: append(env("otlp-protocol"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")},
		&cli.IntFlag{Name: "trace-group", Category: "tracing",
			Usage:   "put N consecutive jobs in one trace, under a \"stream\" span (0: one trace per job)",
			EnvVars: env("trace-group")},
		&cli.BoolFlag{Name: "trace-queue-spans", Category: "tracing",
			Usage:   "add a \"queue\" span for each stage's wait (it is always in the zkpipe.queue_ms attribute)",
			EnvVars: env("trace-queue-spans")},
	}
}

// refuseNegativeDurations refuses a negative value of any duration flag of
// the command c runs (set on the command line or in ZKPIPE_*): a
// negative --read-timeout switched the read deadline off, and no duration
// flag of zkpipe means anything by one.
func refuseNegativeDurations(c *cli.Context) error {
	if c.Command == nil {
		return nil
	}
	for _, f := range c.Command.Flags {
		df, ok := f.(*cli.DurationFlag)
		if !ok || !c.IsSet(df.Name) {
			continue
		}
		if d := c.Duration(df.Name); d < 0 {
			return fmt.Errorf("--%s %s: a duration must be 0 or more", df.Name, d)
		}
	}
	return nil
}

// withDurationCheck has every command of cmds (and their subcommands)
// refuse negative durations before it runs.
func withDurationCheck(cmds []*cli.Command) []*cli.Command {
	for _, cmd := range cmds {
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if err := refuseNegativeDurations(c); err != nil {
				return err
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
		withDurationCheck(cmd.Subcommands)
	}
	return cmds
}
