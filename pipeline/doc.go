// Package pipeline is zkpipe's generic staged runtime: a chain of stages, each a
// pool of bounded size fed by a bounded channel, so a slow stage pushes back on
// the ones before it instead of letting work pile up in memory.
//
// The runtime owns every goroutine, channel, timing and panic; a stage is only a
// function of one job. The rules, after the Go blog's "Pipelines and
// cancellation" and sourcegraph/conc:
//
//  1. Workers never close a channel. The runtime waits for all of a stage's
//     workers, then closes that stage's output exactly once. SetWorkers may
//     add workers or retire some (each after its current job) while Run
//     goes; the output still closes only after the last of them has gone.
//  2. Every blocking send and receive also selects on ctx.Done(): cancelling the
//     context stops the whole stream, and Run returns only after every
//     goroutine it started has exited.
//  3. A job that fails carries its error to the sink, skipping later stages;
//     the other jobs go on. A panic in a stage becomes that job's error, a
//     conc *panics.ErrRecovered with its value and stack, never a crash of the
//     stream.
//  4. Each job records, per stage, when it was queued, started and finished,
//     and which worker ran it.
package pipeline
