pragma circom 2.0.0;

// A chain of N squarings: N constraints plus 3 rows binding the public wires
// (one, c, a), so N = 65533 fills a 2^16 domain exactly.
template Chain(N) {
    signal input a;
    signal input b;
    signal output c;
    signal x[N];
    x[0] <== a * b;
    for (var i = 1; i < N; i++) { x[i] <== x[i-1] * x[i-1] + b; }
    c <== x[N-1];
}

component main {public [a]} = Chain(65533);
