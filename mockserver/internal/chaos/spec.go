package chaos

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// The keys of a SPEC, in the order String writes them.
const (
	KeySeed      = "seed"
	KeyDuplicate = "duplicate"
	KeyReorder   = "reorder"
	KeyDelay     = "delay"
	KeyAPIError  = "api-error"
)

// MaxSpec is the longest SPEC Parse reads: every key with its longest
// value takes about 100 bytes.
const MaxSpec = 1024

// maxQuoted is how much of a value an error quotes.
const maxQuoted = 40

// Parse reads a SPEC, a comma-separated list of KEY=VALUE
// ("seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1"; up to
// MaxSpaceRun spaces in a row around items, keys and values are allowed),
// each key at most once: seed (a whole number from 1 to
// model.MaxChaosSeed), duplicate, reorder and api-error (probabilities
// from 0 to 1, written as decimals, 0.2, .5 or 1, or with a negative
// exponent, 1e-05; up to 32 decimals), delay (a whole number of
// milliseconds from 1 ms to model.MaxChaosDelay, written in milliseconds,
// 500ms, seconds, 2s or 1.5s, minutes, 5m, or minutes and seconds, 1m30s,
// as time.Duration's String writes it). A key left out is 0 (the seed:
// chosen when the mode is set; the delay: model.DefaultChaosDelay). "" is
// the zero Chaos. Its error is a *model.ChaosError naming the key at
// fault. It reads exactly the SPECs that SpecPattern matches and
// SpecNotPattern does not (none of which is longer than MaxSpec bytes).
func Parse(spec string) (model.Chaos, error) {
	var c model.Chaos
	if len(spec) > MaxSpec {
		return c, &model.ChaosError{Message: fmt.Sprintf("a SPEC is at most %d bytes, this one is %d", MaxSpec, len(spec))}
	}
	if strings.Trim(spec, spaces) == "" {
		if len(spec) > MaxSpaceRun {
			return c, errSpaceRun()
		}
		return c, nil
	}
	seen := make(map[string]bool, 5)
	for item := range strings.SplitSeq(spec, ",") {
		item, short := trimSpace(item)
		if item == "" {
			return model.Chaos{}, &model.ChaosError{Message: "an empty item (two commas in a row, or one at an end): give KEY=VALUE items " +
				"separated by commas, such as seed=42,duplicate=0.2"}
		}
		key, value, ok := strings.Cut(item, "=")
		key, shortKey := trimSpace(key)
		value, shortValue := trimSpace(value)
		if !short || !shortKey || !shortValue {
			return model.Chaos{}, errSpaceRun()
		}
		if !ok {
			return model.Chaos{}, &model.ChaosError{Message: fmt.Sprintf("%s has no value: give KEY=VALUE, such as seed=42 or duplicate=0.2", quote(item))}
		}
		switch key {
		case KeySeed, KeyDuplicate, KeyReorder, KeyDelay, KeyAPIError:
		default:
			return model.Chaos{}, &model.ChaosError{Message: fmt.Sprintf("unknown key %s: the keys are seed, duplicate, reorder, delay and api-error", quote(key))}
		}
		if seen[key] {
			return model.Chaos{}, &model.ChaosError{Key: key, Message: "given twice: give each key once"}
		}
		seen[key] = true
		if err := parseValue(&c, key, value); err != nil {
			return model.Chaos{}, err
		}
		if !valueRegexps[key].MatchString(value) {
			return model.Chaos{}, &model.ChaosError{Key: key, Message: quote(value) + notWritten[key]}
		}
	}
	return c, nil
}

// errSpaceRun is the error for too many spaces in a row.
func errSpaceRun() error {
	return &model.ChaosError{Message: fmt.Sprintf("more than %d spaces in a row: at most %d go around an item, a key or a value",
		MaxSpaceRun, MaxSpaceRun)}
}

// notWritten says, after a value, how to write one that means the same
// when it is not written as the grammar has it: a value ParseFloat or
// ParseDuration reads in range, but in a form of theirs the grammar leaves
// out (0x1p-2, 1_0, +0.5, 50e-2, 1h0m, 2000000us).
var notWritten = map[string]string{
	KeySeed:      " is not a whole number from 1 to " + strconv.FormatUint(model.MaxChaosSeed, 10),
	KeyDuplicate: probabilityForm,
	KeyReorder:   probabilityForm,
	KeyAPIError:  probabilityForm,
	KeyDelay: " is not written as a delay is: in milliseconds (500ms), seconds (2s, 1.5s), minutes (5m), " +
		"or minutes and seconds (1m30s)",
}

const probabilityForm = " is not written as a probability is: a decimal (0.2, .5, 1), or with a negative exponent (1e-05)"

// parseValue reads one key's value into c.
func parseValue(c *model.Chaos, key, value string) error {
	switch key {
	case KeySeed:
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil || n > model.MaxChaosSeed {
			return &model.ChaosError{Key: key, Message: fmt.Sprintf("%s is not a whole number from 1 to %d", quote(value), uint64(model.MaxChaosSeed))}
		}
		if n == 0 {
			return &model.ChaosError{Key: key, Message: "0 is no seed: give 1 or more, or leave seed out to have one chosen (and logged)"}
		}
		c.Seed = n
	case KeyDelay:
		d, err := time.ParseDuration(value)
		if err != nil {
			return &model.ChaosError{Key: key, Message: fmt.Sprintf("%s is not a duration such as 500ms or 2s", quote(value))}
		}
		if d == 0 {
			return &model.ChaosError{Key: key, Message: "0 holds nothing back: give 1ms or more, or leave delay out for " + model.DefaultChaosDelay.String()}
		}
		c.Delay = d
		return checkDelay(d)
	default:
		p, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return &model.ChaosError{Key: key, Message: fmt.Sprintf("%s is not a probability from 0 to 1, such as 0.2", quote(value))}
		}
		if err := checkProbability(key, p); err != nil {
			return err
		}
		switch key {
		case KeyDuplicate:
			c.Duplicate = p
		case KeyReorder:
			c.Reorder = p
		default:
			c.APIError = p
		}
	}
	return nil
}

// Check says what is wrong with c, as Parse would of its SPEC: a
// *model.ChaosError, or nil. A Seed or Delay of 0 is none given.
func Check(c model.Chaos) error {
	if c.Seed > model.MaxChaosSeed {
		return &model.ChaosError{Key: KeySeed, Message: fmt.Sprintf("%d is over %d, the largest seed", c.Seed, uint64(model.MaxChaosSeed))}
	}
	for _, p := range []struct {
		key string
		p   float64
	}{{KeyDuplicate, c.Duplicate}, {KeyReorder, c.Reorder}, {KeyAPIError, c.APIError}} {
		if err := checkProbability(p.key, p.p); err != nil {
			return err
		}
	}
	if c.Delay != 0 {
		return checkDelay(c.Delay)
	}
	return nil
}

func checkProbability(key string, p float64) error {
	if !(p >= 0 && p <= 1) { // NaN too
		return &model.ChaosError{Key: key, Message: fmt.Sprintf("%v is not a probability from 0 to 1", p)}
	}
	return nil
}

func checkDelay(d time.Duration) error {
	switch {
	case d < time.Millisecond || d > model.MaxChaosDelay:
		return &model.ChaosError{Key: KeyDelay, Message: fmt.Sprintf("%v is not from 1ms to %v", d, model.MaxChaosDelay)}
	case d%time.Millisecond != 0:
		return &model.ChaosError{Key: KeyDelay, Message: fmt.Sprintf("%v is not a whole number of milliseconds", d)}
	}
	return nil
}

// quote quotes s, cut to maxQuoted bytes: an error says which value, not
// all of a long one.
func quote(s string) string { return strconv.Quote(cut(s)) }

func cut(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	s = s[:maxQuoted]
	// Not in the middle of a character.
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s + "…"
}
