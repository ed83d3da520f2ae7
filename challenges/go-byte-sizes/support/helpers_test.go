package bytesize

import "testing"

// expectBytes fails t for each input Parse does not read as its number of bytes.
func expectBytes(t *testing.T, cases map[string]int64) {
	t.Helper()
	for input, want := range cases {
		got, err := Parse(input)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d, nil", input, got, err, want)
		}
	}
}

// expectError fails t for each input Parse reads without an error.
func expectError(t *testing.T, inputs ...string) {
	t.Helper()
	for _, input := range inputs {
		if got, err := Parse(input); err == nil {
			t.Errorf("Parse(%q) = %d, nil; want an error", input, got)
		}
	}
}
