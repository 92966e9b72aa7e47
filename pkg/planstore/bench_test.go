package planstore

import "testing"

func BenchmarkEncode1024DecodeRanks(b *testing.B) {
	set := p512D1024(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Encode("big", set); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadRank1024DecodeRanks(b *testing.B) {
	objs := mustEncode(b, "big", p512D1024(b))
	for b.Loop() {
		if _, _, _, err := LoadRank(objs, 777); err != nil {
			b.Fatal(err)
		}
	}
}
