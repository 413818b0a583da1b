pragma circom 2.0.0;
template Sq() {
    signal input a;
    signal input b;
    signal x;
    signal y;
    x <== a * b;
    y <== x * x;
}
component main = Sq();
