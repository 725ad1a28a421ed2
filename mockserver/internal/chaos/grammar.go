package chaos

import (
	"regexp"
	"strings"
)

// The SPEC's grammar as regular expressions. openapi.yaml gives SpecPattern
// as the pattern of a SPEC and SpecNotPattern as what it must not match,
// so that the document allows exactly the SPECs Parse reads. Each bound is
// in the expressions: each value's range (a seed up to MaxChaosSeed, a
// probability from 0 to 1, a delay of whole milliseconds from 1 ms to
// 5 min), and its length, as every run of digits, zeros or spaces is
// bounded, so that no SPEC they match is longer than MaxSpec and the
// document needs no maxLength (which a fuzzer would try to meet exactly).
// Only ASCII appears, so a length in characters is one in bytes. They use
// only what RE2, ECMA-262 and Python's re share, and mean the same in each:
// Python's $ also matches before a final newline, so a SPEC has none
// (SpecNotPattern refuses a newline anywhere).
const (
	// SpecPattern matches a SPEC whose items are each a known key with a
	// value it takes: up to MaxSpaceRun spaces around items, keys and
	// values, items separated by commas, none empty, at most five. It says
	// nothing of a key given twice (SpecNotPattern does).
	SpecPattern = `^(?:` + spaceRun + itemPattern + `(?:` + spaceRun + `,` + spaceRun + itemPattern + `){0,4}` + spaceRun + `|` + spaceRun + `)$`
	// SpecNotPattern matches what a SPEC of SpecPattern must not hold, which
	// Parse refuses: a newline, or a key given twice.
	SpecNotPattern = `\n|(?:^|,)` + space + `*(?:` + KeySeed + again + KeySeed + `|` + KeyDuplicate + again + KeyDuplicate +
		`|` + KeyReorder + again + KeyReorder + `|` + KeyDelay + again + KeyDelay + `|` + KeyAPIError + again + KeyAPIError + `)` + space + `*=`

	// MaxSpaceRun is the most spaces in a row a SPEC takes around an item,
	// a key or a value.
	MaxSpaceRun = 16

	// space is what Parse trims around items, keys and values (spaces has
	// it): the space alone, as the admin API refuses control characters in
	// a string, tabs among them. spaceRun is a run of it.
	space    = ` `
	spaces   = " "
	spaceRun = space + `{0,16}`

	// again is what comes between a key given twice: its value, then
	// after a later comma the key again.
	again = space + `*=(?:[^,]*,)+` + space + `*`

	itemPattern = `(?:` + KeySeed + spaceRun + `=` + spaceRun + seedPattern +
		`|(?:` + KeyDuplicate + `|` + KeyReorder + `|` + KeyAPIError + `)` + spaceRun + `=` + spaceRun + probabilityPattern +
		`|` + KeyDelay + spaceRun + `=` + spaceRun + delayPattern + `)`

	// seedPattern is a whole number from 1 to MaxChaosSeed
	// (9007199254740991) as strconv.ParseUint reads it, with up to 16
	// leading zeros: 1 to 15 digits, or 16 digits no greater, digit by
	// digit.
	seedPattern = `0{0,16}(?:[1-9][0-9]{0,14}|[1-8][0-9]{15}|900[0-6][0-9]{12}|90070[0-9]{11}|90071[0-8][0-9]{10}|900719[0-8][0-9]{9}` +
		`|9007199[0-1][0-9]{8}|90071992[0-4][0-9]{7}|900719925[0-3][0-9]{6}|9007199254[0-6][0-9]{5}|90071992547[0-3][0-9]{4}` +
		`|9007199254740[0-8][0-9]{2}|90071992547409[0-8][0-9]|900719925474099[0-1])`

	// probabilityPattern is a number from 0 to 1: 1 (1, 1., 1.000),
	// a decimal below it (0, 0.2, .5), or, as String writes the smallest,
	// a digit with a negative exponent (1e-05, 2.5e-7), always below 1;
	// up to 16 leading zeros, 32 decimals and a 4-digit exponent.
	probabilityPattern = `(?:0{0,16}1(?:\.0{0,32})?|0{1,16}(?:\.[0-9]{0,32})?|0{0,16}\.[0-9]{1,32}` +
		`|(?:[0-9](?:\.[0-9]{0,32})?|\.[0-9]{1,32})[eE]-0{0,8}[1-9][0-9]{0,3})`

	// delayPattern is a delay of whole milliseconds from 1 ms to 5 min,
	// written as time.Duration's String writes one, or in one unit:
	// milliseconds (1ms to 300000ms), seconds (0.001s to 300s, at most
	// three decimals that are not 0), minutes (1m to 5m), or minutes and
	// seconds (1m0s to 4m59.999s, and 5m0s).
	delayPattern = `(?:(?:[1-9][0-9]{0,4}|[12][0-9]{5}|300000)ms` +
		`|(?:(?:[1-9][0-9]?|[12][0-9]{2})(?:\.[0-9]{0,3}0{0,16})?|300(?:\.0{0,16})?|0?\.(?:[1-9][0-9]{0,2}|0[1-9][0-9]?|00[1-9])0{0,16})s` +
		`|[1-5]m|[1-4]m[1-5]?[0-9](?:\.[0-9]{0,3}0{0,16})?s|5m0(?:\.0{0,16})?s)`
)

// valueRegexps are the values each key takes.
var valueRegexps = map[string]*regexp.Regexp{
	KeySeed:      regexp.MustCompile(`^` + seedPattern + `$`),
	KeyDuplicate: regexp.MustCompile(`^` + probabilityPattern + `$`),
	KeyReorder:   regexp.MustCompile(`^` + probabilityPattern + `$`),
	KeyAPIError:  regexp.MustCompile(`^` + probabilityPattern + `$`),
	KeyDelay:     regexp.MustCompile(`^` + delayPattern + `$`),
}

// trimSpace returns s without the spaces at its ends, and whether
// neither run of it is longer than MaxSpaceRun.
func trimSpace(s string) (string, bool) {
	t := strings.TrimLeft(s, spaces)
	u := strings.TrimRight(t, spaces)
	return u, len(s)-len(t) <= MaxSpaceRun && len(t)-len(u) <= MaxSpaceRun
}
