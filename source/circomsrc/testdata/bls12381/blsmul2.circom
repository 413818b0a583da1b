pragma circom 2.0.0;
// mul2 of ../mul2.circom over BLS12-381: blsmul's wires, other constraints
template Mul(N) {
    signal input a;
    signal input b;
    signal output c;
    signal x[N];
    signal inv;
    x[0] <== a * b + 1;
    for (var i = 1; i < N; i++) { x[i] <== x[i-1] * a; }
    c <== x[N-1];
    inv <-- 1 / a;
    inv * a === 1;
}
component main {public [a]} = Mul(20);
