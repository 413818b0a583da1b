package cpumsm

import "testing"

// BenchmarkMSM is ours against gnark-crypto's MultiExp, both curves and
// groups, at 2^16, 2^18 and 2^20 points on as many tasks as cores:
//
//	go test -run '^$' -bench 'MSM/G1/BN254/.*/16$' ./cpumsm
//
// names BenchmarkMSM/<group>/<curve>/{ours,gnark}/<lg>.
func BenchmarkMSM(b *testing.B) {
	logs := []int{16, 18, 20}
	b.Run("G1/BN254", func(b *testing.B) { benchMSMG1BN254(b, logs) })
	b.Run("G2/BN254", func(b *testing.B) { benchMSMG2BN254(b, logs) })
	b.Run("G1/BLS12-381", func(b *testing.B) { benchMSMG1BLS12381(b, logs) })
	b.Run("G2/BLS12-381", func(b *testing.B) { benchMSMG2BLS12381(b, logs) })
}
