package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteSize is a flag's count of bytes: a whole number, alone or with a
// unit, KiB, MiB or GiB (powers of 1024; K, M and G mean the same), or B.
type byteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// parseByteSize reads a size such as 256MiB, 1GiB or 1048576.
func parseByteSize(s string) (byteSize, error) {
	text := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(text, u.suffix); ok {
			text, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 || text == "" || text[0] == '+' || text[0] == '-' {
		return 0, fmt.Errorf("%q is not a size: a whole number of bytes, or one with KiB, MiB or GiB", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return byteSize(n * mult), nil
}

// String writes the size in the largest unit it is a whole number of.
func (b byteSize) String() string {
	n := int64(b)
	switch {
	case n != 0 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n != 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n != 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Set is pflag.Value's.
func (b *byteSize) Set(s string) error {
	v, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type is pflag.Value's: the word help shows for the value.
func (b *byteSize) Type() string { return "size" }
