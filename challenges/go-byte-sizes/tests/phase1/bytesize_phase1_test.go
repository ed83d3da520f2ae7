package bytesize

import "testing"

func TestPlainBytes(t *testing.T) {
	expectBytes(t, map[string]int64{"0": 0, "7": 7, "512": 512, "512B": 512, "4096 B": 4096})
}

func TestDecimalUnits(t *testing.T) {
	expectBytes(t, map[string]int64{
		"10KB": 10_000, "3MB": 3_000_000, "2GB": 2_000_000_000, "1TB": 1_000_000_000_000,
	})
}

func TestFractions(t *testing.T) {
	expectBytes(t, map[string]int64{"1.5MB": 1_500_000, "0.25KB": 250, "2.125GB": 2_125_000_000})
}

func TestSpacesAndCase(t *testing.T) {
	expectBytes(t, map[string]int64{"10 KB": 10_000, "10kb": 10_000, " 2 Mb ": 2_000_000, "1 b": 1})
}

func TestRejectsMalformed(t *testing.T) {
	expectError(t, "", "KB", "abc", "-1KB", "1,5MB", "10XB", "1e3", "1.5.2MB", "10 K B")
}

func TestRejectsPartialBytes(t *testing.T) {
	expectError(t, "1.5", "0.5B", "1.0001KB")
}
