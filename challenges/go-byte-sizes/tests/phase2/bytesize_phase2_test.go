package bytesize

import "testing"

func TestBinaryUnits(t *testing.T) {
	expectBytes(t, map[string]int64{
		"1KiB": 1024, "4 MiB": 4 << 20, "2GiB": 2 << 30, "1TiB": 1 << 40,
		"1.5KiB": 1536, "0.5 mib": 1 << 19, "10kib": 10_240,
	})
}

func TestDecimalAndBinaryDiffer(t *testing.T) {
	expectBytes(t, map[string]int64{"1KB": 1000, "1KiB": 1024, "1GB": 1_000_000_000, "1GiB": 1 << 30})
}

func TestLargestSizeFits(t *testing.T) {
	expectBytes(t, map[string]int64{
		"9223372036854775807":  9223372036854775807,
		"8388607TiB":           8388607 << 40,
		"9223372036854.775807MB": 9223372036854775807,
	})
}

func TestOverflowIsAnError(t *testing.T) {
	expectError(t, "9223372036854775808", "8388608TiB", "10000000TB", "9223372036854775.808KB")
}

func TestRejectsPartialBinaryBytes(t *testing.T) {
	expectError(t, "0.1KiB", "1.0000001MiB")
}
