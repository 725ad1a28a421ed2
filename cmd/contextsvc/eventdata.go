package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// This file is trigger's data of your own: a fixture (a JSON document of
// the event's data) and overrides (path=value), applied to the data
// trigger makes up, and the result held to the contract's schema of the
// event's data (the mock's OpenAPI document) before anything is sent.

// maxFixtureBytes bounds a --fixture: an event's data is small.
const maxFixtureBytes = 1 << 20

// override is one --override PATH=VALUE.
type override struct {
	arg   string   // as given, for the words of an error
	path  []string // object keys, or array indexes
	value string
}

// overridePath is the grammar of a PATH: names and indexes separated by
// dots.
var overridePath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*$`)

// parseOverrides reads the --override flags.
func parseOverrides(args []string) ([]override, error) {
	out := make([]override, 0, len(args))
	for _, a := range args {
		path, value, ok := strings.Cut(a, "=")
		if !ok {
			return nil, usagef("--override %q: give PATH=VALUE, such as name=Runbook or changes.word_count_delta=12", a)
		}
		// The data's fields: "data." is the envelope's way to say so.
		path = strings.TrimPrefix(path, "data.")
		if !overridePath.MatchString(path) {
			return nil, usagef("--override %q: the path %q is not field names and indexes separated by dots (such as changes.sections_modified.0)", a, path)
		}
		out = append(out, override{arg: a, path: strings.Split(path, "."), value: value})
	}
	return out, nil
}

// readFixture reads a --fixture: a JSON object, the event's data (or a
// whole event as a delivery carries it, whose data is taken; its type
// must be typ). "-" reads stdin.
func readFixture(name string, stdin io.Reader, typ contextsvc.EventType) (map[string]any, error) {
	if name == "" {
		return nil, nil
	}
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("--fixture: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxFixtureBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the fixture %s: %w", name, err)
	}
	if len(b) > maxFixtureBytes {
		return nil, usagef("--fixture %s: more than %d bytes; an event's data is far smaller", name, maxFixtureBytes)
	}
	doc, err := decodeObject(b)
	if err != nil {
		return nil, usagef("--fixture %s: %v", name, err)
	}
	if data, ok := doc["data"].(map[string]any); ok && doc["type"] != nil {
		if t, _ := doc["type"].(string); t != string(typ) {
			return nil, usagef("--fixture %s is a whole event of type %v, not %s", name, doc["type"], typ)
		}
		doc = data
	}
	return doc, nil
}

// decodeObject decodes a JSON object, its numbers as written.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if doc == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return doc, nil
}

// eventData is the data of an event being triggered: made up (or read
// from the mock), then the fixture's fields, then the overrides.
type eventData struct {
	typ       contextsvc.EventType
	fields    map[string]any
	overrides []override
	fixture   string
	// from says which flag set each top-level field, for the words of a
	// refusal.
	from map[string]string
}

// newEventData is made-up data of typ (as map values), with the
// fixture's fields over it and then the overrides.
func newEventData(typ contextsvc.EventType, madeUp any, fixture map[string]any, fixtureName string, overrides []override) (*eventData, error) {
	b, err := json.Marshal(madeUp)
	if err != nil {
		return nil, err
	}
	fields, err := decodeObject(b)
	if err != nil {
		return nil, err
	}
	d := &eventData{typ: typ, fields: fields, overrides: overrides, fixture: fixtureName, from: map[string]string{}}
	for k, v := range fixture {
		d.fields[k] = v
		d.from[k] = "--fixture " + fixtureName
	}
	for _, o := range overrides {
		if err := d.set(o); err != nil {
			return nil, err
		}
		d.from[strings.Join(o.path, ".")] = "--override " + o.arg
	}
	return d, nil
}

// set applies one override: the value is text where the field holds
// text, else JSON (a number, true, an array…), and text when it is not
// JSON (the contract then says what the field takes).
func (d *eventData) set(o override) error {
	var cur any = d.fields
	for i, seg := range o.path {
		last := i == len(o.path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[seg] = overrideValue(c[seg], o.value)
				return nil
			}
			next, ok := c[seg]
			if !ok {
				next = map[string]any{}
				c[seg] = next
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n > len(c) {
				return usagef("--override %s: %s is not an index of %s, which holds %d values (give 0 to %d)", o.arg, seg, strings.Join(o.path[:i], "."), len(c), len(c))
			}
			if n == len(c) {
				// One past the end adds a value; the slice is replaced
				// in its parent.
				c = append(c, nil)
				if err := d.replace(o.path[:i], c); err != nil {
					return err
				}
			}
			if last {
				c[n] = overrideValue(c[n], o.value)
				return nil
			}
			if c[n] == nil {
				c[n] = map[string]any{}
			}
			cur = c[n]
		default:
			return usagef("--override %s: %s holds %s, which has no field %s", o.arg, strings.Join(o.path[:i], "."), jsonKind(cur), seg)
		}
	}
	return nil
}

// replace sets the value at path (an array grown by set).
func (d *eventData) replace(path []string, v any) error {
	var cur any = d.fields
	for i, seg := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[seg] = v
				return nil
			}
			cur = c[seg]
		case []any:
			n, _ := strconv.Atoi(seg)
			if last {
				c[n] = v
				return nil
			}
			cur = c[n]
		}
	}
	return nil
}

// overrideValue is an override's value for a field that holds old.
func overrideValue(old any, value string) any {
	if _, ok := old.(string); ok {
		return value
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return value
	}
	return v
}

// jsonKind names what a JSON value is, for an error.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case json.Number:
		return "a number"
	case bool:
		return "true or false"
	case nil:
		return "null"
	case []any:
		return "a list"
	}
	return "an object"
}

// check holds the data to the contract's schema of the event's data. Its
// refusal is a usage error naming each field at fault and the flag that
// set it.
func (d *eventData) check() error {
	env, err := json.Marshal(map[string]any{"id": "evt_" + strings.Repeat("0", 24), "type": d.typ,
		"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "data": d.fields})
	if err != nil {
		return err
	}
	mismatches, err := mockserver.CheckEvent(env)
	if err != nil {
		return err
	}
	var faults []string
	for _, m := range mismatches {
		faults = append(faults, d.fault(m))
	}
	if len(faults) == 0 {
		return nil
	}
	return usagef("the %s data breaks the contract, so nothing was sent: %s", d.typ, strings.Join(faults, "; "))
}

// unsupportedProperty and missingProperty read the schema checker's
// words about a field.
var (
	unsupportedProperty = regexp.MustCompile(`^property "(.*)" is unsupported$`)
	missingProperty     = regexp.MustCompile(`^property "(.*)" is missing$`)
)

// fault says what is wrong with a field, named by its path in the data
// and by the flag that set it.
func (d *eventData) fault(m mockserver.ContractMismatch) string {
	where := strings.TrimPrefix(strings.TrimPrefix(m.Where, "event "), "/data")
	path := strings.ReplaceAll(strings.TrimPrefix(where, "/"), "/", ".")
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch {
	case unsupportedProperty.MatchString(m.Message):
		field := join(unsupportedProperty.FindStringSubmatch(m.Message)[1])
		return fmt.Sprintf("%s: the contract's %s data has no field %s", d.source(field), d.typ, cell(field, 100))
	case missingProperty.MatchString(m.Message):
		field := join(missingProperty.FindStringSubmatch(m.Message)[1])
		return fmt.Sprintf("%s is required", cell(field, 100))
	case path == "":
		return cell(m.Message, 300)
	}
	return fmt.Sprintf("%s: %s: %s", d.source(path), cell(path, 100), cell(m.Message, 300))
}

// source names the flag that set a field (or the field that holds it).
func (d *eventData) source(field string) string {
	for p := field; p != ""; {
		if from, ok := d.from[p]; ok {
			return cell(from, 200)
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return "the made-up data"
}
