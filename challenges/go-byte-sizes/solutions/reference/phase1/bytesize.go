// Package bytesize reads human-written sizes ("10KB", "1.5 MB") as a number of bytes.
package bytesize

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// units maps each accepted unit, upper-cased, to its size in bytes (SI: powers of 1000).
var units = map[string]int64{
	"":   1,
	"B":  1,
	"KB": 1000,
	"MB": 1000 * 1000,
	"GB": 1000 * 1000 * 1000,
	"TB": 1000 * 1000 * 1000 * 1000,
}

var form = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$`)

// Parse returns the number of bytes s stands for: a non-negative decimal number, optional
// spaces, and an optional unit (B, KB, MB, GB, TB; any case). The result must be a whole
// number of bytes.
func Parse(s string) (int64, error) {
	match := form.FindStringSubmatch(strings.TrimSpace(s))
	if match == nil {
		return 0, fmt.Errorf("bytesize: %q is not a size such as 512, 10KB or 1.5 MB", s)
	}
	unit, ok := units[strings.ToUpper(match[2])]
	if !ok {
		return 0, fmt.Errorf("bytesize: unknown unit %q in %q", match[2], s)
	}
	// Exact arithmetic: 1.5MB is 1500000 bytes, not a float's neighbour of it.
	value, _ := new(big.Rat).SetString(match[1])
	value.Mul(value, new(big.Rat).SetInt64(unit))
	if !value.IsInt() {
		return 0, fmt.Errorf("bytesize: %q is not a whole number of bytes", s)
	}
	return value.Num().Int64(), nil
}
