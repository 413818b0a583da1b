// Command zkpipe proves continuous streams of Groth16 proofs through a staged
// pipeline: parse, synthesize, pin/transfer, NTT+MSM_H, batch-addition,
// tail-MSM, B_G2 and assemble, each of bounded concurrency. The commands live
// in package commands, the engine in package engine.
package main

import (
	"os"

	"github.com/zkpipe/zkpipe/commands"
)

func main() { os.Exit(commands.Main(os.Args)) }
