module github.com/zkpipe/zkpipe/bench/rapidsnark

go 1.26.8

require github.com/iden3/go-rapidsnark/prover v0.0.15

require github.com/iden3/go-rapidsnark/types v0.0.3 // indirect
