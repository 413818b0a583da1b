// Package commands is zkpipe's command line: each command turns its flags
// into an explicit configuration and calls the package that does the work
// (engine for proving streams, gnarksrc for setup and verification, timeline
// for pictures). main.go only calls Main.
package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/consensys/gnark/logger"
	"github.com/urfave/cli/v2"
	"github.com/zkpipe/zkpipe/engine"
)

// Exit codes of zkpipe, as README.md documents them.
const (
	ExitOK          = 0   // every job proven (or resumed)
	ExitRunFailed   = 1   // the run failed: bad flags, a circuit that does not load, outputs that cannot be written
	ExitJobsFailed  = 2   // the run finished, and some jobs failed: their result lines say why
	ExitUsage       = 2   // arguments the command does not take (a usage line says which it does)
	ExitDrained     = 3   // a first Ctrl-C (or SIGTERM) stopped the intake with jobs not read: those read were finished
	ExitInterrupted = 130 // a second Ctrl-C (or SIGTERM) aborted the jobs in flight
)

// JobsFailedError is a run that finished with failed jobs.
type JobsFailedError struct{ Failed, Total int }

func (e *JobsFailedError) Error() string {
	return fmt.Sprintf("%d of %d job(s) failed; see their result lines", e.Failed, e.Total)
}

// UsageError is a command line the command does not take; Main prints the
// command's usage line after it.
type UsageError struct{ Msg, Usage string }

func (e *UsageError) Error() string { return e.Msg + "\nusage: " + e.Usage }

// usageErrorf is a UsageError for c's command.
func usageErrorf(c *cli.Context, format string, args ...any) error {
	u := c.Command.UsageText
	if u == "" {
		u = "zkpipe " + c.Command.FullName() + " [flags]"
	}
	name := strings.TrimPrefix(c.Command.HelpName, c.App.Name+" ") // "groth16 prove"
	return &UsageError{Msg: name + ": " + fmt.Sprintf(format, args...), Usage: u}
}

// DrainedError is a run whose intake a signal stopped before the jobs
// ended: the jobs read were answered (Failed of Total failed), the others
// never read.
type DrainedError struct {
	*engine.Drained
	Failed, Total int
}

func (e *DrainedError) Error() string {
	return fmt.Sprintf("stopped by a signal: %d job(s) answered (%d failed); %s", e.Total, e.Failed, e.Drained.Error())
}

func (e *DrainedError) Unwrap() error { return e.Drained }

// errInterrupted is a run aborted by a second signal.
var errInterrupted = errors.New("aborted by a second signal; the jobs in flight were cancelled")

// Main runs the zkpipe command line and returns the process's exit code.
func Main(args []string) int {
	err := App().Run(args)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(os.Stderr, "zkpipe:", err)
	var jobs *JobsFailedError
	var coded interface{ exitCode() int }
	var usage *UsageError
	var drained *engine.Drained
	switch {
	case errors.As(err, &coded):
		return coded.exitCode()
	case errors.As(err, &drained):
		return ExitDrained
	case errors.As(err, &jobs):
		return ExitJobsFailed
	case errors.As(err, &usage):
		return ExitUsage
	case errors.Is(err, errInterrupted):
		return ExitInterrupted
	}
	return ExitRunFailed
}

// App is the zkpipe command line.
func App() *cli.App {
	return &cli.App{
		Name:  "zkpipe",
		Usage: "a Groth16 proving engine for continuous streams of proofs",
		Description: "Every flag can also be set by an environment variable, named in its help: ZKPIPE_<FLAG>, " +
			"upper-case with - as _ (for example ZKPIPE_MSM_H_WORKERS=2), or ZKPIPE_<COMMAND>_<FLAG> where a command keeps its own (ZKPIPE_BENCH_CIRCUIT). " +
			"A flag name, a short alias and a variable mean one thing in every command; \"(default: auto)\" is a value zkpipe chooses when the flag is unset.\n\n" +
			"Exit codes: 0 every job proven; 1 the run failed (flags, circuits, outputs); " +
			"2 the run finished and some jobs failed (their result lines say why), or arguments the command does not take; " +
			"3 a first Ctrl-C or SIGTERM stopped the intake before the jobs ended (those read were finished; stderr says how many were not read); 130 aborted by a second Ctrl-C.",
		Commands: withFlagNames(withDurationCheck([]*cli.Command{
			benchCommand(),
			circuitCommand(),
			demoCommand(),
			exportCommand(),
			groth16Command(),
			proveCommand(),
			resultsCommand(),
			serveCommand(),
			setupCommand(),
			submitCommand(),
			timelineCommand(),
			verifyCommand(),
			workerCommand(),
		})),
		EnableBashCompletion: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "gnark-log", Usage: "show gnark's own debug log", EnvVars: env("gnark-log")},
		},
		Before: func(c *cli.Context) error {
			if !c.Bool("gnark-log") {
				logger.Disable() // gnark logs every solve and verify at debug level
			}
			return nil
		},
	}
}

// logOut is where a command's status lines and warnings go: the app's
// ErrWriter (tests set it), else stderr. The engine and the fleet write
// there too, so the options their lines name become flags (optionflags.go).
func logOut(c *cli.Context) io.Writer {
	if c.App != nil && c.App.ErrWriter != nil {
		return flagNamedWriter{c.App.ErrWriter}
	}
	return flagNamedWriter{os.Stderr}
}

// env names a flag's environment variable: ZKPIPE_ and the flag in capitals.
func env(flag string) []string {
	b := []byte("ZKPIPE_" + flag)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return []string{string(b)}
}
