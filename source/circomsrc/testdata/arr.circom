pragma circom 2.0.0;
template Arr(N) {
    signal input xs[3];
    signal input m[2][2];
    signal output y;
    signal t[4];
    signal acc[N];
    t[0] <== xs[0] * xs[1];
    t[1] <== t[0] * xs[2];
    t[2] <== m[0][0] * m[1][1];
    t[3] <== m[0][1] * m[1][0];
    acc[0] <== t[1] + t[2] - t[3];
    for (var i = 1; i < N; i++) { acc[i] <== acc[i-1] * acc[i-1] + i; }
    y <== acc[N-1];
}
component main = Arr(100);
